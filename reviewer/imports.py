"""Import a library without the heavy optional modules it would load and this tool never uses."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.abc import MetaPathFinder


class _Refuse(MetaPathFinder):
    """An import finder that refuses `names` (and their submodules) to one thread, and is silent for every other
    module and thread."""

    def __init__(self, names: frozenset[str], thread: int) -> None:
        self.names, self.thread = names, thread

    def find_spec(self, fullname: str, path=None, target=None):  # noqa: ANN001 - importlib's signature
        if fullname.partition(".")[0] in self.names and threading.get_ident() == self.thread:
            raise ModuleNotFoundError(f"No module named {fullname!r} (left out on purpose)", name=fullname)
        return None


@contextmanager
def without(*optional: str, unless_loaded: str) -> Iterator[None]:
    """Within the block, `import` of each of `optional` raises ImportError in this thread, so the library
    `unless_loaded` imported in it takes its fallback; nothing is refused when that library (or the module) is
    already loaded.

    Only the thread in the block is refused, and only while it is in it: another thread importing one of `optional`
    at that moment gets it (the modules were hidden in `sys.modules` for the whole process before, and such an import
    would have failed). A module another thread is importing at that moment is in `sys.modules` already and is
    not refused either.

    Used for sqlite-utils (pandas, numpy: 0.3 s, only for tables made from data; the store's tables come from
    migrations) and rasterio (boto3 and the AWS modules: ~0.25 s of the app's launch, only for s3:// sessions;
    local files and tar members open the same way, and GDAL's /vsis3/ still reads AWS_* variables). Neither library
    has an option of its own to leave them out: each tries the import and falls back on ImportError.
    """
    names = frozenset(m for m in optional if m not in sys.modules)
    if unless_loaded in sys.modules or not names:
        yield
        return
    finder = _Refuse(names, threading.get_ident())
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
