"""reviewer.imports.without: a library imported without its optional modules (rasterio without boto3, sqlite-utils
without pandas and numpy) takes its fallback, and only the importing thread is refused them: another thread
importing one of them at that moment gets it (they were hidden in sys.modules for the whole process before)."""

from __future__ import annotations

import importlib
import sys
import threading

from reviewer.imports import without


def _write(tmp_path, name: str, body: str) -> None:
    (tmp_path / f"{name}.py").write_text(body)


def test_the_library_takes_its_fallback_and_another_thread_still_gets_the_module(tmp_path, monkeypatch):
    # a library that falls back when its optional module cannot be imported, as rasterio.session does for boto3
    _write(tmp_path, "k3_heavy", "LOADED = True\n")
    _write(tmp_path, "k3_lib", "try:\n    import k3_heavy\nexcept ImportError:\n    k3_heavy = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("k3_heavy", "k3_lib"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    inside, other_done = threading.Event(), threading.Event()
    got: dict[str, object] = {}

    def other_thread() -> None:
        inside.wait(10)
        try:
            got["module"] = importlib.import_module("k3_heavy")
        except ImportError as exc:  # what the old sys.modules block did to every thread
            got["error"] = exc
        other_done.set()

    t = threading.Thread(target=other_thread)
    t.start()
    with without("k3_heavy", unless_loaded="k3_lib"):
        lib = importlib.import_module("k3_lib")
        inside.set()  # the other thread imports the module while this one is still in the block
        assert other_done.wait(10)
    t.join(10)
    assert lib.k3_heavy is None  # the library in the block took its fallback
    assert "error" not in got and got["module"].LOADED  # the other thread's import was not refused
    assert importlib.import_module("k3_heavy") is got["module"]  # after the block: nothing left refused or hidden


def test_nothing_is_refused_when_the_library_is_already_loaded(tmp_path, monkeypatch):
    _write(tmp_path, "k3_heavy2", "LOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "k3_heavy2", raising=False)
    finders = list(sys.meta_path)
    with without("k3_heavy2", unless_loaded="json"):  # json is loaded: its optional modules are not refused
        assert importlib.import_module("k3_heavy2").LOADED
    assert sys.meta_path == finders
