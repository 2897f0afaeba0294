"""Import a library without the heavy optional modules it would load and this tool never uses."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def without(*optional: str, unless_loaded: str) -> Iterator[None]:
    """Within the block, `import` of each of `optional` raises ImportError, so the library `unless_loaded` imported
    in it takes its fallback; nothing is hidden when that library (or the module) is already loaded.

    Used for sqlite-utils (pandas, numpy: 0.3 s, only for tables made from data; the store's tables come from
    migrations) and rasterio (boto3 and the AWS modules: ~0.25 s of the app's launch, only for s3:// sessions;
    local files and tar members open the same way, and GDAL's /vsis3/ still reads AWS_* variables).
    """
    hidden = [m for m in optional if m not in sys.modules and unless_loaded not in sys.modules]
    for module in hidden:
        sys.modules[module] = None  # type: ignore[assignment]  # `import module` raises ImportError
    try:
        yield
    finally:
        for module in hidden:
            del sys.modules[module]
