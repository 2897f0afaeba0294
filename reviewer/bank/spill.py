"""Arrays kept in memory up to a byte budget and beyond it in files, so a site's series fits any memory budget.

Generation builds per-year composites and a per-scene NBR series whose size grows with pixels x years (or
scenes). A FrameStore holds them by key: in memory while the budget allows, then as raw .npy files in a
temporary folder read back whole (with a small read cache) or by rows. Values round-trip exactly, so what
the methods compute does not depend on where a frame lives. The folder is removed with the store.

MemoryMeter measures a run's peak resident memory (psutil RSS sampled in a thread), the figure the
generation summary states against the budget.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from pathlib import Path

import numpy as np

#: default memory budget of a generation run (bytes): `reviewer generate --memory`
DEFAULT_BUDGET = 2 * 1024**3


class FrameStore:
    """Arrays by key: the first ones in memory up to `ram_bytes`, the rest in files of a temporary folder.

    Arrays handed out are read-only (callers that need to change one copy it). `cache_bytes` bounds the
    arrays read back from files that are kept for the next get."""

    def __init__(self, ram_bytes: int, cache_bytes: int | None = None, folder: str | Path | None = None) -> None:
        self.ram_bytes = int(ram_bytes)
        self.cache_bytes = int(cache_bytes if cache_bytes is not None else max(0, ram_bytes // 4))
        self._parent = folder
        self._ram: dict[Hashable, np.ndarray] = {}
        self._disk: dict[Hashable, tuple[Path, np.dtype, tuple[int, ...]]] = {}
        self._cache: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._filling: dict[Hashable, np.ndarray] = {}  # writable bases of alloc's frames in memory
        self._aliases: set[Hashable] = set()
        self._constant: set[Hashable] = set()  # fill's frames (no memory counted)
        self._cached = 0
        self.in_ram = 0
        self.on_disk = 0
        self._dir: Path | None = None
        self._finalizer = None

    def _folder(self) -> Path:
        """The store's temporary folder, made at the first frame that goes to a file. Its removal is registered
        before the folder is made: a stop (Ctrl-C, SIGTERM raised as an interrupt at the next Python step) right
        after `mkdir` had left the folder behind, not yet known to the store."""
        if self._dir is None:
            parent = Path(self._parent if self._parent is not None else tempfile.gettempdir())
            while True:
                path = parent / f"reviewer-series-{secrets.token_hex(8)}"
                finalizer = weakref.finalize(self, shutil.rmtree, str(path), True)
                try:
                    path.mkdir(mode=0o700)  # (as tempfile.mkdtemp makes its folders)
                except FileExistsError:  # (one in 2**64; not ours: another name)
                    finalizer.detach()
                    continue
                break  # (another error goes up: nothing was made, and removing nothing at the end is harmless)
            self._dir, self._finalizer = path, finalizer
        return self._dir

    def put(self, key: Hashable, array: np.ndarray) -> None:
        a = np.ascontiguousarray(array)
        if self.in_ram + a.nbytes <= self.ram_bytes:
            if a.base is not None:  # a view would keep its whole base alive
                a = a.copy()
            a.flags.writeable = False
            self._ram[key] = a
            self.in_ram += a.nbytes
            return
        path = self._folder() / f"f{len(self._disk)}.raw"
        a.tofile(path)
        self._disk[key] = (path, a.dtype, a.shape)
        self.on_disk += a.nbytes

    def alloc(self, key: Hashable, shape: tuple[int, ...], dtype: np.dtype | type) -> None:
        """A frame to be filled by rows (write_rows): in memory while the budget allows, else a file of its size,
        so a frame built block by block is never whole in memory when it does not fit."""
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if self.in_ram + nbytes <= self.ram_bytes:
            a = np.empty(shape, dtype)
            view = a.view()
            view.flags.writeable = False  # handed out read-only, as put's
            self._ram[key] = view
            self._filling[key] = a
            self.in_ram += nbytes
            return
        path = self._folder() / f"f{len(self._disk)}.raw"
        with open(path, "wb") as f:
            f.truncate(nbytes)
        self._disk[key] = (path, dtype, tuple(shape))
        self.on_disk += nbytes

    def fill(self, key: Hashable, shape: tuple[int, ...], dtype: np.dtype | type, value: float) -> None:
        """A frame of one value (a year's composite without any scene in its season: all NaN), held as a read-only
        broadcast of the value: no memory of the budget, no file written and read back."""
        self._ram[key] = np.broadcast_to(np.array(value, dtype=dtype), tuple(shape))  # (read-only, as put's)
        self._constant.add(key)

    def write_rows(self, key: Hashable, start: int, rows: np.ndarray) -> None:
        """Rows start:start+len(rows) of a frame made by alloc."""
        a = self._filling.get(key)
        if a is not None:
            a[start : start + len(rows)] = rows
            return
        path, dtype, shape = self._disk[key]
        self._cache.pop(key, None)
        row = int(np.prod(shape[1:], dtype=np.int64)) * dtype.itemsize
        with open(path, "r+b") as f:
            f.seek(start * row)
            f.write(memoryview(np.ascontiguousarray(rows, dtype=dtype)).cast("B"))  # (no bytes copy of the rows)

    def alias(self, key: Hashable, target: Hashable) -> None:
        """`key` names the frame `target` (the same memory or file; written through either name)."""
        for d in (self._ram, self._disk, self._filling):
            if target in d:
                d[key] = d[target]
        self._aliases.add(key)

    def rename(self, key: Hashable, new: Hashable) -> None:
        """The frame `key` under the name `new` (no copy)."""
        for d in (self._ram, self._disk, self._cache, self._filling):
            if key in d:
                d[new] = d.pop(key)
        for names in (self._aliases, self._constant):
            if key in names:
                names.discard(key)
                names.add(new)

    def drop(self, key: Hashable) -> None:
        """Forget a frame (its memory is free for the next ones; its file stays until close)."""
        if key in self._aliases:
            self._aliases.discard(key)
            for d in (self._ram, self._disk, self._filling, self._cache):
                d.pop(key, None)
            return
        a = self._ram.pop(key, None)
        if a is not None and key not in self._constant:
            self.in_ram -= a.nbytes
        self._constant.discard(key)
        self._filling.pop(key, None)
        c = self._cache.pop(key, None)
        if c is not None:
            self._cached -= c.nbytes
        self._disk.pop(key, None)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._ram or key in self._disk

    def __len__(self) -> int:
        return len(self._ram) + len(self._disk)

    def keys(self) -> Iterator[Hashable]:
        yield from self._ram
        yield from self._disk

    def get(self, key: Hashable) -> np.ndarray:
        if key in self._ram:
            return self._ram[key]
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        path, dtype, shape = self._disk[key]
        a = np.fromfile(path, dtype=dtype).reshape(shape)
        a.flags.writeable = False
        if a.nbytes <= self.cache_bytes:
            while self._cached + a.nbytes > self.cache_bytes and self._cache:
                _, old = self._cache.popitem(last=False)
                self._cached -= old.nbytes
            self._cache[key] = a
            self._cached += a.nbytes
        return a

    def rows(self, key: Hashable, start: int, stop: int) -> np.ndarray:
        """Rows start:stop of a frame (first axis), read from its file without reading the rest."""
        if key in self._ram or key in self._cache:
            return self.get(key)[start:stop]
        path, dtype, shape = self._disk[key]
        row = int(np.prod(shape[1:], dtype=np.int64))
        stop = min(stop, shape[0])
        n = max(0, stop - start)
        a = np.fromfile(path, dtype=dtype, count=n * row, offset=start * row * np.dtype(dtype).itemsize)
        return a.reshape((n, *shape[1:]))

    def close(self) -> None:
        self._ram.clear()
        self._filling.clear()
        self._aliases.clear()
        self._constant.clear()
        self._disk.clear()
        self._cache.clear()
        self._cached = self.in_ram = self.on_disk = 0
        if self._finalizer is not None:
            self._finalizer()


class MemoryMeter:
    """Peak resident memory (bytes) of this process while the meter runs: psutil RSS sampled every `every`
    seconds in a daemon thread (and once at start and stop). A context manager; `.peak` afterwards."""

    def __init__(self, every: float = 0.05) -> None:
        self.every = every
        self.peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        import psutil

        proc = psutil.Process()
        while True:
            self.peak = max(self.peak, proc.memory_info().rss)
            if self._stop.wait(self.every):
                break
        self.peak = max(self.peak, proc.memory_info().rss)

    def __enter__(self) -> MemoryMeter:
        self._thread = threading.Thread(target=self._sample, name="memory-meter", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
