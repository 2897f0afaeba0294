"""`reviewer site init`: a site.json for a folder of downloads, from the scenes' common footprint (or a
lon/lat box) on a sensible grid: 30 m in the UTM zone of the Landsat scenes, 10 m for a Sentinel-2-only
folder, else the finest product resolution in the UTM zone of the footprint's centre.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewer.errors import RecordError, SiteError
from reviewer.fileio import atomic_write
from reviewer.record.decode import file_geometry
from reviewer.record.site import load_site, site_id
from reviewer.schemas import problems

#: grid cell by the families present, first match wins (30 m Landsat, 10 m Sentinel-2)
GRID_RULES = (("landsat_c2l2", 30.0), ("sentinel2_l2a", 10.0))


@dataclass(frozen=True)
class Footprint:
    scene_id: str
    family: str
    resolution_m: float
    crs: object
    transform: object
    shape: tuple[int, int]

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        t, (rows, cols) = self.transform, self.shape
        xs = (t.c, t.c + cols * t.a)
        ys = (t.f, t.f + rows * t.e)
        return min(xs), min(ys), max(xs), max(ys)


def footprints(site_dir: str | Path, index=None) -> tuple[list[Footprint], list]:
    """Each scene the scan uses, with its extent from one of its files' headers, and the files not used with
    the scan's reasons (ScanProblem). `index`: the folder's scan already made; else it is scanned here, each
    scene on its own extent, so a file refused for its content (already-scaled values, a truncated band) is
    not counted as a scene: what site init tells is what the scan will use. The scan here checks each file's
    header and byte ranges and reads the pixels only of scenes without a quality layer (their values are
    what can refuse them); it measures no fractions."""
    from reviewer.record.scan import ScanProblem, scan_record
    from reviewer.record.site import unplaced_site

    root = Path(site_dir).resolve()
    if index is None:
        index, _ = scan_record(unplaced_site(root), fractions=False)
    out, bad = [], list(index.problems)
    for scene in index.scenes:
        product = scene.product_spec
        if not scene.record:
            continue
        token = product.quality.band if product.quality and product.quality.band in scene.files else None
        rel = scene.files[token] if token else next(iter(scene.files.values()))
        try:
            crs, transform, shape = file_geometry(root / rel)
        except RecordError as exc:
            bad.append(ScanProblem(rel, exc.message))
            continue
        out.append(Footprint(scene.scene_id, product.family, product.resolution_m, crs, transform, shape))
    return out, bad


def _utm(lon: float, lat: float) -> str:
    zone = min(60, int((lon + 180.0) // 6) + 1)
    return f"EPSG:{32600 + zone if lat >= 0 else 32700 + zone}"


def lonlat_bounds(fp: Footprint) -> tuple[float, float, float, float]:
    """A footprint's (W, S, E, N) in degrees."""
    from rasterio.warp import transform_bounds

    return transform_bounds(fp.crs, "EPSG:4326", *fp.bounds, densify_pts=21)


def _overlaps(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def check_bbox(bbox_lonlat) -> None:
    """A lon/lat box the user typed: W < E and S < N, inside -180..180 and -90..90; else one SiteError."""
    w, s, e, n = bbox_lonlat
    text = " ".join(f"{v:g}" for v in bbox_lonlat)
    if not (-180 <= w <= 180 and -180 <= e <= 180 and -90 <= s <= 90 and -90 <= n <= 90):
        raise SiteError(f"--bbox {text}: longitudes must lie in -180..180 and latitudes in -90..90", field="bbox")
    if w >= e or s >= n:
        what = []
        if w > e or s > n:
            what.append("swapped" if (w > e and s > n) else ("west > east" if w > e else "south > north"))
        if w == e or s == n:
            what.append("empty (zero width or height)")
        raise SiteError(f"--bbox {text} is {', '.join(what)}: give W S E N with W < E and S < N", field="bbox")


def place_groups(prints: list[Footprint]) -> list[tuple[list[Footprint], tuple[float, float, float, float]]]:
    """Scenes grouped by place: footprints that overlap (directly or through others) form one group; each
    group with its lon/lat footprint (the union of its scenes' boxes). The groups of most scenes come first;
    groups of as many scenes keep the order of their first scene in `prints` (the scan's: by date)."""
    boxes = [lonlat_bounds(f) for f in prints]
    parent = list(range(len(prints)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(prints)):
        for j in range(i):
            if _overlaps(boxes[i], boxes[j]):
                parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(prints)):
        groups.setdefault(root(i), []).append(i)
    out = []
    for members in groups.values():
        bb = [boxes[i] for i in members]
        union = (min(b[0] for b in bb), min(b[1] for b in bb), max(b[2] for b in bb), max(b[3] for b in bb))
        out.append(([prints[i] for i in members], union))
    return sorted(out, key=lambda g: -len(g[0]))


def _nearest(prints: list[Footprint], bbox_lonlat, k: int = 3) -> str:
    """The k places (groups of overlapping scenes) nearest a lon/lat box, each named by its nearest scene,
    how many more lie there and its footprint, with the distance (km, great circle from the box's centre to the
    footprint's nearest point): three dates of one time series are one place, not the three nearest scenes."""
    cx, cy = (bbox_lonlat[0] + bbox_lonlat[2]) / 2, (bbox_lonlat[1] + bbox_lonlat[3]) / 2

    def km(box) -> float:
        w, s, e, n = box
        x, y = min(max(cx, w), e), min(max(cy, s), n)  # the box's point nearest the centre
        p1, p2, dl = math.radians(cy), math.radians(y), math.radians(x - cx)
        c = math.sin(p1) * math.sin(p2) + math.cos(p1) * math.cos(p2) * math.cos(dl)
        return 6371.0 * math.acos(max(-1.0, min(1.0, c)))

    places = []
    for members, box in place_groups(prints):
        first = min(members, key=lambda f: km(lonlat_bounds(f)))
        more = f" and {len(members) - 1} more scene(s) at {_box_text(box)}" if len(members) > 1 else ""
        places.append((km(box), f"{first.scene_id}{more} ({km(box):.0f} km away)"))
    return "; ".join(text for _, text in sorted(places)[:k])


def _grid_choice(prints: list[Footprint], bbox_lonlat) -> tuple[str, float, tuple[float, float]]:
    """(CRS, cell size, grid origin) for the site. With a lon/lat box, only the scenes it touches count:
    a Landsat-based site takes the UTM zone of the box's centre, a Sentinel-2-only site its tile's zone."""
    from rasterio.warp import transform_bounds

    if bbox_lonlat is not None:
        return _bbox_grid(prints, bbox_lonlat)
    for family, res in GRID_RULES:
        same = [f for f in prints if f.family == family]
        if same and (family == "landsat_c2l2" or len(same) == len(prints)):
            crs = Counter(f.crs.to_string() for f in same).most_common(1)[0][0]
            ref = next(f for f in same if f.crs.to_string() == crs)
            return crs, res, (ref.transform.c, ref.transform.f)  # cells aligned with the scene's own pixels
    if bbox_lonlat is not None:
        w, s, e, n = bbox_lonlat
    else:
        boxes = [transform_bounds(f.crs, "EPSG:4326", *f.bounds) for f in prints]
        w, s, e, n = (
            max(b[0] for b in boxes),
            max(b[1] for b in boxes),
            min(b[2] for b in boxes),
            min(b[3] for b in boxes),
        )
    res = min(f.resolution_m for f in prints) if prints else 30.0
    return _utm((w + e) / 2, (s + n) / 2), res, (0.0, 0.0)


def _bbox_grid(prints: list[Footprint], bbox_lonlat) -> tuple[str, float, tuple[float, float]]:
    w, s, e, n = bbox_lonlat
    centre = _utm((w + e) / 2, (s + n) / 2)
    if prints and all(f.family == "sentinel2_l2a" for f in prints):
        crs = Counter(f.crs.to_string() for f in prints).most_common(1)[0][0]  # the tile's own zone
        ref = next(f for f in prints if f.crs.to_string() == crs)
        return crs, 10.0, (ref.transform.c, ref.transform.f)
    landsat = [f for f in prints if f.family == "landsat_c2l2"]
    if landsat:
        ref = next((f for f in landsat if f.crs.to_string() == centre), None)
        # cells aligned with a scene's own pixels where one lies in that zone, else on the zone's 30 m grid
        return centre, 30.0, (ref.transform.c, ref.transform.f) if ref else (15.0, 15.0)
    res = min(f.resolution_m for f in prints) if prints else 30.0
    return centre, res, (0.0, 0.0)


def _inner_bounds(fp: Footprint, crs: str) -> tuple[float, float, float, float]:
    """A box in `crs` inside the footprint: each side as far in as its edge reaches there (the east-most point
    of its west edge ...). A footprint in another CRS is turned and bent in the site's (a lon/lat AppEEARS export
    on a UTM grid): its bounding box would take in corners of no data; in its own CRS it is its bounds."""
    from rasterio.warp import transform

    w, s, e, n = fp.bounds
    t = [k / 20 for k in range(21)]

    def edge(xs, ys):
        return transform(fp.crs, crs, xs, ys)

    west = edge([w] * 21, [s + k * (n - s) for k in t])[0]
    east = edge([e] * 21, [s + k * (n - s) for k in t])[0]
    south = edge([w + k * (e - w) for k in t], [s] * 21)[1]
    north = edge([w + k * (e - w) for k in t], [n] * 21)[1]
    return max(west), max(south), min(east), min(north)


def _box_text(b) -> str:
    return "W {:.3f} S {:.3f} E {:.3f} N {:.3f}".format(*b)


def _snap(bounds, res: float, origin, outward: bool) -> list[float]:
    w, s, e, n = bounds
    ox, oy = origin
    lo, hi = (math.floor, math.ceil) if outward else (math.ceil, math.floor)
    return [
        ox + lo(round((w - ox) / res, 6)) * res,
        oy + lo(round((s - oy) / res, 6)) * res,
        ox + hi(round((e - ox) / res, 6)) * res,
        oy + hi(round((n - oy) / res, 6)) * res,
    ]


def propose_site(
    site_dir: str | Path,
    *,
    bbox_lonlat: tuple[float, float, float, float] | None = None,
    name: str | None = None,
    theme: str = "region",
    role: str = "region",
    index=None,
) -> tuple[dict[str, Any], str, list]:
    """The site.json document, a one-line account of where its grid came from, and the folder's files the
    scan does not use, with why (`index`: the folder's scan without site.json, when already made)."""
    from rasterio.warp import transform_bounds

    root = Path(site_dir).resolve()
    prints, bad = footprints(root, index)
    if not prints and bbox_lonlat is None:
        from reviewer.record.scan import why_none

        why = why_none(bad)
        raise SiteError(
            f"no scene of the record found to take a footprint from{why}; give --bbox W S E N (lon/lat) to make a "
            "site before its downloads",
            path=root,
        )
    if bbox_lonlat is not None:
        check_bbox(bbox_lonlat)
        touched = [f for f in prints if _overlaps(lonlat_bounds(f), bbox_lonlat)]
        if prints and not touched:
            raise SiteError(
                f"--bbox {' '.join(f'{v:g}' for v in bbox_lonlat)} touches none of the {len(prints)} scenes in "
                f"the folder; the nearest: {_nearest(prints, bbox_lonlat)}",
                path=root,
                field="bbox",
            )
        prints = touched
    elif len(place_groups(prints)) > 1:
        groups = place_groups(prints)
        raise SiteError(
            f"the {len(prints)} scenes cover {len(groups)} places that do not overlap ("
            + "; ".join(f"{len(g)} scene(s) at {_box_text(b)}" for g, b in groups)
            + "); give --bbox W S E N around one of them",
            path=root,
        )
    crs, res, origin = _grid_choice(prints, bbox_lonlat)
    if bbox_lonlat is not None:
        box = _snap(transform_bounds("EPSG:4326", crs, *bbox_lonlat, densify_pts=21), res, origin, outward=True)
        source = "the given lon/lat box"
    else:
        boxes = [_inner_bounds(f, crs) for f in prints]
        common = (
            max(b[0] for b in boxes),
            max(b[1] for b in boxes),
            min(b[2] for b in boxes),
            min(b[3] for b in boxes),
        )
        box = _snap(common, res, origin, outward=False)
        source = f"the common footprint of {len(prints)} scene(s)"
    if box[2] <= box[0] or box[3] <= box[1]:
        raise SiteError(
            f"the {len(prints)} scenes have no common footprint (they cover different places); give --bbox W S E N",
            path=root,
        )
    doc = {
        "id": site_id(name or root.name),
        "name": name or root.name,
        "kind": "region",
        "theme": theme,
        "role": role,
        "bbox": [round(v, 6) for v in box],
        "crs": crs,
        "resolution": res,
    }
    found = problems(doc, "site")
    if found:
        raise SiteError(f"the proposed site does not match site.schema.json: {found[0][1]}", field=found[0][0])
    rows, cols = round((box[3] - box[1]) / res), round((box[2] - box[0]) / res)
    return doc, f"{crs}, {res:g} m, {rows} x {cols} pixels, from {source}", bad


def init_site(site_dir: str | Path, *, force: bool = False, **kwargs) -> tuple[Path, str, list]:
    """Write site.json (atomically) and check that it loads; an existing one is kept unless `force`.
    (path, account, files not used): see propose_site."""
    root = Path(site_dir)
    if not root.is_dir():
        raise SiteError("not a folder", path=root)
    target = root / "site.json"
    if target.exists() and not force:
        raise SiteError("already has a site.json (use --force to replace it)", path=target)
    doc, account, unused = propose_site(root, **kwargs)
    atomic_write(target, (json.dumps(doc, indent=2) + "\n").encode("utf-8"))
    load_site(root)
    return target, account, unused
