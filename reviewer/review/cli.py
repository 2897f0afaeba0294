"""`reviewer users ...` and `reviewer review ...`: the two-stage review on the command line.

Every verb calls reviewer.review.api, the same functions the app's review dock calls. Verbs that
annotators script in loops (next, decide) import only the store and the review core.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from reviewer.console import echo


def _store(args: argparse.Namespace) -> Any:
    from reviewer.store import Store

    if getattr(args, "package", None):
        from reviewer.errors import ReviewError
        from reviewer.review.packages import open_package

        if getattr(args, "db", None):
            raise ReviewError("give --package FILE or --db FILE, not both")
        return open_package(args.package)
    return Store(args.db) if getattr(args, "db", None) else Store()


def _json_arg(text: str | None, what: str) -> Any:
    from reviewer.errors import ReviewError

    if text is None:
        return None
    try:
        value = json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(f"{c} is not allowed")))
    except (ValueError, RecursionError) as exc:
        raise ReviewError(f"{what}: not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise ReviewError(f"{what}: must be a JSON object")
    return value


def _print(value: Any, as_json: bool, text: str | None = None) -> None:
    if as_json:
        echo(json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False))
    elif text is not None:
        echo(text)


# ----------------------------------------------------------------------------- users


def _users_add(args: argparse.Namespace) -> int:
    from reviewer.review.api import add_user

    with _store(args) as store:
        u = add_user(store, args.name, args.role, by=args.user, logins=args.login)
    bound = f", bound to OS login {', '.join(args.login)}" if args.login else ""
    echo(f"added {u.role} {u.name}{bound}")
    return 0


def _users_bind(args: argparse.Namespace) -> int:
    from reviewer.review.api import bind_login

    with _store(args) as store:
        for login in args.login:
            bind_login(store, args.name, login, by=args.user, bound=args.users_verb == "bind")
    echo(f"{args.name}: {'bound to' if args.users_verb == 'bind' else 'no longer bound to'} {', '.join(args.login)}")
    return 0


def _users_list(args: argparse.Namespace) -> int:
    from reviewer.review.api import list_users, login_bindings

    with _store(args) as store:
        rows = list_users(store)
        bound = bool(login_bindings(store))
    mode = (
        "profiles bound to OS logins: each process may act only as the profiles of its login"
        if bound
        else "one seat: no profile is bound to an OS login, so whoever runs the tool may name any profile"
    )
    if args.json:
        _print({"mode": "bound" if bound else "one_seat", "users": rows}, True)
        return 0
    echo(f"mode: {mode}")
    for r in rows:
        logins = ", ".join(r["logins"]) if r["logins"] else "-"
        echo(f"{r['name']:<20} {r['role']:<11} {r['created']}  logins: {logins}")
    return 0


# ----------------------------------------------------------------------------- stage 1


def _assign(args: argparse.Namespace) -> int:
    from reviewer.review.api import assign

    with _store(args) as store:
        out = assign(
            store,
            args.bank,
            annotators=args.annotators.split(","),
            k=args.k,
            seed=args.seed,
            user=args.user,
            gold=args.gold,
            gold_share=args.gold_share,
        )
    loads = ", ".join(f"{n} {c}" for n, c in out["per_annotator"].items())
    _print(
        out,
        args.json,
        f"assigned {out['items']} items of {out['bank']} (batch {out['batch']}, "
        f"{out['gold_items']} gold items hidden): {loads}",
    )
    return 0


def _next(args: argparse.Namespace) -> int:
    from reviewer.review.api import next_item

    with _store(args) as store:
        view = next_item(store, args.bank, user=args.user)
    if view is None:
        _print(None, args.json, "nothing left to review")
        return 0
    if args.json:
        _print(view, True)
        return 0
    q = view["question"]
    p = view["progress"]
    echo(f"{view['item']} (version {view['version']})   {p['done']} of {p['assigned']} done")
    echo(f"site {q['site']}, {q['period']['start']} to {q['period']['end']}, {q['class']} / {q.get('task')}")
    echo(q["text"])
    echo(f"reference: {json.dumps(q['reference'], ensure_ascii=False)}")
    if q.get("reference_range"):
        echo(f"range:     {json.dumps(q['reference_range'], ensure_ascii=False)}")
    if view["your_decision"]:
        echo(f"your last decision: {view['your_decision']['verdict']}")
    echo("flag reasons: " + ", ".join(r["code"] for r in view["flag_reasons"]))
    return 0


def _decide(args: argparse.Namespace) -> int:
    from reviewer.review.api import Decision, decide

    verdict = "accept" if args.accept else "skip" if args.skip else "flag"
    reasons = [r.strip() for r in args.flag.split(",")] if args.flag else []
    with _store(args) as store:
        decision = Decision(
            verdict,
            reasons=reasons,
            comment=args.comment,
            correction=_json_arg(args.correct, "--correct"),
            seconds=args.seconds,
            view=_json_arg(args.view, "--view"),
            confidence=args.confidence,
        )
        out = decide(store, args.item, decision, user=args.user, version=args.version, bank=args.bank)
    why = f" ({', '.join(out['reasons'])})" if out["reasons"] else ""
    why += f", {out['confidence']} confidence" if out.get("confidence") else ""
    _print(out, args.json, f"{out['item']} v{out['version']}: {out['verdict']}{why} saved (decision {out['decision']})")
    return 0


def _undo(args: argparse.Namespace) -> int:
    from reviewer.review.api import undo

    with _store(args) as store:
        out = undo(store, args.bank, user=args.user)
    _print(out, args.json, f"{out['item']}: took back {out['verdict']} (decision {out['undone']})")
    return 0


def _queue(args: argparse.Namespace) -> int:
    from reviewer.review.api import queue

    with _store(args) as store:
        rows = queue(store, args.bank, user=args.user)
    if args.json:
        _print(rows, True)
        return 0
    for i, r in enumerate(rows, start=1):
        extra = f"  {r['kind']} ({r['flags']} of {r['decisions']} flagged)" if "kind" in r else ""
        echo(f"{i:>5}  {r['item']}{extra}")
    echo(f"{len(rows)} item(s) in the queue")
    return 0


def _status(args: argparse.Namespace) -> int:
    from reviewer.review.api import status

    with _store(args) as store:
        out = status(store, args.bank, user=args.user)
    if args.json:
        _print(out, True)
        return 0
    echo(f"{'annotator':<16} {'done':>6} {'assigned':>9} {'median s':>9} {'gold':>9}")
    for r in out["annotators"]:
        med = f"{r['median_seconds']:.1f}" if r["median_seconds"] is not None else "-"
        gold = f"{r['gold_correct']}/{r['gold_decided']}" if r["gold_decided"] else "-"
        echo(f"{r['user']:<16} {r['done']:>6} {r['assigned']:>9} {med:>9} {gold:>9}")
    if "states" in out:
        echo("items: " + ", ".join(f"{s} {n}" for s, n in out["states"].items()))
    return 0


def _fmt(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def _agreement(args: argparse.Namespace) -> int:
    from reviewer.review.api import agreement

    with _store(args) as store:
        out = agreement(store, args.bank, user=args.user, csv_dir=args.csv)
    if args.json:
        _print(out, True)
        return 0
    keys = ("items", "raters", "percent_agreement", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1")
    echo(f"{'table':<22} " + " ".join(f"{k[:12]:>12}" for k in keys))
    tables = [("accept / flag", out["overall"])] + list(out["per_reason"].items())
    tables += [(f"task {task}", figs) for task, figs in out.get("per_task", {}).items()]
    for name, figs in tables:
        echo(f"{name:<22} " + " ".join(f"{_fmt(figs.get(k)):>12}" for k in keys))
    for pair in out["overall"].get("cohen", []):
        echo(f"cohen {pair['raters'][0]} x {pair['raters'][1]}: kappa {_fmt(pair['kappa'])} on {pair['items']} items")
    for g in out["gold"]:
        if g["gold_decided"]:
            echo(f"gold {g['user']}: {g['gold_correct']} of {g['gold_decided']} right")
    for path in out.get("csv", []):
        echo(f"wrote {path}")
    return 0


def _quality(args: argparse.Namespace) -> int:
    from reviewer.review.quality import quality_report, quality_settings, write_quality_csv

    with _store(args) as store:
        out = quality_report(store, args.bank, user=args.user, mace=args.mace)
    if args.csv:
        out["csv"] = [str(p) for p in write_quality_csv(out, args.csv)]
    if args.json:
        _print(out, True)
        return 0
    heads = ("reliab.", "sens.", "spec.", "gold", "outcome", "median s", "skips", "undos")
    echo(f"{'annotator':<16} {'done':>6} " + " ".join(f"{h:>8}" for h in heads))
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
        echo(f"{a['annotator']:<16} {a['decisions']:>6} " + " ".join(f"{c:>8}" for c in cells))
    ranked = sorted(
        (i for i in out["items"] if i["posterior_acceptable"] is not None), key=lambda i: i["posterior_acceptable"]
    )
    low, high = quality_settings().uncertain_posterior
    uncertain = [i for i in ranked if low <= i["posterior_acceptable"] <= high]
    echo(
        f"{len(ranked)} items with decisions; {len(uncertain)} with an uncertain posterior ({low} to {high}) "
        "that the reference is acceptable"
    )
    for i in uncertain[:10]:
        diff = f", difficulty {_fmt(i['difficulty'])}" if i["difficulty"] is not None else ""
        echo(
            f"  {i['item']}: posterior {_fmt(i['posterior_acceptable'])} ({i['accepts']} of {i['decisions']} accepted{diff})"
        )
    for name, m in out["models"].items():
        if not m.get("ran"):
            echo(f"{name}: not run ({m.get('why', '')})")
    for path in out.get("csv", []):
        echo(f"wrote {path}")
    return 0


# ----------------------------------------------------------------------------- stage 2


def _adjudicate(args: argparse.Namespace) -> int:
    from reviewer.review.api import Decision, adjudicate

    verdict = "accept" if args.accept else "reject" if args.reject else "correct"
    reasons = [r.strip() for r in args.reject.split(",")] if args.reject else []
    with _store(args) as store:
        decision = Decision(
            verdict,
            reasons=reasons,
            correction=_json_arg(args.correct, "--correct"),
            rationale=args.rationale,
            view=_json_arg(args.view, "--view"),
            confidence=args.confidence,
        )
        out = adjudicate(store, args.item, decision, user=args.user, version=args.version, bank=args.bank)
    new = f", new version {out['new_version']}" if out["new_version"] else ""
    _print(out, args.json, f"{out['item']}: {out['verdict']}{new} (decision {out['decision']})")
    return 0


def _draft_review(args: argparse.Namespace) -> int:
    from reviewer.review.drafts import review_draft

    verdict = "accept" if args.accept else "reject" if args.reject else "correct"
    with _store(args) as store:
        out = review_draft(
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
    said = f", new version {out['new_version']}" if out["new_version"] else f" ({out['reason']}: {out['route']})"
    _print(out, args.json, f"{out['item']}: draft {out['verdict']}{said}; now {out['state']}")
    return 0


def _drafts(args: argparse.Namespace) -> int:
    from reviewer.review.drafts import draft_queue

    with _store(args) as store:
        out = draft_queue(store, args.bank, user=args.user)
    text = "\n".join(
        f"{name.replace('_', ' ')}: {len(out[name])}" + (f" ({', '.join(out[name])})" if out[name] else "")
        for name in ("to_review", "redraft", "needs_reference")
    )
    _print(out, args.json, text)
    return 0


def _show(args: argparse.Namespace) -> int:
    from reviewer.review.api import expert_view

    with _store(args) as store:
        view = expert_view(store, args.item, user=args.user, bank=args.bank)
    if args.json:
        _print(view, True)
        return 0
    q = view["question"]
    echo(f"{view['item']} v{view['version']} [{view['state']}{', audit' if view['audit'] else ''}]")
    echo(q["text"])
    echo(f"reference: {json.dumps(q['reference'], ensure_ascii=False)}")
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
        echo(line)
    return 0


def _allow(args: argparse.Namespace) -> int:
    from reviewer.review.api import allow

    with _store(args) as store:
        allow(store, args.item, args.expert, user=args.user, reason=args.reason, bank=args.bank)
    echo(f"{args.expert} may adjudicate {args.item}")
    return 0


def _reopen(args: argparse.Namespace) -> int:
    from reviewer.review.api import reopen

    with _store(args) as store:
        out = reopen(store, args.item, user=args.user, reason=args.reason, bank=args.bank)
    echo(f"{out['item']} is back in stage-1 review ({out['retracted']} decision(s) retracted)")
    return 0


def _rule(args: argparse.Namespace) -> int:
    from reviewer.review.api import apply_rule, set_rule

    with _store(args) as store:
        cfg = set_rule(
            store,
            args.bank,
            user=args.user,
            audit_share=args.audit_share,
            adjudicate_share=args.adjudicate_share,
            rest_rule=args.rest,
            route_uncertain=None if args.route_uncertain is None else args.route_uncertain == "on",
        )
        out = apply_rule(store, args.bank, user=args.user) if args.apply else None
    echo(
        f"{args.bank}: audit share {cfg['audit_share']}, adjudicate share {cfg['adjudicate_share']}, "
        f"rest rule {cfg['rest_rule']}, seed {cfg['seed']}, "
        f"route uncertain {'on' if cfg.get('route_uncertain') else 'off'}"
    )
    if out:
        echo(f"applied '{out['rule']}' to {out['applied']} of {out['outside_sample']} flagged items outside the sample")
    return 0


def _route(args: argparse.Namespace) -> int:
    from reviewer.review.quality import route

    with _store(args) as store:
        out = route(store, args.bank, user=args.user, apply=args.apply)
    if args.json:
        _print(out, True)
        return 0
    low, high = out["uncertain_posterior"]
    setting = "on" if out["route_uncertain"] else "off (`review rule BANK --route-uncertain on`)"
    echo(f"{args.bank}: routing by the reliability model is {setting}")
    echo(f"{len(out['uncertain'])} consensus item(s) with a posterior between {low} and {high} not yet with an expert")
    for i in out["uncertain"]:
        echo(
            f"  {i['item']}: posterior {_fmt(i['posterior_acceptable'])} ({i['accepts']} of {i['decisions']} accepted)"
        )
    if args.apply:
        echo(f"sent {out['sent']} item(s) to an expert")
    for w in out["weak_annotators"]:
        echo(f"{w['annotator']}: {w['why']}; {len(w['open_items'])} open item(s)")
        if w["open_items"]:
            echo(
                f"  reassign with: reviewer review reassign {args.bank} --from {w['annotator']} --to USER --reason TEXT"
            )
    if not out["weak_annotators"]:
        echo("no annotator under the reliability or gold thresholds")
    return 0


def _reassign(args: argparse.Namespace) -> int:
    from reviewer.review.quality import reassign

    with _store(args) as store:
        out = reassign(store, args.bank, source=args.source, target=args.target, reason=args.reason, user=args.user)
    kept = f"; {len(out['kept'])} kept (already {out['to']}'s)" if out["kept"] else ""
    _print(out, args.json, f"moved {len(out['moved'])} open item(s) from {out['from']} to {out['to']}{kept}")
    return 0


def _log(args: argparse.Namespace) -> int:
    from reviewer.review.api import history

    with _store(args) as store:
        out = history(store, args.item, user=args.user)
    if args.json:
        _print(out, True)
        return 0
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
        change = f" {e['before'] or ''} -> {e['after'] or ''}".replace("  ", " ") if e["before"] or e["after"] else ""
        detail = e["detail"] or {}
        extra = "".join(
            f" {k}={json.dumps(detail[k], ensure_ascii=False)}"
            for k in ("reasons", "reason", "rationale")
            if detail.get(k)
        )
        rows.append((e["at"], f"#{e['id']} {e['user'] or 'tool'} {e['action']} v{e['version']}{change}{extra}"))
    echo(f"{out['item']}" + (f"  [{out['state']}, current version {out['current_version']}]" if "state" in out else ""))
    for at, text in sorted(rows, key=lambda r: r[0]):
        echo(f"  {at}  {text}")
    return 0


def _verify_log(args: argparse.Namespace) -> int:
    from reviewer.review.api import verify_log

    with _store(args) as store:
        found = verify_log(store)
    older = found["decisions_before_seals"]
    echo(
        f"integrity check ok; {found['events']} events, chain intact, last hash {found['head']}; "
        f"{found['decisions_sealed']} decisions match their seals in the log"
        + (f" ({older} written before seals, not checked)" if older else "")
    )
    return 0


def _freeze(args: argparse.Namespace) -> int:
    from reviewer.review.freeze import freeze

    with _store(args) as store:
        manifest = freeze(store, args.bank, version=args.version, out=args.out, user=args.user)
    c = manifest["counts"]
    echo(
        f"froze {manifest['name']} version {manifest['version']} into {args.out}: {c['questions']} questions, "
        f"{c['sites']} sites, {c['pairs']} pairs (qc.json beside the manifest)"
    )
    return 0


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
    p.add_argument("--version", type=int, help="the item version you judged (refused if no longer current)")
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
    p.add_argument("--version", type=int)
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
    p.add_argument("--version", type=int, help="the version you reviewed (refused if the item changed since)")
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
