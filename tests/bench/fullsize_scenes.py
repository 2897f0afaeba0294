"""Full-size scenes for bench_fullsize.py, in the providers' real layouts (not a test module).

Written once under a cache folder (BENCH_CACHE, default ~/.cache/earthrecord-bench/fullsize):

- ``landsat/``: one Landsat 8 C2 L2 scene of 7,591 x 7,741 px as USGS distributes it (per-band COGs,
  deflate, 256 px tiles, internal overviews; fill outside a tilted footprint; MTL.txt), and ``landsat20/``:
  the same pixels under 20 dates (hard links: no extra disk), the generate bench's site;
- ``s2safe/``: one Sentinel-2 L2A tile of 10,980 px as ESA's SAFE (lossless JPEG2000: B02, B03, B04, B08 at
  10 m, SCL at 20 m; MTD_MSIL2A.xml), and ``s2cog/``: the same tile in the Element84 layout (COGs beside a
  STAC item).

The pixels are smooth synthetic fields with a little per-pixel noise (so deflate works about as hard as on
real scenes), clouds flagged in QA_PIXEL / SCL.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

import numpy as np
import rasterio
from affine import Affine

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

LS_SHAPE = (7591, 7741)
LS_CRS = "EPSG:32618"
LS_ORIGIN = (399885.0, 800415.0)  # UL corner, a 30 m grid of WRS-2 path 8 row 56 (Colombia)
LS_ID = "LC08_L2SP_008056_{d:%Y%m%d}_{p:%Y%m%d}_02_T1"
S2_SIZE = 10980
S2_TILE = "18NWM"
S2_ORIGIN = (499980.0, 800040.0)
S2_CRS = "EPSG:32618"


def cache_dir() -> Path:
    return Path(os.environ.get("BENCH_CACHE", Path.home() / ".cache" / "earthrecord-bench" / "fullsize"))


def _field(rng: np.random.Generator, shape: tuple[int, int], cell: int) -> np.ndarray:
    """A smooth-ish field in [0, 1): coarse noise repeated to full size (bilinear would cost minutes)."""
    coarse = rng.random((shape[0] // cell + 2, shape[1] // cell + 2), dtype=np.float32)
    return np.repeat(np.repeat(coarse, cell, 0), cell, 1)[: shape[0], : shape[1]]


def _footprint(shape: tuple[int, int], tilt_deg: float = 12.0) -> np.ndarray:
    """Pixels inside a tilted rectangle covering about two thirds of the grid (a Landsat scene's shape)."""
    rows, cols = shape
    a = np.deg2rad(tilt_deg)
    out = np.empty(shape, bool)
    c = np.arange(cols, dtype=np.float32) - cols / 2
    for r0 in range(0, rows, 512):
        r = np.arange(r0, min(rows, r0 + 512), dtype=np.float32)[:, None] - rows / 2
        u = c * np.cos(a) + r * np.sin(a)
        v = -c * np.sin(a) + r * np.cos(a)
        out[r0 : r0 + len(r)] = (np.abs(u) < cols * 0.41) & (np.abs(v) < rows * 0.41)
    return out


def _write_cog(path: Path, arr: np.ndarray, crs: str, transform: Affine, nodata) -> None:
    profile = dict(
        driver="COG", width=arr.shape[1], height=arr.shape[0], count=1, dtype=arr.dtype.name, crs=crs,
        transform=transform, nodata=nodata, compress="deflate", predictor=2, blocksize=256,
        overview_resampling="nearest", num_threads=1,
    )  # fmt: skip
    with rasterio.Env(GDAL_PAM_ENABLED="NO"), rasterio.open(path, "w", **profile) as dst:
        dst.write(arr, 1)


def _mtl(pid: str, date: dt.date, files: list[str]) -> str:
    w, n = LS_ORIGIN
    e, s = w + 30 * LS_SHAPE[1], n - 30 * LS_SHAPE[0]
    lines = [
        "GROUP = LANDSAT_METADATA_FILE",
        "  GROUP = PRODUCT_CONTENTS",
        f'    LANDSAT_PRODUCT_ID = "{pid}"',
        '    PROCESSING_LEVEL = "L2SP"',
        "    COLLECTION_NUMBER = 02",
        '    COLLECTION_CATEGORY = "T1"',
        *[f'    FILE_NAME_{f.rsplit(".", 1)[0][len(pid) + 1 :]} = "{f}"' for f in files],
        "  END_GROUP = PRODUCT_CONTENTS",
        "  GROUP = IMAGE_ATTRIBUTES",
        '    SPACECRAFT_ID = "LANDSAT_8"',
        '    SENSOR_ID = "OLI_TIRS"',
        "    WRS_PATH = 8",
        "    WRS_ROW = 56",
        f"    DATE_ACQUIRED = {date:%Y-%m-%d}",
        '    SCENE_CENTER_TIME = "15:20:00.0000000Z"',
        "  END_GROUP = IMAGE_ATTRIBUTES",
        "  GROUP = PROJECTION_ATTRIBUTES",
        '    MAP_PROJECTION = "UTM"',
        "    UTM_ZONE = 18",
        f"    REFLECTIVE_LINES = {LS_SHAPE[0]}",
        f"    REFLECTIVE_SAMPLES = {LS_SHAPE[1]}",
        f"    CORNER_UL_PROJECTION_X_PRODUCT = {w:.3f}",
        f"    CORNER_UL_PROJECTION_Y_PRODUCT = {n:.3f}",
        f"    CORNER_LR_PROJECTION_X_PRODUCT = {e:.3f}",
        f"    CORNER_LR_PROJECTION_Y_PRODUCT = {s:.3f}",
        "  END_GROUP = PROJECTION_ATTRIBUTES",
        "  GROUP = LEVEL2_SURFACE_REFLECTANCE_PARAMETERS",
        *[f"    REFLECTANCE_MULT_BAND_{b} = 2.75e-05" for b in range(1, 8)],
        *[f"    REFLECTANCE_ADD_BAND_{b} = -0.2" for b in range(1, 8)],
        "  END_GROUP = LEVEL2_SURFACE_REFLECTANCE_PARAMETERS",
        "END_GROUP = LANDSAT_METADATA_FILE",
        "END",
        "",
    ]
    return "\n".join(lines)


LS_BANDS = ("SR_B2", "SR_B3", "SR_B4", "SR_B5", "SR_B6", "SR_B7")


def build_landsat(root: Path) -> Path:
    """The one full scene (written once) and the 20-date site of hard links to its bands."""
    date0 = dt.date(2021, 7, 18)
    pid = LS_ID.format(d=date0, p=date0 + dt.timedelta(days=11))
    folder = root / "landsat" / pid
    done = folder / ".complete"
    if not done.exists():
        folder.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(31)
        inside = _footprint(LS_SHAPE)
        land = _field(rng, LS_SHAPE, 97)
        cloud = _field(rng, LS_SHAPE, 211) > 0.85
        water = land < 0.12
        t = Affine(30.0, 0.0, LS_ORIGIN[0], 0.0, -30.0, LS_ORIGIN[1])
        files = []
        base = {"SR_B2": 0.04, "SR_B3": 0.07, "SR_B4": 0.06, "SR_B5": 0.30, "SR_B6": 0.20, "SR_B7": 0.11}
        for band in LS_BANDS:
            rho = base[band] * (0.6 + 0.8 * land) + rng.integers(0, 8, LS_SHAPE, dtype=np.uint16) * 0.0004
            rho = np.where(water, 0.02, rho)
            rho = np.where(cloud, 0.6, rho)
            dn = np.clip((rho + 0.2) / 2.75e-5, 1, 65000).astype(np.uint16)
            dn[~inside] = 0
            name = f"{pid}_{band}.TIF"
            _write_cog(folder / name, dn, LS_CRS, t, 0)
            files.append(name)
            del rho, dn
        qa = np.full(LS_SHAPE, 21824, np.uint16)
        qa[water] = 21952
        qa[cloud] = 22280
        qa[~inside] = 1
        _write_cog(folder / f"{pid}_QA_PIXEL.TIF", qa, LS_CRS, t, None)
        files.append(f"{pid}_QA_PIXEL.TIF")
        radsat = np.zeros(LS_SHAPE, np.uint16)
        _write_cog(folder / f"{pid}_QA_RADSAT.TIF", radsat, LS_CRS, t, None)
        files.append(f"{pid}_QA_RADSAT.TIF")
        (folder / f"{pid}_MTL.txt").write_text(_mtl(pid, date0, files), encoding="utf-8")
        done.write_text("ok")
    _landsat20(root, folder, pid)
    return root / "landsat"


def _landsat20(root: Path, folder: Path, pid: str) -> None:
    """20 dates (every 32 days over two years) whose bands are hard links to the one scene's files."""
    out = root / "landsat20"
    if (out / ".complete").exists():
        return
    for k in range(20):
        d = dt.date(2014, 3, 1) + dt.timedelta(days=96 * k)  # 5 years, seasons spread
        new = LS_ID.format(d=d, p=d + dt.timedelta(days=11))
        dest = out / new
        dest.mkdir(parents=True, exist_ok=True)
        files = []
        for f in sorted(folder.glob("*.TIF")):
            name = new + f.name[len(pid) :]
            if not (dest / name).exists():
                os.link(f, dest / name)
            files.append(name)
        (dest / f"{new}_MTL.txt").write_text(_mtl(new, d, files), encoding="utf-8")
    (out / ".complete").write_text("ok")


def build_s2(root: Path) -> tuple[Path, Path]:
    """The Sentinel-2 tile as SAFE (JPEG2000) and as Element84 COGs; written once."""
    from tests.formats import mtd_msil2a

    when = "20230601T153619"
    shape = (S2_SIZE, S2_SIZE)
    safe_root, cog_root = root / "s2safe", root / "s2cog"
    if (safe_root / ".complete").exists() and (cog_root / ".complete").exists():
        return safe_root, cog_root
    rng = np.random.default_rng(32)
    land = _field(rng, shape, 113)
    bands = {}
    for band, base in (("B02", 0.04), ("B03", 0.07), ("B04", 0.06), ("B08", 0.30)):
        rho = base * (0.6 + 0.8 * land) + rng.integers(0, 8, shape, dtype=np.uint16) * 0.0004
        bands[band] = (rho * 10000 + 1000).astype(np.uint16)
    scl = np.full((S2_SIZE // 2, S2_SIZE // 2), 4, np.uint8)  # vegetation
    scl[_field(rng, scl.shape, 101) > 0.85] = 9  # cloud high probability
    safe = safe_root / f"S2A_MSIL2A_{when}_N0509_R111_T{S2_TILE}_20230601T204551.SAFE"
    img = safe / "GRANULE" / f"L2A_T{S2_TILE}_A041556_{when}" / "IMG_DATA"
    jp2 = dict(driver="JP2OpenJPEG", QUALITY=100, REVERSIBLE="YES", NUM_THREADS=1)
    for band, arr in bands.items():
        _write(img / "R10m" / f"T{S2_TILE}_{when}_{band}_10m.jp2", arr, 10.0, jp2)
    _write(img / "R20m" / f"T{S2_TILE}_{when}_SCL_20m.jp2", scl, 20.0, jp2)
    offsets = {b: -1000 for b in range(13)}
    (safe / "MTD_MSIL2A.xml").write_text(mtd_msil2a(baseline="05.09", offsets=offsets), encoding="utf-8")
    (safe_root / ".complete").write_text("ok")
    _s2_cog(cog_root, when, bands, scl)
    (cog_root / ".complete").write_text("ok")
    return safe_root, cog_root


def _write(path: Path, arr: np.ndarray, res: float, profile: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    t = Affine(res, 0.0, S2_ORIGIN[0], 0.0, -res, S2_ORIGIN[1])
    prof = dict(width=arr.shape[1], height=arr.shape[0], count=1, dtype=arr.dtype.name, crs=S2_CRS, transform=t)
    with rasterio.Env(GDAL_PAM_ENABLED="NO"), rasterio.open(path, "w", **prof, **profile, nodata=0) as dst:
        dst.write(arr, 1)


def _s2_cog(root: Path, when: str, bands: dict[str, np.ndarray], scl: np.ndarray) -> None:
    """The Element84 layout: <item id>/B04.tif ... and the STAC item JSON beside them."""
    import json

    import pystac

    item_id = f"S2A_{S2_TILE}_20230601_0_L2A"
    folder = root / item_id
    folder.mkdir(parents=True, exist_ok=True)
    cog = dict(driver="COG", compress="deflate", predictor=2, blocksize=512, overview_resampling="nearest")
    for band, arr in bands.items():
        _write(folder / f"{band}.tif", arr, 10.0, cog)
    _write(folder / "SCL.tif", scl, 20.0, cog)
    w, n = S2_ORIGIN
    item = pystac.Item(
        id=item_id,
        geometry={"type": "Polygon", "coordinates": [[[-75, 7.2], [-74, 7.2], [-74, 6.2], [-75, 6.2], [-75, 7.2]]]},
        bbox=[-75.0, 6.2, -74.0, 7.2],
        datetime=dt.datetime(2023, 6, 1, 15, 36, 19, tzinfo=dt.UTC),
        properties={
            "constellation": "sentinel-2",
            "platform": "sentinel-2a",
            "s2:product_type": "S2MSI2A",
            "s2:processing_baseline": "05.09",
            "s2:mgrs_tile": S2_TILE,
            "proj:epsg": 32618,
            "proj:bbox": [w, n - 109800, w + 109800, n],
        },
    )
    base = f"https://sentinel-cogs.s3.us-west-2.amazonaws.com/sentinel-s2-l2a-cogs/18/N/WM/2023/6/{item_id}"
    for token in [*bands, "SCL"]:
        item.add_asset(token.lower(), pystac.Asset(href=f"{base}/{token}.tif", media_type=pystac.MediaType.COG))
    (folder / f"{item_id}.json").write_text(json.dumps(item.to_dict(include_self_link=False)), encoding="utf-8")


if __name__ == "__main__":
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    print(build_landsat(root))
    if "--landsat-only" not in sys.argv:
        print(build_s2(root))
