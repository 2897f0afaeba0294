"""Progress of a run, sample by sample, through Inspect's hooks (for `reviewer run --progress-json` and the app).

The hook is registered with Inspect once, when this module is imported, and does nothing until `follow()` gives it
a callback.
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai.hooks import Hooks, SampleEnd, hooks

Callback = Callable[[str, str, int], None]
_callback: list[Callback] = []


def follow(callback: Callback | None) -> None:
    """Report every finished sample as callback(task, sample id, pass); None stops."""
    _callback.clear()
    if callback is not None:
        _callback.append(callback)


@hooks(name="earthrecord_progress", description="reviewer run: one progress line per finished sample")
class SampleProgress(Hooks):
    def enabled(self) -> bool:
        return bool(_callback)

    async def on_sample_end(self, data: SampleEnd) -> None:
        for cb in _callback:
            cb(str(data.sample.metadata.get("condition", "")), str(data.sample.id), int(data.sample.epoch))
