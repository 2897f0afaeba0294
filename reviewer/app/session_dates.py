"""The date a StackSession shows (its `state.current`; no napari dims axis: the canvas's layers are 2-D): the canvas,
the date slider (`caption.DatePosition`), the date caption (`caption.DateCaption`) and the status line follow it,
the dates around it are read ahead in the stepping direction, the keys and docks jump to a date or year, and the
shown date exports as a PNG."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np

from reviewer.app.caption import DateCaption, DatePosition, date_label
from reviewer.app.evidence_prep import shown_stack
from reviewer.app.jobs import Prefetcher
from reviewer.errors import NoSceneError
from reviewer.record.series import clearest_per_year, step_year
from reviewer.record.stretch import composites


class ShownDate:
    """The shown date of the session `s` (its `state.current`, an index into `s.stack`)."""

    def __init__(self, session, *, prefetch: bool = True) -> None:
        self.s = session
        self.prefetcher = Prefetcher()
        self.prefetcher.enabled = prefetch
        self._direction = 1
        #: what the date caption says: the shown date's, set in the turn the date changes (a Qt label draws it; as
        #: napari's canvas text overlay it was typeset by vispy, ~50 ms, and so waited for stepping to pause)
        self.caption = DateCaption()
        #: the date slider's model: the shown date's place in the stack ("12 / 67") and its name
        self.position = DatePosition()

    def on_current_changed(self, event=None, *, caption_now: bool = False) -> None:
        """The canvas, slider, caption, status line and the dates read ahead follow the shown date; `caption_now`: not
        stepping (another stack, a review item, whose caller shows the canvas itself): the dates around it are not
        read ahead yet."""
        if self.s.stack is None or not len(self.s.stack):
            return
        i = int(np.clip(self.s.state.current, 0, len(self.s.stack) - 1))
        if not caption_now:
            self.s.canvas.show_date(i)
        self.show_caption(i)
        self.s.pointer.refresh()
        if not caption_now:  # napari's status bar: the value under a still pointer is the new date's (the date is no
            self.s.update_status_bar()  # part of the cursor's position, whose move had napari read it)
        if caption_now:  # another stack (a site, a review item): its neighbours are read once the user steps (read at
            self.prefetcher.cancel()  # once, their readers held the GIL through the item's paint: decisions 2x slower)
        else:
            self.read_neighbours()

    def show_caption(self, i: int | None = None) -> None:
        """The caption names date `i` (default: the shown one) of the stack shown, its composite, and whether every
        pixel of it is masked (known once its frame was rendered: `StackSession._on_frame_read` asks again)."""
        stack = self.s.stack
        if stack is None or not len(stack):
            return
        i = int(np.clip(self.s.state.current if i is None else i, 0, len(stack) - 1))
        masked = (id(stack), i) in self.s.all_masked
        self.position.show(i, len(stack), date_label(stack.scenes[i]))
        self.caption.show_date(
            date_label(stack.scenes[i]), composites()[self.s.state.composite]["label"], all_masked=masked
        )

    def read_neighbours(self) -> None:
        """The dates around the shown one read ahead into the cache (stepping then shows them without disk)."""
        stack = self.s.stack
        if stack is None or not len(stack):
            return
        comp, i = self.s.state.composite, int(np.clip(self.s.state.current, 0, len(stack) - 1))
        self.prefetcher.schedule(lambda j: self.s.read_frame(stack, comp, j), i, len(stack), self._direction)
        if self.s.state.overlay:
            self.prefetcher.schedule(lambda j: self.s.frames.read_codes(stack, j), i, len(stack), self._direction)

    def jump_to_index(self, i: int) -> None:
        """Show date `i` (clipped to the stack): the slider, a chip, a trajectory point, a year."""
        if self.s.stack is None or not len(self.s.stack):
            return
        i = int(np.clip(i, 0, len(self.s.stack) - 1))
        self._direction = 1 if i >= self.s.state.current else -1
        self.s.state.current = i

    def jump_to_date(self, date: dt.date) -> None:
        if self.s.stack is None or not len(self.s.stack):
            return
        self.jump_to_index(self.s.stack.nearest(date))

    def jump_to_year(self, year: int) -> None:
        """Show the clearest scene of that year (or the nearest date when the year has none)."""
        if self.s.stack is None or not len(self.s.stack):
            return
        best = clearest_per_year(self.s.stack)
        if year in best:
            self.jump_to_index(best[year])
        else:
            self.jump_to_date(dt.date(int(year), 7, 1))

    def step(self, by: int) -> None:
        """Left / Right: the date before or after the shown one."""
        self._direction = 1 if by > 0 else -1
        self.jump_to_index(self.s.state.current + by)

    def step_year(self, by: int) -> None:
        """Shift-Left / Shift-Right: the year before or after the shown date's."""
        if self.s.stack is not None and len(self.s.stack):
            self.jump_to_index(step_year(self.s.stack.dates, self.s.state.current, by))

    def export_view(self, out: str | Path, *, on_done=None):
        """Save the shown date as a labelled PNG with scale bar and the exact stretch in its metadata."""
        from reviewer.record.render import Panel, render_panels

        if self.s.stack is None or not len(self.s.stack):
            self.s.reporter.error(NoSceneError("nothing to export: no date is shown"))
            return None
        stack, comp, stretch, i = self.s.stack, self.s.state.composite, self.s.state.stretch, self.s.state.current
        site = self.s.index.site

        def work() -> Path:
            s = stack.scenes[i]
            # the date as the canvas reads it (shown_stack: at most VIEW_PX across), not at the site's own grid (a
            # whole Landsat scene's date is ~700 MB of float32 there); its pixel is then that much larger on the ground
            shown = shown_stack(stack)
            panel = Panel(f"{s.date.isoformat()}  {s.label}  {s.scene_id}", shown.read(i, comp), [s], "scene")
            cell_m = site.cell_m[0] * site.shape[1] / shown.grid.shape[1]
            return render_panels([panel], stretch, pixel_size_m=cell_m, out=out, title=f"{site.name} ({site.id})")

        return self.s._export(work, on_done)
