"""Screenshots of every review mode (annotator, expert, maintainer) on the demo bank, for looking at the fit of
the window at a screen size. Run under an Xvfb screen of that size (the GUI test session's cached demo site, store
and bank are in .pytest_cache/d/reviewer-demo-64-*):

    xvfb-run -a -s "-screen 0 1366x768x24" .venv/bin/python tests/gui/shots_review.py SITE DB BANK OUT
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT, ROOT / "tests" / "unit"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))


def wait(cond, timeout: float = 60.0) -> bool:
    from qtpy.QtWidgets import QApplication

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        QApplication.processEvents()
        if cond():
            return True
        time.sleep(0.02)
    return False


def main(site: Path, db: Path, bank: Path, out: Path) -> int:
    import napari

    from reviewer.app.main_window import ReviewerApp
    from reviewer.app.recent import RecentSites
    from reviewer.review import api
    from reviewer.store import Store
    from tests.gui.test_review_dock import BANK, make_store

    tmp = Path(tempfile.mkdtemp(prefix="shots-review-"))
    store_path = make_store(tmp / "review.sqlite", db, bank, site)
    with Store(store_path) as store:  # ann halfway, bob done with two flags: the expert has split items
        rows = api.my_items(store, BANK, user="ann")
        for r in rows[: len(rows) // 2]:
            api.decide(store, r["item"], api.Decision("accept"), user="ann")
        for k, r in enumerate(api.my_items(store, BANK, user="bob")):
            verdict, reasons = ("flag", ["wrong_reference"]) if k < 2 else ("accept", None)
            api.decide(store, r["item"], api.Decision(verdict, reasons=reasons), user="bob")
    out.mkdir(parents=True, exist_ok=True)
    for user, role in (("ann", "annotator"), ("eve", "expert"), ("mia", "maintainer")):
        viewer = napari.Viewer(show=True)
        app = ReviewerApp(viewer, db=store_path, recent=RecentSites(tmp / "recent.json"), scoring=False)
        app.start_review(user, role)
        if role != "maintainer":
            wait(lambda app=app: app.review.loader.shown(trajectory=False), 90)
            wait(lambda app=app: app.settled, 30)
        else:
            wait(lambda: False, 2)
        size = app.review.window().size()
        path = out / f"review_{role}_{size.width()}x{size.height()}.png"
        viewer.screenshot(str(path), canvas_only=False, flash=False)
        print(path)
        app.close()
        viewer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*(Path(a).resolve() for a in sys.argv[1:5])))
