-- Scene index of a site record: reopening a site reads these rows instead of the rasters.
CREATE TABLE sites (
    site_dir TEXT PRIMARY KEY,
    site_id TEXT,
    name TEXT,
    signature TEXT,          -- hash of (relative path, size, mtime) of every raster: changes when files change
    scanned_at TEXT,
    site_json TEXT
);
CREATE TABLE scenes (
    site_dir TEXT NOT NULL,
    scene_id TEXT NOT NULL,
    product TEXT NOT NULL,
    sensor TEXT,
    label TEXT,
    platform TEXT,
    date TEXT NOT NULL,
    tier TEXT,
    location TEXT,
    bands TEXT,              -- JSON object: band token -> relative file path
    valid_fraction REAL,
    clear_fraction REAL,
    cloud_fraction REAL,
    record INTEGER,
    extra TEXT,              -- JSON: product-specific facts (radiometric offset, metadata file, ...)
    PRIMARY KEY (site_dir, scene_id, product)
);
CREATE INDEX scenes_by_date ON scenes (site_dir, date);
CREATE TABLE scan_problems (
    site_dir TEXT NOT NULL,
    path TEXT NOT NULL,
    reason TEXT NOT NULL
);
