"""`reviewer users ...` and `reviewer review ...`: the two-stage review on the command line.

Every verb calls reviewer.review.api, the same functions the app's review dock calls. Verbs that
annotators script in loops (next, decide) import only the store and the review core.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from reviewer.argtypes import integer
from reviewer.console import figure, run_verb


def _store(args: argparse.Namespace, *, create: bool = False) -> Any:
    """The store of --db (or the default one) or the --package file. Only a verb that may be a store's first write
    (`users add`) makes one; any other says `no store at PATH` and makes nothing (a mistyped --db)."""
    from reviewer.store import Store

    if getattr(args, "package", None):
        from reviewer.errors import ReviewError
        from reviewer.review.packages import open_package

        if getattr(args, "db", None):
            raise ReviewError("give --package FILE or --db FILE, not both")
        return open_package(args.package)
    return Store(getattr(args, "db", None), create=create)


def _json_arg(text: str | None, what: str) -> Any:
    from reviewer.errors import ReviewError
    from reviewer.fileio import json_problem, loads_strict

    if text is None:
        return None
    try:
        value = loads_strict(text)  # no NaN/Infinity, duplicate keys or deep nesting
    except ValueError as exc:
        raise ReviewError(f"{what}: {json_problem(exc)}") from exc
    if not isinstance(value, dict):
        raise ReviewError(f"{what}: must be a JSON object")
    return value


def _run(
    args: argparse.Namespace,
    call: Callable[[Any], Any],
    say: Callable[[Any], Any] | None = None,
    *,
    create: bool = False,
) -> int:
    """A review verb: the store of --db or --package (made only with `create`), the call, its JSON with --json or
    `say`'s lines (reviewer.console.run_verb)."""
    return run_verb(lambda: _store(args, create=create), call, as_json=getattr(args, "json", False), say=say)


# ----------------------------------------------------------------------------- users


def _users_add(args: argparse.Namespace) -> int:
    from reviewer.review.api import add_user

    bound = f", bound to OS login {', '.join(args.login)}" if args.login else ""
    return _run(
        args,
        lambda store: add_user(store, args.name, args.role, by=args.user, logins=args.login),
        lambda u: f"added {u.role} {u.name}{bound}",
        create=True,  # the first user makes the store
    )


def _users_bind(args: argparse.Namespace) -> int:
    from reviewer.review.api import bind_login

    bound = args.users_verb == "bind"

    def call(store: Any) -> None:
        for login in args.login:
            bind_login(store, args.name, login, by=args.user, bound=bound)

    return _run(
        args, call, lambda _: f"{args.name}: {'bound to' if bound else 'no longer bound to'} {', '.join(args.login)}"
    )


def _users_list(args: argparse.Namespace) -> int:
    from reviewer.review.api import list_users, login_bindings

    def call(store: Any) -> dict[str, Any]:
        return {"mode": "bound" if login_bindings(store) else "one_seat", "users": list_users(store)}

    def say(out: dict[str, Any]) -> list[str]:
        mode = (
            "profiles bound to OS logins: each process may act only as the profiles of its login"
            if out["mode"] == "bound"
            else "one seat: no profile is bound to an OS login, so whoever runs the tool may name any profile"
        )
        lines = [f"mode: {mode}"]
        for r in out["users"]:
            logins = ", ".join(r["logins"]) if r["logins"] else "-"
            lines.append(f"{r['name']:<20} {r['role']:<11} {r['created']}  logins: {logins}")
        return lines

    return _run(args, call, say)


# ----------------------------------------------------------------------------- stage 1


def _assign(args: argparse.Namespace) -> int:
    from reviewer.review.api import assign

    def call(store: Any) -> dict[str, Any]:
        return assign(
            store,
            args.bank,
            annotators=args.annotators.split(","),
            k=args.k,
            seed=args.seed,
            user=args.user,
            gold=args.gold,
            gold_share=args.gold_share,
        )

    def say(out: dict[str, Any]) -> str:
        loads = ", ".join(f"{n} {c}" for n, c in out["per_annotator"].items())
        return (
            f"assigned {out['items']} items of {out['bank']} (batch {out['batch']}, "
            f"{out['gold_items']} gold items hidden): {loads}"
        )

    return _run(args, call, say)


def _next(args: argparse.Namespace) -> int:
    from reviewer.review.api import next_item

    def say(view: dict[str, Any] | None) -> list[str]:
        if view is None:
            return ["nothing left to review"]
        q, p = view["question"], view["progress"]
        lines = [
            f"{view['item']} (version {view['version']})   {p['done']} of {p['assigned']} done",
            f"site {q['site']}, {q['period']['start']} to {q['period']['end']}, {q['class']}"
            + (f" / {q['task']}" if q.get("task") else ""),  # (an insufficient item has none: "/ None")
            q["text"],
            f"reference: {json.dumps(q['reference'], ensure_ascii=False)}",
        ]
        if q.get("reference_range"):
            lines.append(f"range:     {json.dumps(q['reference_range'], ensure_ascii=False)}")
        if (q.get("evidence") or {}).get("note"):  # why an insufficient item is so, or what the methods say
            lines.append(f"evidence:  {q['evidence']['note']}")
        if view["your_decision"]:
            lines.append(f"your last decision: {view['your_decision']['verdict']}")
        lines.append("flag reasons: " + ", ".join(r["code"] for r in view["flag_reasons"]))
        return lines

    return _run(args, lambda store: next_item(store, args.bank, user=args.user), say)


def _decide(args: argparse.Namespace) -> int:
    from reviewer.review.api import Decision, decide

    verdict = "accept" if args.accept else "skip" if args.skip else "flag"
    reasons = [r.strip() for r in args.flag.split(",")] if args.flag else []

    def call(store: Any) -> dict[str, Any]:
        decision = Decision(
            verdict,
            reasons=reasons,
            comment=args.comment,
            correction=_json_arg(args.correct, "--correct"),
            seconds=args.seconds,
            view=_json_arg(args.view, "--view"),
            confidence=args.confidence,
        )
        return decide(store, args.item, decision, user=args.user, version=args.version, bank=args.bank)

    def say(out: dict[str, Any]) -> str:
        why = f" ({', '.join(out['reasons'])})" if out["reasons"] else ""
        why += f", {out['confidence']} confidence" if out.get("confidence") else ""
        return f"{out['item']} v{out['version']}: {out['verdict']}{why} saved (decision {out['decision']})"

    return _run(args, call, say)


def _undo(args: argparse.Namespace) -> int:
    from reviewer.review.api import undo

    return _run(
        args,
        lambda store: undo(store, args.bank, user=args.user),
        lambda out: f"{out['item']}: took back {out['verdict']} (decision {out['undone']})",
    )


def _queue(args: argparse.Namespace) -> int:
    from reviewer.review.api import queue

    own: list[str] = []

    def say(rows: list[dict[str, Any]]) -> list[str]:
        lines = []
        for i, r in enumerate(rows, start=1):
            extra = f"  {r['kind']} ({r['flags']} of {r['decisions']} flagged)" if "kind" in r else ""
            lines.append(f"{i:>5}  {r['item']}{extra}")
        lines.append(f"{len(rows)} item(s) in the queue")
        if own:  # else the store's count of flagged items and this queue's disagreed with no word why
            first = own[0]
            more = f" and {len(own) - 1} more" if len(own) > 1 else ""
            lines.append(
                f"{len(own)} more wait for another expert: you decided them at stage 1 ({first}{more}); a maintainer "
                f"may let you adjudicate one: reviewer review allow {first} {args.user or 'EXPERT'} --reason T"
            )
        return lines

    return _run(args, lambda store: queue(store, args.bank, user=args.user, own=own), say)


def _status(args: argparse.Namespace) -> int:
    from reviewer.review.api import status

    def say(out: dict[str, Any]) -> list[str]:
        lines = [f"{'annotator':<16} {'done':>6} {'assigned':>9} {'median s':>9} {'gold':>9}"]
        for r in out["annotators"]:
            med = f"{r['median_seconds']:.1f}" if r["median_seconds"] is not None else "-"
            gold = f"{r['gold_correct']}/{r['gold_decided']}" if r["gold_decided"] else "-"
            lines.append(f"{r['user']:<16} {r['done']:>6} {r['assigned']:>9} {med:>9} {gold:>9}")
        if "states" in out:
            lines.append("items: " + ", ".join(f"{s} {n}" for s, n in out["states"].items()))
        return lines

    return _run(args, lambda store: status(store, args.bank, user=args.user), say)


_fmt = figure  # the tables' figures: three decimals, '-' for none, never '-0.000'


def _agreement(args: argparse.Namespace) -> int:
    from reviewer.review.api import agreement

    def say(out: dict[str, Any]) -> list[str]:
        keys = ("items", "raters", "percent_agreement", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1")
        lines = [f"{'table':<22} " + " ".join(f"{k[:12]:>12}" for k in keys)]
        tables = [("accept / flag", out["overall"])] + list(out["per_reason"].items())
        tables += [(f"task {task}", figs) for task, figs in out.get("per_task", {}).items()]
        for name, figs in tables:
            lines.append(f"{name:<22} " + " ".join(f"{_fmt(figs.get(k)):>12}" for k in keys))
        for pair in out["overall"].get("cohen", []):
            a, b = pair["raters"]
            lines.append(f"cohen {a} x {b}: kappa {_fmt(pair['kappa'])} on {pair['items']} items")
        for g in out["gold"]:
            if g["gold_decided"]:
                lines.append(f"gold {g['user']}: {g['gold_correct']} of {g['gold_decided']} right")
        return [*lines, *(f"wrote {path}" for path in out.get("csv", []))]

    return _run(args, lambda store: agreement(store, args.bank, user=args.user, csv_dir=args.csv), say)


def _quality(args: argparse.Namespace) -> int:
    from reviewer.fileio import check_output_folder
    from reviewer.review.quality import (
        CSV_FILES,
        convergence_note,
        quality_report,
        quality_settings,
        write_quality_csv,
    )

    def call(store: Any) -> dict[str, Any]:
        if args.csv:  # before the fit: a folder holding others' files is refused
            check_output_folder(args.csv, field="csv", ours=CSV_FILES)
        # the per-reason model only where it is shown (as long a fit again)
        out = quality_report(store, args.bank, user=args.user, mace=args.mace, reasons=bool(args.json or args.csv))
        if args.csv:
            out["csv"] = [str(p) for p in write_quality_csv(out, args.csv)]
        return out

    def say(out: dict[str, Any]) -> list[str]:
        heads = ("reliab.", "sens.", "spec.", "gold", "outcome", "median s", "skips", "undos")
        levels = quality_settings().confidence
        sure = "conf. " + "/".join(c[0].upper() for c in levels)  # decisions given at each level: conf. L/M/H 0/3/9
        lines = [f"{'annotator':<16} {'done':>6} " + " ".join(f"{h:>8}" for h in heads) + f" {sure:>12}"]
        for a in out["annotators"]:
            gold = f"{_fmt(a['gold_accuracy'])}/{a['gold_decided']}" if a["gold_decided"] else "-"
            cells = (
                _fmt(a["reliability"]),
                _fmt(a["sensitivity"]),
                _fmt(a["specificity"]),
                gold,
                _fmt(a["outcome_agreement"]),
                _fmt(a["median_seconds"]),
                _fmt(a["skip_share"]),
                _fmt(a["undo_share"]),
            )
            given = "/".join(str(a["confidence"].get(c, 0)) for c in levels)
            lines.append(
                f"{a['annotator']:<16} {a['decisions']:>6} " + " ".join(f"{c:>8}" for c in cells) + f" {given:>12}"
            )
        ranked = sorted(
            (i for i in out["items"] if i["posterior_acceptable"] is not None), key=lambda i: i["posterior_acceptable"]
        )
        low, high = quality_settings().uncertain_posterior
        uncertain = [i for i in ranked if low <= i["posterior_acceptable"] <= high]
        lines.append(
            f"{len(ranked)} items with decisions; {len(uncertain)} with an uncertain posterior ({low} to {high}) "
            "that the reference is acceptable"
        )
        for i in uncertain[:10]:
            diff = f", difficulty {_fmt(i['difficulty'])}" if i["difficulty"] is not None else ""
            lines.append(
                f"  {i['item']}: posterior {_fmt(i['posterior_acceptable'])} "
                f"({i['accepts']} of {i['decisions']} accepted{diff})"
            )
        for name, m in out["models"].items():
            if not m.get("ran") and name != "per_reason":  # the table shows no per-reason figure
                lines.append(f"{name}: not run ({m.get('why', '')})")
        note = convergence_note(out["models"])
        if note:
            lines.append(note)
        return [*lines, *(f"wrote {path}" for path in out.get("csv", []))]

    return _run(args, call, say)


# ----------------------------------------------------------------------------- stage 2


def _adjudicate(args: argparse.Namespace) -> int:
    from reviewer.review.api import Decision, adjudicate

    verdict = "accept" if args.accept else "reject" if args.reject else "correct"
    reasons = [r.strip() for r in args.reject.split(",")] if args.reject else []

    def call(store: Any) -> dict[str, Any]:
        decision = Decision(
            verdict,
            reasons=reasons,
            correction=_json_arg(args.correct, "--correct"),
            rationale=args.rationale,
            view=_json_arg(args.view, "--view"),
            confidence=args.confidence,
        )
        return adjudicate(store, args.item, decision, user=args.user, version=args.version, bank=args.bank)

    def say(out: dict[str, Any]) -> str:
        new = f", new version {out['new_version']}" if out["new_version"] else ""
        new += f", {out['confidence']} confidence" if out.get("confidence") else ""
        return f"{out['item']}: {out['verdict']}{new} (decision {out['decision']})"

    return _run(args, call, say)


def _draft_review(args: argparse.Namespace) -> int:
    from reviewer.review.drafts import review_draft

    verdict = "accept" if args.accept else "reject" if args.reject else "correct"

    def call(store: Any) -> dict[str, Any]:
        return review_draft(
            store,
            args.item,
            user=args.user,
            verdict=verdict,
            reason=args.reject,
            correction=_json_arg(args.correct, "--correct"),
            rationale=args.rationale,
            version=args.version,
            bank=args.bank,
        )

    def say(out: dict[str, Any]) -> str:
        said = f", new version {out['new_version']}" if out["new_version"] else f" ({out['reason']}: {out['route']})"
        return f"{out['item']}: draft {out['verdict']}{said}; now {out['state']}"

    return _run(args, call, say)


def _drafts(args: argparse.Namespace) -> int:
    from reviewer.review.drafts import draft_queue

    def say(out: dict[str, Any]) -> str:
        return "\n".join(
            f"{name.replace('_', ' ')}: {len(out[name])}" + (f" ({', '.join(out[name])})" if out[name] else "")
            for name in ("to_review", "redraft", "needs_reference")
        )

    return _run(args, lambda store: draft_queue(store, args.bank, user=args.user), say)


def _show(args: argparse.Namespace) -> int:
    from reviewer.review.api import expert_view

    def say(view: dict[str, Any]) -> list[str]:
        q = view["question"]
        lines = [
            f"{view['item']} v{view['version']} [{view['state']}{', audit' if view['audit'] else ''}]",
            q["text"],
            f"reference: {json.dumps(q['reference'], ensure_ascii=False)}",
        ]
        for d in view["stage1"]:
            line = f"  {d['annotator']}: {d['verdict']}"
            if d["reasons"]:
                line += f" ({', '.join(d['reasons'])})"
            if d.get("confidence"):
                line += f" [{d['confidence']} confidence]"
            if d["comment"]:
                line += f" - {d['comment']}"
            if d["correction"]:
                line += f"  suggests {json.dumps(d['correction'], ensure_ascii=False)}"
            lines.append(line)
        return lines

    return _run(args, lambda store: expert_view(store, args.item, user=args.user, bank=args.bank), say)


def _allow(args: argparse.Namespace) -> int:
    from reviewer.review.api import allow

    return _run(
        args,
        lambda store: allow(store, args.item, args.expert, user=args.user, reason=args.reason, bank=args.bank),
        lambda _: f"{args.expert} may adjudicate {args.item}",
    )


def _reopen(args: argparse.Namespace) -> int:
    from reviewer.review.api import reopen

    return _run(
        args,
        lambda store: reopen(store, args.item, user=args.user, reason=args.reason, bank=args.bank),
        lambda out: f"{out['item']} is back in stage-1 review ({out['retracted']} decision(s) retracted)",
    )


def _rule(args: argparse.Namespace) -> int:
    from reviewer.review.api import apply_rule, set_rule

    def call(store: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
        cfg = set_rule(
            store,
            args.bank,
            user=args.user,
            audit_share=args.audit_share,
            adjudicate_share=args.adjudicate_share,
            rest_rule=args.rest,
            route_uncertain=None if args.route_uncertain is None else args.route_uncertain == "on",
        )
        return cfg, (apply_rule(store, args.bank, user=args.user) if args.apply else None)

    def say(both: tuple[dict[str, Any], dict[str, Any] | None]) -> list[str]:
        cfg, out = both
        lines = [
            f"{args.bank}: audit share {cfg['audit_share']}, adjudicate share {cfg['adjudicate_share']}, "
            f"rest rule {cfg['rest_rule']}, seed {cfg['seed']}, "
            f"route uncertain {'on' if cfg.get('route_uncertain') else 'off'}"
        ]
        if out:
            lines.append(
                f"applied '{out['rule']}' to {out['applied']} of {out['outside_sample']} flagged items outside the sample"
            )
        return lines

    return _run(args, call, say)


def _route(args: argparse.Namespace) -> int:
    from reviewer.review.quality import route

    def say(out: dict[str, Any]) -> list[str]:
        low, high = out["uncertain_posterior"]
        setting = "on" if out["route_uncertain"] else "off (`review rule BANK --route-uncertain on`)"
        lines = [
            f"{args.bank}: routing by the reliability model is {setting}",
            f"{len(out['uncertain'])} consensus item(s) with a posterior between {low} and {high} "
            "not yet with an expert",
        ]
        for i in out["uncertain"]:
            lines.append(
                f"  {i['item']}: posterior {_fmt(i['posterior_acceptable'])} "
                f"({i['accepts']} of {i['decisions']} accepted)"
            )
        if args.apply:
            lines.append(f"sent {out['sent']} item(s) to an expert")
        for w in out["weak_annotators"]:
            lines.append(f"{w['annotator']}: {w['why']}; {len(w['open_items'])} open item(s)")
            if w["open_items"]:
                lines.append(
                    f"  reassign with: reviewer review reassign {args.bank} --from {w['annotator']} "
                    "--to USER --reason TEXT"
                )
        if not out["weak_annotators"]:
            lines.append("no annotator under the reliability or gold thresholds")
        return lines

    return _run(args, lambda store: route(store, args.bank, user=args.user, apply=args.apply), say)


def _reassign(args: argparse.Namespace) -> int:
    from reviewer.review.quality import reassign

    def say(out: dict[str, Any]) -> str:
        kept = f"; {len(out['kept'])} stay with {out['from']} ({out['to']} has them already)" if out["kept"] else ""
        return f"moved {len(out['moved'])} open item(s) from {out['from']} to {out['to']}{kept}"

    return _run(
        args,
        lambda store: reassign(
            store, args.bank, source=args.source, target=args.target, reason=args.reason, user=args.user
        ),
        say,
    )


def _log(args: argparse.Namespace) -> int:
    from reviewer.review.api import history

    def say(out: dict[str, Any]) -> list[str]:
        rows: list[tuple[str, str]] = []
        for v in out["versions"]:
            rows.append(
                (
                    v["created"],
                    f"version {v['version']} ({v['origin']} by {v['created_by']}"
                    f"{': ' + v['reason'] if v['reason'] else ''}) {v['sha256'][:19]}",
                )
            )
        for e in out["events"]:
            change = (
                f" {e['before'] or ''} -> {e['after'] or ''}".replace("  ", " ") if e["before"] or e["after"] else ""
            )
            detail = e["detail"] or {}
            extra = "".join(
                f" {k}={json.dumps(detail[k], ensure_ascii=False)}"
                for k in ("reasons", "reason", "rationale")
                if detail.get(k)
            )
            rows.append((e["at"], f"#{e['id']} {e['user'] or 'tool'} {e['action']} v{e['version']}{change}{extra}"))
        state = f"  [{out['state']}, current version {out['current_version']}]" if "state" in out else ""
        return [f"{out['item']}{state}", *(f"  {at}  {text}" for at, text in sorted(rows, key=lambda r: r[0]))]

    return _run(args, lambda store: history(store, args.item, user=args.user), say)


def _verify_log(args: argparse.Namespace) -> int:
    from reviewer.review.api import verify_log

    def say(found: dict[str, Any]) -> str:
        older = found["decisions_before_seals"]
        return (
            f"integrity check ok; {found['events']} events, chain intact, last hash {found['head']}; "
            f"{found['decisions_sealed']} decisions match their seals in the log"
            + (f" ({older} written before seals, not checked)" if older else "")
        )

    return _run(args, verify_log, say)


def _freeze(args: argparse.Namespace) -> int:
    from reviewer.review.freeze import freeze

    def say(manifest: dict[str, Any]) -> str:
        c = manifest["counts"]
        return (
            f"froze {manifest['name']} version {manifest['version']} into {args.out}: {c['questions']} questions, "
            f"{c['sites']} sites, {c['pairs']} pairs (qc.json beside the manifest)"
        )

    return _run(args, lambda store: freeze(store, args.bank, version=args.version, out=args.out, user=args.user), say)


def _common(p: argparse.ArgumentParser, *, json_out: bool = True) -> None:
    p.add_argument("--user", help="who is working (default: REVIEWER_USER)")
    if json_out:
        p.add_argument("--json", action="store_true", help="print JSON")


def _package(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--package", metavar="FILE", help="work on a review package (`reviewer package export`) as the store"
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `users`, `freeze`, `review` and `package` verbs."""
    _register_users(subparsers)
    _register_freeze(subparsers)
    review = subparsers.add_parser("review", help="two-stage review: assign, decide, adjudicate, agreement, log")
    sub = review.add_subparsers(dest="review_verb", metavar="SUBCOMMAND", required=True)
    _register_stage1(sub)
    _register_stage2(sub)
    _register_drafts(sub)
    _register_maintainer(sub)
    from reviewer.review.package_cli import register as register_packages

    register_packages(subparsers)


def _register_users(subparsers: argparse._SubParsersAction) -> None:
    users = subparsers.add_parser("users", help="local profiles: annotator, expert, maintainer")
    sub = users.add_subparsers(dest="users_verb", metavar="SUBCOMMAND", required=True)
    p = sub.add_parser("add", help="add a user (once a maintainer exists, only a maintainer may)")
    p.add_argument("name")
    p.add_argument("--role", required=True, choices=["annotator", "expert", "maintainer"])
    p.add_argument("--user", help="the maintainer adding them (default: REVIEWER_USER)")
    p.add_argument(
        "--login",
        action="append",
        default=[],
        metavar="OS_LOGIN",
        help="an OS account allowed to act as this profile (repeat for several); once a store binds any "
        "profile, every process must run under a login bound to the profile it names",
    )
    p.set_defaults(func=_users_add)
    for verb, what in (
        ("bind", "allow an OS login to act as a profile"),
        ("unbind", "take an OS login's binding back"),
    ):
        p = sub.add_parser(verb, help=f"maintainer: {what}")
        p.add_argument("name")
        p.add_argument("--login", action="append", required=True, metavar="OS_LOGIN")
        p.add_argument("--user", help="the maintainer (default: REVIEWER_USER)")
        p.set_defaults(func=_users_bind)
    p = sub.add_parser("list", help="list users, roles and bound OS logins, and whether the store binds logins")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_users_list)


def _register_freeze(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("freeze", help="maintainer: write the reviewed bank as a frozen version with qc.json")
    p.add_argument("bank")
    p.add_argument("--version", required=True, help="the frozen version's name (e.g. 2)")
    p.add_argument("--out", required=True, help="the bank folder to write")
    p.add_argument("--user", help="the maintainer (default: REVIEWER_USER)")
    p.set_defaults(func=_freeze)


def _register_stage1(sub: argparse._SubParsersAction) -> None:
    """Assignment, the annotators' verbs, progress and agreement."""
    p = sub.add_parser("assign", help="give each item to k annotators (seeded, balanced; gold items hidden)")
    p.add_argument("bank")
    p.add_argument("--annotators", required=True, help="comma-separated user names")
    p.add_argument("--k", type=int, default=2, help="annotators per item (default 2)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gold", help="GOLD.jsonl: questions with known verdicts (schemas/gold.schema.json)")
    p.add_argument("--gold-share", type=float, default=0.0, help="share of each queue that is gold (e.g. 0.1)")
    _common(p)
    p.set_defaults(func=_assign)

    p = sub.add_parser("next", help="the next item in your order, with what you need to judge it")
    p.add_argument("bank")
    _common(p)
    _package(p)
    p.set_defaults(func=_next)

    p = sub.add_parser("decide", help="stage 1: accept, flag with reasons, or skip an item")
    p.add_argument("item", help="BANK/ID, or ID when it is in one bank only")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--accept", action="store_true")
    g.add_argument("--flag", metavar="REASON[,REASON]", help="flag reasons from the codebook")
    g.add_argument("--skip", action="store_true", help="postpone: the item comes back at the end of your queue")
    p.add_argument("--comment")
    p.add_argument("--correct", metavar="JSON", help="suggested correction (schemas/correction.schema.json)")
    p.add_argument("--seconds", type=float, help="time spent (default: since `review next` showed it)")
    p.add_argument("--version", type=integer(1), help="the item version you judged (refused if no longer current)")
    p.add_argument("--view", metavar="JSON", help="the evidence view the decision rests on")
    p.add_argument("--confidence", help="how sure you are: low, medium or high (assets/review/quality.json)")
    p.add_argument("--bank")
    _common(p)
    _package(p)
    p.set_defaults(func=_decide)

    p = sub.add_parser("undo", help="take back your last stage-1 decision in a bank")
    p.add_argument("bank")
    _common(p)
    _package(p)
    p.set_defaults(func=_undo)

    p = sub.add_parser("queue", help="your queue in order (annotator: your items; expert: by disagreement)")
    p.add_argument("bank")
    _common(p)
    _package(p)
    p.set_defaults(func=_queue)

    p = sub.add_parser("status", help="progress per annotator (done/assigned, median seconds, gold accuracy)")
    p.add_argument("bank")
    _common(p)
    _package(p)
    p.set_defaults(func=_status)

    p = sub.add_parser("agreement", help="percent agreement, Cohen, Fleiss, Krippendorff alpha, Gwet AC1")
    p.add_argument("bank")
    p.add_argument("--csv", metavar="DIR", help="also write the figures as CSV files")
    _common(p)
    p.set_defaults(func=_agreement)

    p = sub.add_parser(
        "quality", help="annotator reliability (Dawid-Skene), gold accuracy, item posteriors and difficulty (GLAD)"
    )
    p.add_argument("bank")
    p.add_argument("--csv", metavar="DIR", help="also write annotators.csv and items.csv")
    p.add_argument("--mace", action="store_true", help="also fit MACE (a second opinion on each annotator; slower)")
    _common(p)
    p.set_defaults(func=_quality)


def _register_stage2(sub: argparse._SubParsersAction) -> None:
    """The experts' verbs: an item with its stage-1 decisions, and adjudication."""
    p = sub.add_parser("show", help="expert: an item with every stage-1 decision (annotators pseudonymised)")
    p.add_argument("item")
    p.add_argument("--bank")
    _common(p)
    p.set_defaults(func=_show)

    p = sub.add_parser("adjudicate", help="stage 2: accept, reject or correct an item (final)")
    p.add_argument("item")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--accept", action="store_true")
    g.add_argument("--reject", metavar="REASON[,REASON]", help="reject reasons from the codebook")
    g.add_argument("--correct", metavar="JSON", help="the corrected parts (a new item version)")
    p.add_argument("--rationale", required=True)
    p.add_argument("--confidence", help="how sure you are: low, medium or high (assets/review/quality.json)")
    p.add_argument("--version", type=integer(1))
    p.add_argument("--view", metavar="JSON")
    p.add_argument("--bank")
    _common(p)
    p.set_defaults(func=_adjudicate)


def _register_drafts(sub: argparse._SubParsersAction) -> None:
    """The review of AI drafts."""
    p = sub.add_parser(
        "draft", help="expert or maintainer: accept, edit (correct) or reject with a reason an item's AI draft"
    )
    p.add_argument("item")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--accept", action="store_true", help="the draft's answer becomes the reference (a new version)")
    g.add_argument(
        "--reject",
        metavar="REASON",
        help="a draft reject reason from the codebook: its route sends the item back to drafting or to a manual reference",
    )
    g.add_argument(
        "--correct", metavar="JSON", help="the corrected parts, e.g. the reference set by hand (a new version)"
    )
    p.add_argument("--rationale")
    p.add_argument("--version", type=integer(1), help="the version you reviewed (refused if the item changed since)")
    p.add_argument("--bank")
    _common(p)
    p.set_defaults(func=_draft_review)

    p = sub.add_parser("drafts", help="a bank's drafts waiting for review, for a redraft, or for a manual reference")
    p.add_argument("bank")
    _common(p)
    p.set_defaults(func=_drafts)


def _register_maintainer(sub: argparse._SubParsersAction) -> None:
    """The maintainer's verbs and the log."""
    p = sub.add_parser("allow", help="maintainer: let an expert adjudicate an item they reviewed in stage 1")
    p.add_argument("item")
    p.add_argument("expert")
    p.add_argument("--reason", required=True)
    p.add_argument("--bank")
    _common(p, json_out=False)
    p.set_defaults(func=_allow)

    p = sub.add_parser("reopen", help="maintainer: send a decided item back to stage-1 review")
    p.add_argument("item")
    p.add_argument("--reason", required=True)
    p.add_argument("--bank")
    _common(p, json_out=False)
    p.set_defaults(func=_reopen)

    p = sub.add_parser("rule", help="maintainer: audit share, adjudication sample and the rule for the rest")
    p.add_argument("bank")
    p.add_argument("--audit-share", type=float)
    p.add_argument("--adjudicate-share", type=float)
    p.add_argument("--rest", choices=["reject", "accept", "open"])
    p.add_argument("--apply", action="store_true", help="apply the rule to flagged items outside the sample now")
    p.add_argument(
        "--route-uncertain",
        choices=["on", "off"],
        help="route by the reliability model: consensus items with an uncertain posterior go to an expert "
        "(`review route BANK --apply`; thresholds in assets/review/quality.json)",
    )
    _common(p, json_out=False)
    p.set_defaults(func=_rule)

    p = sub.add_parser(
        "route",
        help="maintainer: consensus items with an uncertain posterior, and annotators under the quality thresholds "
        "with their open items",
    )
    p.add_argument("bank")
    p.add_argument("--apply", action="store_true", help="send the uncertain items to an expert (each an event)")
    _common(p)
    p.set_defaults(func=_route)

    p = sub.add_parser("reassign", help="maintainer: move an annotator's open items in a bank to another annotator")
    p.add_argument("bank")
    p.add_argument("--from", dest="source", required=True, metavar="USER")
    p.add_argument("--to", dest="target", required=True, metavar="USER")
    p.add_argument("--reason", required=True)
    _common(p)
    p.set_defaults(func=_reassign)

    p = sub.add_parser("log", help="an item's versions and events, in order")
    p.add_argument("item")
    _common(p)
    p.set_defaults(func=_log)

    p = sub.add_parser(
        "verify-log", help="check the store's integrity, the event log's hash chain and every decision against its seal"
    )
    p.add_argument("--user")
    p.set_defaults(func=_verify_log)
