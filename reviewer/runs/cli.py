"""`reviewer run BANK_DIR --model PROVIDER/MODEL --out RUNS_DIR`: run an agent on a bank through Inspect."""

from __future__ import annotations

import argparse

from reviewer.argtypes import integer, positive_float
from reviewer.console import echo

EPILOG = """\
sandboxes: docker (default; the image of assets/runs/sandbox/Dockerfile, no network, 4 CPUs and 24 GB, the
record read-only), k8s (inspect-k8s-sandbox with assets/runs/sandbox/values.yaml; --records-root is the folder the
records volume claim holds), local (a temporary folder on this machine: model-written code then runs on the host
as you, with your permissions; for tests and small trials only).
The key comes from the provider's environment variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...) or, for
Anthropic, the OS keyring (keyring set earthrecord-reviewer anthropic). Run again with the same --out to continue
a stopped run: finished samples are kept. Then: reviewer score BANK_DIR RUNS_DIR/runs.jsonl --out REPORT_DIR;
inspect view --log-dir RUNS_DIR/logs shows every transcript."""


def summary_lines(summary: dict) -> list[str]:
    lines = [f"{'condition':<12} {'runs':>6} {'answered':>9} {'errors':>7} {'tokens in':>11} {'out':>9} {'cost':>9}"]
    for cond, c in summary["conditions"].items():
        t = c["tokens"]
        cost = "–" if c["cost_usd"] is None else f"${c['cost_usd']:.2f}"
        lines.append(
            f"{cond:<12} {c['runs']:>6} {c['answered']:>9} {c['errors']:>7} {t.get('input_tokens', 0):>11} "
            f"{t.get('output_tokens', 0):>9} {cost:>9}"
        )
    total = "no prices for this model" if summary["cost_usd"] is None else f"${summary['cost_usd']:.2f}"
    lines.append(f"model {summary['model']}: estimated cost {total}")
    lines.extend(error_lines(summary))
    return lines


def error_lines(summary: dict) -> list[str]:
    """The commonest causes of the runs with errors, one line each (runs.jsonl holds every run's)."""
    top = summary.get("errors") or []
    lines = [f"{e['runs']} run(s): {e['error'][:300]}" for e in top]
    rest = summary.get("error_kinds", len(top)) - len(top)
    if rest > 0:
        lines.append(f"and {rest} other error(s): see runs.jsonl")
    return lines


def _run(args: argparse.Namespace) -> int:
    from reviewer.runs.run import RunOptions, run_bank

    kw = {
        k: v
        for k, v in {
            "passes": args.passes,
            "limit_minutes": args.limit_minutes,
            "limit_messages": args.limit_messages,
        }.items()
        if v is not None
    }
    opts = RunOptions.with_defaults(
        bank=args.bank,
        model=args.model,
        out=args.out,
        conditions=[c.strip() for c in args.conditions.split(",") if c.strip()],
        sandbox=args.sandbox,
        max_samples=args.max_samples,
        draft=args.draft,
        sites=args.site or [],
        altered=args.altered or [],
        records_root=args.records_root,
        **kw,
    )

    def store():
        from reviewer.store import Store

        return Store(getattr(args, "db", None))

    if args.progress_json:
        return _run_json(opts, store)
    summary = run_bank(opts, store=store)
    echo("\n".join(summary_lines(summary)))
    echo(f"runs written to {summary['runs_file']} (logs: {args.out}/logs)")
    return 0


def _run_json(opts, store) -> int:
    """--progress-json: one JSON line per finished sample ({"progress": {done, total, message}}) and the summary
    last ({"summary": ...}), for the app's process; a `cancel` line on stdin stops the run (finished samples kept)."""
    import _thread
    import json
    import sys
    import threading

    from reviewer.runs.run import run_bank

    def emit(doc: dict) -> None:
        sys.stdout.write(json.dumps(doc) + "\n")
        sys.stdout.flush()

    def listen() -> None:
        for line in sys.stdin:
            if line.strip() == "cancel":
                _thread.interrupt_main()
                return

    threading.Thread(target=listen, daemon=True).start()
    opts.display = "none"
    summary = run_bank(
        opts, store=store, progress=lambda d, t, m: emit({"progress": {"done": d, "total": t, "message": m}})
    )
    emit({"summary": summary})
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `run` verb."""
    p = subparsers.add_parser(
        "run",
        help="run an AI agent on a bank through Inspect (one task per condition) and write RUNS_DIR/runs.jsonl",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("bank", metavar="BANK_DIR")
    p.add_argument("--model", required=True, metavar="PROVIDER/MODEL", help="an Inspect model name")
    p.add_argument("--out", required=True, metavar="RUNS_DIR")
    p.add_argument(
        "--conditions",
        default="record,closed_book,altered,placebo",
        help="comma-separated: record, closed_book, altered, placebo (default: all four)",
    )
    p.add_argument("--passes", type=integer(1, 100), help="passes per question (Inspect epochs; default 3)")
    p.add_argument("--sandbox", choices=("docker", "k8s", "local"), default="docker")
    p.add_argument("--max-samples", type=integer(1), help="samples run at once (default: Inspect's)")
    p.add_argument("--limit-minutes", type=positive_float, help="working time per run (default 60)")
    p.add_argument("--limit-messages", type=integer(2), help="messages per run (default 300)")
    p.add_argument("--draft", action="store_true", help="run on a bank that is not frozen (screening candidates)")
    p.add_argument("--site", action="append", metavar="DIR", help="a site record folder (default: the store's scans)")
    p.add_argument("--altered", action="append", metavar="DIR", help="an altered record of `reviewer alter`")
    p.add_argument("--records-root", metavar="DIR", help="k8s: the folder the records volume claim holds")
    p.add_argument("--progress-json", action="store_true", help="JSON lines on stdout (the app's process)")
    p.set_defaults(func=_run)
