"""The review focus view's cross-sensor line: an item's change next to the offset between the sensors it spans
(reviewer.bank.sensor_break, stored by generation in provenance.sensor_break), with a warning when the change is
within or close to that offset. HTML only: the focus view (qt_review_parts.question_html) shows it."""

from __future__ import annotations

import html
from typing import Any


def sensor_break_html(q: dict[str, Any]) -> str:
    """A paragraph for the focus view, or "" when the item spans no sensor change."""
    b = (q.get("provenance") or {}).get("sensor_break")
    if not isinstance(b, dict):
        return ""
    e = html.escape
    early, late = (b.get("sensors") or ["?", "?"])[:2]
    off = (b.get("offset") or {}).get("harmonized")
    change = b.get("change")
    if not off or change is None:
        return f"<p>spans {e(early)} to {e(late)}: the offset between them could not be measured at the {e(str(b.get('region')))}</p>"
    raw = (b.get("offset") or {}).get("raw") or {}
    text = (
        f"{e(str(b.get('index')))} change <b>{change:+.3f}</b> at the {e(str(b.get('region')))}; "
        f"{e(early)} to {e(late)} offset there <b>{off['offset']:+.3f} &plusmn; {off['spread']:.3f}</b> "
        f"(raw reflectance {raw.get('offset', float('nan')):+.3f})"
    )
    if b.get("beyond_offset") is False:
        return f"<p style='color:#ff5252'><b>&#9888; within the sensors' offset</b>: {text}. Could the change be the instrument?</p>"
    if b.get("close"):
        return f"<p style='color:#ffa000'><b>&#9888; close to the sensors' offset</b>: {text}</p>"
    return f"<p>cross-sensor check: {text}; the change is beyond the offset</p>"
