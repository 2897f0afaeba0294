"""Bundles read in place: a Landsat .tar / .tar.gz from EarthExplorer is listed with tarfile and its members
are read through GDAL's /vsitar/, so the user never has to unpack four decades of downloads.

A member's path in the index is the bundle's relative path plus the member name
(`LC08_..._T1.tar/LC08_..._T1_SR_B4.TIF`); `gdal_path` turns that into the /vsitar/ path GDAL opens.
"""

from __future__ import annotations

import os
import tarfile
from dataclasses import dataclass
from pathlib import Path

TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz")


def is_tar(name: str) -> bool:
    return name.lower().endswith(TAR_SUFFIXES)


@dataclass(frozen=True)
class Member:
    """One regular file inside a bundle: where its bytes start and how many the bundle holds of it."""

    name: str
    size: int
    offset: int  # of the data in the (uncompressed) tar stream
    available: int  # bytes of it actually in the file (less than size when the bundle is truncated)


def list_tar(path: Path) -> tuple[list[Member], str | None]:
    """The bundle's regular-file members and, when the bundle is damaged, why (the members before the
    damage are still listed). An uncompressed tar is only read header by header (seeks, no data)."""
    members: list[Member] = []
    problem = None
    try:
        total = os.path.getsize(path)
        with tarfile.open(path, mode="r:*") as tf:
            compressed = not str(path).lower().endswith(".tar")
            while True:
                try:
                    info = tf.next()
                except (tarfile.TarError, EOFError, OSError) as exc:
                    problem = f"{_tar_problem(exc)} after {len(members)} member(s)"
                    break
                if info is None:
                    break
                if not info.isfile():
                    continue
                available = info.size if compressed else max(0, min(info.size, total - info.offset_data))
                members.append(Member(info.name, info.size, info.offset_data, available))
    except (tarfile.TarError, EOFError, OSError) as exc:
        if isinstance(exc, tarfile.ReadError) or not isinstance(exc, OSError):
            return [], "not a readable tar bundle (not a tar or compressed tar file, or its first header is damaged)"
        return [], f"not a readable tar bundle ({exc.strerror or 'input/output error'})"
    return members, problem


def _tar_problem(exc: BaseException) -> str:
    """What stopped the reading of a bundle part way, in the tool's words (tarfile's and zlib's texts are not)."""
    if isinstance(exc, EOFError) or "ended" in str(exc) or "truncated" in str(exc).lower():
        return "truncated: the bundle ends"
    if isinstance(exc, OSError) and exc.strerror:
        return f"unreadable bundle ({exc.strerror})"
    return "damaged tar bundle: a header or its compressed data is damaged"


def split_member(path: str | Path) -> tuple[str, str] | None:
    """(bundle path, member name) when `path` points inside a tar bundle, else None."""
    parts = Path(path).parts
    for i, part in enumerate(parts[:-1]):
        if is_tar(part):
            return str(Path(*parts[: i + 1])), "/".join(parts[i + 1 :])
    return None


def gdal_path(path: str | Path) -> str:
    """The path GDAL opens: /vsitar/ for a member of a bundle, the path itself otherwise."""
    inside = split_member(path)
    if inside is None:
        return str(path)
    bundle, member = inside
    return f"/vsitar/{bundle}/{member}"


class MemberFile:
    """A read-only file object over one member of an uncompressed tar (for the header checks)."""

    def __init__(self, bundle: str | Path, member: Member) -> None:
        self._fh = open(bundle, "rb")  # noqa: SIM115 - closed by close()/__exit__
        self._m = member
        self._pos = 0

    def seek(self, pos: int, whence: int = 0) -> int:
        self._pos = pos if whence == 0 else (self._pos + pos if whence == 1 else self._m.available + pos)
        return self._pos

    def read(self, n: int = -1) -> bytes:
        end = self._m.available if n < 0 else min(self._m.available, self._pos + n)
        if end <= self._pos:
            return b""
        self._fh.seek(self._m.offset + self._pos)
        data = self._fh.read(end - self._pos)
        self._pos += len(data)
        return data

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> MemberFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
