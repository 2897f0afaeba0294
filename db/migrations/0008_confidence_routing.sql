-- A confidence per decision (issue 30): an annotator's or expert's own low / medium / high, given with the
-- decision (`--confidence`, keys in the dock) or not at all (NULL: older decisions, or none given). The levels
-- are data (assets/review/quality.json `confidence`) and the core checks them; the store only keeps a word.
ALTER TABLE decisions ADD COLUMN confidence TEXT CHECK (confidence IS NULL OR (length(confidence) BETWEEN 1 AND 16 AND confidence NOT GLOB '*[^a-z]*'));

-- Routing by the reliability model (a stage-2 setting beside the audit share): when on, `reviewer review route
-- BANK --apply` sends consensus items whose Dawid-Skene posterior is uncertain to an expert (thresholds in
-- assets/review/quality.json); each item so sent is an event, and turning it on or off is one too.
ALTER TABLE bank_review ADD COLUMN route_uncertain INTEGER NOT NULL DEFAULT 0 CHECK (route_uncertain IN (0, 1));
