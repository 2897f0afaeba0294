"""Product facts and scoring definitions pinned to numbers written here from the specification.

The synthetic writer and the reader take their numbers from the same catalogue (products.json), so a
wrong number there passes every round trip. These tests read each number through the catalogue's
public reader (`reviewer.record.catalog.catalog()`, `Product.band_by_name`) and the decoder, and compare
it with the value copied by hand from shared/reference/raw_record_facts.md ("facts L<n>" = its line n).
Worked examples (DN -> physical) are computed by hand in the comments, not by the code under test.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from reviewer.record.catalog import BandSpec, Product, catalog
from reviewer.record.decode import band_scaling, decode, flag_array, quality_nodata, radiometric_offset

LANDSAT = {  # product id -> (sensor family, first acquisition) ; facts L43-47
    "landsat4_tm_c2l2": ("TM", dt.date(1982, 8, 22)),
    "landsat5_tm_c2l2": ("TM", dt.date(1984, 3, 16)),
    "landsat7_etm_c2l2": ("ETM+", dt.date(1999, 5, 28)),
    "landsat8_oli_c2l2": ("OLI", dt.date(2013, 3, 18)),
    "landsat9_oli2_c2l2": ("OLI", dt.date(2021, 10, 31)),
}
TM_ETM_SR = ("SR_B1", "SR_B2", "SR_B3", "SR_B4", "SR_B5", "SR_B7")  # facts L31-40: TM/ETM+ have no SR_B6
OLI_SR = ("SR_B1", "SR_B2", "SR_B3", "SR_B4", "SR_B5", "SR_B6", "SR_B7")


def product(pid: str) -> Product:
    return catalog().products[pid]


def band(pid: str, token: str) -> BandSpec:
    return product(pid).bands[token]


def assert_band(spec: BandSpec, *, dtype: str, fill, scale: float, offset: float, valid=None) -> None:
    assert spec.dtype == dtype, spec.token
    assert spec.fill == fill, spec.token
    assert spec.scale == scale, spec.token  # the exact published number, not a near one
    assert spec.offset == offset, spec.token
    if valid is not None:
        assert spec.valid == valid, spec.token


# ----------------------------------------------------------------------------- Landsat Collection 2 Level-2


@pytest.mark.parametrize("pid", sorted(LANDSAT))
def test_landsat_c2l2_surface_reflectance_scaling(pid):
    # facts L13: SR_B* uint16, fill 0, scale 0.0000275, offset -0.2, valid DN 7273-43636
    family = LANDSAT[pid][0]
    tokens = OLI_SR if family == "OLI" else TM_ETM_SR
    sr = {t for t in product(pid).bands if t.startswith("SR_B")}
    assert sr == set(tokens)
    for token in tokens:
        assert_band(band(pid, token), dtype="uint16", fill=0, scale=2.75e-05, offset=-0.2, valid=(7273, 43636))
        assert band(pid, token).unit == "reflectance"


@pytest.mark.parametrize("pid", sorted(LANDSAT))
def test_landsat_c2l2_surface_temperature_scaling(pid):
    # facts L14: ST_B10 (OLI) / ST_B6 (TM, ETM+) uint16, fill 0, scale 0.00341802, offset 149.0 K, valid 293-65535
    token = "ST_B10" if LANDSAT[pid][0] == "OLI" else "ST_B6"
    assert_band(band(pid, token), dtype="uint16", fill=0, scale=0.00341802, offset=149.0, valid=(293, 65535))
    assert band(pid, token).unit == "K"
    # facts L18: ST_QA int16, fill -9999, scale 0.01
    assert_band(band(pid, "ST_QA"), dtype="int16", fill=-9999, scale=0.01, offset=0.0)


@pytest.mark.parametrize("pid", ["landsat4_tm_c2l2", "landsat5_tm_c2l2", "landsat7_etm_c2l2"])
def test_landsat_tm_etm_atmospheric_opacity(pid):
    # facts L19: SR_ATMOS_OPACITY (TM/ETM+) int16, fill -9999, scale 0.001
    assert_band(band(pid, "SR_ATMOS_OPACITY"), dtype="int16", fill=-9999, scale=0.001, offset=0.0)


@pytest.mark.parametrize("pid", sorted(LANDSAT))
def test_landsat_worked_examples_of_the_usgs_faq(pid):
    # facts L25: "SR DN 18639 gives 0.313. ST DN 44947 gives 302.6 K."
    #   18639 * 0.0000275 - 0.2 = 0.5125725 - 0.2 = 0.3125725
    #   44947 * 0.00341802 + 149.0 = 153.6297 + 149.0 = 302.6297
    # facts L5: scaling applies after masking fill: DN 0 (fill) is no value, not -0.2
    sr, _ = decode(np.array([18639, 0], np.uint16), band(pid, "SR_B3"))
    assert sr[0] == pytest.approx(0.3125725, abs=1e-6) and round(float(sr[0]), 3) == 0.313
    assert np.isnan(sr[1])
    token = "ST_B10" if LANDSAT[pid][0] == "OLI" else "ST_B6"
    st, _ = decode(np.array([44947, 0], np.uint16), band(pid, token))
    assert st[0] == pytest.approx(302.6297, abs=1e-3) and round(float(st[0]), 1) == 302.6
    assert np.isnan(st[1])
    # facts L13: DN 7273 and 43636 are the ends of the valid range (about 0.0 and 1.0 reflectance)
    ends, out = decode(np.array([7272, 7273, 43636, 43637], np.uint16), band(pid, "SR_B4"))
    assert ends[1] == pytest.approx(7273 * 2.75e-05 - 0.2, abs=1e-6)  # 0.0000750
    assert ends[2] == pytest.approx(43636 * 2.75e-05 - 0.2, abs=1e-6)  # 0.99999
    assert out.tolist() == [True, False, False, True]


@pytest.mark.parametrize("pid", sorted(LANDSAT))
def test_landsat_band_roles(pid):
    # facts L31-40: band mapping by role
    if LANDSAT[pid][0] == "OLI":
        roles = {"coastal": "SR_B1", "blue": "SR_B2", "green": "SR_B3", "red": "SR_B4", "nir": "SR_B5"}
        roles |= {"swir1": "SR_B6", "swir2": "SR_B7", "thermal": "ST_B10"}
    else:
        roles = {"blue": "SR_B1", "green": "SR_B2", "red": "SR_B3", "nir": "SR_B4", "swir1": "SR_B5"}
        roles |= {"swir2": "SR_B7", "thermal": "ST_B6"}
        assert product(pid).band_by_name("coastal") is None
    for role, token in roles.items():
        spec = product(pid).band_by_name(role)
        assert spec is not None and spec.token == token, role


@pytest.mark.parametrize("pid", sorted(LANDSAT))
def test_landsat_qa_pixel_bits(pid):
    # facts L51-65: QA_PIXEL bit 0 fill, 1 dilated cloud, 2 cirrus (OLI only; "Unused" for TM/ETM+),
    # 3 cloud, 4 cloud shadow, 5 snow, 6 clear, 7 water
    q = product(pid).quality
    assert q.band == "QA_PIXEL" and q.kind == "bits"
    assert band(pid, "QA_PIXEL").dtype == "uint16" and band(pid, "QA_PIXEL").kind == "quality"
    expected = {"fill": (0,), "dilated_cloud": (1,), "cloud": (3,), "shadow": (4,), "snow": (5,), "clear": (6,)}
    expected["water"] = (7,)
    if LANDSAT[pid][0] == "OLI":
        expected["cirrus"] = (2,)
    assert q.flags == expected
    # facts L20: the QA_PIXEL fill value is 1 (the fill bit set)
    assert quality_nodata(q) == 1
    # hand-made QA words: 21824 = bits 6, 8, 10, 12, 14 (clear, every confidence low);
    # 22280 = bits 3, 8, 9, 10, 12, 14 (cloud, cloud confidence high); 1 = fill; 16 = bit 4 (shadow); 32 = snow
    qa = np.array([21824, 22280, 1, 16, 32], np.uint16)
    assert flag_array(qa, q, "clear").tolist() == [True, False, False, False, False]
    assert flag_array(qa, q, "cloud").tolist() == [False, True, False, False, False]
    assert flag_array(qa, q, "fill").tolist() == [False, False, True, False, False]
    assert flag_array(qa, q, "shadow").tolist() == [False, False, False, True, False]
    assert flag_array(qa, q, "snow").tolist() == [False, False, False, False, True]


@pytest.mark.parametrize("pid", sorted(LANDSAT))
def test_landsat_qa_radsat_bits(pid):
    # facts L74-75: OLI bits 0-6 = bands 1-7; ETM+ (and TM, L76) bits 0-4 = bands 1-5, 5 = band 6, 6 = band 7
    sat = product(pid).raw["saturation"]
    assert sat["band"] == "QA_RADSAT"
    if LANDSAT[pid][0] == "OLI":
        expected = {f"SR_B{b}": b - 1 for b in range(1, 8)}
    else:
        expected = {"SR_B1": 0, "SR_B2": 1, "SR_B3": 2, "SR_B4": 3, "SR_B5": 4, "ST_B6": 5, "SR_B7": 6}
    assert sat["bits"] == expected


@pytest.mark.parametrize("pid", sorted(LANDSAT))
def test_landsat_archive_dates(pid):
    # facts L43-47 (archive extents), L110 (Landsat 7 SLC failure on 31 May 2003)
    p = product(pid)
    assert p.first_date == LANDSAT[pid][1]
    last = {"landsat4_tm_c2l2": dt.date(1993, 6, 24), "landsat5_tm_c2l2": dt.date(2012, 5, 5)}
    assert p.last_date == last.get(pid)
    assert p.slc_off_after == (dt.date(2003, 5, 31) if pid == "landsat7_etm_c2l2" else None)


def test_landsat_product_id_is_read_as_the_spec_names_it():
    # facts L28-29: LXSS_LLLL_PPPRRR_YYYYMMDD_yyyymmdd_CC_TX; YYYYMMDD is the acquisition date
    m = catalog().match("LC09_L2SP_124051_20240407_20240408_02_T1_SR_B1.TIF")
    assert m.product.id == "landsat9_oli2_c2l2" and m.band == "SR_B1"
    assert m.date == dt.date(2024, 4, 7) and m.tier == "T1" and m.level == "L2SP"
    assert m.scene_id == "LC09_L2SP_124051_20240407_20240408_02_T1"
    m = catalog().match("LT04_L2SP_124051_19880407_20200908_02_T1_ST_B6.TIF")
    assert m.product.id == "landsat4_tm_c2l2" and m.band == "ST_B6" and m.date == dt.date(1988, 4, 7)


# ----------------------------------------------------------------------------- Sentinel-2 L2A


S2 = "sentinel2_msi_l2a"
S2_BANDS = ("B01", "B02", "B03", "B04", "B05", "B06", "B07", "B08", "B8A", "B09", "B11", "B12")


def test_sentinel2_l2a_bands_nodata_and_quantification():
    # facts L189-190, L194-195: rho = (DN + BOA_ADD_OFFSET) / 10000, uint16, nodata 0; L199: no B10 in L2A
    p = product(S2)
    assert {t for t in p.bands if t != "SCL"} == set(S2_BANDS)
    for token in S2_BANDS:
        spec = band(S2, token)
        assert spec.dtype == "uint16" and spec.fill == 0, token
        assert spec.scale == 1 / 10000 and spec.offset == 0.0, token
    rule = p.raw["radiometric_offset"]
    assert rule["quantification"] == 10000
    assert rule["metadata"] == "MTD_MSIL2A.xml" and rule["element"] == "BOA_ADD_OFFSET"


def test_sentinel2_boa_add_offset_from_baseline_04_00(tmp_path):
    # facts L191: BOA_ADD_OFFSET = -1000 for processing baseline >= 04.00, from 25 Jan 2022; 0 before
    assert product(S2).raw["radiometric_offset"]["by_date"] == [{"from": "2022-01-25", "offset": -1000}]
    red = band(S2, "B04")
    jp2 = tmp_path / "T32TNS_20220125T101301_B04_10m.jp2"  # no MTD_MSIL2A.xml: the acquisition date decides
    before = radiometric_offset(product(S2), "B04", dt.date(2022, 1, 24), jp2, stop=tmp_path)
    after = radiometric_offset(product(S2), "B04", dt.date(2022, 1, 25), jp2, stop=tmp_path)
    assert (before["offset"], before["quantification"]) == (0.0, 10000.0)
    assert (after["offset"], after["quantification"]) == (-1000.0, 10000.0)
    # hand: DN 2000 -> 2000 / 10000 = 0.2 before; (2000 - 1000) / 10000 = 0.1 from PB 04.00; DN 0 is nodata
    assert band_scaling(red, after) == pytest.approx((0.0001, -0.1), abs=1e-12)
    old, _ = decode(np.array([2000, 0], np.uint16), red, before)
    new, _ = decode(np.array([2000, 0], np.uint16), red, after)
    assert old[0] == pytest.approx(0.2, abs=1e-6) and new[0] == pytest.approx(0.1, abs=1e-6)
    assert np.isnan(old[1]) and np.isnan(new[1])


def test_sentinel2_offsets_are_read_from_the_metadata_first(tmp_path):
    # facts L192-194: the offsets are per band in MTD_MSIL2A.xml (BOA_ADD_OFFSET_VALUES_LIST, PB >= 04.00 only);
    # read them rather than the date: reprocessed Collection-1 products carry PB 05.00 for old dates
    safe = tmp_path / "S2B_MSIL2A_20180705T101029_N0500_R022_T32TNS_20230801T120000.SAFE"
    granule = safe / "GRANULE" / "L2A_T32TNS" / "IMG_DATA" / "R10m"
    granule.mkdir(parents=True)
    rows = "".join(f'<BOA_ADD_OFFSET band_id="{i}">-1000</BOA_ADD_OFFSET>' for i in range(13))
    (safe / "MTD_MSIL2A.xml").write_text(
        "<Level-2A_User_Product><General_Info><Product_Image_Characteristics>"
        "<BOA_QUANTIFICATION_VALUE unit='none'>10000</BOA_QUANTIFICATION_VALUE>"
        f"<BOA_ADD_OFFSET_VALUES_LIST>{rows}</BOA_ADD_OFFSET_VALUES_LIST>"
        "</Product_Image_Characteristics></General_Info></Level-2A_User_Product>",
        encoding="utf-8",
    )
    jp2 = granule / "T32TNS_20180705T101029_B04_10m.jp2"
    got = radiometric_offset(product(S2), "B04", dt.date(2018, 7, 5), jp2, stop=tmp_path)
    assert (got["offset"], got["quantification"], got["offset_source"]) == (-1000.0, 10000.0, "MTD_MSIL2A.xml")


def test_sentinel2_scene_classification():
    # facts L203-216: SCL 0 no data, 1 saturated/defective, 2 dark area, 3 cloud shadows, 4 vegetation,
    # 5 not vegetated, 6 water, 7 unclassified, 8 cloud medium, 9 cloud high, 10 thin cirrus, 11 snow/ice
    q = product(S2).quality
    assert q.band == "SCL" and q.kind == "classes" and band(S2, "SCL").dtype == "uint8"
    f = q.flags
    assert f["fill"] == (0,) and f["saturated"] == (1,) and f["dark"] == (2,) and f["shadow"] == (3,)
    assert f["vegetation"] == (4,) and f["bare"] == (5,) and f["water"] == (6,) and f["unclassified"] == (7,)
    assert f["cloud"] == (8, 9) and f["cirrus"] == (10,) and f["snow"] == (11,)


# ----------------------------------------------------------------------------- MODIS


@pytest.mark.parametrize("pid", ["modis_terra_mod13q1", "modis_aqua_myd13q1"])
def test_mod13q1_myd13q1_vegetation_indices(pid):
    # facts L225-226: NDVI/EVI INT16, scale 0.0001, offset 0, fill -3000, valid -2000..10000
    for token in ("NDVI", "EVI"):
        assert_band(band(pid, token), dtype="int16", fill=-3000, scale=0.0001, offset=0.0, valid=(-2000, 10000))
    # hand: -3000 is fill (not out of range); -2000 -> -0.2; 5000 -> 0.5; 10000 -> 1.0; 10001 is out of range
    values, out = decode(np.array([-3000, -2000, 5000, 10000, 10001, -2001], np.int16), band(pid, "NDVI"))
    assert np.isnan(values[0]) and not out[0]
    assert values[1:4] == pytest.approx([-0.2, 0.5, 1.0], abs=1e-6)
    assert out.tolist() == [False, False, False, False, True, True]
    # facts L227: pixel reliability -1 fill/no data, 0 good, 1 marginal, 2 snow/ice, 3 cloudy
    q = product(pid).quality
    assert q.band == "pixel_reliability" and q.kind == "classes"
    assert (q.flags["fill"], q.flags["clear"], q.flags["marginal"], q.flags["snow"], q.flags["cloud"]) == (
        (-1,),
        (0,),
        (1,),
        (2,),
        (3,),
    )


@pytest.mark.parametrize("pid", ["modis_terra_mod10a1", "modis_aqua_myd10a1"])
def test_mod10a1_snow_cover(pid):
    # facts L246-257: NDSI_Snow_Cover uint8, valid 0-100, _FillValue 255, missing 200; 201 no decision,
    # 211 night, 237 inland water, 239 ocean, 250 cloud, 254 detector saturated
    spec = band(pid, "NDSI_Snow_Cover")
    assert spec.dtype == "uint8" and spec.fill == 255 and spec.valid == (0, 100) and spec.scale == 1.0
    f = product(pid).quality.flags
    assert set(f["fill"]) == {255, 200}
    assert f["no_decision"] == (201,) and f["night"] == (211,) and set(f["water"]) == {237, 239}
    assert f["cloud"] == (250,) and f["saturated"] == (254,)


def test_mod11a2_land_surface_temperature():
    # facts L277: LST_Day_1km / LST_Night_1km uint16, scale 0.02 K, offset 0, fill 0, valid 7500-65535
    pid = "modis_terra_mod11a2"
    for token in ("LST_Day_1km", "LST_Night_1km"):
        assert_band(band(pid, token), dtype="uint16", fill=0, scale=0.02, offset=0.0, valid=(7500, 65535))
    # hand: 15000 * 0.02 = 300.0 K; 7500 * 0.02 = 150.0 K; 0 is fill; 7499 is below the valid range
    values, out = decode(np.array([15000, 7500, 0, 7499], np.uint16), band(pid, "LST_Day_1km"))
    assert values[:2] == pytest.approx([300.0, 150.0], abs=1e-3)
    assert np.isnan(values[2]) and not out[2] and out[3]
    # facts L284: QC_Day bits 0-1 mandatory QA: 0 good, 2 not produced (cloud), 3 not produced (other)
    q = product(pid).quality
    assert q.band == "QC_Day" and q.kind == "bitfield" and q.field_bits == (0, 2)
    assert 0 in q.flags["clear"] and q.flags["cloud"] == (2,) and q.flags["fill"] == (3,)
    qc = np.array([0b00, 0b10, 0b11, 0b11111100], np.uint8)  # the last: mandatory bits 0 (good), others set
    assert flag_array(qc, q, "cloud").tolist() == [False, True, False, False]
    assert flag_array(qc, q, "clear").tolist() == [True, False, False, True]


# ----------------------------------------------------------------------------- VIIRS


def test_vnp13a1_vegetation_indices():
    # facts L330: VNP13A1 NDVI/EVI/EVI2 int16, scale 0.0001, fill -15000 (marked UNVERIFIED there: pinned
    # so that a change is a decision, not an accident); the valid range is UNVERIFIED and not pinned
    pid = "viirs_npp_vnp13a1"
    for token in ("NDVI", "EVI", "EVI2"):
        spec = band(pid, token)
        assert spec.dtype == "int16" and spec.fill == -15000 and spec.scale == 0.0001 and spec.offset == 0.0
    # facts L337-344: pixel_reliability 0 excellent, 7 cloud shadow, 8 snow/ice, 9 cloud, 10 estimated
    q = product(pid).quality
    assert q.band == "pixel_reliability" and q.kind == "classes"
    assert 0 in q.flags["clear"] and q.flags["shadow"] == (7,) and q.flags["snow"] == (8,)
    assert q.flags["cloud"] == (9,) and 10 in q.flags["estimated"]


def test_vnp21a2_land_surface_temperature():
    # facts L331: VNP21A2 LST_Day_1KM / LST_Night_1KM uint16, fill 0, scale 0.02, offset 0 (K), valid 7500-65535
    pid = "viirs_npp_vnp21a2"
    for token in ("LST_Day_1KM", "LST_Night_1KM"):
        assert_band(band(pid, token), dtype="uint16", fill=0, scale=0.02, offset=0.0, valid=(7500, 65535))


# ----------------------------------------------------------------------------- scoring definitions


def test_bootstrap_interval_is_the_2_5_and_97_5_percentiles():
    """The 95% percentile interval of bootstrap means: the 2.5th and 97.5th percentiles, in percent.

    Hand computation with numpy's default (linear, Hyndman-Fan type 7) percentile: for n sorted values
    v[0..n-1], percentile p sits at position h = p/100 * (n - 1), value v[floor h] + frac(h) * (v[floor h + 1] - v[floor h]).
    Column A, sorted: 0.20 0.40 0.45 0.50 0.55 0.60 0.62 0.70 0.80 0.84 1.00 (n = 11, n - 1 = 10)
      2.5:  h = 0.25 -> 0.20 + 0.25 * (0.40 - 0.20) = 0.25 -> 25.0 %
      97.5: h = 9.75 -> 0.84 + 0.75 * (1.00 - 0.84) = 0.96 -> 96.0 %
    (5/95 would give 30.0/92.0; 2.5/97.0 would give 25.0/95.2.)
    Column B = 1 - A: 2.5 -> 4.0 %, 97.5 -> 75.0 % (the mirror of A).
    """
    from reviewer.scoring.metrics import percentile_ci

    a = np.array([0.60, 0.20, 1.00, 0.45, 0.84, 0.50, 0.40, 0.70, 0.55, 0.80, 0.62])  # unsorted on purpose
    ci = percentile_ci(np.column_stack([a, 1.0 - a]))
    assert ci.shape == (2, 2)
    assert ci[:, 0] == pytest.approx([25.0, 96.0], abs=1e-9)
    assert ci[:, 1] == pytest.approx([4.0, 75.0], abs=1e-9)


def test_bootstrap_interval_of_a_constant_is_that_constant():
    from reviewer.scoring.metrics import percentile_ci

    ci = percentile_ci(np.full((1000, 1), 0.375))
    assert ci[:, 0] == pytest.approx([37.5, 37.5], abs=1e-9)


# ----------------------------------------------------------------------------- more catalogue numbers


def test_sentinel2_quantification_when_the_metadata_omits_it(tmp_path):
    # facts L190: QUANTIFICATION = 10000; a MTD_MSIL2A.xml without BOA_QUANTIFICATION_VALUE falls back to the
    # catalogue's value (the only other place the number lives), so DN 3000 at PB 04.00 -> (3000 - 1000) / 10000
    safe = tmp_path / "S2A_MSIL2A_20230705T101031_N0509_R022_T32TNS_20230705T160000.SAFE"
    granule = safe / "GRANULE" / "L2A_T32TNS" / "IMG_DATA" / "R10m"
    granule.mkdir(parents=True)
    rows = "".join(f'<BOA_ADD_OFFSET band_id="{i}">-1000</BOA_ADD_OFFSET>' for i in range(13))
    (safe / "MTD_MSIL2A.xml").write_text(
        f"<Level-2A_User_Product><BOA_ADD_OFFSET_VALUES_LIST>{rows}</BOA_ADD_OFFSET_VALUES_LIST></Level-2A_User_Product>",
        encoding="utf-8",
    )
    got = radiometric_offset(product(S2), "B04", dt.date(2023, 7, 5), granule / "x_B04_10m.jp2", stop=tmp_path)
    assert (got["offset"], got["quantification"]) == (-1000.0, 10000.0)
    values, _ = decode(np.array([3000], np.uint16), band(S2, "B04"), got)
    assert values[0] == pytest.approx(0.2, abs=1e-6)


#: facts L172-182, "HLS Guide v1.4" S2 -> OLI bandpass (sen2like S2L_Sbaf.py): OLI_like = slope * MSI + intercept
HLS_V14 = {
    "S2A": {
        "blue": (0.9778, -0.004),
        "green": (1.0053, -0.0009),
        "red": (0.9765, 0.0009),
        "nir": (0.9983, -0.0001),
        "swir1": (0.9987, -0.0011),
        "swir2": (1.003, -0.0012),
    },
    "S2B": {
        "blue": (0.9778, -0.004),
        "green": (1.0075, -0.0008),
        "red": (0.9761, 0.001),
        "nir": (0.9966, 0.0),
        "swir1": (1.000, -0.0003),
        "swir2": (0.9867, 0.0004),
    },
}


def test_hls_s2_to_oli_coefficients_and_their_source():
    from reviewer.record.stack import harmonization
    from reviewer.record.synthetic.common import HLS_S2_TO_OLI

    hls = harmonization()["hls_s2_to_oli"]
    assert "HLS" in hls["source"] and "v1.4" in hls["source"]
    got = {sc: {b: tuple(v) for b, v in bands.items()} for sc, bands in hls["spacecraft"].items()}
    assert got == HLS_V14
    assert HLS_S2_TO_OLI == HLS_V14  # the demo writer applies the catalogue's, not a copy


def test_worldcover_classes_and_the_cropland_the_generator_reads():
    # facts L380: 10 tree cover ... 40 cropland ... 100 moss and lichen
    classes = product("esa_worldcover").raw["bands"]["Map"]["classes"]
    assert {int(k) for k in classes} == {10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 100}
    assert classes["40"] == "cropland" and classes["10"] == "tree cover" and classes["80"] == "permanent water bodies"
    from reviewer.bank.series import _class_value

    assert _class_value("esa_worldcover", "cropland") == 40


def test_the_demo_writer_takes_its_numbers_from_the_catalogue_rows():
    """The writer's Landsat, Sentinel-2 and MODIS/VIIRS numbers are the published ones (so they can only come
    from a right catalogue): facts L13 (SR 2.75e-5, -0.2), L14 (ST 0.00341802, 149.0), L190-191 (10000,
    -1000 from 2022-01-25), L225-226 (VI fill -3000, scale 0.0001, valid -2000..10000)."""
    from reviewer.record.synthetic import coarse, common

    assert (common.SR_SCALE, common.SR_OFFSET, common.ST_SCALE, common.ST_OFFSET) == (2.75e-5, -0.2, 0.00341802, 149.0)
    assert (common.S2_QUANTIFICATION, common.S2_NEW_OFFSET, common.S2_OFFSET_FROM) == (
        10000.0,
        -1000,
        dt.date(2022, 1, 25),
    )
    assert coarse.VI_PRODUCTS["MOD13Q1"][4] == coarse.VI_PRODUCTS["MYD13Q1"][4] == -3000
    assert (coarse.VI_DN_PER_UNIT, coarse.VI_VALID) == (10000, (-2000, 10000))
