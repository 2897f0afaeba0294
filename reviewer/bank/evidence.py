"""An item's evidence view: what the reviewer (and a drafting model) must see to judge the question.

The composite, the stretch stored for the item, the dates or periods compared (side by side as a pair, or a
chip strip over a period), the region the question is about and the index to plot on the trajectory. Kept as
the optional `evidence` object of a question (schemas/question.schema.json, $defs/evidence) and as the view a
review decision rests on. `reviewer generate` fills it per template from templates.json `evidence` specs;
an older question without one gets a default from its period and task (`evidence_for`).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from reviewer.bank.templates import REGION_NAMES, index_names, templates
from reviewer.errors import SchemaError
from reviewer.record.stretch import Stretch, composites

VIEWS = ("pair", "strip", "single")
REGION_KINDS = ("site", "quadrant", "polygon")
#: the question's quadrant names (reviewer.bank.series.QUADRANTS) -> the evidence view's compass abbreviations
QUADRANT_CODES = {"north-west": "NW", "north-east": "NE", "south-west": "SW", "south-east": "SE"}
#: the share of each side the generator's central square spans (reviewer.bank.series.quadrant_masks)
CENTRE_SPAN = (0.4, 0.6)
#: the tasks whose default view is the chip strip over the period with an NDVI trajectory
STRIP_TASKS = ("trend", "regional_statistics", "anomaly_climate", "season", "recovery")


@dataclass(frozen=True)
class Region:
    """What part of the site the question is about, in the site grid's CRS."""

    kind: str = "site"
    quadrant: str | None = None  # NW | NE | SW | SE
    coordinates: tuple[tuple[float, float], ...] = ()  # polygon ring [x, y] in the site CRS

    def to_json(self) -> dict[str, Any]:
        if self.kind == "quadrant":
            return {"kind": "quadrant", "quadrant": self.quadrant}
        if self.kind == "polygon":
            return {"kind": "polygon", "coordinates": [[x, y] for x, y in self.coordinates]}
        return {"kind": "site"}

    @classmethod
    def from_json(cls, doc: Any) -> Region:
        if not isinstance(doc, dict) or doc.get("kind") not in REGION_KINDS:
            raise SchemaError(f"region kind must be one of {', '.join(REGION_KINDS)}", field="evidence.region.kind")
        kind = doc["kind"]
        if kind == "quadrant":
            if doc.get("quadrant") not in QUADRANT_CODES.values():
                raise SchemaError(
                    f"quadrant must be one of {', '.join(QUADRANT_CODES.values())}, not {doc.get('quadrant')!r}",
                    field="evidence.region.quadrant",
                )
            return cls("quadrant", doc["quadrant"])
        if kind == "polygon":
            try:
                ring = tuple((float(x), float(y)) for x, y in doc["coordinates"])
            except (KeyError, TypeError, ValueError) as exc:
                raise SchemaError(
                    "polygon coordinates must be [[x, y], ...]", field="evidence.region.coordinates"
                ) from exc
            if len(ring) < 3:
                raise SchemaError("a polygon needs at least 3 points", field="evidence.region.coordinates")
            return cls("polygon", coordinates=ring)
        return cls()


@dataclass(frozen=True)
class EvidenceView:
    """One item's evidence view; the same stretch is applied to every date or period it shows."""

    composite: str
    stretch: Stretch
    view: str = "single"
    dates: tuple[str, ...] = ()  # ISO dates compared side by side
    periods: tuple[tuple[int, int], ...] = ()  # [y0, y1] year ranges (a year is [y, y])
    region: Region = field(default_factory=Region)
    index: str | None = None  # the index plotted on the trajectory
    #: what the reviewer should see first: why the reference is what it is (or which period lacks imagery)
    note: str | None = None
    #: the reference methods' values per field (field -> method -> value), shown beside the imagery
    values: dict[str, dict[str, Any]] | None = field(default=None, hash=False, compare=False)

    @property
    def panels(self) -> list[str]:
        """The panels in render spec form (reviewer.record.render): 'YYYY-MM-DD', 'YYYY' or 'YYYY-YYYY'."""
        out = list(self.dates)
        out += [str(a) if a == b else f"{a}-{b}" for a, b in self.periods]
        return out

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"composite": self.composite, "stretch": self.stretch.to_json(), "view": self.view}
        if self.dates:
            doc["dates"] = list(self.dates)
        if self.periods:
            doc["periods"] = [[a, b] for a, b in self.periods]
        doc["region"] = self.region.to_json()
        if self.index is not None:
            doc["index"] = self.index
        if self.note:
            doc["note"] = self.note
        if self.values:
            doc["values"] = self.values
        return doc

    @classmethod
    def from_json(cls, doc: Any) -> EvidenceView:
        """Checked against the schema and for what it cannot say; missing parts get their defaults (the
        composite's fixed stretch, the whole site, the view the number of panels implies)."""
        _validate(doc)
        composite = doc["composite"]
        if composite not in composites():
            raise SchemaError(f"unknown composite {composite!r}", field="evidence.composite")
        stretch = Stretch.from_json(doc["stretch"]) if "stretch" in doc else Stretch.default(composite)
        if stretch.composite != composite:
            raise SchemaError(
                f"the stretch is for {stretch.composite}, the view shows {composite}", field="evidence.stretch"
            )
        dates = tuple(_iso(d) for d in doc.get("dates", []))
        periods = tuple((int(a), int(b)) for a, b in doc.get("periods", []))
        if any(a > b for a, b in periods):
            raise SchemaError("a period [y0, y1] needs y0 <= y1", field="evidence.periods")
        n = len(dates) + len(periods)
        view = doc.get("view") or ("pair" if n == 2 else "strip" if n > 2 else "single")
        if (view == "pair" and n != 2) or (view == "single" and n > 1) or (view == "strip" and n < 1):
            raise SchemaError(
                f"a {view} view cannot show {n} date(s)/period(s) (pair: 2, single: at most 1, strip: 1 or more)",
                field="evidence.view",
            )
        index = doc.get("index")
        if index is not None and index not in index_names():
            raise SchemaError(f"unknown index {index!r}; known: {', '.join(index_names())}", field="evidence.index")
        return cls(
            composite,
            stretch,
            view,
            dates,
            periods,
            Region.from_json(doc.get("region", {"kind": "site"})),
            index,
            doc.get("note"),
            doc.get("values"),
        )


@cache
def _validator() -> Any:
    """The question schema's $defs/evidence as a validator of its own (a decision's view is checked with it)."""
    import jsonschema

    from reviewer import SCHEMAS_DIR

    schema = json.loads((SCHEMAS_DIR / "question.schema.json").read_text(encoding="utf-8"))
    sub = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": "#/$defs/evidence"}
    return jsonschema.Draft202012Validator(sub, format_checker=jsonschema.FormatChecker())


def _validate(doc: Any) -> None:
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        if list(errors[0].absolute_path)[:1] == ["region"] and errors[0].validator == "oneOf":
            Region.from_json(doc["region"])  # names what is wrong with the region
        where = ".".join(["evidence", *map(str, errors[0].absolute_path)])
        raise SchemaError(f"not an evidence view: {errors[0].message}", field=where)


def _iso(text: str) -> str:
    try:
        return dt.date.fromisoformat(text).isoformat()
    except ValueError as exc:
        raise SchemaError(f"not an ISO date: {text!r}", field="evidence.dates") from exc


def check_view(doc: Any) -> dict[str, Any]:
    """A decision's saved view as stored: the EvidenceView JSON of `doc` (SchemaError when it is not one)."""
    return EvidenceView.from_json(doc).to_json()


# ----------------------------------------------------------------------------- building views


def region_of(name: str | None, site_bbox: tuple[float, float, float, float] | None = None) -> Region:
    """A generator region name (north-west, centre, site, ...) as a Region; the centre square is a polygon in
    the site CRS when the site's bbox [west, south, east, north] is known, else the whole site."""
    if name in QUADRANT_CODES:
        return Region("quadrant", QUADRANT_CODES[name])
    if name == "centre" and site_bbox is not None:
        w, s, e, n = (float(v) for v in site_bbox)
        lo, hi = CENTRE_SPAN
        x0, x1 = w + lo * (e - w), w + hi * (e - w)
        y0, y1 = n - hi * (n - s), n - lo * (n - s)
        return Region("polygon", coordinates=((x0, y1), (x1, y1), (x1, y0), (x0, y0), (x0, y1)))
    return Region()


def _periods(rule: str, params: dict[str, Any], period: tuple[int, int], reference: dict[str, Any]) -> list:
    """The [y0, y1] periods a template's evidence compares, by its rule (templates.json evidence.periods)."""
    y1, y2 = period
    p = {k: v for k, v in params.items() if isinstance(v, int) and not isinstance(v, bool)}
    if rule == "years":
        return [[p.get("y1", y1)] * 2, [p.get("y2", y2)] * 2]
    if rule == "periods" and {"a1", "a2", "b1", "b2"} <= set(p):
        return [[p["a1"], p["a2"]], [p["b1"], p["b2"]]]
    if rule == "event_and_recovery":
        fall, years = reference.get("fall_year"), reference.get("years")
        if isinstance(fall, int) and isinstance(years, int | float) and not isinstance(fall, bool):
            back = min(y2, fall + max(1, round(years)))
            return [[max(y1, fall - 1)] * 2, [min(y2, fall + 1)] * 2, [back, back]]
        return [[y1, y2]]
    if rule == "around_reference_year":
        year = reference.get("year")
        if isinstance(year, int) and not isinstance(year, bool):
            return [[max(y1, year - 1)] * 2, [min(y2, year + 1)] * 2]
        return [[y1, y1], [y2, y2]]
    return [[p.get("y1", y1), p.get("y2", y2)]]


def build_view(
    spec: dict[str, Any],
    *,
    params: dict[str, Any],
    period: tuple[int, int],
    reference: dict[str, Any] | None = None,
    region: str | None = None,
    site_bbox: tuple[float, float, float, float] | None = None,
) -> EvidenceView:
    """The evidence view a template's spec gives for one question (deterministic: no randomness, no I/O)."""
    periods = _periods(spec["periods"], params, period, reference or {})
    if spec["view"] == "pair" and len(periods) == 1:
        periods = [[period[0]] * 2, [period[1]] * 2]
    doc = {
        "composite": spec["composite"],
        "stretch": Stretch.default(spec["composite"]).to_json(),
        "view": spec["view"],
        "periods": periods,
        "region": region_of(region if spec.get("region") == "question" else "site", site_bbox).to_json(),
    }
    if spec.get("index"):
        doc["index"] = spec["index"]
    return EvidenceView.from_json(doc)


def _question_years(question: dict[str, Any]) -> tuple[int, int]:
    p = question.get("period") or {}
    try:
        return int(str(p["start"])[:4]), int(str(p["end"])[:4])
    except (KeyError, ValueError) as exc:
        raise SchemaError("the question has no period to show", field="period") from exc


def evidence_for(question: dict[str, Any], site_bbox: tuple[float, float, float, float] | None = None) -> EvidenceView:
    """The question's evidence view; when it has none (an older bank), the one its template would give, or a
    default by task: the NDVI chip strip over the period, or true colour of its first and last year."""
    if question.get("evidence") is not None:
        return EvidenceView.from_json(question["evidence"])
    prov = question.get("provenance") or {}
    period = _question_years(question)
    tpl = templates().get(str(prov.get("template")))
    if tpl is not None and "evidence" in tpl:
        params = prov.get("params") or {}
        names = {v: k for k, v in REGION_NAMES.items()}
        region = prov.get("region") or names.get(str(params.get("region")))
        return build_view(
            tpl["evidence"],
            params=params,
            period=period,
            reference=question.get("reference"),
            region=region,
            site_bbox=site_bbox,
        )
    if question.get("task") in STRIP_TASKS:
        spec = {"composite": "ndvi", "view": "strip", "periods": "period", "index": "ndvi"}
    else:
        spec = {"composite": "truecolor", "view": "pair", "periods": "years", "index": "ndvi"}
    return build_view(spec, params={}, period=period)
