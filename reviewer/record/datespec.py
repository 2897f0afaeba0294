"""What a user types for a render's date: a day (YYYY-MM-DD), a month (YYYY-MM), a year (YYYY) or a period
(YYYY-YYYY); which scenes it names; and, when it names none, the site's nearest dates.

A product dated by month (products.json `composite_period: "month"`, ERA5-Land monthly means) is one scene a
month dated the 1st: any day of that month, or the month itself, names it, and it is shown as YYYY-MM.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

from reviewer.errors import ReviewerError

FORMS = "YYYY-MM-DD, YYYY-MM, YYYY or YYYY-YYYY"

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_PERIOD = re.compile(r"^(\d{4})(?:-(\d{4}))?$")


@dataclass(frozen=True)
class DateSpec:
    """A date as typed: `kind` day, month or period (a year is a period of one), the days it spans."""

    text: str
    kind: str
    first: dt.date
    last: dt.date

    @property
    def label(self) -> str:
        """How a panel names it: 2023-06, 2023, 2020-2023 (a period of one year as the year)."""
        if self.kind != "period":
            return self.text
        y0, y1 = self.first.year, self.last.year
        return str(y0) if y0 == y1 else f"{y0}-{y1}"


def parse_date_spec(text: str) -> DateSpec:
    """The typed date, or one ReviewerError (field 'date') saying which forms are understood."""
    spec = text.strip()
    if _DAY.match(spec):
        try:
            day = dt.date.fromisoformat(spec)
        except ValueError as exc:
            raise ReviewerError(f"not a date: {spec!r} ({exc})", field="date") from exc
        return DateSpec(spec, "day", day, day)
    m = _MONTH.match(spec)
    if m:
        y, mo = int(m.group(1)), int(m.group(2))
        if not 1 <= mo <= 12 or y < 1:
            raise ReviewerError(f"not a month: {spec!r} (YYYY-MM, the month 01 to 12)", field="date")
        return DateSpec(spec, "month", dt.date(y, mo, 1), dt.date(y, mo, calendar.monthrange(y, mo)[1]))
    m = _PERIOD.match(spec)
    if not m or int(m.group(1)) < 1:
        raise ReviewerError(f"not a date, month, year or period: {spec!r} (use {FORMS})", field="date")
    y0, y1 = int(m.group(1)), int(m.group(2) or m.group(1))
    if y1 < y0:
        raise ReviewerError(
            f"period {spec!r} ends before it starts (use YYYY-YYYY, the earlier year first)", field="date"
        )
    return DateSpec(spec, "period", dt.date(y0, 1, 1), dt.date(y1, 12, 31))


def by_month(scene) -> bool:
    """Whether the scene is a month's mean or composite, dated by its month."""
    return scene.product_spec.raw.get("composite_period") == "month"


def scene_date_text(scene) -> str:
    """The scene's date as its product dates it: YYYY-MM for a monthly mean, else YYYY-MM-DD."""
    return scene.date.strftime("%Y-%m") if by_month(scene) else scene.date.isoformat()


def names_scene(spec: DateSpec, scene) -> bool:
    """Whether the typed date names this scene: a day the scene's own day (or, for a monthly product, a day of
    its month); a month or period any scene dated inside it."""
    if spec.kind == "day" and by_month(scene):
        return (scene.date.year, scene.date.month) == (spec.first.year, spec.first.month)
    return spec.first <= scene.date <= spec.last


def nearest_dates(spec: DateSpec, scenes) -> str:
    """'; the nearest dates the site has: 2022-12-01 (31 days before), 2023-02-01 (1 day after)', the latest
    scene before the typed date and the first after it; '' when there is no scene at all."""
    before = [s for s in scenes if s.date < spec.first]
    after = [s for s in scenes if s.date > spec.last]
    parts = []
    if before:
        s = max(before, key=lambda s: s.date)
        parts.append(f"{scene_date_text(s)} ({_apart(s, s.date, spec.first)} before)")
    if after:
        s = min(after, key=lambda s: s.date)
        parts.append(f"{scene_date_text(s)} ({_apart(s, spec.last, s.date)} after)")
    return f"; the nearest dates the site has: {', '.join(parts)}" if parts else ""


def _apart(scene, early: dt.date, late: dt.date) -> str:
    """How far apart, in the scene's own unit: months for a monthly product, else days."""
    if by_month(scene):
        n, unit = (late.year - early.year) * 12 + late.month - early.month, "month"
    else:
        n, unit = (late - early).days, "day"
    return f"{n} {unit}{'' if n == 1 else 's'}"
