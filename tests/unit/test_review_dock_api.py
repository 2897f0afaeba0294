"""The review API's views for the app's review dock: an annotator's whole list (blinded), opening one
assigned item, the banks a user can work on, and a site folder by id. Expected values by hand."""

import bank_factory as bf
import pytest

from reviewer.bank.io import BankContent, write_bank
from reviewer.errors import ReviewError
from reviewer.review import api
from reviewer.review.banks import import_bank
from reviewer.store import Store

BANK = "rb"


def _store(tmp_path):
    store = Store(tmp_path / "review.sqlite")
    api.add_user(store, "mia", "maintainer")
    for name, role in (("ann", "annotator"), ("bob", "annotator"), ("cat", "annotator"), ("eve", "expert")):
        api.add_user(store, name, role, by="mia")
    qs = [bf.trend_question(f"q{i}") for i in range(4)]
    qs[3]["task"] = "quantify"
    write_bank(tmp_path / "bank", BankContent(BANK, "1", qs, [bf.site()], [], created="2026-11-30T12:00:00Z"))
    import_bank(store, tmp_path / "bank", user="mia")
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=3, user="mia")
    return store


def test_my_items_lists_every_assigned_item_with_only_my_own_standing(tmp_path):
    store = _store(tmp_path)
    mine = api.my_items(store, BANK, user="ann")
    # k = 2 of 2 annotators: ann has all 4 items, in her own order (the same order as her queue)
    assert sorted(r["id"] for r in mine) == ["q0", "q1", "q2", "q3"]
    assert [r["id"] for r in mine] == [r["id"] for r in api.queue(store, BANK, user="ann")]
    assert {r["id"]: r["task"] for r in mine}["q3"] == "quantify"
    assert all(r["mine"] is None and r["open"] and r["site"] == "a24" for r in mine)
    first, second = mine[0]["item"], mine[1]["item"]
    api.decide(store, first, api.Decision("accept"), user="ann")
    api.decide(store, second, api.Decision("skip"), user="ann")
    # bob flags the first item: ann's list must not show it (blinding)
    api.decide(store, first, api.Decision("flag", reasons=["wrong_reference"]), user="bob")
    rows = {r["item"]: r for r in api.my_items(store, BANK, user="ann")}
    assert (rows[first]["mine"], rows[first]["open"]) == ("accept", False)
    assert (rows[second]["mine"], rows[second]["skipped"], rows[second]["open"]) == ("skip", True, True)
    assert set(rows[first]) == {"item", "id", "version", "site", "task", "mine", "skipped", "open", "question"}
    api.undo(store, BANK, user="ann")  # takes back the skip (her last decision)
    assert {r["item"]: r for r in api.my_items(store, BANK, user="ann")}[second]["mine"] is None
    with pytest.raises(ReviewError, match="mia"):  # a maintainer does not review in stage 1
        api.my_items(store, BANK, user="mia")
    assert api.my_items(store, BANK, user="cat") == [] == api.my_items(store, BANK, user="eve")


def test_open_item_gives_an_assigned_item_and_refuses_others(tmp_path):
    store = _store(tmp_path)
    view = api.open_item(store, f"{BANK}/q2", user="ann")
    assert view["id"] == "q2" and view["version"] == 1 and view["your_decision"] is None
    assert view["progress"] == {"done": 0, "assigned": 4}
    assert "state" not in view and "stage1" not in view
    api.decide(store, f"{BANK}/q2", api.Decision("flag", reasons=["format_wording"], comment="unclear"), user="ann")
    again = api.open_item(store, "q2", user="ann")
    assert again["your_decision"]["reasons"] == ["format_wording"] and again["progress"]["done"] == 1
    with pytest.raises(ReviewError, match="not assigned to cat"):
        api.open_item(store, f"{BANK}/q2", user="cat")


def test_review_banks_and_site_folder(tmp_path):
    store = _store(tmp_path)
    assert api.review_banks(store, user="ann") == [BANK]
    assert api.review_banks(store, user="cat") == []  # nothing assigned to cat
    assert api.review_banks(store, user="mia") == [BANK]
    # a bank imported but not assigned yet: the maintainer sees it (to draft and assign it), the expert not yet
    write_bank(
        tmp_path / "new",
        BankContent("new", "1", [bf.trend_question("n1")], [bf.site()], [], created="2026-12-01T00:00:00Z"),
    )
    import_bank(store, tmp_path / "new", user="mia")
    assert api.review_banks(store, user="mia") == ["new", BANK]
    assert api.review_banks(store, user="eve") == [BANK]
    assert api.site_folder(store, "a24") is None  # never scanned
    gone, here = tmp_path / "old-site", tmp_path / "site"
    here.mkdir()
    with store.transaction() as db:
        db.execute("INSERT INTO sites (site_dir, site_id, scanned_at) VALUES (?, 'a24', '2026-01-01')", [str(here)])
        db.execute("INSERT INTO sites (site_dir, site_id, scanned_at) VALUES (?, 'a24', '2026-06-01')", [str(gone)])
    # the newer scan's folder moved away: the folder that still exists
    assert api.site_folder(store, "a24") == str(here)
    broken = tmp_path / "broken-copy"
    broken.mkdir()
    with store.transaction() as db:  # scanned last, but its scan found no scene; the record's folder has one
        db.execute("INSERT INTO sites (site_dir, site_id, scanned_at) VALUES (?, 'a24', '2026-09-01')", [str(broken)])
        db.execute(
            "INSERT INTO scenes (site_dir, scene_id, product, date) VALUES (?, 'LC08_X', 'landsat', '2020-01-01')",
            [str(here)],
        )
    assert api.site_folder(store, "a24") == str(here)


def test_reviewer_gui_takes_the_person_working_like_main_py(monkeypatch):
    """`reviewer gui --user ann SITE` opens the window for ann (main.py's --user), no question asked."""
    import reviewer.app.main_window as main_window
    from reviewer.cli import main

    seen = {}
    monkeypatch.setattr(main_window, "launch", lambda site, **kw: seen.update(site=site, **kw) or 0)
    assert main(["--db", "/tmp/x.sqlite", "gui", "--user", "ann", "/data/site"]) == 0
    assert seen == {"site": "/data/site", "demo": False, "db": "/tmp/x.sqlite", "user": "ann"}
    assert main(["gui", "--demo"]) == 0
    assert seen["user"] is None and seen["demo"] is True
