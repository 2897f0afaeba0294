"""A site: its id, theme and role from site.json, and the grid every scene is read onto."""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from affine import Affine

from reviewer.errors import SiteError
from reviewer.fileio import StrictJSONError, json_problem, loads_strict, read_bounded
from reviewer.imports import without
from reviewer.record.reader_errors import FileFault, reader_errors, what_is_wrong
from reviewer.schemas import problems

with without("boto3", unless_loaded="rasterio"):  # no AWS modules: local files and tar members only
    import rasterio
    from rasterio.crs import CRS
    from rasterio.errors import CRSError

logger = logging.getLogger(__name__)

DEFAULT_RESOLUTION = 30.0
MAX_SITE_JSON_BYTES = 16 << 20
MAX_BOUNDARY_BYTES = 512 << 20


@dataclass(frozen=True)
class Site:
    """The site grid: CRS, transform and shape on which every date is compared."""

    dir: Path
    id: str
    name: str
    kind: str
    theme: str
    role: str
    bbox: tuple[float, float, float, float]
    crs: CRS
    resolution: float
    shape: tuple[int, int]
    boundary_path: Path | None = None
    doc: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    placed: bool = True  # False for a folder of downloads without site.json: no site grid yet

    @property
    def transform(self) -> Affine:
        w, _, _, n = self.bbox
        return Affine(self.resolution, 0.0, w, 0.0, -self.resolution, n)

    @cached_property
    def cell_m(self) -> tuple[float, float]:
        """A grid cell's ground size in metres (east-west, north-south), for scale bars, areas and sizes in km.

        A lon/lat grid's cell is measured on its CRS's ellipsoid at the site's centre (a degree of longitude is
        about 111.32 km x cos(latitude)): its resolution is in degrees, and taken as metres a 0.1 degree
        ERA5-Land cell was 0.1 m. A projected grid's cell is its resolution in the CRS's linear unit (metre,
        US survey foot); UTM and MODIS sinusoidal keep true scale along parallels (UTM within 0.1%)."""
        r = self.resolution
        if self.crs is None or not r:
            return (r, r)
        if self.crs.is_geographic:
            from pyproj import CRS as ProjCRS
            from pyproj import Geod

            geod = ProjCRS.from_wkt(self.crs.to_wkt()).get_geod() or Geod(ellps="WGS84")
            w, s, e, n = self.bbox
            lon, lat = (w + e) / 2, (s + n) / 2
            east_west = geod.inv(lon - r / 2, lat, lon + r / 2, lat)[2]
            north_south = geod.inv(lon, max(lat - r / 2, -90.0), lon, min(lat + r / 2, 90.0))[2]
            return (float(east_west), float(north_south))
        try:
            unit = float(self.crs.linear_units_factor[1])
        except CRSError:  # a projected CRS without a defined unit: take it as metres
            unit = 1.0
        return (r * unit, r * unit)

    @property
    def pixel_area_km2(self) -> float:
        """A cell's ground area. For a lon/lat grid, a cell at the site's centre latitude: a cell's area follows
        cos(latitude), so at the edges of a 0.6 degree tall site at 45.75 N it is 0.5% off (an area counted
        there), at those of a 10 degree tall one about 9%: make such sites on a UTM grid (`reviewer site init`)."""
        x_m, y_m = self.cell_m
        return x_m * y_m / 1e6

    @property
    def width_km(self) -> float:
        return self.shape[1] * self.cell_m[0] / 1000.0

    @cached_property
    def boundary_mask(self) -> np.ndarray | None:
        """Pixels inside the site boundary (reprojected from the boundary file's CRS), or None."""
        if self.boundary_path is None:
            return None
        from rasterio.features import geometry_mask

        inside = ~geometry_mask(
            self.boundary_geometries(), out_shape=self.shape, transform=self.transform, all_touched=False
        )
        if not inside.any():
            raise SiteError("the boundary does not overlap the site grid", path=self.boundary_path)
        return inside

    def boundary_geometries(self) -> list[dict]:
        """Boundary polygons as GeoJSON mappings in the site CRS, whatever the boundary file's CRS."""
        return list(self._boundary_geometries)

    @cached_property
    def _boundary_geometries(self) -> list[dict]:
        """Read and reprojected once per Site (a failure is not cached: it raises again)."""
        if self.boundary_path is None:
            return []
        from rasterio.warp import transform_geom

        try:
            if self.boundary_path.suffix.lower() in (".geojson", ".json"):
                # GeoJSON is lon/lat (RFC 7946) unless a legacy "crs" member names another CRS
                doc = loads_strict(read_bounded(self.boundary_path, MAX_BOUNDARY_BYTES).decode("utf-8"))
                if not isinstance(doc, dict):
                    raise FileFault(f"a JSON {type(doc).__name__}, not a GeoJSON object")
                features = doc.get("features") or ([doc] if doc.get("type") == "Feature" else [{"geometry": doc}])
                if not isinstance(features, list) or not all(isinstance(f, dict) for f in features):
                    raise FileFault("its features are not a list of GeoJSON objects")
                geoms = [f["geometry"] for f in features if f.get("geometry")]
                src_crs = (doc.get("crs") or {}).get("properties", {}).get("name", "EPSG:4326")
            else:
                import geopandas as gpd

                frame = gpd.read_file(self.boundary_path)
                geoms = [g.__geo_interface__ for g in frame.geometry if g is not None]
                src_crs = frame.crs.to_wkt() if frame.crs is not None else "EPSG:4326"
            if not geoms:
                raise SiteError("the boundary file holds no geometry", path=self.boundary_path)
            if src_crs == "EPSG:4326":
                _check_lonlat(geoms)
            with rasterio.Env():  # GDAL/PROJ messages go to logging, not stderr
                return [transform_geom(src_crs, self.crs, g) for g in geoms]
        except SiteError:
            raise
        # pyogrio/GDAL/PROJ failures of a bad boundary file; AttributeError: a GeoJSON member of the wrong JSON type
        except reader_errors(AttributeError) as exc:
            raise SiteError(
                f"cannot read the boundary file: {_boundary_problem(exc)}", path=self.boundary_path
            ) from exc

    def boundary_lines(self) -> list[np.ndarray]:
        """Boundary rings in pixel (row, col) coordinates, for drawing on the canvas."""
        inv = ~self.transform
        rings = []
        for geom in self.boundary_geometries():
            polygons = geom["coordinates"] if geom["type"] == "MultiPolygon" else [geom["coordinates"]]
            for polygon in polygons:
                xy = np.asarray(polygon[0], dtype=float)
                cols, rows = inv @ (xy[:, 0], xy[:, 1])
                rings.append(np.column_stack([rows, cols]))
        return rings


NO_SITE_HINT = "make one with: reviewer site init {dir} [--bbox W S E N]"


def unplaced_site(site_dir: str | Path) -> Site:
    """A folder of downloads without site.json: scenes are indexed on their own extents, not a site grid."""
    site_dir = Path(site_dir)
    if not site_dir.is_dir():
        raise SiteError("not a folder", path=site_dir)
    name = site_dir.resolve().name or "site"
    return Site(
        dir=site_dir.resolve(),
        id=site_id(name),
        name=name,
        kind="region",
        theme="region",
        role="region",
        bbox=(0.0, 0.0, 0.0, 0.0),
        crs=None,
        resolution=0.0,
        shape=(0, 0),
        placed=False,
    )


def site_id(name: str) -> str:
    """A site id (schema pattern ^[A-Za-z0-9][A-Za-z0-9_.-]*$) made from a folder name."""
    text = "".join(c if c.isascii() and (c.isalnum() or c in "_.-") else "-" for c in name).strip("-._")
    return text or "site"


def load_site(site_dir: str | Path) -> Site:
    """Read and check site.json; the grid comes from bbox + resolution (or shape)."""
    site_dir = Path(site_dir)
    path = site_dir / "site.json"
    if not site_dir.is_dir():
        raise SiteError("not a folder", path=site_dir)
    if not path.is_file():
        raise SiteError(
            "no site.json: this folder is not a site record yet; " + NO_SITE_HINT.format(dir=site_dir), path=site_dir
        )
    try:
        doc = loads_strict(read_bounded(path, MAX_SITE_JSON_BYTES).decode("utf-8"))
    except OSError as exc:
        raise SiteError(f"cannot read: {exc.strerror or exc}", path=path) from exc
    except (ValueError, UnicodeDecodeError) as exc:  # malformed, NaN/Infinity, duplicate keys, too deep
        raise SiteError(json_problem(exc), path=path) from exc
    if not isinstance(doc, dict):
        raise SiteError("not a JSON object", path=path)
    try:
        found = problems(doc, "site")
    except FileNotFoundError:  # schema not written yet
        found = []
    if found:
        fieldname, message = found[0]
        raise SiteError(f"does not match site.schema.json: {message}", path=path, field=fieldname)
    for key in ("id", "bbox", "crs"):
        if key not in doc:
            raise SiteError("missing", path=path, field=key)
    try:
        with rasterio.Env():  # PROJ's "crs not found" goes to logging, not stderr before our message
            crs = CRS.from_user_input(doc["crs"])
    except CRSError as exc:
        raise SiteError(f"unknown CRS {doc['crs']!r}", path=path, field="crs") from exc
    for key in ("bbox", "resolution", "shape"):
        values = doc.get(key, [])
        for v in values if isinstance(values, list) else [values]:
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise SiteError(f"needs finite numbers, got {values!r}", path=path, field=key)
    if len(doc["bbox"]) != 4:
        raise SiteError("bbox must be [west, south, east, north]", path=path, field="bbox")
    w, s, e, n = (float(v) for v in doc["bbox"])
    if not (e > w and n > s):
        raise SiteError(
            "bbox must be [west, south, east, north] with east > west and north > south", path=path, field="bbox"
        )
    if crs.is_geographic and not (-180 <= w and e <= 360 and -90 <= s and n <= 90):
        # a UTM box left under a crs edited to lon/lat: PROJ failed on it later ("utm: Invalid latitude")
        raise SiteError(
            f"a lon/lat box ({doc['crs']}) lies within lon -180..360, lat -90..90, not {[w, s, e, n]}: "
            "give the CRS its numbers are in",
            path=path,
            field="bbox",
        )
    if crs.is_geographic and "resolution" not in doc and "shape" not in doc:
        raise SiteError(
            f'a lon/lat site ({doc["crs"]}) needs "resolution" in degrees (e.g. 0.00025 for about 28 m) or '
            '"shape" [rows, cols]; or let `reviewer site init` write a site on a metric UTM grid',
            path=path,
            field="resolution",
        )
    if "shape" in doc:
        rows, cols = (int(v) for v in doc["shape"])
        resolution = float(doc.get("resolution", (e - w) / cols))
    else:
        resolution = float(doc.get("resolution", DEFAULT_RESOLUTION))
        if resolution <= 0 or not math.isfinite((n - s) / resolution * ((e - w) / resolution)):
            raise SiteError(f"resolution {resolution!r} gives no usable grid", path=path, field="resolution")
        rows, cols = round((n - s) / resolution), round((e - w) / resolution)
    if rows <= 0 or cols <= 0 or rows * cols > 20000 * 20000:
        raise SiteError(f"grid of {rows} x {cols} pixels is not usable", path=path, field="bbox")
    boundary = None
    if doc.get("boundary"):
        boundary = (site_dir / doc["boundary"]).resolve()
        if not boundary.is_file():
            raise SiteError("boundary file not found", path=boundary, field="boundary")
    return Site(
        dir=site_dir.resolve(),
        id=str(doc["id"]),
        name=str(doc.get("name", doc["id"])),
        kind=doc.get("kind", "core"),
        theme=doc.get("theme", "region"),
        role=doc.get("role", "region"),
        bbox=(w, s, e, n),
        crs=crs,
        resolution=resolution,
        shape=(rows, cols),
        boundary_path=boundary,
        doc=doc,
    )


def _boundary_problem(exc: Exception) -> str:
    """What is wrong with a boundary file, in the tool's words (json's, pyogrio's and GDAL's texts name the path
    GDAL was given, a driver prefix to try or Python's unpacking)."""
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError | StrictJSONError):
        return json_problem(exc)
    if isinstance(exc, OSError) and exc.strerror and not type(exc).__module__.startswith(("rasterio", "pyogrio")):
        return f"unreadable ({exc.strerror})"
    if isinstance(exc, FileFault):
        return str(exc)
    if isinstance(exc, (ValueError, TypeError, KeyError, IndexError, AttributeError)):
        return "its geometries are not valid GeoJSON (each position a [lon, lat] pair, each ring closed)"
    return what_is_wrong(exc)


def _check_lonlat(geoms: list[dict]) -> None:
    """A lon/lat GeoJSON's positions lie in lon -180..180, lat -90..90 (an easting, or lat/lon swapped, does not:
    PROJ then failed with 'Full reprojection failed', an internal error)."""
    for g in geoms:
        flat = np.asarray(_positions(g.get("coordinates")), dtype=float).reshape(-1, 2)
        bad = ~((np.abs(flat[:, 0]) <= 180) & (np.abs(flat[:, 1]) <= 90))
        if bad.any():
            lon, lat = flat[np.argmax(bad)]
            raise FileFault(
                f"a position ({lon:g}, {lat:g}) lies outside lon -180..180, lat -90..90: a GeoJSON is lon/lat "
                "(RFC 7946) unless a 'crs' member names another CRS"
            )


def _positions(coords: Any) -> list:
    """Every [x, y] position of a GeoJSON coordinates array, at any depth (a point, a ring, polygons)."""
    if isinstance(coords, list) and coords and all(isinstance(v, int | float) for v in coords):
        if len(coords) < 2:
            raise FileFault(f"a position of {len(coords)} number(s): each position is a [lon, lat] pair")
        return [coords[:2]]
    if isinstance(coords, list):
        return [p for c in coords for p in _positions(c)]
    raise FileFault("a geometry without coordinates")
