"""Building the CLI parser stays light: `reviewer --help` and every verb's parser load no heavy library.

Checked in a fresh interpreter (this test process has most of them imported already), by module name
rather than by timing, so the check does not depend on the machine's speed.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Libraries a verb may import only inside the function that runs it (each costs 0.05-0.5 s to import).
HEAVY = ("numpy", "pandas", "rasterio", "matplotlib", "napari", "qtpy", "PySide6", "jsonschema", "statsmodels")

_PROBE = """
import json, sys
import reviewer.cli
reviewer.cli.build_parser()
print(json.dumps(sorted(sys.modules)))
"""


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_build_parser_imports_no_heavy_library():
    loaded = _modules_after(_PROBE)
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert not heavy, f"building the CLI parser imported {heavy}"


@pytest.mark.parametrize("argv", [["--help"], ["bank", "--help"], ["bank", "validate", "--help"], ["score", "--help"]])
def test_help_imports_no_heavy_library(argv):
    code = (
        "import json, sys\n"
        "import reviewer.cli\n"
        "try:\n"
        f"    reviewer.cli.main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = _modules_after(code)
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert not heavy, f"`reviewer {' '.join(argv)}` imported {heavy}"


def test_composite_choices_are_the_stretch_catalogue():
    """record/cli.py reads composites.json itself (to skip numpy); its choices must stay stretch's names."""
    from reviewer.record.cli import _composite_names
    from reviewer.record.stretch import composite_names

    assert _composite_names() == composite_names()


def test_each_verb_is_built_from_the_module_that_registers_it():
    """`reviewer VERB` builds only VERBS[VERB]'s parser: the table must name every verb each module registers
    (a verb left out still works, slower; a wrong module would lose the verb)."""
    import argparse
    import importlib

    from reviewer.cli import VERB_MODULES, VERBS

    registered = {}
    for name in VERB_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        try:
            importlib.import_module(name).register(sub)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        registered.update(dict.fromkeys(sub.choices, name))
    assert VERBS == registered


def test_a_verb_imports_only_its_own_package():
    """`reviewer review queue --help` builds the review verbs alone: no other package's verb module."""
    code = (
        "import json, sys\n"
        "import reviewer.cli\n"
        "try:\n"
        "    reviewer.cli.main(['review', 'queue', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = _modules_after(code)
    assert "reviewer.review.cli" in loaded
    others = {"reviewer.record.cli", "reviewer.review.gen_cli", "reviewer.drafting.cli", "reviewer.failures.cli"}
    assert not loaded & others, sorted(loaded & others)
    assert not {m for m in loaded if m.startswith("reviewer.bank.")}, "the review verbs' parser needs no bank module"


@pytest.mark.parametrize(
    ("argv", "verb"),
    [
        (["--db", "x.sqlite", "freeze", "rb", "--version", "2"], "freeze"),  # the verb's own --version
        (["-v", "--db=x.sqlite", "review", "decide", "rb/q1", "--accept"], "review"),
        (["--db", "review", "scan", "site"], "scan"),  # --db's value is not the verb
        (["--version"], None),
        ([], None),
    ],
)
def test_the_verb_is_the_first_word_after_the_global_options(argv, verb):
    from reviewer.cli import verb_of

    assert verb_of(argv) == verb


def test_reading_a_raster_loads_no_aws_modules(tmp_path):
    """rasterio would import boto3 (botocore, urllib3, s3transfer: ~0.25 s of every launch) when installed, as
    inspect-ai installs it; the record package reads local files and keeps it out (issue 27, launch)."""
    import numpy as np
    import rasterio
    from affine import Affine

    path = tmp_path / "b.tif"
    profile = {"driver": "GTiff", "width": 4, "height": 3, "count": 1, "dtype": "uint16", "crs": "EPSG:32633"}
    with rasterio.open(path, "w", transform=Affine(30, 0, 500000, 0, -30, 4000000), **profile) as dst:
        dst.write(np.arange(12, dtype=np.uint16).reshape(1, 3, 4))
    code = (
        "import json, sys\n"
        "import reviewer.record.site, reviewer.record.decode\n"
        "import rasterio\n"
        f"with rasterio.open({str(path)!r}) as src:\n"
        "    total = int(src.read(1).sum())\n"
        "print(json.dumps(sorted(sys.modules) + [total]))\n"
    )
    loaded = _modules_after(code)
    assert 66 in loaded  # 0 + 1 + ... + 11: the file was read
    assert not sorted(m for m in loaded if str(m).split(".")[0] in ("boto3", "botocore", "s3transfer"))
