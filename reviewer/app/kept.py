"""A few things a worker made for the UI thread, kept by key: the Stack dock's choices per site index
(`composite_choices.site_choices`) and each site's boundary raster (`evidence_prep.site_boundary_raster`). The worker
that opens a site makes them, the UI thread then only reads them; the least recently used is dropped past `size`.
Any thread: a lock around each look-up and store (the making is outside it, so two threads may make the same thing
at once, and the second kept is as good as the first)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Kept(Generic[V]):
    """At most `size` values by key, the least recently used dropped first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        """The value kept under `key` (now the most recently used), or None."""
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, key: Hashable, value: V) -> V:
        """Keep `value` under `key`; returns it."""
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.size:
                self._values.popitem(last=False)
        return value

    def __len__(self) -> int:
        with self._lock:
            return len(self._values)
