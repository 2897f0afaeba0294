-- Review: items with immutable versions, users and roles, assignments, decisions and an append-only
-- event log. Replaces bank_questions (a mutable status per row, rows deleted on every import).

-- The exact bytes of every file of an imported bank version: an export gives them back unchanged,
-- whoever wrote them (a frozen bank's hash is what its runs were scored against).
CREATE TABLE bank_files (
    bank TEXT NOT NULL,
    version TEXT NOT NULL,
    file TEXT NOT NULL,
    data BLOB NOT NULL,
    sha256 TEXT NOT NULL,
    PRIMARY KEY (bank, version, file),
    FOREIGN KEY (bank, version) REFERENCES banks (name, version)
);

CREATE TABLE users (
    name TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
    role TEXT NOT NULL CHECK (role IN ('annotator', 'expert', 'maintainer')),
    created TEXT NOT NULL
);

-- One question of one bank. Content lives in item_versions; state and current_version change only
-- together with an event.
CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    bank TEXT NOT NULL,
    qid TEXT NOT NULL,
    position INTEGER NOT NULL,
    site TEXT NOT NULL,
    class TEXT NOT NULL,
    task TEXT,
    reference_source TEXT NOT NULL,
    gold INTEGER NOT NULL DEFAULT 0 CHECK (gold IN (0, 1)),   -- planted item with a known verdict
    audit INTEGER NOT NULL DEFAULT 0 CHECK (audit IN (0, 1)), -- consensus item drawn for expert audit
    state TEXT NOT NULL,
    current_version INTEGER NOT NULL,
    UNIQUE (bank, qid)
);
CREATE INDEX items_by_state ON items (bank, state);

CREATE TABLE item_versions (
    item INTEGER NOT NULL REFERENCES items (id),
    version INTEGER NOT NULL CHECK (version >= 1),
    json TEXT NOT NULL,              -- the question line, canonical
    sha256 TEXT NOT NULL,
    origin TEXT NOT NULL CHECK (origin IN ('generated', 'drafted', 'corrected')),
    created_by TEXT NOT NULL,        -- a user, or the tool ('import')
    reason TEXT,
    created TEXT NOT NULL,
    PRIMARY KEY (item, version)
);

-- Which item version each imported bank version held, in line order.
CREATE TABLE bank_items (
    bank TEXT NOT NULL,
    version TEXT NOT NULL,
    position INTEGER NOT NULL,
    item INTEGER NOT NULL REFERENCES items (id),
    item_version INTEGER NOT NULL,
    PRIMARY KEY (bank, version, item),
    FOREIGN KEY (bank, version) REFERENCES banks (name, version),
    FOREIGN KEY (item, item_version) REFERENCES item_versions (item, version)
);

-- The known verdict of a gold item (hidden from annotators).
CREATE TABLE gold (
    item INTEGER PRIMARY KEY REFERENCES items (id),
    verdict TEXT NOT NULL CHECK (verdict IN ('accept', 'flag')),
    reasons TEXT NOT NULL DEFAULT '[]',
    note TEXT
);

-- Review settings of a bank (k, seeds, shares, the stage-2 rule); every change is an event.
CREATE TABLE bank_review (
    bank TEXT PRIMARY KEY,
    k INTEGER NOT NULL CHECK (k >= 1),
    seed INTEGER NOT NULL,
    gold_share REAL NOT NULL DEFAULT 0 CHECK (gold_share >= 0 AND gold_share < 1),
    audit_share REAL NOT NULL DEFAULT 0.1 CHECK (audit_share >= 0 AND audit_share <= 1),
    adjudicate_share REAL NOT NULL DEFAULT 1 CHECK (adjudicate_share > 0 AND adjudicate_share <= 1),
    rest_rule TEXT NOT NULL DEFAULT 'open' CHECK (rest_rule IN ('reject', 'accept', 'open')),
    batches INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE assignments (
    item INTEGER NOT NULL REFERENCES items (id),
    user TEXT NOT NULL REFERENCES users (name),
    rank REAL NOT NULL,              -- the user's seeded order
    created TEXT NOT NULL,
    open INTEGER NOT NULL DEFAULT 1 CHECK (open IN (0, 1)),       -- waits for this user's accept or flag
    skipped INTEGER NOT NULL DEFAULT 0 CHECK (skipped IN (0, 1)), -- postponed: comes after the rest
    PRIMARY KEY (item, user)
);
CREATE INDEX assignments_by_user ON assignments (user, rank);
-- the queue: the next open assignment in rank order without walking the finished ones
CREATE INDEX assignments_open ON assignments (user, skipped, rank) WHERE open = 1;

-- A maintainer's permission for an expert to adjudicate an item they annotated.
CREATE TABLE allowances (
    item INTEGER NOT NULL REFERENCES items (id),
    user TEXT NOT NULL REFERENCES users (name),
    granted_by TEXT NOT NULL REFERENCES users (name),
    reason TEXT NOT NULL,
    PRIMARY KEY (item, user)
);

-- When a user was last shown an item (the time a decision took is measured from it).
CREATE TABLE shown (
    user TEXT NOT NULL REFERENCES users (name),
    item INTEGER NOT NULL REFERENCES items (id),
    at REAL NOT NULL,
    PRIMARY KEY (user, item)
);

-- Every decision ever made; an undo is a new row that retracts an earlier one.
CREATE TABLE decisions (
    id INTEGER PRIMARY KEY,
    item INTEGER NOT NULL,
    version INTEGER NOT NULL,
    user TEXT NOT NULL REFERENCES users (name),
    stage INTEGER NOT NULL CHECK (stage IN (1, 2)),
    verdict TEXT NOT NULL CHECK (verdict IN ('accept', 'flag', 'skip', 'retract', 'reject', 'correct', 'rule')),
    reasons TEXT NOT NULL DEFAULT '[]',
    comment TEXT,
    correction TEXT,
    rationale TEXT,
    view TEXT,
    seconds REAL,
    retracts INTEGER REFERENCES decisions (id),
    created TEXT NOT NULL,
    FOREIGN KEY (item, version) REFERENCES item_versions (item, version)
);
CREATE INDEX decisions_by_item ON decisions (item, stage);
CREATE INDEX decisions_by_user ON decisions (user, id);
CREATE INDEX decisions_retracts ON decisions (retracts) WHERE retracts IS NOT NULL;

-- The audit: who, when, what, before -> after; written in the transaction of the change it records.
-- hash chains every event to the one before it.
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    user TEXT,
    action TEXT NOT NULL,
    bank TEXT,
    item INTEGER,
    version INTEGER,
    before TEXT,
    after TEXT,
    detail TEXT,
    tool_version TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX events_by_item ON events (item, id);

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: they cannot be changed'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: they cannot be deleted'); END;
CREATE TRIGGER decisions_no_update BEFORE UPDATE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions are append-only: they cannot be changed (an undo is a new decision)'); END;
CREATE TRIGGER decisions_no_delete BEFORE DELETE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions are append-only: they cannot be deleted (an undo is a new decision)'); END;
CREATE TRIGGER item_versions_no_update BEFORE UPDATE ON item_versions
BEGIN SELECT RAISE(ABORT, 'item versions are immutable: a correction is a new version'); END;
CREATE TRIGGER item_versions_no_delete BEFORE DELETE ON item_versions
BEGIN SELECT RAISE(ABORT, 'item versions are immutable: they cannot be deleted'); END;

-- Questions imported by version 0.1 become items at version 1 (state generated: nothing could review them).
INSERT INTO items (bank, qid, position, site, class, task, reference_source, state, current_version)
SELECT q.bank, q.id, q.position, q.site, q.class, q.task, json_extract(q.json, '$.reference_source'), 'generated', 1
FROM bank_questions q
WHERE q.version = (SELECT b.version FROM banks b WHERE b.name = q.bank ORDER BY b.imported_at DESC, b.rowid DESC LIMIT 1);
INSERT INTO item_versions (item, version, json, sha256, origin, created_by, reason, created)
SELECT i.id, 1, q.json, sha256(q.json), 'generated', 'import', 'imported by version 0.1', b.imported_at
FROM items i
JOIN bank_questions q ON q.bank = i.bank AND q.id = i.qid
JOIN banks b ON b.name = q.bank AND b.version = q.version
WHERE q.version = (SELECT b2.version FROM banks b2 WHERE b2.name = q.bank ORDER BY b2.imported_at DESC, b2.rowid DESC LIMIT 1);
INSERT INTO bank_items (bank, version, position, item, item_version)
SELECT q.bank, q.version, q.position, i.id, 1
FROM bank_questions q JOIN items i ON i.bank = q.bank AND i.qid = q.id
JOIN item_versions v ON v.item = i.id AND v.version = 1 AND v.json = q.json;
DROP TABLE bank_questions;
