"""The maintainer view's Drafts action under Xvfb: `reviewer draft` itself runs in a process of its own (the
renders hold that process's interpreter, not the UI's), its progress comes back line by line, Cancel keeps the
drafts finished and Draft again resumes; the tables scroll sideways instead of being cut at the dock's width.
The API is the fake of tests/unit/drafting_fake.py behind a local HTTP server (ANTHROPIC_BASE_URL): the real SDK
client in the drafting process, no network.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.gui.test_review_dock import make_store, press, store_path, window  # noqa: F401 - fixtures
from tests.heartbeat import Heartbeat

pytestmark = pytest.mark.gui


def _drafting_fake():
    """tests/unit/drafting_fake.py (not a package module): the Messages API's fake."""
    path = Path(__file__).resolve().parents[1] / "unit" / "drafting_fake.py"
    spec = importlib.util.spec_from_file_location("drafting_fake", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _drafted(path: Path) -> int:
    from reviewer.store import Store

    with Store(path) as store:
        return store.db.execute("SELECT count(*) FROM item_versions WHERE origin = 'drafted'").fetchone()[0]


SMALL = 8  # items of the bank the process tests draft: enough for progress, cancel and resume, not the whole bank


@pytest.fixture(scope="module")
def small_bank(demo_bank, tmp_path_factory) -> Path:
    """The demo bank cut to its first SMALL items (same name, so the store's bank is the one the dock shows):
    the drafting process renders each item's evidence, and the whole bank is the bench's job."""
    from reviewer.bank.io import BankContent, load_bank, write_bank

    bank = load_bank(demo_bank)
    out = tmp_path_factory.mktemp("small") / "bank"
    write_bank(out, BankContent(bank.manifest["name"], bank.manifest["version"], bank.questions[:SMALL], bank.sites))
    return out


def _unassigned(path: Path, demo_db: Path, bank: Path, demo_site: Path) -> Path:
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    return make_store(path, demo_db, bank, demo_site, assign=False)


@pytest.fixture
def unassigned(store_path, demo_bank, demo_site, demo_db):  # noqa: F811 - the fixture imported above
    """The demo store with the bank imported but not assigned (drafting comes before assignment)."""
    return _unassigned(store_path, demo_db, demo_bank, demo_site)


@pytest.fixture
def unassigned_small(store_path, small_bank, demo_site, demo_db):  # noqa: F811 - the fixture imported above
    """The same with the bank cut to its first SMALL items."""
    return _unassigned(store_path, demo_db, small_bank, demo_site)


def test_drafts_run_in_a_process_of_their_own_and_the_ui_stays_free(
    window,  # noqa: F811
    unassigned_small,
    qtbot,
    monkeypatch,
    shots,
):
    """Without a key the action says how to set one and starts nothing; with one every item of the (cut) bank is
    drafted by the process (real renders of the demo site), the progress bar follows its lines, the result is
    said, each drafted item has a new version of origin 'drafted', and the UI thread never stops for long."""
    fake_mod = _drafting_fake()
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    app = window("mia", "maintainer")
    admin = app.review.maintainer
    if admin.drafts.draft():  # an OS keyring with a key in it: not this machine's case
        pytest.skip("a key is set in the OS keyring")
    assert "not drafted:" in admin.message.text() and "ANTHROPIC_API_KEY" in admin.message.text()
    assert admin.drafts.draft_job is None
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_mod.KEY)
    admin.drafts.draft_items.setCurrentText("all")
    import reviewer.drafting.run as run_mod

    # the job must run in the other process: a call of the job in the app's interpreter fails the test
    monkeypatch.setattr(run_mod, "draft_bank", lambda *a, **k: pytest.fail("drafted in the app's process"))
    with fake_mod.serve_in_process(0.2) as url:  # the API is remote: not served by the app's interpreter
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        beat = Heartbeat()
        qtbot.wait(500)
        assert admin.drafts.draft()
        qtbot.waitUntil(lambda: admin.drafts.draft_button.isEnabled(), timeout=180000)
        longest = beat.stop()[0]
    n = admin.drafts.draft_progress.maximum()
    assert admin.message.text().startswith(f"drafted {n}, skipped 0"), admin.message.text()
    assert admin.drafts.draft_progress.value() == n == SMALL
    assert _drafted(unassigned_small) == n
    print(f"longest UI block while drafting {n} items in a process: {longest * 1000:.0f} ms")
    # the figure against the old thread worker is the bench's (tests/bench/bench_drafting.py); on this shared
    # machine the OS alone stalls the UI thread for a few hundred ms at times, so only a loose bound here
    assert longest < 1.0
    assert admin.drafts.draft_waiting.text().startswith(f"drafts to review: {n}; waiting for a redraft: 0")
    # the maintainer tables: every column at its contents' width, none cut off; a sideways scroll bar only when the
    # columns are wider than the dock (issue 27: at 1366 x 768 they fit, tests/gui/test_window_fit.py)
    for table in (admin.progress, admin.agreement):
        header = table.horizontalHeader()
        wanted = sum(header.sectionSize(j) for j in range(table.columnCount()))
        shown = table.viewport().width() + table.horizontalScrollBar().maximum()
        assert shown >= wanted - 2
        assert table.horizontalScrollBar().isVisible() == (wanted > table.viewport().width() + 1)
    app.review.grab().save(str(shots / "15_drafts_done.png"))
    admin.drafts.draft_waiting.parentWidget().grab().save(str(shots / "15_drafts_box.png"))  # the Drafts group box
    app.viewer.screenshot(str(shots / "15_drafts_done_window.png"), canvas_only=False, flash=False)


def test_cancel_keeps_the_finished_drafts_and_draft_again_resumes(window, unassigned_small, qtbot, monkeypatch):  # noqa: F811
    fake_mod = _drafting_fake()
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_mod.KEY)
    app = window("mia", "maintainer")
    admin = app.review.maintainer
    admin.drafts.draft_items.setCurrentText("all")
    admin.drafts.draft_concurrency.setValue(1)
    with fake_mod.FakeAPI(latency_s=0.4).serve() as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        assert admin.drafts.draft()
        qtbot.waitUntil(lambda: admin.drafts.draft_progress.value() >= 2, timeout=120000)
        admin.drafts.draft_cancel.click()
        assert admin.message.text().startswith("cancelling")
        qtbot.waitUntil(lambda: admin.drafts.draft_button.isEnabled(), timeout=60000)
        assert "cancelled, Draft again resumes" in admin.message.text(), admin.message.text()
        first = _drafted(unassigned_small)
        total = admin.drafts.draft_progress.maximum()
        assert total == SMALL and 2 <= first < total
        admin.drafts.draft_concurrency.setValue(4)
        assert admin.drafts.draft()
        qtbot.waitUntil(lambda: admin.drafts.draft_button.isEnabled(), timeout=120000)
    assert admin.message.text().startswith(f"drafted {total - first}, skipped {first}"), admin.message.text()
    assert _drafted(unassigned_small) == total


def test_an_expert_reviews_the_drafts_in_the_dock_with_keys(window, unassigned, qtbot, shots):  # noqa: F811
    """The expert's 'AI drafts' queue: A accepts a draft (its answer becomes the reference, a new version), R
    rejects with the reason picked, whose route sends the item back to drafting or to a reference set by hand;
    each is saved at once through the core and said in the dock, and the queue moves on."""
    import json

    from reviewer.drafting.options import DraftOptions
    from reviewer.drafting.run import draft_bank
    from reviewer.store import Store

    fake_mod = _drafting_fake()
    fake = fake_mod.FakeAPI()

    def reply(body, _n):
        """The cover item is insufficient evidence on the GUI demo's sparse record (issue 28's evidence rules): a
        draft that fits it says so; the other drafts answer the first option."""
        props = body["output_config"]["format"]["schema"]["properties"]["answer"]["properties"]
        answer = {"cover": "insufficient evidence"} if "cover" in props else None
        return json.dumps(fake_mod.good_reply(body, **({"answer": answer} if answer else {})))

    fake.script = [reply, reply, reply]
    keys = ["demo-core-seed0-1", "demo-core-seed0-2", "demo-core-seed0-26"]
    with Store(unassigned) as store:
        draft_bank(store, "demo-core-seed0-generated", fake.client(), DraftOptions(which=keys), user="mia")
    app = window("eve", "expert")
    expert = app.review.expert
    app.review.tabs.setCurrentWidget(expert)
    expert.set_mode("drafts")
    assert [r["item"].split("/")[1] for r in expert.rows] == keys  # the bank's order
    assert "3 AI draft(s) to review" in expert.count.text()
    assert expert.view["item"].endswith(keys[0]) and "draft" in expert.focus.toPlainText().lower()
    routes = {
        expert.reject_combo.itemData(i): expert.reject_combo.itemText(i) for i in range(expert.reject_combo.count())
    }
    assert "→ redraft" in routes["misread_imagery"] and "→ manual" in routes["beyond_the_imagery"]
    app.viewer.screenshot(str(shots / "16_review_expert_drafts.png"), canvas_only=False, flash=False)

    expert.show_item(f"demo-core-seed0-generated/{keys[2]}")  # the visual item: the fake's answer fits it
    press(qtbot, app, "A")
    assert "saved: draft accept" in expert.saved.text() and "new version 3" in expert.saved.text(), expert.saved.text()
    expert.reject_combo.setCurrentIndex(expert.reject_combo.findData("misread_imagery"))
    press(qtbot, app, "R")
    assert "misread_imagery → redraft" in expert.saved.text(), expert.saved.text()
    expert.reject_combo.setCurrentIndex(expert.reject_combo.findData("beyond_the_imagery"))
    press(qtbot, app, "R")
    assert "needs_reference" in expert.saved.text(), expert.saved.text()
    assert [r["what"] for r in expert.rows] == ["needs a reference (E)"]
    assert "1 waiting for a redraft" in expert.count.text()

    with Store(unassigned) as store:
        rows = dict(store.db.execute("SELECT qid, state FROM items WHERE qid IN (?, ?, ?)", keys).fetchall())
        accepted = store.db.execute(
            "SELECT v.json FROM item_versions v JOIN items i ON i.id = v.item WHERE i.qid = ? ORDER BY v.version",
            [keys[2]],
        ).fetchall()
    assert rows == {keys[2]: "drafted", keys[0]: "redraft", keys[1]: "needs_reference"}
    assert json.loads(accepted[-1][0])["provenance"]["draft_review"]["by"] == "eve"
