"""Files the tool writes appear whole or not at all; files it reads are read with a bound and parsed strictly.

- `atomic_write(path, data)`: a uniquely named temporary file beside `path`, synced, renamed over it.
- `output_folder(target)`: a temporary folder beside `target` to write a whole output folder into; it
  becomes `target` by a rename only once everything was written, so a failure (a full disk, a cancel, a
  bug) leaves nothing behind and the old folder untouched.
- One rule for every output folder: it must be new, empty, or hold only entries the writing verb produces
  (its own earlier output, so a verb re-run into its own folder keeps working). Anything else (a user's
  notes.txt) is refused with an OutputError naming the folder and up to five of the other entries, and
  nothing is written: `refuse_other_entries` checks it, `check_output_folder(..., ours=...)` before the work
  where the verb knows its names, `output_folder` in any case before its first rename.
- `check_output_folder` / `check_output_file`: the up-front checks of an `--out` (a file where a folder is
  expected and the other way round, a read-only place, a folder holding others' files), before any work.
- `read_bounded(path, limit)`: regular files only (a FIFO or a device is refused without blocking), at most
  `limit` bytes.
- `loads_strict(text)`: JSON without NaN/Infinity, numbers out of range, duplicate keys or deep nesting.
- `os_error_text(exc)`: 'disk full: PATH', 'permission denied: PATH', ... for one line of a message.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from reviewer.errors import OutputError

#: Deeper JSON nesting than this is refused (no document of the tool nests more than a few levels, and
#: deep nesting exhausts the recursion of the parser and of schema validation).
MAX_DEPTH = 64

_ERRNO_TEXT = {
    errno.ENOSPC: "disk full",
    getattr(errno, "EDQUOT", -1): "disk quota exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "read-only file system",
    errno.ENOENT: "no such file or folder",
    errno.EEXIST: "already exists",
    errno.EISDIR: "is a folder",
    errno.ENOTDIR: "not a folder",
    errno.ENOTEMPTY: "folder is not empty",
    errno.ELOOP: "too many levels of symbolic links",
    errno.ENAMETOOLONG: "file name too long",
    errno.EMFILE: "too many open files",
    errno.EIO: "input/output error",
    errno.EXDEV: "cannot move across file systems",
    errno.EFBIG: "file too large",
}


def shown(path: str | bytes | os.PathLike) -> str:
    """A path as text that can always be printed (bytes that are not UTF-8 shown as \\xNN escapes)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def os_error_text(exc: OSError, path: str | os.PathLike | None = None) -> str:
    """'disk full: PATH' for an OSError (`path` overrides the file the error names)."""
    what = _ERRNO_TEXT.get(exc.errno) or (exc.strerror or str(exc) or type(exc).__name__)
    where = path if path is not None else exc.filename
    return f"{what}: {shown(where)}" if where is not None else what


def _output_error(exc: OSError, path: Path, consequence: str) -> OutputError:
    what = _ERRNO_TEXT.get(exc.errno) or (exc.strerror or str(exc))
    err = OutputError(f"{what}; {consequence}", path=shown(path))
    err.errno = exc.errno
    return err


# ----------------------------------------------------------------------------- checks before work starts

#: The entries a verb may find in its output folder: their names, or a test of an entry's path (True: ours).
Ours = Collection[str] | Callable[[Path], bool]


def _is_ours(entry: Path, ours: Ours) -> bool:
    return bool(ours(entry)) if callable(ours) else entry.name in ours


def other_entries(folder: str | os.PathLike, ours: Ours) -> list[str]:
    """The names of the entries of `folder` that are not `ours` (sorted; a folder's name ends in '/'); [] for a
    folder that does not exist."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(
        e.name + ("/" if e.is_dir() and not e.is_symlink() else "") for e in folder.iterdir() if not _is_ours(e, ours)
    )


def other_entries_error(
    folder: str | os.PathLike,
    others: list[str],
    *,
    field: str | None = "out",
    advice: str = "use a new or empty folder",
) -> OutputError:
    listed = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    return OutputError(
        f"holds other files ({listed}); nothing was written: {advice}",
        path=shown(folder),
        field=field,
    )


def refuse_other_entries(folder: str | os.PathLike, ours: Ours, *, field: str | None = "out") -> None:
    """The tool never writes into a folder holding someone else's files: `folder` must be new, empty or hold only
    `ours` (a verb's own earlier output); otherwise OutputError naming up to five of the other entries."""
    others = other_entries(folder, ours)
    if others:
        raise other_entries_error(folder, others, field=field)


def _first_existing(path: Path) -> Path:
    p = Path(os.path.abspath(path))
    while not os.path.lexists(p) and p.parent != p:
        p = p.parent
    return p


def _check_writable(folder: Path, target: Path, field: str | None) -> None:
    if not folder.is_dir():
        raise OutputError(
            f"{shown(folder)} is a file, so nothing can be written inside it", path=shown(target), field=field
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        try:
            read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
        except OSError:
            read_only = False
        what = "read-only file system" if read_only else "permission denied"
        raise OutputError(f"{what}: cannot write in {shown(folder)}", path=shown(target), field=field)


def check_output_folder(target: str | os.PathLike, *, field: str | None = "out", ours: Ours | None = None) -> Path:
    """Refuse an output folder that cannot be written: an existing file, a dangling link, a read-only place; with
    `ours` (the entries the verb writes), a folder holding anything else (refuse_other_entries)."""
    target = Path(target)
    if os.path.lexists(target) and not target.exists():
        raise OutputError("is a link to nothing", path=shown(target), field=field)
    if target.exists() and not target.is_dir():
        raise OutputError("is a file, not a folder", path=shown(target), field=field)
    if target.is_dir():
        _check_writable(target, target, field)
        _check_writable(_first_existing(Path(os.path.realpath(target)).parent), target, field)
    else:
        _check_writable(_first_existing(target.parent), target, field)
    if ours is not None:
        refuse_other_entries(target, ours, field=field)
    return target


def check_output_file(path: str | os.PathLike, *, field: str | None = "out") -> Path:
    """Refuse an output file that cannot be written: an existing folder, a read-only place."""
    path = Path(path)
    if path.is_dir():
        raise OutputError("is a folder; give a file name", path=shown(path), field=field)
    if os.path.lexists(path) and not path.exists():
        raise OutputError("is a link to nothing", path=shown(path), field=field)
    _check_writable(_first_existing(path.parent), path, field)
    return path


# ----------------------------------------------------------------------------- writing


def atomic_write(path: Path, data: bytes) -> None:
    """Write to a uniquely named temporary file beside `path` and rename it over `path`.

    Any OSError (a full disk, a read-only place) leaves `path` as it was and no temporary file behind; it
    is raised as OutputError naming `path`.
    """
    path = Path(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; these are shared documents
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OutputError):
            raise
        raise _output_error(exc, path, "the file was not changed") from exc
    except BaseException:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise


def _swap_in(src: Path, dst: Path) -> None:
    """Rename src over dst (a file over a file, a folder over a folder); the old dst is removed after."""
    if src.is_dir() and not src.is_symlink() and os.path.lexists(dst):
        old = dst.with_name(f".{dst.name}.old.{os.getpid()}.{id(src):x}")
        os.rename(dst, old)
        os.rename(src, dst)
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)
        return
    if dst.is_dir() and not dst.is_symlink():
        old = dst.with_name(f".{dst.name}.old.{os.getpid()}.{id(src):x}")
        os.rename(dst, old)
        os.rename(src, dst)
        shutil.rmtree(old, ignore_errors=True)
        return
    os.replace(src, dst)


def _kind(path: Path) -> str:
    return "link" if path.is_symlink() else "folder" if path.is_dir() else "file"


def _others_at_commit(tmp: Path, target: Path, ours: Ours) -> list[str]:
    """The entries of an existing target that are neither `ours` nor written now in `tmp` (an entry of a written
    name but of another kind, a file where a folder was written, counts as another's).

    A folder written now replaces its old version whole, so its old contents are looked at too: a file in it
    of a kind written there now (a figures/old_name.png beside the new .png files) is earlier output, anything
    else (figures/notes.txt, a subfolder the tool did not write) is someone else's and named as 'figures/notes.txt'.
    """
    if not target.is_dir():
        return []
    return _others_in(tmp, target, ours, "")


def _others_in(tmp: Path, target: Path, ours: Ours | None, prefix: str) -> list[str]:
    written = {name: _kind(tmp / name) for name in os.listdir(tmp)}
    suffixes = {Path(n).suffix for n, k in written.items() if k == "file" and Path(n).suffix}
    others = []
    for entry in sorted(target.iterdir(), key=lambda e: e.name):
        kind = _kind(entry)
        shown_name = prefix + entry.name + ("/" if kind == "folder" else "")
        if entry.name in written:
            if kind == "folder" and written[entry.name] == "folder":
                others += _others_in(tmp / entry.name, entry, None, shown_name)
            elif kind not in (written[entry.name], "link"):
                others.append(shown_name)
        elif ours is not None:  # the target itself: its earlier output is `ours`
            if not _is_ours(entry, ours):
                others.append(shown_name)
        elif kind != "file" or entry.suffix not in suffixes:  # inside a folder written now
            others.append(shown_name)
    return others


def _commit(tmp: Path, target: Path, last: Iterable[str]) -> None:
    """Make the finished temporary folder the target: one rename for a new (or empty) target; into an
    existing folder, each entry is renamed over its old version (files named in `last` at the end)."""
    if not os.path.lexists(target):
        os.rename(tmp, target)
        return
    if target.is_dir() and not any(target.iterdir()):
        os.rename(tmp, target)  # a rename may replace an empty folder
        return
    last = list(last)
    for name in sorted(os.listdir(tmp), key=lambda n: (n in last, last.index(n) if n in last else 0, n)):
        _swap_in(tmp / name, target / name)
    os.rmdir(tmp)


@contextmanager
def output_folder(
    target: str | os.PathLike, *, last: Iterable[str] = (), field: str | None = "out", ours: Ours = ()
) -> Iterator[Path]:
    """Yield a temporary folder beside `target`; on success it becomes `target`, on any error it is removed.

    A new target appears with everything in it or not at all. An existing target may hold only the entries
    written now and `ours` (the verb's own earlier output, e.g. a report's figures when this run writes none):
    anything else is refused, up front and again before the first rename (OutputError 'holds other files
    (...)', nothing written). Each entry written replaces its old version by a rename once everything was
    written (so a full disk changes nothing in it); earlier entries of `ours` not written now are left as they
    are. `last` names entries renamed in last (a manifest). OSErrors are raised as OutputError naming the target
    ('disk full', 'permission denied' ...).
    """
    target = check_output_folder(target, field=field, ours=ours if ours else None)
    real = Path(os.path.realpath(target))
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent))
        os.chmod(tmp, 0o755)
    except OSError as exc:
        raise _output_error(exc, target, "nothing was written") from exc
    try:
        yield tmp
        others = _others_at_commit(tmp, real, ours)  # before the first rename
        if not others:
            _commit(tmp, real, last)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _output_error(exc, target, "nothing was written") from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if others:  # someone's file appeared in the target while the output was written
        shutil.rmtree(tmp, ignore_errors=True)
        raise other_entries_error(target, others, field=field)


def write_folder(
    target: str | os.PathLike,
    files: dict[str, bytes],
    *,
    last: Iterable[str] = (),
    ours: Ours = (),
    field: str | None = "out",
) -> None:
    """Write a folder of files (name -> bytes) whole or not at all, into a folder that is new, empty or holds
    only these names and `ours` (see output_folder)."""
    with output_folder(target, last=last, ours=ours or tuple(files), field=field) as tmp:
        for name, data in files.items():
            atomic_write(tmp / name, data)


# ----------------------------------------------------------------------------- reading


def read_bounded(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes.

    A FIFO, socket or device is refused without blocking (opened non-blocking, checked with fstat); a
    larger file raises OSError(EFBIG). Errors are OSErrors naming the path.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, f"not a regular file ({file_kind(st.st_mode)})", os.fspath(path))
        if st.st_size > limit:
            raise OSError(errno.EFBIG, f"file too large ({st.st_size} bytes; at most {limit})", os.fspath(path))
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise OSError(errno.EFBIG, f"file too large (more than {limit} bytes)", os.fspath(path))
        return b"".join(chunks)
    finally:
        os.close(fd)


def file_kind(mode: int) -> str:
    """'a FIFO', 'a socket', 'a device' ... for a stat mode that is not a regular file."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


class StrictJSONError(ValueError):
    """A JSON text the tool refuses: malformed, NaN/Infinity, a number out of range, a duplicate key, too deep."""


def _no_constant(name: str) -> Any:
    raise StrictJSONError(f"{name} is not a valid JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise StrictJSONError(f"number {text} is out of range")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJSONError(f"duplicate key {key!r} in one object (a key may appear once)")
            seen.add(key)
    return out


def _depth_problem(value: Any, text: str) -> str | None:
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None  # cannot nest deeper than it has brackets
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if d > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels"
        children = v.values() if isinstance(v, dict) else v
        stack.extend((c, d + 1) for c in children if isinstance(c, dict | list))
    return None


def json_problem(exc: ValueError, *, one_line: bool = False) -> str:
    """Why JSON text was refused, in the tool's words ('not valid JSON: line 2, column 15'; json's own text names
    its parser's expectations and character offsets). `one_line`: the text is one line of a file whose line the
    caller names, so only the column is given."""
    if isinstance(exc, json.JSONDecodeError):
        where = f"column {exc.colno}" if one_line and exc.lineno == 1 else f"line {exc.lineno}, column {exc.colno}"
        return f"not valid JSON: {where}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    return f"not valid JSON: {exc}"  # StrictJSONError: NaN/Infinity, a duplicate key, too deep (the tool's words)


def loads_strict(text: str) -> Any:
    """Parse JSON, refusing NaN/Infinity, numbers out of float range, duplicate keys and nesting deeper than
    MAX_DEPTH; raises StrictJSONError (a ValueError; json.JSONDecodeError stays as it is for malformed text)."""
    try:
        value = json.loads(
            text, parse_constant=_no_constant, parse_float=_finite_float, object_pairs_hook=_no_duplicates
        )
    except RecursionError as exc:
        raise StrictJSONError(f"nested deeper than {MAX_DEPTH} levels") from exc
    if isinstance(value, dict | list):
        problem = _depth_problem(value, text)
        if problem:
            raise StrictJSONError(problem)
    return value
