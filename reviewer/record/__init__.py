"""record."""

import os

# GDAL writes an index of a gzip stream it seeks in next to the file (<bundle>.tar.gz.properties): a scan of a
# .tar.gz would put a file in the user's record, listed by the next scan as of unknown name. A record is only read.
os.environ.setdefault("CPL_VSIL_GZIP_WRITE_PROPERTIES", "NO")
