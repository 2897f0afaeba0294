"""The product catalog (products.json, validated by schemas/products.schema.json) and file-name recognition.

Adding a product means adding a row to products.json: the reader, scanner and stacker are generic over it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

CATALOG_PATH = Path(__file__).with_name("products.json")


@dataclass(frozen=True)
class BandSpec:
    token: str
    name: str
    dtype: str
    kind: str = "physical"
    fill: float | None = None
    scale: float = 1.0
    offset: float = 0.0
    valid: tuple[float, float] | None = None
    saturated: float | None = None
    unit: str = ""


@dataclass(frozen=True)
class QualitySpec:
    band: str
    kind: str  # bits | classes | bitfield
    flags: dict[str, tuple[int, ...]]
    default_mask: tuple[str, ...]
    cloud_flags: tuple[str, ...]
    field_bits: tuple[int, int] | None = None


@dataclass(frozen=True)
class Product:
    id: str
    family: str
    platform: str
    sensor: str
    label: str
    record: bool
    pattern_source: str  # the provider's file name pattern (regex), compiled on first use (pattern)
    date_rule: dict[str, str]
    location: tuple[str, ...]
    resolution_m: float
    first_date: dt.date | None
    last_date: dt.date | None
    bands: dict[str, BandSpec]
    quality: QualitySpec | None
    required: tuple[str, ...]
    raw: dict[str, Any] = field(repr=False, compare=False, hash=False)

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """The file name pattern, compiled when a name is first matched: a scan of STAC items or a render of a
        stored index matches none, and compiling every product's took 4 ms of each process."""
        return re.compile(self.pattern_source)

    def band_by_name(self, name: str) -> BandSpec | None:
        """The band whose common name is `name` (e.g. 'red'), or the band token itself."""
        if name in self.bands:
            return self.bands[name]
        for spec in self.bands.values():
            if spec.name == name:
                return spec
        return None

    @property
    def slc_off_after(self) -> dt.date | None:
        value = self.raw.get("slc_off_after")
        return dt.date.fromisoformat(value) if value else None


@dataclass(frozen=True)
class FileMatch:
    """What a file name says: which product, scene, band and date."""

    product: Product
    scene_id: str
    band: str
    date: dt.date
    tier: str | None
    location: str | None
    level: str | None
    resolution_m: float | None = None  # the cell size the name states (SAFE _10m/_20m/_60m copies)


@dataclass(frozen=True)
class ContainerMatch:
    """A multi-layer file recognised by name: its scene and which layer inside is which band."""

    product: Product
    scene_id: str
    date: dt.date
    location: str | None
    format: str
    layers: dict[str, str]
    grid: str | None


def _parse_date(rule: dict[str, str], groups: dict[str, str]) -> dt.date:
    if rule["group"] == "yeardoy":
        return dt.date(int(groups["year"]), 1, 1) + dt.timedelta(days=int(groups["doy"]) - 1)
    text = groups[rule["group"]]
    fmt = rule.get("format", "%Y%m%d")
    if fmt == "%Y%m%d" and len(text) == 8:  # the common case, without strptime's cost
        return dt.date(int(text[:4]), int(text[4:6]), int(text[6:]))
    return dt.datetime.strptime(text, fmt).date()


def _product(row: dict[str, Any]) -> Product:
    bands = {
        token: BandSpec(
            token=token,
            name=spec["name"],
            dtype=spec["dtype"],
            kind=spec.get("kind", "physical"),
            fill=spec.get("fill"),
            scale=spec.get("scale", 1.0),
            offset=spec.get("offset", 0.0),
            valid=tuple(spec["valid"]) if "valid" in spec else None,
            saturated=spec.get("saturated"),
            unit=spec.get("unit", ""),
        )
        for token, spec in row["bands"].items()
    }
    q = row.get("quality")
    quality = (
        QualitySpec(
            band=q["band"],
            kind=q["kind"],
            flags={k: tuple(v) for k, v in q["flags"].items()},
            default_mask=tuple(q["default_mask"]),
            cloud_flags=tuple(q["cloud_flags"]),
            field_bits=tuple(q["field_bits"]) if q.get("field_bits") else None,
        )
        if q
        else None
    )
    date = lambda s: dt.date.fromisoformat(s) if s else None  # noqa: E731
    return Product(
        id=row["id"],
        family=row["family"],
        platform=row["platform"],
        sensor=row["sensor"],
        label=row["label"],
        record=row["record"],
        pattern_source=row["pattern"],
        date_rule=row["date"],
        location=tuple(row.get("location", ())),
        resolution_m=float(row.get("resolution_m", 30)),
        first_date=date(row.get("first_date")),
        last_date=date(row.get("last_date")),
        bands=bands,
        quality=quality,
        required=tuple(row.get("required", ())),
        raw=row,
    )


class Catalog:
    """The loaded catalog: products by id, reject rules, sensor colours."""

    def __init__(self, doc: dict[str, Any], *, path: Path | None = None, raw: bytes | None = None) -> None:
        """`raw`: the bytes `doc` was parsed from, so a catalogue that passed its schema before is not checked
        again (reviewer.schemas.validate_once); without them `doc` is checked now."""
        from reviewer.schemas import validate, validate_once

        if raw is not None:
            validate_once(doc, raw, "products", path=path)
        else:
            validate(doc, "products", path=path)
        self.products = {row["id"]: _product(row) for row in doc["products"]}
        self._doc = doc
        self.sensor_colors: dict[str, str] = doc.get("sensor_colors", {})
        self.platform_aliases: dict[str, str] = doc.get("platform_aliases", {})
        self.file_kinds: dict[str, str] = doc.get("file_kinds", {})
        self._last: Product | None = None

    # the name patterns below are compiled once, on first use (a scan of STAC items matches no name)

    @cached_property
    def rejects(self) -> list[tuple[re.Pattern[str], str]]:
        return [(re.compile(r["pattern"]), r["reason"]) for r in self._doc["rejects"]]

    @cached_property
    def companions(self) -> list[tuple[re.Pattern[str], str]]:
        return [(re.compile(r["pattern"]), r["role"]) for r in self._doc.get("companions", [])]

    @cached_property
    def _containers(self) -> list[tuple[re.Pattern[str], Product, dict[str, Any]]]:
        """(compiled name pattern, product, box) of every container (HDF4/HDF5 granule) the catalog names:
        a scan asks this of every file of the record, most of them GeoTIFFs."""
        return [
            (re.compile(box["pattern"]), product, box)
            for product in self.products.values()
            for box in product.raw.get("containers", ())
            if "pattern" in box
        ]

    def match(self, filename: str) -> FileMatch | None:
        """Recognise a file by the provider's own product ID; None when no product matches."""
        # files of one product come together in a folder walk: try the last product that matched first
        order = [self._last] if self._last else []
        for product in order + list(self.products.values()):
            m = product.pattern.match(filename)
            if not m:
                continue
            self._last = product
            g = {k: v for k, v in m.groupdict().items() if v is not None}
            loc = "/".join(g[k] for k in product.location if k in g) or None
            return FileMatch(
                product=product,
                scene_id=g["scene"],
                band=g["band"],
                date=_parse_date(product.date_rule, g),
                tier=g.get("tier"),
                location=loc,
                level=g.get("level"),
                resolution_m=float(g["res"]) if "res" in g else None,
            )
        return None

    def match_alias(self, filename: str) -> FileMatch | None:
        """A per-layer file in another provider's naming (AppEEARS: MOD11A2.061_LST_Day_1km_doy2024001_aid0001.tif)."""
        for product in self.products.values():
            for alias in product.raw.get("aliases", ()):
                m = re.match(alias["pattern"], filename)
                if not m:
                    continue
                g = {k: v for k, v in m.groupdict().items() if v is not None}
                return FileMatch(
                    product=product,
                    scene_id=alias["scene"].format(**g),
                    band=alias["layers"][g["layer"]],
                    date=_parse_date(product.date_rule, g),
                    tier=None,
                    location="/".join(g[k] for k in product.location if k in g) or None,
                    level=None,
                )
        return None

    def match_container(self, filename: str) -> ContainerMatch | None:
        """A whole granule in one file (MODIS HDF4, VIIRS HDF5) recognised by the provider's name."""
        for pattern, product, box in self._containers:
            m = pattern.match(filename)
            if not m:
                continue
            g = {k: v for k, v in m.groupdict().items() if v is not None}
            return ContainerMatch(
                product=product,
                scene_id=g["scene"],
                date=_parse_date(product.date_rule, g),
                location="/".join(g[k] for k in product.location if k in g) or None,
                format=box["format"],
                layers=dict(box["layers"]),
                grid=box.get("grid"),
            )
        return None

    def reject_reason(self, filename: str) -> str | None:
        """Why a recognisable-but-unusable file (Level-1, legacy, C1) cannot be part of the record."""
        for pattern, reason in self.rejects:
            if pattern.search(filename):
                return reason
        return None

    def companion(self, filename: str) -> str | None:
        """What a product's or a site's own non-raster file is (metadata, the site definition), else None."""
        for pattern, role in self.companions:
            if pattern.search(filename):
                return role
        return None

    def kind_of(self, filename: str) -> str:
        """The format a file name says it is ('HDF4', 'netCDF', ...), for the reason a file is not used."""
        lower = filename.lower()
        for suffix in sorted(self.file_kinds, key=len, reverse=True):
            if lower.endswith(suffix):
                return self.file_kinds[suffix]
        return "file"


@cache
def catalog() -> Catalog:
    raw = CATALOG_PATH.read_bytes()
    return Catalog(json.loads(raw), path=CATALOG_PATH, raw=raw)
