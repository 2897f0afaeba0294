"""Who may act as whom (issue 26): a store can bind profiles to OS logins. Without bindings it is one seat
(anyone names any profile, as before); once it has one, a process whose OS login is not bound to the profile
it names is refused with one line and exit 2, and the app's "Who is working?" offers only that login's profiles.
A review package is bound to its annotator, not to a login of the team machine."""

from __future__ import annotations

import json

import bank_factory as bf
import pytest

from reviewer.bank.io import BankContent, write_bank
from reviewer.cli import main
from reviewer.review import api
from reviewer.review.banks import import_bank
from reviewer.review.ledger import os_login
from reviewer.store import Store

BANK = "rb"
ME = os_login()
ELSEWHERE = "someone-else"  # an OS account other than the one running the tests


def _cli(capsys, db, *args):
    code = main(["--db", str(db), *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "review.sqlite"
    write_bank(
        tmp_path / "bank", BankContent(BANK, "1", [bf.trend_question(f"q{i:03d}") for i in range(4)], [bf.site()], [])
    )
    with Store(path) as store:
        api.add_user(store, "mia", "maintainer")
        api.add_user(store, "ann", "annotator", by="mia")
        api.add_user(store, "bob", "annotator", by="mia")
        import_bank(store, tmp_path / "bank", user="mia")
        api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    return path


def test_a_store_without_bindings_is_one_seat(store_path, capsys):
    code, out, _ = _cli(capsys, store_path, "users", "list")
    assert code == 0 and out.splitlines()[0].startswith("mode: one seat")
    assert _cli(capsys, store_path, "review", "next", BANK, "--user", "ann")[0] == 0
    assert _cli(capsys, store_path, "review", "next", BANK, "--user", "bob")[0] == 0


def test_a_login_acts_only_as_its_profiles(store_path, capsys):
    assert _cli(capsys, store_path, "users", "bind", "mia", "--login", ME, "--user", "mia")[0] == 0
    assert _cli(capsys, store_path, "users", "bind", "bob", "--login", ELSEWHERE, "--user", "mia")[0] == 0
    code, out, err = _cli(capsys, store_path, "review", "decide", f"{BANK}/q000", "--accept", "--user", "bob")
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"error: OS login '{ME}' may not act as 'bob'")
    assert _cli(capsys, store_path, "review", "next", BANK, "--user", "ann")[0] == 2  # ann is bound to nobody
    assert _cli(capsys, store_path, "review", "status", BANK, "--user", "mia")[0] == 0
    code, out, _ = _cli(capsys, store_path, "users", "list", "--json")
    listed = json.loads(out)
    assert listed["mode"] == "bound"
    assert {u["name"]: u["logins"] for u in listed["users"]} == {"ann": [], "bob": [ELSEWHERE], "mia": [ME]}
    with Store(store_path) as store:
        assert [u["name"] for u in api.working_profiles(store)] == ["mia"]  # what the app's dialog offers
    assert _cli(capsys, store_path, "users", "bind", "ann", "--login", ME, "--user", "mia")[0] == 0
    assert _cli(capsys, store_path, "review", "decide", f"{BANK}/q000", "--accept", "--user", "ann")[0] == 0
    with Store(store_path) as store:
        assert [u["name"] for u in api.working_profiles(store)] == ["ann", "mia"]
        actions = [r[0] for r in store.db.execute("SELECT action FROM events WHERE action LIKE 'user_%bind'")]
    assert actions == ["user_bind", "user_bind", "user_bind"]  # each binding is in the audit log


def test_nobody_locks_the_maintainers_out_by_accident(store_path, capsys):
    code, _, err = _cli(capsys, store_path, "users", "bind", "ann", "--login", ELSEWHERE, "--user", "mia")
    assert code == 2 and "this would lock you out" in err and f"reviewer users bind mia --login {ME}" in err
    with Store(store_path) as store:
        assert api.login_bindings(store) == {}  # nothing of the refused change was written
    assert _cli(capsys, store_path, "users", "bind", "mia", "--login", ME, "--user", "mia")[0] == 0
    assert _cli(capsys, store_path, "users", "bind", "ann", "--login", ELSEWHERE, "--user", "mia")[0] == 0
    code, _, err = _cli(capsys, store_path, "users", "unbind", "mia", "--login", ME, "--user", "mia")
    assert code == 2 and "this would lock you out" in err
    assert _cli(capsys, store_path, "users", "unbind", "ann", "--login", ELSEWHERE, "--user", "mia")[0] == 0
    assert _cli(capsys, store_path, "users", "unbind", "mia", "--login", ME, "--user", "mia")[0] == 0
    assert _cli(capsys, store_path, "users", "list")[1].startswith("mode: one seat")  # back to one seat


def test_users_add_binds_logins(tmp_path, capsys):
    db = tmp_path / "new.sqlite"
    assert _cli(capsys, db, "users", "add", "mia", "--role", "maintainer", "--login", ME)[0] == 0
    code, out, _ = _cli(capsys, db, "users", "add", "ann", "--role", "annotator", "--login", ELSEWHERE, "--user", "mia")
    assert code == 0 and out.strip() == f"added annotator ann, bound to OS login {ELSEWHERE}"
    code, out, _ = _cli(capsys, db, "users", "list")
    assert out.splitlines()[0].startswith("mode: profiles bound to OS logins")


def test_a_package_works_on_the_annotators_laptop(store_path, tmp_path, capsys):
    assert _cli(capsys, store_path, "users", "bind", "mia", "--login", ME, "--user", "mia")[0] == 0
    assert _cli(capsys, store_path, "users", "bind", "ann", "--login", ELSEWHERE, "--user", "mia")[0] == 0
    pkg = tmp_path / "ann.pkg"
    code, _, err = _cli(
        capsys, store_path, "package", "export", BANK, "--annotator", "ann", "--out", pkg, "--user", "mia"
    )
    assert code == 0, err
    code = main(["review", "decide", f"{BANK}/q000", "--accept", "--package", str(pkg), "--user", "ann"])
    assert code == 0, capsys.readouterr().err  # the laptop's login is not the team machine's


def test_db_after_the_verb_names_the_store(capsys, tmp_path):
    """`--db PATH` after the verb (`reviewer users list --db store.sqlite`, as the README says every verb takes it)
    reads that store; before, argparse refused it as an unrecognised argument. The one before the verb still counts
    when none follows it, and one after the verb wins over one before it."""
    db, other = tmp_path / "team.sqlite", tmp_path / "other.sqlite"
    assert main(["users", "add", "mia", "--role", "maintainer", "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["users", "list", "--db", str(db)]) == 0
    assert "mia" in capsys.readouterr().out
    assert main(["--db", str(db), "users", "list"]) == 0
    assert "mia" in capsys.readouterr().out
    assert main(["--db", str(other), "users", "list", "--db", str(db)]) == 0
    assert "mia" in capsys.readouterr().out
    assert not other.exists()  # the store named before the verb was not opened


def test_a_mistyped_db_says_the_store_it_opened_has_no_users(capsys, tmp_path):
    """`--db` with a typo: a verb that needs users names no store there and makes none (test_cli_no_store); a
    store that a verb which may make one did make (a scan, a bank import) says it has no users, rather than only
    "unknown user 'mia'" about a profile that exists in the team's store."""
    db, typo = tmp_path / "team.sqlite", tmp_path / "taem.sqlite"
    assert main(["--db", str(db), "users", "add", "mia", "--role", "maintainer"]) == 0
    capsys.readouterr()
    assert main(["--db", str(typo), "users", "bind", "mia", "--login", "x", "--user", "mia"]) == 2
    assert capsys.readouterr().err == f"error: no store at {typo}\n" and not typo.exists()
    Store(typo).close()  # as `reviewer scan SITE --db taem.sqlite` would have made it
    assert main(["--db", str(typo), "users", "bind", "mia", "--login", "x", "--user", "mia"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown user 'mia'") and str(typo) in err and "no users yet" in err, err
    assert main(["--db", str(db), "users", "bind", "nobody", "--login", "x", "--user", "mia"]) == 2
    assert "no users yet" not in capsys.readouterr().err  # the team's store has users: no such hint there
