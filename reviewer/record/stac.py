"""Scenes described by a STAC item beside their band files (the Element84 / AWS Sentinel-2 L2A COG layout:
`B04.tif`, `SCL.tif`, ... and `<item id>.json`), read through pystac.

The item says what the file names do not: the scene id, date, tile, platform and processing baseline
(so BOA_ADD_OFFSET: 0 before baseline 04.00, -1000 from it, 0 again when the archive already applied it).
Which catalog product an item is comes from the product row's `stac` block.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from reviewer.record.catalog import Product, catalog
from reviewer.record.decode import baseline_offset
from reviewer.record.reader_errors import reader_errors

MAX_ITEM_BYTES = 4 << 20


@dataclass
class ItemScene:
    """What one STAC item gives the scan: a scene of a catalog product and the local files it claims."""

    product: Product
    scene_id: str
    date: dt.date
    tile: str | None
    platform: str
    bands: dict[str, Path]
    claimed: list[Path]
    extra: dict[str, Any] = field(default_factory=dict)


def looks_like_item(path: Path) -> bool:
    """A cheap look before pystac: a small JSON file that names a STAC version and is a Feature."""
    try:
        if path.stat().st_size > MAX_ITEM_BYTES:
            return False
        with open(path, "rb") as fh:
            head = fh.read(65536)
    except OSError:
        return False
    return b'"stac_version"' in head and b'"Feature"' in head


def _product_for(props: dict[str, Any]) -> Product | None:
    """The catalog product whose `stac.match` properties the item has."""
    for product in catalog().products.values():
        rule = product.raw.get("stac")
        if rule and all(props.get(k) == v for k, v in rule["match"].items()):
            return product
    return None


def read_item(path: Path, local: set[Path]) -> ItemScene | str:
    """The scene of a STAC item, or why it cannot be used (one line)."""
    import pystac

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(doc, dict):
            raise TypeError(f"a JSON {type(doc).__name__}, not an object")
        # a 1.x item is read as it is: migrating it loads every extension's hooks (0.11 s, a third of a
        # tile's scan) and renames no property read here (constellation, s2:*, grid:code, platform)
        old = not str(doc.get("stac_version", "")).startswith("1.")
        item = pystac.Item.from_dict(doc, migrate=old)
    # pystac's, JSON's and the file's errors of a bad item; AttributeError: pystac's from_dict meets a member of
    # the wrong JSON type ("assets": [] or "properties": 3)
    except reader_errors(AttributeError) as exc:
        return f"STAC item that cannot be read ({type(exc).__name__}: {str(exc)[:160]})"
    props = item.properties
    product = _product_for(props)
    if product is None:
        return f"STAC item {item.id}: its product is not in the catalog"
    rule = product.raw["stac"]
    bands: dict[str, Path] = {}
    claimed = [path]
    for asset in item.assets.values():
        name = Path(urlparse(asset.href).path).name
        candidate = path.parent / name
        if candidate not in local:
            continue
        claimed.append(candidate)
        token = Path(name).name.split(".")[0]
        if token in product.bands:
            bands[token] = candidate
    if not bands:
        return f"STAC item {item.id}: none of its band files is in this folder"
    when = item.datetime or item.common_metadata.start_datetime
    tile = next((str(props[k]) for k in rule.get("tile_properties", []) if props.get(k)), None)
    platform = str(props.get(rule.get("platform_property", "platform"), product.platform)).lower().replace("-", "")
    extra = _offset(product, props, when.date())
    return ItemScene(product, item.id, when.date(), tile, platform, bands, claimed, extra)


def _offset(product: Product, props: dict[str, Any], date: dt.date) -> dict[str, Any]:
    rule = product.raw.get("radiometric_offset") or {}
    stac = product.raw["stac"]
    quant = float(rule["quantification"])  # the catalogue's (products.json): a STAC item does not state it
    baseline = props.get(stac["baseline_property"])
    if props.get(stac.get("offset_applied_property", "")) is True:
        return {"offset": 0.0, "quantification": quant, "offset_source": "STAC item (offset already applied)"}
    if baseline:
        offset = baseline_offset(rule, str(baseline))
        return {
            "offset": offset,
            "quantification": quant,
            "offset_source": f"STAC item (processing baseline {baseline})",
        }
    offset = 0.0
    for step in rule.get("by_date", []):
        if date.isoformat() >= step["from"]:
            offset = float(step["offset"])
    return {"offset": offset, "quantification": quant, "offset_source": "acquisition date"}
