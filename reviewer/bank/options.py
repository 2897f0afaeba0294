"""The settings of a generation as one object: what the CLI, the app's Generate panel and a cluster task pass.

Frozen, so that one options object can be handed to every site of a run (and pickled to dask workers) without
one site's run changing another's. Kept apart from generate.py so that the CLI and the app can build it
without importing the generator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reviewer.bank.model import TASKS
from reviewer.errors import BankError

if TYPE_CHECKING:
    from reviewer.bank.series import SeriesConfig

#: the answers to an item whose change lies within the offset between the sensors it spans
SENSOR_BREAK_MODES = ("mark", "drop", "off")


@dataclass(frozen=True)
class GenerationOptions:
    """What a generation makes and within what it runs.

    The fields up to `sensor_break` decide the bank's bytes; `memory`, `threads` and `split_above` only change
    how the record is read (the questions are the same).

    - `tasks`: only these tasks (empty: all ten).
    - `seed`: phrasing choice and option order.
    - `min_agreement`: the share of methods a categorical or date conclusion needs; None is templates.json's
      consistency_rules.methods_agree.min_share.
    - `balance`: keep no conclusion value of a template more than this many times as often as the next
      (reviewer.bank.balance); None keeps every candidate.
    - `sensor_break`: "mark" an item whose change lies within the sensors' offset for an expert, "drop" it, or
      "off" (no check); None is templates.json's sensor_break.on_break.
    - `memory`: the budget in bytes the series stays under (frames beyond it go to files); None is 2 GB.
    - `threads`, `split_above`: reading threads, and the Landsat scene-megapixels from which a site run as a
      cluster task hands its years to the cluster.
    """

    tasks: tuple[str, ...] = ()
    seed: int = 0
    series: SeriesConfig | None = None
    min_agreement: float | None = None
    bank_name: str | None = None
    version: str = "candidates"
    balance: float | None = None
    sensor_break: str | None = None
    memory: int | None = None
    threads: int | None = None
    split_above: float = 0.0

    def __post_init__(self) -> None:
        # a list from a caller becomes a tuple, so the options stay hashable and unchangeable
        object.__setattr__(self, "tasks", tuple(self.tasks or ()))
        bad = [t for t in self.tasks if t not in TASKS]
        if bad:
            raise BankError(f"unknown task(s) {bad}; known: {list(TASKS)}", field="tasks")
        if self.sensor_break is not None and self.sensor_break not in SENSOR_BREAK_MODES:
            raise BankError(
                f"sensor_break must be one of {', '.join(SENSOR_BREAK_MODES)}, not {self.sensor_break!r}",
                field="sensor_break",
            )

    def reading(self) -> dict[str, Any]:
        """How build_series reads the record (never what is written)."""
        return {"threads": self.threads, "split_above": self.split_above}
