"""The keyboard between the canvas and the docks.

- Keys that bring a dock to the front (Reviewer menu > Show dock): a dock tabbed behind another (Coverage, Chips,
  Pair, Scoring, Failures) had no way in without the mouse, as a dock's tab bar takes no keyboard focus. A viewer's
  dock comes to the front with the keys on the canvas (the review and date keys go on working); a form's dock
  (Stack, Scoring, Generate) takes the keyboard at its first field, and Tab goes on through it.
- Tab from the canvas goes to the dock where the person works (Review, or Failures for a coder), then through the
  other docks in the order of their keys (`order_tabs`).
- Esc in any field of the app's docks gives the keyboard back to the canvas (`qt_wheel.leave_field`).
- A dock that is a tab behind another is no Tab stop (`follow_tab`): Qt keeps such a tab shown, off the window, and
  Tab walked its fields and title buttons with the focus out of sight.
- Tab goes round: canvas, the docks' fields, canvas (`tab_round`, `back_from_canvas`); Shift+Tab the same round
  backwards. After the last dock field Tab had gone on into napari's date field, its dims bar, the activity button
  and the docks' title buttons, and never came back to the canvas.
"""

from __future__ import annotations

from qtpy.QtCore import Qt
from qtpy.QtGui import QKeySequence, QShortcut
from qtpy.QtWidgets import QApplication, QMenu, QWidget

from reviewer.app.jobs import alive
from reviewer.app.qt_lazy import LazyTab
from reviewer.app.qt_window import canvas_in

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
#: the dynamic property that keeps the focus policy of a widget in a tab behind (it takes no Tab while there)
HELD, BEHIND = "reviewer_tab_focus", "reviewer_tab_behind"
#: the window's dynamic property set once its docks' fields are in Tab's round (`order_tabs`; not in plain napari)
ROUND = "reviewer_tab_round"
#: the dynamic property of a field put in the round's order
ORDERED = "reviewer_tab_ordered"


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
    if form:
        for lazy in dock.findChildren(LazyTab):  # a tab never in front: its form is made now, to take the keyboard
            lazy.content()
    first = _first_field(dock.widget()) if form else None
    if first is not None:
        first.setFocus(Qt.FocusReason.ShortcutFocusReason)
    else:
        from reviewer.app.qt_window import give_keys_to_canvas

        give_keys_to_canvas(app.viewer)
    return True


def _first_field(root: QWidget | None) -> QWidget | None:
    """The first widget under `root` that Tab would stop at, in the order Tab goes (`order_tabs` may have moved the
    dock's fields: the stretch of the chain before any of them is walked back to its start)."""
    if root is None:
        return None
    stops = [w for w in _tab_stops(root) if _shown_with(w, root) and w.isEnabled()]
    if not stops:
        return None
    first, ids = stops[0], set(map(id, stops))
    w = first.previousInFocusChain()
    while w is not None and root.isAncestorOf(w):
        if id(w) in ids:
            first = w
        w = w.previousInFocusChain()
    return first


def _shown_with(w: QWidget, root: QWidget) -> bool:
    """`w` is shown when `root` is: none of its parents up to `root` hidden by the app (`isVisibleTo` also says
    no of a form just made behind a tab brought to the front, which Qt shows on its next turn: Ctrl+7 had left the
    keyboard on the canvas instead of the Scoring dock's first field)."""
    while w is not None and w is not root:
        if w.isHidden() and w.testAttribute(Qt.WidgetAttribute.WA_WState_ExplicitShowHide):
            return False
        w = w.parentWidget()
    return w is root


def follow_tab(dock: QWidget, content: QWidget | None = None) -> None:
    """While `dock` is a tab behind another, Tab does not stop in it: its widgets (its title bar's buttons too) keep
    their focus policy without the Tab part, and take it back when its tab comes to the front (Qt's
    `QDockWidget.visibilityChanged`). Only focus policies change: the dock stays enabled and looks the same (disabled,
    the window's layout had moved by 2 px). A lazy tab's `content` built while behind is held too (`LazyTab.built_now`). Qt says
    nothing of a dock placed behind: `hold_tabs_behind` does."""
    dock.visibilityChanged.connect(lambda visible, d=dock: alive(d) and (release(d) if visible else hold(d)))
    built = getattr(content, "built_now", None)
    if built is not None:
        built.connect(lambda d=dock: alive(d) and d.property(BEHIND) and hold(d))


def hold_tabs_behind(window, front: QWidget) -> None:
    """`front` was brought to the front: the docks tabbed with it are behind (Qt's `tabifiedDockWidgets`)."""
    release(front)
    for dock in window.tabifiedDockWidgets(front):
        hold(dock)


def hold(dock: QWidget) -> None:
    """No Tab stop in `dock` (what took clicks still does)."""
    tab, click = Qt.FocusPolicy.TabFocus, Qt.FocusPolicy.ClickFocus
    dock.setProperty(BEHIND, True)
    for w in [dock, *dock.findChildren(QWidget)]:
        policy = w.focusPolicy()
        if policy & tab and w.property(HELD) is None:
            w.setProperty(HELD, int(policy))
            w.setFocusPolicy(click if policy & click else Qt.FocusPolicy.NoFocus)


def release(dock: QWidget) -> None:
    """`dock`'s widgets take Tab again, with the focus policy they had (unless it was changed meanwhile)."""
    dock.setProperty(BEHIND, None)
    for w in [dock, *dock.findChildren(QWidget)]:
        held = w.property(HELD)
        if held is not None:
            w.setProperty(HELD, None)
            if not w.focusPolicy() & Qt.FocusPolicy.TabFocus:
                w.setFocusPolicy(Qt.FocusPolicy(held))


def _policy(w: QWidget):
    """`w`'s focus policy (in a tab behind: the one it has in front)."""
    held = w.property(HELD)
    return w.focusPolicy() if held is None else Qt.FocusPolicy(held)


def order_tabs(app, first: str) -> list[QWidget]:
    """Tab from the canvas goes to dock `first` (where the person works: Review, or Failures for a coder), then on
    through the other docks in the order of their keys (Stack, Trajectory, Coverage, Chips, Pair, Scoring, Failures,
    Generate); a dock's own fields keep their order; after the last, back to the canvas (`tab_round`). Returns the
    fields in that order.

    Qt puts a widget in the window's Tab chain when it is made: the app's docks came after napari's widgets, Tab from
    the canvas went through napari's activity button and the Stack dock first, and the Review dock, made last, came
    after napari's date field, which hands the keys to its slider bar when left: Tab never reached it. Only the app's
    own widgets are moved (Qt's `QWidget.setTabOrder`); napari's stay where napari put them, after the docks'. A
    dock's scroll area is no stop of its own (Tab had stopped on an empty frame before the dock's first field)."""
    from reviewer.app.qt_window import canvas_widget

    canvas = canvas_widget(app.viewer)
    if canvas is None:
        return []
    window = canvas.window()
    if not window.property(ROUND):  # Shift+Tab on the canvas: the round's last dock field (`back_from_canvas`)
        back = QShortcut(QKeySequence("Shift+Tab"), canvas)
        back.setContext(Qt.ShortcutContext.WidgetShortcut)
        back.activated.connect(lambda c=canvas: alive(c) and back_from_canvas(c))
    window.setProperty(ROUND, [first] + [name for name, _key in DOCK_KEYS if name != first])
    return _order(window)


def _order(window: QWidget, *, full: bool = True) -> list[QWidget]:
    """Put the docks' fields after the canvas in Tab's chain, in the round's order (the window's ROUND: dock names),
    and return them in that order. Not `full`: only the fields made since (a tab built when first brought to the
    front, the Stack dock's sensor boxes made for each site, the Generate dock), each after the field before it;
    those in order stay where they are (ordered a second time, the Review dock's tab bar came after its page's
    fields: Qt's chain holds the tab widget, whose focus goes to its tab bar, where the list has the tab bar)."""
    from qtpy.QtWidgets import QAbstractScrollArea, QDockWidget

    canvas = canvas_in(window)
    docks = {d.objectName(): d for d in window.findChildren(QDockWidget)}
    roots = [docks[n].widget() for n in window.property(ROUND) or () if n in docks]
    roots = [root for root in roots if root is not None]
    if canvas is None or not roots:
        return []
    for root in roots:  # a dock's scroll area (DockScroll) is no Tab stop; the wheel still scrolls it
        if isinstance(root, QAbstractScrollArea) and _policy(root) & Qt.FocusPolicy.TabFocus:
            root.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
            if root.property(HELD) is not None:
                root.setProperty(HELD, int(Qt.FocusPolicy.ClickFocus))
    chain = [w for root in roots for w in _tab_stops(root)]
    before = canvas
    for w in chain:
        if full or not w.property(ORDERED):
            QWidget.setTabOrder(before, w)
            w.setProperty(ORDERED, True)
        before = w
    return chain


def _stop(w: QWidget, window: QWidget) -> bool:
    """`w` takes the focus from Tab now (as Qt decides: Tab in its focus policy, shown, enabled, no focus proxy)."""
    return (
        bool(w.focusPolicy() & Qt.FocusPolicy.TabFocus)
        and w.focusProxy() is None
        and w.window() is window
        and w.isVisibleTo(window)
        and w.isEnabled()
    )


def _in_docks(w: QWidget | None) -> bool:
    """`w` is in one of the app's docks' contents (a dock's title buttons are napari's)."""
    from reviewer.app.qt_wheel import own_dock

    return w is not None and own_dock(w) is not None


def tab_round(forward: bool) -> bool:
    """Tab (`forward`) or Shift+Tab in a dock's field, in a window whose docks are in Tab's round (`order_tabs`; not
    plain napari's): the fields made since the docks were put in order come into it (the Stack dock's sensor boxes,
    made for each site: Tab went past them, Shift+Tab not), and when the next stop is none of the docks' fields
    (napari's date field, its dims bar, the activity button, the docks' title buttons: Tab went on through them and
    never came back) the keyboard goes to the canvas instead: True. False: Qt's own Tab goes on in the docks."""
    focus = QApplication.focusWidget()
    window = focus.window() if focus is not None else None
    if window is None or not window.property(ROUND) or not _in_docks(focus):
        return False
    _order(window, full=False)
    if _in_docks(_next_stop(focus, forward)):
        return False
    canvas = canvas_in(window)
    if canvas is None:
        return False
    canvas.setFocus(Qt.FocusReason.TabFocusReason if forward else Qt.FocusReason.BacktabFocusReason)
    return True


def _next_stop(focus: QWidget, forward: bool) -> QWidget | None:
    """The widget Tab (`forward`) or Shift+Tab goes to from `focus` in Qt's chain (None: none but `focus`)."""
    window = focus.window()
    w = focus.nextInFocusChain() if forward else focus.previousInFocusChain()
    while w is not None and w is not focus and not _stop(w, window):
        w = w.nextInFocusChain() if forward else w.previousInFocusChain()
    return None if w is focus else w


def back_from_canvas(canvas: QWidget) -> None:
    """Shift+Tab on the canvas: the last dock field of Tab's round (the one Tab goes from to the canvas), or the
    canvas keeps the keyboard when no dock field takes it."""
    window = canvas.window()
    stops = [w for w in _order(window, full=False) if _stop(w, window)]
    if stops:
        from reviewer.app.qt_style import scroll_into_view
        from reviewer.app.qt_wheel import own_dock

        stops[-1].setFocus(Qt.FocusReason.BacktabFocusReason)
        scroll_into_view(own_dock(stops[-1]), stops[-1])


def _tab_stops(root: QWidget) -> list[QWidget]:
    """The widgets under `root` that Tab stops at, in Tab's order (the dock's, top to bottom); those made later (a
    form filled in when first shown) after them. Only the dock's own stretch of the chain is walked: walking the
    window's whole chain (napari's widgets too) kept napari's viewer alive after its window closed."""
    tab, window = Qt.FocusPolicy.TabFocus, root.window()

    def stop(w: QWidget) -> bool:
        return bool(_policy(w) & tab) and w.focusProxy() is None and w.window() is window

    out: list[QWidget] = []
    w = root.nextInFocusChain()
    while w is not None and root.isAncestorOf(w):
        if stop(w):
            out.append(w)
        w = w.nextInFocusChain()
    seen = set(map(id, out))
    return out + [w for w in root.findChildren(QWidget) if id(w) not in seen and stop(w)]
