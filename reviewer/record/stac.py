"""Scenes described by a STAC item beside their band files (the Element84 / AWS Sentinel-2 L2A COG layout:
`B04.tif`, `SCL.tif`, ... and `<item id>.json`): a STAC 1.x item read as the GeoJSON it is, an older one through
pystac's migration.

The item says what the file names do not: the scene id, date, tile, platform and processing baseline
(so BOA_ADD_OFFSET: 0 before baseline 04.00, -1000 from it, 0 again when the archive already applied it).
Which catalog product an item is comes from the product row's `stac` block.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from reviewer.record.catalog import Product, catalog
from reviewer.record.decode import baseline_offset
from reviewer.record.reader_errors import FileFault, reader_errors

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


def _item_problem(exc: Exception) -> str:
    """Why an item cannot be read, in the tool's words (json's and pystac's texts name their own classes)."""
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        from reviewer.fileio import json_problem

        return json_problem(exc)
    if isinstance(exc, FileFault):
        return str(exc)
    if isinstance(exc, OSError):
        return f"unreadable ({exc.strerror or 'input/output error'})"
    return "a member of the wrong JSON type or a field STAC requires is missing"


def read_item(path: Path, local: set[Path]) -> ItemScene | str:
    """The scene of a STAC item, or why it cannot be used (one line)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(doc, dict):
            raise FileFault(f"a JSON {type(doc).__name__}, not an object")
        if str(doc.get("stac_version", "")).startswith("1."):
            item_id, props, hrefs, when = _item_1x(doc)
        else:  # an older item: pystac migrates it to the current layout
            import pystac

            item = pystac.Item.from_dict(doc, migrate=True)
            item_id, props, hrefs = item.id, item.properties, [a.href for a in item.assets.values()]
            when = item.datetime or item.common_metadata.start_datetime
    # pystac's, JSON's and the file's errors of a bad item; AttributeError: pystac's from_dict meets a member of
    # the wrong JSON type ("assets": [] or "properties": 3)
    except reader_errors(AttributeError) as exc:
        return f"STAC item that cannot be read ({_item_problem(exc)})"
    product = _product_for(props)
    if product is None:
        return f"STAC item {item_id}: its product is not in the catalog"
    rule = product.raw["stac"]
    bands: dict[str, Path] = {}
    claimed = [path]
    for href in hrefs:
        name = Path(urlparse(href).path).name
        candidate = path.parent / name
        if candidate not in local:
            continue
        claimed.append(candidate)
        token = Path(name).name.split(".")[0]
        if token in product.bands:
            bands[token] = candidate
    if not bands:
        return f"STAC item {item_id}: none of its band files is in this folder"
    tile = next((str(props[k]) for k in rule.get("tile_properties", []) if props.get(k)), None)
    platform = str(props.get(rule.get("platform_property", "platform"), product.platform)).lower().replace("-", "")
    try:
        extra = _offset(product, props, when.date())
    except FileFault as exc:
        return f"STAC item {item_id}: {exc}"
    return ItemScene(product, item_id, when.date(), tile, platform, bands, claimed, extra)


def _item_1x(doc: dict[str, Any]) -> tuple[str, dict[str, Any], list[str], dt.datetime]:
    """(id, properties, asset hrefs, datetime) of a STAC 1.x item, read as the GeoJSON it is: what
    pystac.Item.from_dict gives for these fields, without its extension hooks, whose discovery (every
    installed package's entry points) cost 0.03 s of each process that reads an item, a third of a tile's
    scan. Wrong JSON types raise TypeError/ValueError (a reason, as from pystac)."""
    if doc.get("type") != "Feature":
        raise FileFault(f"type {doc.get('type')!r}, not a Feature")
    item_id, props, assets = doc.get("id"), doc.get("properties"), doc.get("assets", {})
    if not isinstance(item_id, str) or not isinstance(props, dict) or not isinstance(assets, dict):
        raise FileFault("id, properties or assets of the wrong JSON type")
    hrefs = []
    for key, asset in assets.items():
        if not isinstance(asset, dict) or not isinstance(asset.get("href"), str):
            raise FileFault(f"asset {key!r} has no href")
        hrefs.append(asset["href"])
    stamp = props.get("datetime") or props.get("start_datetime")
    if not isinstance(stamp, str):
        raise FileFault("no datetime or start_datetime")
    return item_id, props, hrefs, _rfc3339(stamp)


def _rfc3339(text: str) -> dt.datetime:
    """An RFC 3339 timestamp (2023-06-01T15:36:19.024Z); other ISO 8601 forms through pystac's parser."""
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        from pystac.utils import str_to_datetime

        try:
            return str_to_datetime(text)
        except (ValueError, OverflowError) as exc:
            raise FileFault(f"its datetime {text[:40]!r} is not a timestamp") from exc


def _offset(product: Product, props: dict[str, Any], date: dt.date) -> dict[str, Any]:
    rule = product.raw.get("radiometric_offset") or {}
    stac = product.raw["stac"]
    quant = float(rule["quantification"])  # the catalogue's (products.json): a STAC item does not state it
    baseline = props.get(stac["baseline_property"])
    if props.get(stac.get("offset_applied_property", "")) is True:
        return {"offset": 0.0, "quantification": quant, "offset_source": "STAC item (offset already applied)"}
    if baseline:
        if not re.fullmatch(r"\d+\.\d+", str(baseline)):
            key = stac["baseline_property"]
            raise FileFault(
                f"its {key} {str(baseline)[:40]!r} is not a baseline such as 04.00: the offset is not known"
            )
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
