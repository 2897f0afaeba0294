"""The canvas's date caption as plain evented state (psygnal, no Qt): what it says of the date shown, "2016-05-15
OLI   True colour", that no scene matches the filters, or nothing (no site shown yet). `ShownDate` sets it as the
shown date changes, in the same turn; the app's window draws it in a label over the canvas's top-left corner and the
plugin's Stack dock in the dock (`qt_caption`). Tested without a display (tests/unit/test_view_state.py).

(It was napari's canvas text overlay: each new text made napari resize the overlay's box, and vispy relinked its
shader program at the next draw, ~40 ms of the UI thread per item under software GL.)
"""

from __future__ import annotations

from dataclasses import dataclass

from psygnal import evented

MASKED = " - every pixel masked"


def date_label(scene) -> str:
    """A date as the caption names it: its date and sensor ("2006-04-02 TM")."""
    return f"{scene.date.isoformat()} {scene.label}"


def date_caption(date_label: str, composite_label: str, *, all_masked: bool = False) -> str:
    """The caption of a date: its date and sensor (`date_label`), the composite's name, and whether every pixel
    of the date is masked."""
    return f"{date_label}   {composite_label}{MASKED if all_masked else ''}"


def no_scene_caption(site_name: str) -> str:
    """The caption when the filters leave no date of the site."""
    return f"{site_name}: no scene matches the filters"


@evented
@dataclass
class DateCaption:
    """What the canvas's caption says ("": no caption shown)."""

    text: str = ""

    @property
    def shown(self) -> bool:
        return bool(self.text)

    def show_date(self, date_label: str, composite_label: str, *, all_masked: bool = False) -> None:
        self.text = date_caption(date_label, composite_label, all_masked=all_masked)

    def no_scene(self, site_name: str) -> None:
        self.text = no_scene_caption(site_name)

    def clear(self) -> None:
        self.text = ""


@evented
@dataclass
class DatePosition:
    """Where the shown date is in the filtered stack, as the date slider shows it: `index` (0-based) of `count`
    dates, and the date's name (`date_label`); count 0: no date shown (no site, or no scene matches the filters).
    `ShownDate` sets it in the turn the date or the stack changes; the slider (`qt_caption.QtDateSlider`) draws it
    and steps the session's `state.current`."""

    index: int = 0
    count: int = 0
    date: str = ""

    @property
    def text(self) -> str:
        """ "12 / 67": the shown date's place, counted from 1 ("" with no date)."""
        return f"{self.index + 1} / {self.count}" if self.count else ""

    def show(self, index: int, count: int, date: str) -> None:
        """Date `index` of `count`, named `date` (each field written only when it changes)."""
        for name, value in (("count", int(count)), ("index", int(index)), ("date", date)):
            if getattr(self, name) != value:
                setattr(self, name, value)

    def clear(self) -> None:
        self.show(0, 0, "")
