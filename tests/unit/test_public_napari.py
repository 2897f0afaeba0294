"""The app and the plugin use napari, vispy and pyqtgraph through their public API only: no private names, no
monkeypatching of their classes, no disconnecting napari's own handlers (the plugin's docks must change nothing
outside themselves in a user's napari). A grep over the source, so it runs without a display."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: what came out of reviewer/app (issue 27) and must not come back
FORBIDDEN = {
    "a private napari or vispy name": re.compile(
        r"\._(qt_viewer|qt_window|update_layers|overlay_positions_changed|update_overlay_canvas_positions|"
        r"build_color_transform|update_thumbnail|process_event|data_view|resize_axis_labels|glyphs|root|layers)\b"
    ),
    "a private attribute of a napari object": re.compile(
        r"\b(viewer|window|layer|canvas|dims|qt_viewer|qt_dims|overlays|cursor|camera|scale_bar|model)\._[a-z]\w*"
    ),
    "a private name of napari's window or viewer by getattr": re.compile(
        r"getattr\((getattr\()?[\w.]*(viewer|window|canvas|qt_dims|layer)\w*[^)]*,\s*[\"']_[a-z]\w*[\"']"
    ),
    "a private napari or vispy module": re.compile(r"\b(napari|vispy|pyqtgraph)(\.\w+)*\._\w+"),
    "napari's canvas font atlas": re.compile(r"\bfont_info\(|\bSLIDERHEIGHT\b"),
    "a napari or vispy class patched": re.compile(
        r"^\s*(MeshVisual|Visual|Layer|Image|Shapes|Labels|Viewer|ViewerModel|Dims|QtViewer)\.\w+\s*=", re.M
    ),
    "a napari handler disconnected": re.compile(r"\.events\.\w+\.disconnect\(|\.events\.disconnect\("),
    "an attribute set on napari's viewer": re.compile(r"\bviewer\.\_\w+\s*="),
    "a process-wide garbage collector switch": re.compile(r"\bgc\.(freeze|disable)\("),
}


def _sources() -> list[Path]:
    return sorted([*(ROOT / "reviewer").rglob("*.py"), *(ROOT / "plugins").rglob("*.py")])


def test_no_private_napari_or_vispy_use() -> None:
    found = []
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        for what, pattern in FORBIDDEN.items():
            for m in pattern.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                found.append(f"{path.relative_to(ROOT)}:{line}: {what}: {m.group(0).strip()}")
    assert not found, "\n".join(found)


def test_the_patterns_catch_what_was_removed() -> None:
    """Each pattern finds the kind of line it is there for (so a typo cannot make the test pass vacuously)."""
    removed = [
        'qwin = getattr(self.viewer.window, "_qt_window", None)',
        "layer._data_view.edit(0, ring)",
        "MeshVisual._build_color_transform = kept",
        "emitter.disconnect(update) if viewer._update_layers else None",
        "viewer.cursor.events.position.disconnect(checker.trigger_status_update)",
        '"napari.layers.shapes._shapes_models",',
        "info = viewer.window._qt_viewer.canvas.font_info()",
        "viewer._reviewer_app = app",
        "gc.freeze()",
    ]
    for line in removed:
        assert any(p.search(line) for p in FORBIDDEN.values()), line
