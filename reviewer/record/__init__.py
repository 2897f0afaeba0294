"""record."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def without_boto3() -> Iterator[None]:
    """Import rasterio in this block without boto3 when neither is loaded yet (as `store._sqlite_utils` keeps
    pandas out of sqlite-utils).

    rasterio imports boto3 (and botocore, urllib3, s3transfer: ~0.25 s, a fifth of what the app's launch costs
    over bare napari) whenever it is installed (inspect-ai installs it), only to offer AWS sessions for s3://
    datasets; this package reads local files and tar members. Without boto3 rasterio opens them the same way
    (its DummySession), and GDAL's own /vsis3/ still reads the AWS_* variables.
    """
    hidden = "boto3" not in sys.modules and "rasterio" not in sys.modules
    if hidden:
        sys.modules["boto3"] = None  # type: ignore[assignment]  # `import boto3` raises ImportError
    try:
        yield
    finally:
        if hidden:
            del sys.modules["boto3"]
