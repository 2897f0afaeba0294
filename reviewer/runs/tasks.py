"""The bank as Inspect tasks: one task per condition, one sample per question (per pair for the altered and placebo
conditions), the question's text, fields and site in its input, its record folder in its metadata.

Record folders: `--site DIR` names a site's folder by the id in its site.json (default: the folder the review
store last scanned for that site, as drafting finds it); `--altered DIR` names an altered copy written by
`reviewer alter`, whose alter_report.json lists the pairs it holds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewer.bank.io import Bank
from reviewer.runs.config import RunError, agent_prompt

CONDITIONS = ("record", "closed_book", "altered", "placebo")
PAIR_KIND = {"altered": "instrument", "placebo": "placebo"}


@dataclass
class Records:
    """Where each site's record and each pair's altered record lie on this machine."""

    sites: dict[str, Path] = field(default_factory=dict)
    pairs: dict[str, Path] = field(default_factory=dict)

    @classmethod
    def from_folders(cls, site_dirs: list[str], altered_dirs: list[str], store: Any = None, bank: Bank | None = None):
        from reviewer.record.site import load_site

        rec = cls()
        for folder in site_dirs:
            rec.sites[load_site(folder).id] = Path(folder).resolve()
        for folder in altered_dirs:
            report = Path(folder) / "alter_report.json"
            try:
                doc = json.loads(report.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise RunError(f"not an altered record of `reviewer alter` ({exc})", path=report) from None
            for kept in doc.get("kept") or []:
                rec.pairs[kept["pair"]["id"]] = Path(folder).resolve()
        todo = [s["id"] for s in bank.sites if s["id"] not in rec.sites] if bank is not None else []
        if todo and store is not None:
            if callable(store):
                store = store()
            for sid in todo:
                row = store.db.execute(
                    "SELECT site_dir FROM sites WHERE site_id = ? ORDER BY scanned_at DESC LIMIT 1", [sid]
                ).fetchone()
                if row and Path(row[0]).is_dir():
                    rec.sites[sid] = Path(row[0])
        return rec


def _fields_text(q: dict[str, Any]) -> str:
    lines = []
    for f in q["fields"]:
        kind = f["type"]
        if f.get("options"):
            kind += ": one of " + ", ".join(f'"{o}"' for o in f["options"])
        if f.get("unit"):
            kind += f" in {f['unit']}"
        lines.append(f"- {f['name']} ({kind})")
    return "\n".join(lines) + "\n"


def question_input(q: dict[str, Any], site: dict[str, Any]) -> str:
    """The user message of a run: the question, its fields, the site's name and bounding box, the period."""
    return agent_prompt().item.format(
        text=q["text"],
        fields=_fields_text(q),
        conclusion=q["conclusion"],
        site_name=site["name"],
        site_id=site["id"],
        bbox=json.dumps(site["bbox"]),
        crs=site["crs"],
        period_start=q["period"]["start"],
        period_end=q["period"]["end"],
    )


@dataclass(frozen=True)
class Unit:
    """One sample of one condition: a question, the pair for the altered conditions, and its record folder."""

    condition: str
    question: dict[str, Any]
    pair: str | None
    record: Path | None

    @property
    def sample_id(self) -> str:
        return self.question["id"] if self.pair is None else f"{self.question['id']}~{self.pair}"


def units(bank: Bank, condition: str, records: Records, *, closed_book_needs_no_record: bool = True) -> list[Unit]:
    """The samples of one condition; a question or pair whose record folder is unknown is refused by name."""
    out = []
    missing = []
    if condition in ("record", "closed_book"):
        for q in bank.questions:
            folder = None
            if condition == "record":
                folder = records.sites.get(q["site"])
                if folder is None:
                    missing.append(f"site {q['site']}")
            out.append(Unit(condition, q, None, folder))
    else:
        for p in bank.pairs:
            if p["kind"] != PAIR_KIND[condition]:
                continue
            folder = records.pairs.get(p["id"])
            if folder is None:
                missing.append(f"pair {p['id']}")
            out.append(Unit(condition, bank.question(p["question"]), p["id"], folder))
    if missing:
        names = sorted(set(missing))
        hint = "--site DIR" if names[0].startswith("site") else "--altered DIR"
        raise RunError(
            f"no record folder for {', '.join(names[:5])}{' ...' if len(names) > 5 else ''} "
            f"({condition} condition): give it with {hint}"
        )
    return out
