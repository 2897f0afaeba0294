"""Benchmark: drafting 40 items with 4 requests in flight against sequential drafting, through the real anthropic
client on a mock transport with simulated latency (issue 12: about a quarter of the sequential time).

Plain script: `python tests/bench/bench_drafting.py [--latency S] [--items N]`. The evidence render is replaced by
a fixed image so the figure is the request pipeline's (the render of one real item is timed on its own, on a
small demo site, and printed for reference). Each figure is printed next to the baseline of the same run.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "unit")]

import bank_factory as bf  # noqa: E402
from drafting_fake import KEY, FakeAPI  # noqa: E402

from reviewer.bank.io import write_bank  # noqa: E402
from reviewer.bank.store import import_bank  # noqa: E402
from reviewer.drafting import run as RUN  # noqa: E402
from reviewer.drafting.images import Image  # noqa: E402
from reviewer.review import api  # noqa: E402
from reviewer.store import Store  # noqa: E402


def _png() -> bytes:
    from PIL import Image as PILImage

    buf = io.BytesIO()
    PILImage.new("RGB", (704, 445), (90, 140, 60)).save(buf, format="PNG")
    return buf.getvalue()


def _store(folder: Path, n: int, name: str) -> Store:
    qs = [bf.trend_question(f"q{i:03d}", reference_source="visual") for i in range(n)]
    write_bank(folder / f"bank-{name}", "bench", "1", qs, [bf.site()], [], created="2026-12-01T00:00:00Z")
    store = Store(folder / f"{name}.sqlite")
    api.add_user(store, "mia", "maintainer")
    import_bank(store, folder / f"bank-{name}", user="mia")
    return store


def _run(folder: Path, n: int, latency: float, concurrency: int) -> float:
    store = _store(folder, n, f"c{concurrency}")
    fake = FakeAPI(latency_s=latency)
    t0 = time.perf_counter()
    summary = RUN.draft_bank(store, "bench", fake.client(), user="mia", which=["all"], concurrency=concurrency)
    took = time.perf_counter() - t0
    assert summary.count("drafted") == n, summary.to_json()
    store.close()
    return took


def _one_real_render(folder: Path) -> float | None:
    """Seconds to render one water-area item's evidence (pair + trajectory) on a small demo site."""
    from sites import make_site

    from reviewer.bank.evidence import EvidenceView
    from reviewer.drafting.config import settings
    from reviewer.drafting.images import render_evidence
    from reviewer.record.scan import open_index

    site = make_site(folder / "site", "landsat_small")
    index = open_index(site)
    years = sorted({s.year for s in index.scenes})
    view = EvidenceView.from_json(
        {"composite": "mndwi", "periods": [[years[0], years[0]], [years[-1], years[-1]]], "index": "mndwi"}
    )
    t0 = time.perf_counter()
    render_evidence(index, view, (years[0], years[-1]), settings()["images"])
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.2, help="simulated API latency per request (s)")
    ap.add_argument("--items", type=int, default=40)
    args = ap.parse_args()
    os.environ["ANTHROPIC_API_KEY"] = KEY
    png = _png()
    real_render = RUN.render_evidence
    RUN.render_evidence = lambda index, view, period, limits: [Image("image 1", "pair", png, 704, 445)]
    RUN.Sites.index = lambda self, site_id: None  # the fixed image needs no scene index
    warnings.simplefilter("ignore")
    import anthropic  # noqa: F401 - imported before timing (a few seconds on first import)

    with tempfile.TemporaryDirectory(prefix="bench-drafting-") as tmp:
        folder = Path(tmp)
        seq = _run(folder, args.items, args.latency, 1)
        par = _run(folder, args.items, args.latency, 4)
        print(f"drafting {args.items} items, {args.latency:g} s simulated latency per request")
        print(f"  sequential (concurrency 1)   {seq:7.2f} s   baseline")
        print(f"  concurrency 4                {par:7.2f} s   ratio {par / seq:.2f} (target about 0.25)")
        print(f"  ideal (latency only)         {args.items * args.latency / 4:7.2f} s   ratio 0.25")
        RUN.render_evidence = real_render
        try:
            one = _one_real_render(folder)
            print(f"  one real evidence render (pair + trajectory, small demo site) {one:.2f} s per item")
        except Exception as exc:  # noqa: BLE001 - the reference figure is optional
            print(f"  one real evidence render: not measured ({exc})")


if __name__ == "__main__":
    main()
