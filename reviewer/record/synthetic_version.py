"""The synthetic generator's version, written into truth.json; a cached demo of another version is made again.

A module of its own, below both the generator (reviewer.record.synthetic) and the demo cache (reviewer.record.demo,
which imports the generator only when it has to make the demo): checking the cache at launch does not import the
generator, and neither imports the other to read it.
"""

GENERATOR_VERSION = "4"  # 2: Landsat windows from the catalog, per scene streams; 3: TM/ETM+ water as OLI;
# 4: the providers' own formats (MODIS HDF4, VIIRS HDF5, one ERA5-Land netCDF, S2 SAFE/JP2 and STAC/COG)
