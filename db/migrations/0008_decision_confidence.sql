-- A confidence per decision (issue 30): an annotator's or expert's own low / medium / high, given with the
-- decision (`--confidence`, keys in the dock) or not at all (NULL: older decisions, or none given). The levels
-- are data (assets/review/quality.json `confidence`) and the core checks them; the store only keeps a word.
ALTER TABLE decisions ADD COLUMN confidence TEXT CHECK (confidence IS NULL OR (length(confidence) BETWEEN 1 AND 16 AND confidence NOT GLOB '*[^a-z]*'));
