-- Review packages (`reviewer package export | import`): one annotator's open items carried to another machine as a
-- store file of its own (same migrations), worked there with the review verbs, and the decisions made in it merged
-- back into the team store.
--
-- packages: in the team store, one row of kind 'issued' per package it exported (with the signing key, to check
-- the package's decisions when it comes back); in a package, exactly one row of kind 'self': the package itself.
CREATE TABLE packages (
    id TEXT PRIMARY KEY CHECK (length(id) = 32),   -- random package id (hex)
    kind TEXT NOT NULL CHECK (kind IN ('issued', 'self')),
    bank TEXT NOT NULL,
    annotator TEXT NOT NULL,
    key_id TEXT NOT NULL UNIQUE,
    secret TEXT NOT NULL,            -- the package's HMAC-SHA256 signing key (hex): never logged or printed
    items TEXT NOT NULL,             -- JSON [{"qid", "version", "sha256"}]: the item versions exported, in rank order
    issued_by TEXT NOT NULL,         -- the maintainer who exported it
    issued_at TEXT NOT NULL,
    tool_version TEXT NOT NULL
);
CREATE UNIQUE INDEX packages_one_self ON packages (kind) WHERE kind = 'self';

-- In a package: the signature of every decision made in it, written in the decision's own transaction.
-- hmac = HMAC-SHA256(secret, canonical JSON of the package id, key id, the decision's columns, its item's bank,
-- question id, version and sha256, and the previous signature), so a decision added, changed, removed or moved to
-- another package is seen on import.
CREATE TABLE package_signatures (
    decision INTEGER PRIMARY KEY REFERENCES decisions (id),
    package TEXT NOT NULL REFERENCES packages (id),
    hmac TEXT NOT NULL
);

-- In the team store: what became of each decision of an imported package: merged (the team decision it became)
-- or refused as a conflict (and why). A decision listed here is never merged again: importing twice changes nothing.
CREATE TABLE package_decisions (
    package TEXT NOT NULL REFERENCES packages (id),
    source INTEGER NOT NULL,         -- the decision's id inside the package
    decision INTEGER REFERENCES decisions (id),   -- the team decision it became; NULL for a conflict
    outcome TEXT NOT NULL CHECK (outcome IN ('merged', 'conflict')),
    reason TEXT,                     -- why a conflict was not merged
    imported_at TEXT NOT NULL,
    PRIMARY KEY (package, source)
);

CREATE TRIGGER package_signatures_no_update BEFORE UPDATE ON package_signatures
BEGIN SELECT RAISE(ABORT, 'package signatures are append-only: they cannot be changed'); END;
CREATE TRIGGER package_signatures_no_delete BEFORE DELETE ON package_signatures
BEGIN SELECT RAISE(ABORT, 'package signatures are append-only: they cannot be deleted'); END;
CREATE TRIGGER package_decisions_no_update BEFORE UPDATE ON package_decisions
BEGIN SELECT RAISE(ABORT, 'imported package decisions are append-only: they cannot be changed'); END;
CREATE TRIGGER package_decisions_no_delete BEFORE DELETE ON package_decisions
BEGIN SELECT RAISE(ABORT, 'imported package decisions are append-only: they cannot be deleted'); END;
