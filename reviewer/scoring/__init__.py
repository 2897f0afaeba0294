"""scoring."""

#: Bootstrap resamples of the pass^k confidence intervals unless asked otherwise (CLI, API and the Scoring
#: dock share it; kept in this light module so the CLI's parser needs no numpy).
BOOTSTRAP_RESAMPLES = 10000
