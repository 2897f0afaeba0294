"""A StackSession's stretch: the one each composite comes back with, the user's edits (refused while the stretch
is locked), a percentile stretch over the whole filtered stack computed in a worker, and whether that one is stale."""

from __future__ import annotations

from reviewer.app.evidence_prep import shown_stack
from reviewer.app.jobs import run_in_thread
from reviewer.errors import NoSceneError, ReviewerError
from reviewer.record.stretch import Stretch, percentile_stretch


class StretchKeeper:
    """The stretches of the session `s` (its `state.stretch` is the one shown)."""

    def __init__(self, session) -> None:
        self.s = session
        self._stretches: dict[str, Stretch] = {}
        self._percentile_dates: tuple | None = None  # the dates the last percentile stretch was computed over
        self._stretch_worker = None

    def forget(self) -> None:
        """Another site: no composite keeps a stretch of the site before."""
        self._stretches.clear()

    def for_composite(self, composite: str) -> Stretch:
        """The stretch a composite comes back with: the one kept for it, else its default."""
        return self._stretches.get(composite) or Stretch.default(composite)

    def keep_stretch(self, composite: str, stretch: Stretch) -> None:
        """The stretch a composite comes back with when the user switches to it again (a review item's stored one)."""
        self._stretches[composite] = stretch

    def stretch_is_stale(self) -> bool:
        """A percentile stretch computed over a stack other than the one shown now (filters changed since)."""
        return (
            self.s.state.stretch.source.startswith("percentiles")
            and self._percentile_dates is not None
            and self.s.stack is not None
            and tuple(self.s.stack.dates) != self._percentile_dates
        )

    def set_stretch(self, stretch: Stretch) -> bool:
        """Apply a new stretch to every date; refused (False) while the stretch is locked."""
        if self.s.state.locked:
            self.s.reporter.info("the stretch is locked (press S to unlock)")
            return False
        if stretch.composite != self.s.state.composite:
            raise ReviewerError(
                f"the stretch is for {stretch.composite}, not {self.s.state.composite}", field="stretch"
            )
        self.s.state.stretch = stretch
        return True

    def reset_stretch(self) -> bool:
        return self.set_stretch(Stretch.default(self.s.state.composite))

    def toggle_lock(self) -> None:
        self.s.state.locked = not self.s.state.locked

    def stretch_from_percentiles(self):
        """Percentiles of pooled clear pixels of the whole filtered stack, computed in a worker."""
        if self.s.state.locked:
            self.s.reporter.info("the stretch is locked (press S to unlock)")
            return None
        if self.s.stack is None or not len(self.s.stack):
            self.s.reporter.error(NoSceneError("no stack is open"))
            return None
        stack, comp = self.s.stack, self.s.state.composite

        def work() -> Stretch:
            # the dates as the canvas reads them (shown_stack: at display size), not each at the site's full grid
            # (a whole Landsat scene: ~700 MB of float32 a date)
            samples, n = shown_stack(stack).pooled_samples(comp)
            return percentile_stretch(samples, comp, n_scenes=n)

        def done(stretch: Stretch) -> None:
            self._stretch_worker = None
            if comp == self.s.state.composite and not self.s.state.locked:
                self._percentile_dates = tuple(stack.dates)
                self.s.state.stretch = stretch

        def failed(exc: BaseException) -> None:
            self._stretch_worker = None
            self.s.reporter.error(exc, context="percentile stretch")

        self._stretch_worker = run_in_thread(work, on_done=done, on_error=failed)
        return self._stretch_worker
