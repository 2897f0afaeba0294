"""Dock widgets: each attaches to the viewer's one reviewer session (created on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import napari


def _session(viewer: napari.viewer.Viewer):
    from reviewer.app.layers import session_for

    return session_for(viewer)


def make_stack_widget(viewer: napari.viewer.Viewer):
    from reviewer.app.qt_controls import QtStackControls

    return QtStackControls(_session(viewer))


def make_trajectory_widget(viewer: napari.viewer.Viewer):
    from reviewer.app.qt_trajectory import QtTrajectoryPlot

    return QtTrajectoryPlot(_session(viewer))


def make_coverage_widget(viewer: napari.viewer.Viewer):
    from reviewer.app.qt_coverage import QtCoveragePlot

    return QtCoveragePlot(_session(viewer))


def make_chips_widget(viewer: napari.viewer.Viewer):
    from reviewer.app.qt_chips import QtChipStrip

    return QtChipStrip(_session(viewer))


def make_pair_widget(viewer: napari.viewer.Viewer):
    from reviewer.app.qt_pair import QtPairView

    return QtPairView(_session(viewer))
