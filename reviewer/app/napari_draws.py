"""napari and vispy kept to one canvas draw per change: what the review dock's timing found napari doing for
nothing on every item (a second draw to place overlays, a shader recompile per region edit, thumbnails and
rows of a layer list nobody sees, a second update of every layer per date). Each is a small patch over napari's or vispy's own objects, applied once
by the `StackSession`."""

from __future__ import annotations

import contextlib
import weakref


def place_overlays_before_draw(viewer) -> None:
    """Place napari's canvas overlays (caption, scale bar) when they change, not in the next draw: napari places
    them inside its draw handler, which moves them and so asks for a second full draw of the canvas (100-180 ms
    on a software-GL canvas) after every caption change."""
    qt_viewer = getattr(getattr(viewer, "window", None), "_qt_viewer", None)  # noqa: SLF001 - napari's canvas
    canvas = getattr(qt_viewer, "canvas", None)
    event = getattr(viewer.canvas.events, "_overlay_positions_changed", None)
    place = getattr(canvas, "_update_overlay_canvas_positions", None)
    if event is not None and place is not None:
        event.connect(lambda _event=None: place())


_NULL_COLORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # mesh visual -> its identity colour function


def keep_mesh_shaders() -> None:
    """vispy's mesh visual makes a new (identical) colour function at every data change, which recompiles the mesh's
    shader program at its next draw (two programs, 20-40 ms each on software GL, for every edit of a napari shapes
    layer: each review item's region). The identity colour function is made once per visual; a no-op once done."""
    from vispy.visuals.mesh import MeshVisual

    build = MeshVisual._build_color_transform  # noqa: SLF001 - vispy's own builder
    if getattr(build, "reviewer_kept", False):
        return

    def kept(self, colors):
        if colors.ndim == 2 and colors.shape[1] == 1:  # values through a colour map: vispy's own function
            return build(self, colors)
        fun = _NULL_COLORS.get(self)
        if fun is None:
            fun = _NULL_COLORS[self] = build(self, colors)
        return fun

    kept.reviewer_kept = True
    MeshVisual._build_color_transform = kept  # noqa: SLF001


class Thumbnails:
    """napari's layer list works only while it shows: napari re-draws a layer's thumbnail after every slice and data
    change (a zoom of the frame, a raster of the shapes), and the list's model turns every layer event into a change
    of its rows, which its sorting proxy re-sorts: 20-40 ms per review item for a list nobody sees (the app hides
    it). Showing the list draws the thumbnails and refreshes its rows once."""

    def __init__(self, viewer) -> None:
        self.viewer = viewer
        self.shown = False
        self._detached = None  # the list's model while it is not told of layer events

    def quiet(self, layer):
        """Make `layer`'s thumbnail follow `shown` (returns the layer)."""
        update = layer._update_thumbnail  # noqa: SLF001 - napari's own thumbnail refresh

        def maybe(*args, **kwargs):
            if self.shown:
                update(*args, **kwargs)

        layer._update_thumbnail = maybe  # noqa: SLF001
        layer._reviewer_thumbnail = update  # noqa: SLF001 - the real one, for `show`
        return layer

    def _model(self):
        """The layer list's own model (behind napari's reversing proxy), if napari made the list."""
        qt_viewer = getattr(getattr(self.viewer, "window", None), "_qt_viewer", None)  # noqa: SLF001
        view = getattr(qt_viewer, "_layers", None)  # noqa: SLF001 - napari makes the list on first use
        model = view.model() if view is not None else None
        model = model.sourceModel() if hasattr(model, "sourceModel") else model
        return model if hasattr(model, "_process_event") and hasattr(model, "_root") else None

    def show(self, on: bool) -> None:
        self.shown = bool(on)
        model = self._detached if on else self._model()
        if on:
            for layer in self.viewer.layers:
                getattr(layer, "_reviewer_thumbnail", layer._update_thumbnail)()  # noqa: SLF001
            if model is not None:
                model._root.events.connect(model._process_event)  # noqa: SLF001 - as napari's setRoot does
                self._detached = None
                n = model.rowCount()
                if n:
                    model.dataChanged.emit(model.index(0), model.index(n - 1), [])
        elif model is not None and self._detached is None:
            model._root.events.disconnect(model._process_event)  # noqa: SLF001
            self._detached = model


def one_layer_update_per_date(viewer) -> None:
    """napari updates every layer twice per date change: its dims' `point` and `current_step` events are both
    connected to the viewer's layer update (napari's own workaround, 'we fire double events'), and a step change
    changes both. The second pass finds every slice unchanged but still walks each layer's slice input, the layer
    list's extent and the cursor. Only `current_step` is kept: this viewer's layers are sliced by whole dates (the
    image, the quality overlay) or not along the dates at all (boundary, region), so a point moved within one date
    changes nothing shown."""
    emitter = getattr(viewer.dims.events, "point", None)
    update = getattr(viewer, "_update_layers", None)  # noqa: SLF001 - napari's own layer update
    if emitter is not None and update is not None:
        emitter.disconnect(update)


def status_with_the_paint(viewer):
    """napari's status bar (the layer value under the cursor) follows the pointer as napari has it, in its status
    thread, but not a new date or review item shown under a pointer that did not move: that answer came back after
    the window's paint, and the status bar's new text and layout asked for a second paint (15-30 ms here) for each
    item. Returns what brings the status bar up to date now, in the turn that changed what is shown (napari's own
    `update_status_from_cursor`; a no-op when the pointer is not over the canvas)."""
    window = getattr(viewer, "window", None)
    checker = getattr(getattr(window, "_qt_window", None), "status_thread", None)  # noqa: SLF001 - napari's window
    if checker is None:
        return lambda: None
    with contextlib.suppress(TypeError, ValueError):  # (not connected: nothing to do)
        viewer.cursor.events.position.disconnect(checker.trigger_status_update)
    last: list[tuple | None] = [None]

    def moved(_event=None) -> None:
        where = tuple(viewer.cursor.position[d] for d in viewer.dims.displayed if d < len(viewer.cursor.position))
        if where != last[0]:
            last[0] = where
            checker.trigger_status_update()

    viewer.cursor.events.position.connect(moved)
    return viewer.update_status_from_cursor
