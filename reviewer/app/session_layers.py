"""The session's layers on napari's canvas: the shown date (a 2-D image layer of the date the session shows, rendered
at display size: `frames.ShownFrame`), its quality overlay, the site boundary, the trajectory's region, and the
canvas's scale bar (the date caption and the date slider are the session's own state and widgets: `caption`,
`qt_caption`). The date is no napari dims axis: another date is the same array rendering it and the layers' refresh.
Layers are made once and handed new data (a new layer, its list entry and its visual's first draw cost ~1 s on the
UI thread)."""

from __future__ import annotations

import numpy as np

from reviewer.app.evidence_prep import REGION_EDGE, REGION_INSIDE, placement, site_boundary_raster
from reviewer.app.frames import ShownFrame
from reviewer.app.session_frames import PLACEHOLDER_GREY, shown_stack
from reviewer.app.session_site import modules_warmed
from reviewer.errors import ReviewerError
from reviewer.record.series import OVERLAY_CODES

IMAGE_LAYER = "stack"
OVERLAY_LAYER = "quality overlay"
BOUNDARY_LAYER = "site boundary"
#: the boundary's raster (`evidence_prep.boundary_raster`): its lines yellow. (Drawn as a Shapes layer of paths,
#: each site's boundary rebuilt napari's meshes and vispy relinked two shader programs: ~30 ms of the UI thread.)
BOUNDARY_COLORS = {None: (0, 0, 0, 0), 0: (0, 0, 0, 0), 1: (1.0, 1.0, 0.0, 1.0)}
REGION_LAYER = "trajectory region"  # the polygon the user draws for the trajectory (Draw polygon)
ITEM_REGION_LAYER = "item region"  # a review item's region, as the pixels its trajectory averages
ITEM_REGION_COLORS = {
    None: (0, 0, 0, 0),
    0: (0, 0, 0, 0),
    REGION_INSIDE: (0.0, 1.0, 1.0, 0.15),  # cyan, as a drawn polygon's face
    REGION_EDGE: (0.0, 1.0, 1.0, 1.0),
}
#: the start-up layer's pixel size (m): a site of this pixel size (Landsat's, the site grid's default) opens without
#: napari's scale setter (~20-60 ms)
PLACEHOLDER_RESOLUTION = 30.0

OVERLAY_COLORS = {
    None: (0, 0, 0, 0),
    0: (0, 0, 0, 0),
    OVERLAY_CODES["cloud"]: (1.0, 1.0, 1.0, 0.85),
    OVERLAY_CODES["shadow"]: (0.25, 0.0, 0.45, 0.85),
    OVERLAY_CODES["snow"]: (0.2, 0.9, 1.0, 0.85),
    OVERLAY_CODES["fill"]: (1.0, 0.0, 0.8, 0.85),
}


class CanvasLayers:
    """The layers one StackSession (`s`) shows in its viewer; the session decides what they show."""

    def __init__(self, session) -> None:
        self.s = session
        self.viewer = session.viewer
        self.image_layer = None
        self.overlay_layer = None  # the quality overlay's layer while it is on
        self.overlay_hidden = None  # ... and while it is off: hidden, kept for the next O (`drop_overlay`)
        self.boundary_layer = None
        self.region_layer = None
        self.item_region_layer = None
        self._warm_layers = False  # the image layer is still the start-up placeholder (see `warm_canvas`)
        self._canvas_dressed = False
        #: the launch shows the scale bar once the first imagery is on screen (`release_overlays`): made and first
        #: drawn before it (its visual and shaders), it cost part of ~0.1 s
        self.overlays_held = False
        #: the site's boundary waits for the modules of its shapes layer (`modules_in`): making the first shapes
        #: layer imports pandas (~0.5 s), which the first site's imagery should not wait for
        self.boundary_waiting = False

    @property
    def placeholder(self) -> bool:
        """The image layer is still the start-up placeholder (unseen)."""
        return self._warm_layers

    def drop_stack(self) -> None:
        """No date matches the filters: no image or overlay layer."""
        self.remove_layer(IMAGE_LAYER)
        self.remove_layer(OVERLAY_LAYER)
        self.image_layer = self.overlay_layer = self.overlay_hidden = None
        self._warm_layers = False
        self.show_overlays()

    def drop_overlay(self) -> None:
        """The quality overlay off: its layer hidden (napari slices no hidden layer) and kept, so the next O only
        shows it again. (Removed and made anew, each O made a Labels layer -- napari's list entry, layer controls and
        vispy visual: ~0.15-0.3 s of the UI thread's CPU, 0.6 s blocked on a whole Landsat scene, 1.28 s under load.)
        Its eye in napari's layer list turns the overlay on and off as O does (`_on_overlay_eye`)."""
        layer, self.overlay_layer = self.overlay_layer, None
        if layer is not None and layer in self.viewer.layers:
            self.overlay_hidden = layer
            layer.visible = False

    def _on_overlay_eye(self, event=None) -> None:
        """The overlay layer's eye in napari's layer list clicked: the session's overlay follows (the Stack dock's
        check box, O)."""
        layer = self.overlay_layer or self.overlay_hidden
        if layer is not None and layer.visible != self.s.state.overlay:
            self.s.state.overlay = layer.visible

    def dress_canvas(self) -> None:
        """The scale bar on napari's canvas: set when the session first shows something of its own (a site, the app's
        start-up layers), never merely by making the session (a plugin dock in plain napari)."""
        if self._canvas_dressed or self.overlays_held:
            return
        self._canvas_dressed = True
        bar = self.viewer.canvas.overlays.scale_bar
        bar.visible, bar.box = True, True

    def warm_canvas(self) -> None:
        """Make the image layer before any site opens, drawn once unseen (opacity 0), so opening a site only hands it
        data: the first image layer (its layer controls, its visual and the first compile of its shaders on a
        software-GL canvas) held the UI ~1 s in the open. (The boundary's shapes layer is made once its modules are
        in: `modules_in`.)"""
        if self.image_layer is not None or self.s.index is not None:
            return
        self.dress_canvas()
        self.image_layer = self.viewer.add_image(
            np.full((16, 16, 3), PLACEHOLDER_GREY, np.uint8),
            rgb=True,
            name=IMAGE_LAYER,
            scale=(PLACEHOLDER_RESOLUTION, PLACEHOLDER_RESOLUTION),
            units=("m", "m"),
            contrast_limits=(0, 255),
            cache=False,
            opacity=0.0,
        )
        self.viewer.layers.move(self.viewer.layers.index(self.image_layer), 0)
        # nothing of the placeholder said before a site: no layer active (napari's status line read its grey
        # value under the cursor) and no scale bar (it measured the 16 px placeholder: "5 m")
        self.viewer.layers.selection.clear()
        self._warm_layers = True
        # the scale bar drawn unseen, so its shaders compile now; `show_overlays` shows it with the first site
        self._overlays_unseen()

    def _overlays_unseen(self) -> None:
        """The scale bar drawn unseen before the first site (it would measure the 16 px placeholder)."""
        if self._canvas_dressed:
            self.viewer.canvas.overlays.scale_bar.opacity = 0.0

    def release_overlays(self) -> None:
        """The scale bar `overlays_held` kept back: made now, seen if a site is shown."""
        if not self.overlays_held:
            return
        self.overlays_held = False
        self.dress_canvas()
        if self._warm_layers or self.image_layer is None:  # no site yet: unseen until one shows (`unveil`)
            self._overlays_unseen()
        else:
            self.show_overlays()

    def scale(self) -> tuple[float, float]:
        """A site pixel's (row, col) size on the ground in metres (`Site.cell_m`: a lon/lat grid's degrees measured on
        the ground), so napari's scale bar reads metres and the image has its ground aspect."""
        x_m, y_m = self.s.index.site.cell_m if self.s.index else (1.0, 1.0)
        return (float(y_m), float(x_m))

    def view_scale(self) -> tuple[float, float]:
        """The image and overlay layers' scale: (row, col) in metres of a pixel read at display size."""
        if self.s.stack is None or not len(self.s.stack):
            return self.scale()
        (h, w), (hv, wv) = self.s.stack.grid.shape, shown_stack(self.s.stack).grid.shape
        ry, rx = self.scale()
        return (ry * h / hv, rx * w / wv)

    def view_translate(self) -> tuple[float, float]:
        """A pixel read at display size is centred on the site pixels it covers (napari centres pixel 0 on 0)."""
        s, (ry, rx) = self.view_scale(), self.scale()
        return ((s[0] - ry) / 2, (s[1] - rx) / 2)

    def shown_index(self) -> int:
        """The date shown (`state.current`), within the stack."""
        return int(np.clip(self.s.state.current, 0, len(self.s.stack) - 1)) if self.s.stack is not None else 0

    def show_date(self, i: int) -> None:
        """Date `i` of the stack shown: the image layer's array (and the overlay's, while it is on) renders that date
        and the layer re-slices itself only (its extent unchanged): no napari data setter, no dims, no other layer
        sliced."""
        for layer in (self.image_layer, self.overlay_layer):
            if layer is None or layer not in self.viewer.layers or not isinstance(layer.data, ShownFrame):
                continue
            if layer.data.date != i:
                layer.data.show(layer.data.frames, i)
                layer.refresh(extent=False)

    def frame_read(self, layer) -> None:
        """The frame `layer` showed a placeholder for is read: the layer renders its date again."""
        if layer is not None and layer in self.viewer.layers and isinstance(layer.data, ShownFrame):
            layer.data.forget()
            layer.refresh(extent=False)

    def show_image(self, *, reslice: bool = True) -> bool:
        """Show the shown date of the stack in the image layer: frames of the same display shape (another stretch,
        composite, filter, or another site of the same display grid) only swap what the layer's array renders and
        the layer re-slices once; napari's data setter runs only when the display grid's shape changed, its scale
        setters only when the pixel size did. True when the layer was sliced (`reslice`, or by napari's setters)."""
        frames, i = self.s.rgb_array(), self.shown_index()
        layer = self.image_layer
        if layer is not None and layer in self.viewer.layers:
            old = layer.data
            if isinstance(old, ShownFrame) and old.fits(frames) and self.placed(layer):
                old.show(frames, i)
                if reslice:
                    layer.refresh(extent=False)
                sliced = reslice
            else:
                if isinstance(old, ShownFrame) and old.fits(frames):
                    old.show(frames, i)  # another pixel size on the same display grid: only the scale setters
                else:
                    layer.data = ShownFrame(frames, i)  # (another display grid: napari's data setter, once)
                self.scale_image()
                if self._warm_layers:
                    self.unveil()
                sliced = True
        else:
            sliced = True
            first = self.image_layer is None
            self.image_layer = self.viewer.add_image(
                ShownFrame(frames, i),
                rgb=True,
                name=IMAGE_LAYER,
                scale=self.view_scale(),
                translate=self.view_translate(),
                units=("m", "m"),
                contrast_limits=(0, 255),
                cache=False,
            )
            self.viewer.layers.move(self.viewer.layers.index(self.image_layer), 0)
            self.show_overlays()
            if first:
                self.viewer.reset_view()
        if not self._warm_layers:  # (the placeholder's: when it is shown)
            self.select_image()
        return sliced

    def placed(self, layer) -> bool:
        """`layer` has the shown stack's pixel size and placement (`view_scale`, `view_translate`)."""
        return (tuple(layer.scale), tuple(layer.translate)) == (self.view_scale(), self.view_translate())

    def scale_image(self) -> None:
        """The image layer in the open site's pixel size (napari's setter costs ~100 ms even when nothing changes;
        each re-slices the layer: `ShownFrame` keeps the frame it rendered, so the date is not rendered again)."""
        layer, scale, translate = self.image_layer, self.view_scale(), self.view_translate()
        if layer is not None and layer in self.viewer.layers and tuple(layer.scale) != scale:
            layer.scale = scale
        if layer is not None and layer in self.viewer.layers and tuple(layer.translate) != translate:
            layer.translate = translate

    def unveil(self) -> None:
        """The start-up placeholder (`warm_canvas`) took the first site: fit the view to it, then show it."""
        layer = self.image_layer
        if not self._warm_layers or layer is None or layer not in self.viewer.layers:
            return
        self._warm_layers = False
        self.viewer.reset_view()
        layer.opacity = 1.0
        self.viewer.layers.selection.active = layer
        self.show_overlays()

    def show_overlays(self) -> None:
        """The scale bar seen: unseen while only the start-up placeholder was there (it measured its 16 px)."""
        if self.overlays_held:
            return
        bar = self.viewer.canvas.overlays.scale_bar
        bar.visible, bar.opacity = True, 1.0

    def show_overlay(self) -> None:
        from napari.utils.colormaps import DirectLabelColormap

        codes, i = self.s.overlay_array(), self.shown_index()
        scale = self.view_scale()
        layer = self.overlay_layer or self.overlay_hidden
        self.overlay_hidden = None
        if layer is not None and layer in self.viewer.layers:
            self.overlay_layer = layer
            old = layer.data  # (a hidden layer takes its data unsliced; shown again, it slices once)
            if isinstance(old, ShownFrame) and old.fits(codes):
                old.show(codes, i)
                if layer.visible:
                    layer.refresh(extent=False)
            else:
                layer.data = ShownFrame(codes, i)
            if (tuple(layer.scale), tuple(layer.translate)) != (scale, self.view_translate()):
                layer.scale, layer.translate = scale, self.view_translate()
            if not layer.visible:  # (napari's setter slices even when it was visible already)
                layer.visible = True
        else:
            self.overlay_layer = self.viewer.add_labels(
                ShownFrame(codes, i),
                name=OVERLAY_LAYER,
                scale=scale,
                translate=self.view_translate(),
                units=("m", "m"),
                opacity=0.7,
                colormap=DirectLabelColormap(color_dict=OVERLAY_COLORS),
                cache=False,
            )
            self.overlay_layer.events.visible.connect(self._on_overlay_eye)
            self.select_image()

    def modules_in(self) -> None:
        """`warm_imports` is done: the boundary that waited for its layer's modules is drawn."""
        if self.boundary_waiting:
            self.boundary_waiting = False
            if self.s.index is not None:
                self.draw_boundary()

    def draw_boundary(self) -> None:
        """The site's boundary, its lines rasterized (`site_boundary_raster`, made by the worker that opened an item's
        site) into a Labels layer: another site's boundary is one texture upload. The layer of the site shown before
        takes it (removing it and adding another cost ~1.5 s on the UI thread: a new layer, its list entry and its
        visual's first draw). The first boundary waits for `modules_in`, after the first imagery."""
        if self.boundary_layer is None and not modules_warmed():
            self.boundary_waiting = True
            return
        old, self.boundary_layer = self.boundary_layer, None
        if old is not None and old not in self.viewer.layers:
            old = None
        site = self.s.index.site
        if site.boundary_path is None:
            self.remove_layer(BOUNDARY_LAYER)
            return
        try:
            rings = site.boundary_lines()
        except ReviewerError as exc:  # Site wraps reader and reprojection failures in SiteError
            self.remove_layer(BOUNDARY_LAYER)
            self.s.reporter.error(exc, context="site boundary not drawn")
            return
        h, w = site.shape
        inside = [
            r
            for r in rings
            if len(r) and (r[:, 0].max() >= 0 and r[:, 0].min() <= h and r[:, 1].max() >= 0 and r[:, 1].min() <= w)
        ]
        if not inside:
            self.remove_layer(BOUNDARY_LAYER)
        if rings and not inside:
            self.s.reporter.error(
                ReviewerError(
                    "the boundary does not overlap the site grid (is its CRS right?); not drawn",
                    path=site.boundary_path,
                )
            )
            return
        if not inside:
            return
        raster = site_boundary_raster(site)  # (made by the worker that opened an item's site)
        scale, translate = placement(site.shape, raster.shape, self.scale())  # its pixel edges on the site's
        if old is None:
            from napari.utils.colormaps import DirectLabelColormap

            old = self.viewer.add_labels(
                raster.copy(),
                name=BOUNDARY_LAYER,
                scale=scale,
                translate=translate,
                units=("m", "m"),
                colormap=DirectLabelColormap(color_dict=BOUNDARY_COLORS),
            )
        elif old.data.shape != raster.shape:
            old.data = raster.copy()
        elif not np.array_equal(old.data, raster):
            old.data[...] = raster  # in place: napari re-slices the same array
            old.refresh()
        if tuple(old.scale) != scale:
            old.scale = scale
        if tuple(old.translate) != translate:
            old.translate = translate
        self.boundary_layer = old
        self.select_image()

    def select_image(self) -> None:
        """The image layer active, when it is in the viewer: a plain-napari user may have deleted it (napari refuses
        to select a layer not in its list, "Cannot select item that is not in list")."""
        layer, selection = self.image_layer, self.viewer.layers.selection
        if layer is not None and selection.active is not layer and layer in self.viewer.layers:
            selection.active = layer

    def remove_layer(self, name: str) -> None:
        if name in self.viewer.layers:
            self.viewer.layers.remove(name)

    def region_shapes_layer(self):
        """The Shapes layer where the user draws a polygon for the trajectory (created on demand)."""
        if self.region_layer is None or self.region_layer not in self.viewer.layers:
            self.region_layer = self.viewer.add_shapes(
                name=REGION_LAYER,
                ndim=2,
                scale=self.scale(),
                units=("m", "m"),
                edge_color="cyan",
                face_color=[0, 1, 1, 0.15],
                edge_width=max(self.s.index.site.shape) / 200.0 if self.s.index else 1.0,
            )
        return self.region_layer

    def show_item_region(self, raster: np.ndarray | None) -> None:
        """A review item's region (`evidence_prep.region_raster` at the display grid; None: none) in a Labels layer
        whose array is rewritten in place and re-sliced: another region is one texture upload. Its pixels lie on the
        image's (`placement`, as `view_scale` and `view_translate`): on a site wider than VIEW_PX, drawn at the site's
        full resolution (58.8 M px on a whole Landsat scene), it held the UI thread ~0.74 s. (Drawn as a Shapes
        polygon, each new region rebuilt napari's meshes and vispy relinked two shader programs: ~20 ms of the UI
        thread under software GL.) A polygon the user drew for the trajectory is cleared: the canvas shows the item's
        own region."""
        drawn = self.region_layer
        if drawn is not None and drawn in self.viewer.layers and len(drawn.data):
            drawn.data = []
        layer = self.item_region_layer
        if layer is not None and layer not in self.viewer.layers:
            layer = self.item_region_layer = None
        if raster is None:
            if layer is not None and layer.data.any():
                layer.data[...] = 0
                layer.refresh()
            return
        site_shape = self.s.index.site.shape if self.s.index is not None else raster.shape
        scale, translate = placement(site_shape, raster.shape, self.scale())
        if layer is None:
            from napari.utils.colormaps import DirectLabelColormap

            layer = self.item_region_layer = self.viewer.add_labels(
                raster.copy(),
                name=ITEM_REGION_LAYER,
                scale=scale,
                translate=translate,
                units=("m", "m"),
                colormap=DirectLabelColormap(color_dict=ITEM_REGION_COLORS),
            )
        elif layer.data.shape != raster.shape:  # another site's grid
            layer.data = raster.copy()
        elif not np.array_equal(layer.data, raster):
            layer.data[...] = raster  # in place: napari re-slices the same array
            layer.refresh()
        if tuple(layer.scale) != scale:  # (another site)
            layer.scale = scale
        if tuple(layer.translate) != translate:
            layer.translate = translate
        self.select_image()
