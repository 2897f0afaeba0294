"""Dock widgets of napari's Plugins menu: each attaches to the viewer's one reviewer session (created on first use).

napari gives a dock widget its viewer by the `napari_viewer` parameter of the widget class's `__init__` (a factory
function's own parameters are not looked at: `add_plugin_dock_widget` failed with "missing 1 required positional
argument: 'viewer'"). The viewer comes as napari's public-only proxy, so these docks use napari's public API only.
"""

from __future__ import annotations

import functools

from qtpy.QtWidgets import QVBoxLayout, QWidget


class _SessionDock(QWidget):
    """A dock holding one of the reviewer's panels over the viewer's reviewer session, the panel in a scroll area
    as the app's docks have it (`DockScroll`): napari stacks plugin docks on its right, and the five at their full
    height (~1,700 px) made the window taller than the screen. `form`: the panel scrolls at its natural height (a
    form of controls) rather than squeezing its rows; a plot shrinks to its minimum first."""

    form = False

    def make(self, session) -> QWidget:
        raise NotImplementedError

    def __init__(self, napari_viewer) -> None:
        from reviewer.app.layers import dock_gone, session_for

        super().__init__()
        self.session = session_for(napari_viewer)
        # napari's window closed deletes its docks: the last one gone closes the session (its threads stopped, and a
        # warm-up ending later draws nothing on the closed viewer)
        self.destroyed.connect(functools.partial(dock_gone, self.session))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.panel = self.make(self.session)
        layout.addWidget(self.scroll(self.panel))

    def scroll(self, panel: QWidget) -> QWidget:
        from reviewer.app.main_window import DockScroll

        return DockScroll(panel, natural_height=self.form)


class StackDock(_SessionDock):
    """The Stack controls, the date caption and the date slider at their top: in plain napari the plugin leaves the
    canvas's own text overlay and napari's dims bar to the user (the site's layers are 2-D, its date the session's
    own), so the caption and slider that the app's window has over and under its canvas are lines of this dock (above
    the controls' scroll area: the date stays in sight)."""

    form = True

    def make(self, session) -> QWidget:
        from reviewer.app.qt_controls import QtStackControls

        self.controls = QtStackControls(session)
        return self.controls

    def scroll(self, panel: QWidget) -> QWidget:
        from reviewer.app.qt_caption import QtDateCaption, QtDateSlider

        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)  # (the three lines within napari's column of five docks at 1366 x 768)
        self.caption = QtDateCaption(self.session.caption)
        layout.addWidget(self.caption)
        dates = self.session.dates
        self.date_slider = QtDateSlider(dates.position, dates.jump_to_index, dates.step_year, name_date=False)
        layout.addWidget(self.date_slider)
        layout.addWidget(super().scroll(panel))
        return box


class TrajectoryDock(_SessionDock):
    """The trajectory plot, not in a scroll area: its minimum (the tool rows, the plotting area's 150 px, the year
    axis and the caption's two lines) is the dock's, so napari's column of plugin docks gives it that much. In a
    scroll area the dock had its title and ~60 px (12 px of plotting area at 1366 x 768, as at 1600 x 1000: the
    Stack dock took what was left) until the user dragged the splitters; the others scroll in what is left."""

    def scroll(self, panel: QWidget) -> QWidget:
        return panel

    def make(self, session) -> QWidget:
        from reviewer.app.qt_trajectory import QtTrajectoryPlot

        return QtTrajectoryPlot(session)


class CoverageDock(_SessionDock):
    def make(self, session) -> QWidget:
        from reviewer.app.qt_coverage import QtCoveragePlot

        return QtCoveragePlot(session)


class ChipsDock(_SessionDock):
    def make(self, session) -> QWidget:
        from reviewer.app.qt_chips import QtChipStrip

        return QtChipStrip(session)


class PairDock(_SessionDock):
    def make(self, session) -> QWidget:
        from reviewer.app.qt_pair import QtPairView

        return QtPairView(session)
