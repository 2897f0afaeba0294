"""Consistency rules: a reference is kept only when the question's own numbers support it.

The rules are data (templates.json: `consistency_rules` names each rule with its reason code and message, each
template's `consistency` gives its parameters); this module applies them to a question, the same way at
generation (every candidate before it is kept) and at review time (a drafted or corrected reference, through
reviewer.review.stage1.check_correction). Rules:

- range_holds_reference: every numeric reference lies inside its range;
- within_bounds: references and ranges stay in the field's domain (shares 0-100, areas not negative);
- conclusion_one_side: a direction or yes/no conclusion holds only when the whole range of the number it
  rests on lies on one side of the threshold the question states;
- methods_agree: a method reference's categorical conclusion is given by at least the agreement share of its
  methods (seed 001: 75%);
- range_too_wide: a range reaching farther from the reference than the template's share of it (and its
  absolute floor) says the methods do not agree on a value.
"""

from __future__ import annotations

import math
from typing import Any

from reviewer.bank.model import is_insufficient
from reviewer.bank.templates import methods_agree_share, rules_doc, templates


def _template(q: dict[str, Any]) -> dict[str, Any] | None:
    name = (q.get("provenance") or {}).get("template")
    return templates().get(name) if isinstance(name, str) else None


def message(code: str, **kw: Any) -> str:
    """The rule's message with its values filled in."""
    text = rules_doc()[code]["message"]
    return text.format(**{k: _fmt(v) for k, v in kw.items()})


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list | tuple) and len(v) == 2:
        return f"[{_fmt(v[0])}, {_fmt(v[1])}]"
    return str(v)


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def abs_floor(tpl: dict[str, Any]) -> float:
    """The template's absolute range floor (the smallest half-width generation gives a range)."""
    th = tpl.get("thresholds", {})
    for key in ("abs_floor", "abs_floor_pct", "abs_floor_km2"):
        if _num(th.get(key)):
            return float(th[key])
    return 0.0


def clamp_ranges(q: dict[str, Any], tpl: dict[str, Any]) -> None:
    """Ranges cut to their field's domain (a share's range below 0 holds no possible answer)."""
    for name, (lo, hi) in (tpl.get("consistency", {}).get("bounds") or {}).items():
        r = q.get("reference_range", {}).get(name)
        if r is None:
            continue
        a = max(r[0], lo) if lo is not None else r[0]
        b = min(r[1], hi) if hi is not None else r[1]
        q["reference_range"][name] = [a, b]


def problems(q: dict[str, Any]) -> list[tuple[str, str]]:
    """(reason code, message) of every consistency rule the question's reference breaks; empty when none.
    Insufficient-evidence questions and references still awaiting review (visual, withheld product drafts)
    are checked only for what holds of any reference (range holds it, bounds)."""
    if q.get("class") == "insufficient":
        return []
    tpl = _template(q) or {}
    rules = tpl.get("consistency", {})
    ref = q.get("reference") or {}
    ranges = q.get("reference_range") or {}
    out: list[tuple[str, str]] = []
    for name, (lo, hi) in ranges.items():
        v = ref.get(name)
        if _num(v) and not lo <= v <= hi:
            out.append(
                ("range_holds_reference", message("range_holds_reference", field=name, range=[lo, hi], reference=v))
            )
    for name, (blo, bhi) in (rules.get("bounds") or {}).items():
        for what, v in (("reference", ref.get(name)), *(("range", x) for x in ranges.get(name, []))):
            if _num(v) and ((blo is not None and v < blo) or (bhi is not None and v > bhi)):
                out.append(
                    (
                        "within_bounds",
                        message(
                            "within_bounds",
                            field=name,
                            what=what,
                            value=v,
                            low="-inf" if blo is None else blo,
                            high="inf" if bhi is None else bhi,
                        ),
                    )
                )
                break
    pending = "reference_pending" in (q.get("provenance") or {})
    if pending:
        return out
    out += _one_side(q, rules.get("one_side"), ref, ranges)
    out += _agreement(q)
    floor = abs_floor(tpl)
    for name, share in (rules.get("max_half_width") or {}).items():
        v, r = ref.get(name), ranges.get(name)
        if _num(v) and r:
            reach = max(v - r[0], r[1] - v)
            allowed = max(share * abs(v), floor)
            if reach > allowed * (1 + 1e-9):
                out.append(
                    (
                        "range_too_wide",
                        message(
                            "range_too_wide",
                            field=name,
                            range=r,
                            reference=v,
                            reach=reach,
                            allowed=allowed,
                            share=f"{share:.0%}",
                        ),
                    )
                )
    return out


def _threshold(spec: dict[str, Any], q: dict[str, Any], tpl_thresholds: dict[str, Any]) -> float | None:
    t = spec.get("threshold", 0)
    if isinstance(t, str):
        params = (q.get("provenance") or {}).get("params") or {}
        t = params.get(t, tpl_thresholds.get(t))
    return float(t) if _num(t) else None


def _derived(spec: dict[str, Any], values: dict[str, Any]) -> float | None:
    """The number a conclusion rests on, from the fields' values: a field, or the relative change in % from
    the first named field to the second."""
    if "field" in spec:
        v = values.get(spec["field"])
        return float(v) if _num(v) else None
    a, b = (values.get(k) for k in spec["of"])
    if not (_num(a) and _num(b)) or a <= 0:
        return None
    return (b - a) / abs(a) * 100.0


def _one_side(q: dict[str, Any], spec: dict[str, Any] | None, ref: dict[str, Any], ranges: dict[str, Any]):
    if not spec:
        return []
    concl = q.get("conclusion")
    value = ref.get(concl)
    side = (spec.get("sides") or {}).get(value) if isinstance(value, str) else None
    tpl = _template(q) or {}
    t = _threshold(spec, q, tpl.get("thresholds", {}))
    if side is None or t is None:
        return []
    if "field" in spec:
        r = ranges.get(spec["field"])
        point = _derived(spec, ref)
        lo, hi = (r[0], r[1]) if r else (point, point)
        what = f"the {spec['field']} range"
    else:
        # a derived number (relative change): its range spans the reference and every method's value
        methods = (q.get("provenance") or {}).get("methods") or {}
        per = [methods.get(k) if isinstance(methods.get(k), dict) else {} for k in spec["of"]]
        names = set(per[0]).intersection(per[1])
        vals = [_derived(spec, {k: methods[k][m] for k in spec["of"]}) for m in sorted(names)]
        vals = [v for v in [*vals, _derived(spec, ref)] if v is not None]
        if not vals:
            return []
        lo, hi = min(vals), max(vals)
        what = f"the {spec.get('name', 'derived value')} range"
    if lo is None or hi is None:
        return []
    ok = {
        "above": lo > t,
        "below": hi < -t,
        "inside": -t <= lo and hi <= t,
        "outside": lo > t or hi < -t,
    }[side]
    if ok:
        return []
    return [
        (
            "conclusion_one_side",
            message(
                "conclusion_one_side", conclusion=concl, value=value, what=what, range=[lo, hi], side=side, threshold=t
            ),
        )
    ]


def _agreement(q: dict[str, Any]) -> list[tuple[str, str]]:
    if q.get("reference_source") != "method":
        return []
    concl = q.get("conclusion")
    field = next((f for f in q.get("fields", []) if f.get("name") == concl), None)
    if field is None or field.get("type") == "number":
        return []
    value = (q.get("reference") or {}).get(concl)
    if value is None or is_insufficient(value):
        return []
    prov = q.get("provenance") or {}
    per = (prov.get("methods") or {}).get(concl)
    votes = [v for v in per.values() if v is not None] if isinstance(per, dict) else []
    if not votes:
        return []
    need = float((prov.get("config") or {}).get("min_agreement", methods_agree_share()))
    share = sum(1 for v in votes if v == value) / len(votes)
    if share + 1e-9 >= need:
        return []
    return [
        (
            "methods_agree",
            message(
                "methods_agree", conclusion=concl, value=value, share=f"{share:.0%}", need=f"{need:.0%}", n=len(votes)
            ),
        )
    ]


def new_problems(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, str]]:
    """The rules `after` breaks that `before` did not (a correction is refused for what it breaks, not for
    what it leaves as it was)."""
    old = {code for code, _ in problems(before)}
    return [(code, text) for code, text in problems(after) if code not in old]
