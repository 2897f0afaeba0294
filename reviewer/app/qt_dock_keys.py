"""Keys that bring a dock to the front (Reviewer menu > Show dock): a dock tabbed behind another (Coverage, Chips,
Pair, Scoring, Failures) had no way in without the mouse, as a dock's tab bar takes no keyboard focus. A viewer's
dock comes to the front with the keys on the canvas (the review and date keys go on working); a form's dock
(Stack, Scoring, Generate) takes the keyboard at its first field, and Tab goes on through it."""

from __future__ import annotations

from qtpy.QtCore import Qt
from qtpy.QtGui import QKeySequence
from qtpy.QtWidgets import QMenu, QWidget

#: dock name -> its key (Ctrl+digit: napari binds the bare digits to layer modes, none with Ctrl)
DOCK_KEYS = (
    ("Review", "Ctrl+1"),
    ("Stack", "Ctrl+2"),
    ("Trajectory", "Ctrl+3"),
    ("Coverage", "Ctrl+4"),
    ("Chips", "Ctrl+5"),
    ("Pair", "Ctrl+6"),
    ("Scoring", "Ctrl+7"),
    ("Failures", "Ctrl+8"),
    ("Generate", "Ctrl+9"),
)
FORM_DOCKS = frozenset({"Stack", "Scoring", "Generate"})


def add_dock_keys(app, menu: QMenu) -> QMenu:
    """A 'Show dock' submenu of `menu` with a key per dock; a dock the window has not made is greyed out."""
    sub = menu.addMenu("Show dock")
    for name, key in DOCK_KEYS:
        action = sub.addAction(name)
        action.setShortcut(QKeySequence(key))
        action.triggered.connect(lambda _checked=False, name=name: bring_dock(app, name))

    def enable() -> None:
        for action in sub.actions():
            action.setEnabled(action.text() in app.docks)

    sub.aboutToShow.connect(enable)
    return sub


def bring_dock(app, name: str) -> bool:
    """Show and raise dock `name`; a form's dock takes the keyboard at its first field. False: no such dock."""
    dock = app.docks.get(name)
    if dock is None:
        return False
    dock.show()
    dock.raise_()
    review = getattr(app, "review", None)
    maintainer_only = review is not None and review.annotator is None and review.expert is None
    form = name in FORM_DOCKS or (name == "Review" and maintainer_only)  # a maintainer's dock is all forms
    first = _first_field(dock.widget()) if form else None
    if first is not None:
        first.setFocus(Qt.FocusReason.ShortcutFocusReason)
    else:
        from reviewer.app.qt_window import give_keys_to_canvas

        give_keys_to_canvas(app.viewer)
    return True


def _first_field(root: QWidget | None) -> QWidget | None:
    """The first widget under `root` that Tab would stop at, in the order Tab goes."""
    if root is None:
        return None
    w = root.nextInFocusChain()
    while w is not None and w is not root:
        if root.isAncestorOf(w) and w.isVisibleTo(root) and w.isEnabled() and w.focusPolicy() & Qt.TabFocus:
            return w
        w = w.nextInFocusChain()
    return None
