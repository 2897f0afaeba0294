-- A package exported with --with-record carries the site records its items need: the needed scenes' files,
-- rasters clipped to the site (reviewer.record.clip), as the providers named them, so the package is
-- self-contained. Unpacked on the annotator's machine next to the package file and scanned there.
CREATE TABLE package_files (
    site TEXT NOT NULL,              -- site id
    path TEXT NOT NULL,              -- relative to the site folder
    bytes BLOB NOT NULL,
    sha256 TEXT NOT NULL,
    PRIMARY KEY (site, path)
);
