"""Bank folders: writing, reading, validation problems with file/line/field, byte-stable round trips."""

import json

import bank_factory as bf
import pytest

from reviewer.bank.io import BankContent, load_bank, read_jsonl, validate_bank, write_bank
from reviewer.errors import BankError, SchemaError


def _bank(tmp_path, questions=None, sites=None, pairs=None, **kw):
    questions = questions if questions is not None else [bf.trend_question(), bf.number_question("a24-2")]
    sites = sites if sites is not None else [bf.site()]
    pairs = pairs if pairs is not None else [bf.pair("a24-1-p", "a24-1")]
    folder = tmp_path / "bank"
    write_bank(folder, BankContent("earthrecord", "1", questions, sites, pairs, created="2026-11-30T12:00:00Z", **kw))
    return folder


def _rewrite_line(path, lineno, change):
    lines = path.read_text().split("\n")
    lines[lineno - 1] = change(lines[lineno - 1])
    path.write_text("\n".join(lines))


def test_manifest_pins_files_by_sha256_of_their_bytes(tmp_path):
    import hashlib

    folder = _bank(tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["counts"] == {"questions": 2, "sites": 1, "pairs": 1}
    for name in ("questions.jsonl", "sites.jsonl", "pairs.jsonl"):
        digest = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        assert manifest["files"][name] == "sha256:" + digest
    assert manifest["frozen"] is False and manifest["created"] == "2026-11-30T12:00:00Z"


def test_serialisation_is_one_line_per_record_with_fixed_key_order(tmp_path):
    q = bf.trend_question()
    shuffled = dict(reversed(list(q.items())))
    a = _bank(tmp_path / "a", questions=[q])
    b = _bank(tmp_path / "b", questions=[shuffled])
    assert (a / "questions.jsonl").read_bytes() == (b / "questions.jsonl").read_bytes()
    text = (a / "questions.jsonl").read_text()
    assert text.endswith("}\n") and text.count("\n") == 1
    assert text.startswith('{"id": "a24-1", "site": "a24", "class": "computable"')


def test_load_bank_refuses_a_file_that_does_not_match_its_hash(tmp_path):
    folder = _bank(tmp_path)
    (folder / "sites.jsonl").write_bytes((folder / "sites.jsonl").read_bytes().replace(b"Site a24", b"Site X"))
    with pytest.raises(BankError, match="sha256 does not match") as err:
        load_bank(folder)
    assert err.value.path.endswith("sites.jsonl")
    assert load_bank(folder, verify_hashes=False).site("a24")["name"] == "Site X"


def test_validate_reports_every_problem_with_file_line_and_field(tmp_path):
    folder = _bank(tmp_path, questions=[bf.trend_question(), bf.number_question("a24-2"), bf.year_question("a24-3")])
    qpath = folder / "questions.jsonl"
    _rewrite_line(qpath, 1, lambda s: s[:-5])  # malformed JSON
    _rewrite_line(qpath, 2, lambda s: s.replace('"area": [95.0, 105.0]', '"area": [96.0, 105.0]'))  # < +-5%
    _rewrite_line(
        qpath,
        3,
        lambda s: s.replace('"year": 2012}', '"year": 2012, "colour": "red"}', 1).replace(
            '"no_change": null', '"no_change": null, "colour": 1'
        ),
    )  # unknown field
    found = validate_bank(folder, verify_hashes=False)
    by_line = {(p.line, p.field): p.message for p in found if p.path.endswith("questions.jsonl")}
    assert any(line == 1 and msg.startswith("not valid JSON: column ") for (line, _), msg in by_line.items())
    assert "narrower than +-5%" in by_line[(2, "reference_range.area")]
    assert (3, "colour") in by_line
    # the hash check reports the edited file too, when hashes are verified
    assert any("sha256" in p.message for p in validate_bank(folder))


@pytest.mark.parametrize(
    ("question", "field", "message"),
    [
        (bf.trend_question(reference={"direction": 3, "trend": 0.28}), "reference.direction", "options"),
        (bf.trend_question(reference_range={"trend": [0.29, 0.31]}), "reference_range.trend", "does not contain"),
        (bf.number_question("x", reference_range={}), "reference_range", "needs a range"),
        (bf.trend_question(reference={"direction": "up", "trend": 0.28}), "reference.direction", "not one of"),
        (bf.trend_question(conclusion="nothing"), "conclusion", "names no field"),
        (bf.trend_question(task=None), "task", "null exactly when"),
        (
            bf.insufficient_question("x", reference={"direction": "increase"}),
            "reference.direction",
            "class insufficient",
        ),
        (bf.trend_question(multi_sensor=False), "multi_sensor", "must be True"),
        (bf.trend_question(accept={"direction": ["sideways"]}), "accept.direction.0", "not one of"),
    ],
)
def test_semantic_rules_name_the_field(tmp_path, question, field, message):
    with pytest.raises(SchemaError, match=message) as err:
        _bank(tmp_path, questions=[question], pairs=[])
    assert err.value.field == field
    assert err.value.path.endswith("questions.jsonl") and err.value.line == 1
    assert not (tmp_path / "bank").exists()  # nothing half-written


def test_a_text_field_is_never_the_conclusion(tmp_path):
    q = bf.trend_question(
        fields=[{"name": "direction", "type": "text"}],
        reference={"direction": "up"},
        reference_range={},
        accept={},
        no_change=None,
    )
    with pytest.raises(SchemaError, match="text field cannot be the conclusion"):
        _bank(tmp_path, questions=[q], pairs=[])


def test_cross_references_and_duplicate_ids(tmp_path):
    with pytest.raises(BankError, match="missing site 'zz'"):
        _bank(tmp_path, questions=[bf.trend_question(site="zz")], pairs=[])
    with pytest.raises(BankError, match="duplicate id 'a24-1'") as err:
        _bank(tmp_path, questions=[bf.trend_question(), bf.trend_question()], pairs=[])
    assert err.value.line == 2
    with pytest.raises(BankError, match="missing question 'nope'"):
        _bank(tmp_path, pairs=[bf.pair("p", "nope")])


def test_validate_finds_a_missing_site_and_an_unreadable_site_line(tmp_path):
    folder = _bank(tmp_path)
    (folder / "sites.jsonl").write_text('{"id": "a24", "name": \n')  # a value wanted after its 22 characters
    found = validate_bank(folder, verify_hashes=False)
    assert any(
        p.path.endswith("sites.jsonl") and p.line == 1 and p.message == "not valid JSON: column 23" for p in found
    )
    assert any(p.path.endswith("questions.jsonl") and p.field == "site" and "missing site" in p.message for p in found)


def test_nan_is_rejected_with_line(tmp_path):
    path = tmp_path / "sites.jsonl"
    path.write_text(json.dumps(bf.site()) + "\n" + json.dumps(bf.site("b")).replace("10.0", "NaN") + "\n")
    with pytest.raises(SchemaError, match="NaN") as err:
        read_jsonl(path, "site")
    assert err.value.line == 2


def test_a_frozen_bank_is_never_overwritten(tmp_path):
    folder = _bank(tmp_path, frozen=True)
    before = (folder / "questions.jsonl").read_bytes()
    with pytest.raises(BankError, match="frozen"):
        write_bank(folder, BankContent("earthrecord", "2", [bf.trend_question()], [bf.site()], []))
    assert (folder / "questions.jsonl").read_bytes() == before


def test_site_json_accepts_grid_keys_and_nothing_else(tmp_path):
    from reviewer.bank.io import load_site_json
    from reviewer.errors import SiteError

    s = bf.site() | {"resolution": 30, "shape": [200, 300]}
    (tmp_path / "site.json").write_text(json.dumps(s))
    assert load_site_json(tmp_path)["shape"] == [200, 300]
    (tmp_path / "site.json").write_text(json.dumps(s | {"colour": "red"}))
    with pytest.raises(SiteError) as err:
        load_site_json(tmp_path)
    assert err.value.field == "colour"


def test_add_pairs_appends_checked_pairs_and_updates_the_manifest(tmp_path):
    import hashlib

    from reviewer.bank.io import add_pairs

    folder = _bank(tmp_path)
    questions = (folder / "questions.jsonl").read_bytes()
    before = json.loads((folder / "manifest.json").read_text())
    manifest = add_pairs(folder, [bf.pair("a24-2-p1", "a24-2"), bf.pair("a24-2-p2", "a24-2", kind="placebo")])
    assert manifest["counts"]["pairs"] == 3 and manifest["created"] == before["created"]
    assert manifest["files"]["questions.jsonl"] == before["files"]["questions.jsonl"]
    assert (folder / "questions.jsonl").read_bytes() == questions
    digest = "sha256:" + hashlib.sha256((folder / "pairs.jsonl").read_bytes()).hexdigest()
    assert manifest["files"]["pairs.jsonl"] == digest
    assert [p["id"] for p in load_bank(folder).pairs] == ["a24-1-p", "a24-2-p1", "a24-2-p2"]
    pairs_bytes = (folder / "pairs.jsonl").read_bytes()
    with pytest.raises(BankError, match="duplicate id"):
        add_pairs(folder, [bf.pair("a24-2-p1", "a24-2")])
    with pytest.raises(BankError, match="missing question"):
        add_pairs(folder, [bf.pair("x-p1", "nosuch")])
    with pytest.raises(SchemaError):
        add_pairs(folder, [bf.pair("a24-2-p3", "")])
    assert (folder / "pairs.jsonl").read_bytes() == pairs_bytes  # nothing written on refusal
    assert validate_bank(folder) == []


def test_add_pairs_refuses_a_frozen_bank(tmp_path):
    from reviewer.bank.io import add_pairs

    folder = _bank(tmp_path, frozen=True)
    before = (folder / "pairs.jsonl").read_bytes()
    with pytest.raises(BankError, match="frozen"):
        add_pairs(folder, [bf.pair("a24-2-p1", "a24-2")])
    assert (folder / "pairs.jsonl").read_bytes() == before
