-- Question banks imported into the review store. Each record keeps its exact JSON text (so an export
-- is byte-stable) plus indexed columns the review workflow filters on.
CREATE TABLE banks (
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    created TEXT NOT NULL,
    schema_version TEXT NOT NULL,
    frozen INTEGER NOT NULL DEFAULT 0,
    manifest TEXT NOT NULL,          -- manifest.json as imported
    imported_at TEXT NOT NULL,
    PRIMARY KEY (name, version)
);
CREATE TABLE bank_questions (
    bank TEXT NOT NULL,
    version TEXT NOT NULL,
    position INTEGER NOT NULL,       -- line order in questions.jsonl
    id TEXT NOT NULL,
    site TEXT NOT NULL,
    class TEXT NOT NULL,
    task TEXT,
    status TEXT NOT NULL DEFAULT 'generated',
    json TEXT NOT NULL,
    PRIMARY KEY (bank, version, id)
);
CREATE INDEX bank_questions_by_site ON bank_questions (bank, version, site);
CREATE INDEX bank_questions_by_class ON bank_questions (bank, version, class, task);
CREATE INDEX bank_questions_by_status ON bank_questions (bank, version, status);
CREATE TABLE bank_sites (
    bank TEXT NOT NULL,
    version TEXT NOT NULL,
    position INTEGER NOT NULL,
    id TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (bank, version, id)
);
CREATE TABLE bank_pairs (
    bank TEXT NOT NULL,
    version TEXT NOT NULL,
    position INTEGER NOT NULL,
    id TEXT NOT NULL,
    question TEXT NOT NULL,
    kind TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (bank, version, id)
);
