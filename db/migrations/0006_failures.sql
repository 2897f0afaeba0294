-- Failure-step coding (issue 13): the codes given to the runs of a coding set (reviewer failures sample), by
-- experts (kind 'expert') and by an LLM's pre-coding (kind 'llm', with its provenance), and the runs drawn for
-- the expert check of the pre-coding. Append-only, like decisions: a correction is a new row naming the one it
-- replaces; each row is written in the transaction of its event.
CREATE TABLE failure_codes (
    id INTEGER PRIMARY KEY,
    set_id TEXT NOT NULL,            -- the coding set's id (fs-...)
    run TEXT NOT NULL,               -- the run's id in the set (s001..., p001...)
    scheme TEXT NOT NULL CHECK (scheme IN ('step', 'sensor')),
    code TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('expert', 'llm')),
    coder TEXT NOT NULL,             -- the user, or the model for kind 'llm'
    note TEXT,
    quote TEXT,                      -- the LLM's supporting quote from the run's report
    uncertain INTEGER CHECK (uncertain IN (0, 1)),
    provenance TEXT,                 -- JSON: model, prompt version and sha256, request id, tokens, cost
    replaces INTEGER REFERENCES failure_codes (id),
    created TEXT NOT NULL
);
CREATE INDEX failure_codes_by_run ON failure_codes (set_id, run, kind, id);

-- The runs drawn (seeded) for the expert check of the LLM pre-coding.
CREATE TABLE failure_checks (
    set_id TEXT NOT NULL,
    run TEXT NOT NULL,
    reason TEXT NOT NULL CHECK (reason IN ('uncertain', 'per_code')),
    seed INTEGER NOT NULL,
    drawn_by TEXT NOT NULL,
    created TEXT NOT NULL,
    PRIMARY KEY (set_id, run)
);

CREATE TRIGGER failure_codes_no_update BEFORE UPDATE ON failure_codes
BEGIN SELECT RAISE(ABORT, 'failure codes are append-only: a correction is a new code'); END;
CREATE TRIGGER failure_codes_no_delete BEFORE DELETE ON failure_codes
BEGIN SELECT RAISE(ABORT, 'failure codes are append-only: they cannot be deleted'); END;
CREATE TRIGGER failure_checks_no_update BEFORE UPDATE ON failure_checks
BEGIN SELECT RAISE(ABORT, 'the check sample is fixed once drawn'); END;
CREATE TRIGGER failure_checks_no_delete BEFORE DELETE ON failure_checks
BEGIN SELECT RAISE(ABORT, 'the check sample is fixed once drawn'); END;
