"""The canvas under the pointer for a StackSession: the status line (date, sensor, scene, tier, clear %, the values
under the cursor) and a click (not a drag) on the canvas, which picks the trajectory's pixel."""

from __future__ import annotations

import numpy as np

from reviewer.record.stretch import composites, is_single


class CanvasPointer:
    """The pointer over the session `s`'s canvas; the session's `status` and `pixel_clicked` say what it finds."""

    def __init__(self, session) -> None:
        self.s = session
        self._pointer: tuple[int, int] | None = None  # the grid pixel under the cursor
        self._last_status = ""

    def refresh(self) -> None:
        """The status line again for the pixel under a still cursor (another date, a frame read)."""
        self.emit_status(self._pointer)

    def frame_values(self, i: int | None = None) -> np.ndarray | None:
        """Physical channels of a frame already read, at display size (None when not yet in memory: never blocks)."""
        if self.s.stack is None:
            return None
        i = self.s.state.current if i is None else i
        if not 0 <= i < len(self.s.stack):
            return None
        return self.s.frames.values(self.s.stack, self.s.state.composite, i)

    def world_to_pixel(self, position) -> tuple[int, int] | None:
        if self.s.index is None:
            return None
        x_m, y_m = self.s.index.site.cell_m  # the layers' scale: a pixel's ground size (`scale`)
        r, c = int(np.floor(position[-2] / y_m + 0.5)), int(np.floor(position[-1] / x_m + 0.5))
        h, w = self.s.index.site.shape
        if 0 <= r < h and 0 <= c < w:
            return r, c
        return None

    def status_text(self, pixel: tuple[int, int] | None = None) -> str:
        s = self.s.current_scene
        if s is None:
            return "no site open" if self.s.index is None else "no scene matches the filters"
        clear = "-" if s.clear_fraction is None else f"{100 * s.clear_fraction:.0f}%"
        parts = [s.date.isoformat(), s.label, s.scene_id, f"tier {s.tier or '-'}", f"clear {clear}"]
        if pixel is not None:
            values = self.frame_values()
            r, c = pixel
            if values is not None:  # the pixel read at display size that covers site pixel (r, c)
                (h, w), (hv, wv) = self.s.stack.grid.shape, values.shape[1:]
                r, c = min(hv - 1, r * hv // h), min(wv - 1, c * wv // w)
                spec = composites()[self.s.state.composite]
                names = [spec["label"]] if is_single(self.s.state.composite) else spec["bands"]
                vals = ", ".join(
                    f"{n} {'masked' if not np.isfinite(v) else f'{v:.4f}'}"
                    for n, v in zip(names, values[:, r, c], strict=False)
                )
                parts.append(f"({pixel[0]}, {pixel[1]}) {vals}")
            else:
                parts.append(f"({r}, {c}) reading...")
        return "  |  ".join(parts)

    def emit_status(self, pixel) -> None:
        text = self.status_text(pixel)
        if text != self._last_status:
            self._last_status = text
            self.s.status.emit(text)

    def on_mouse_move(self, viewer, event) -> None:
        self._pointer = self.world_to_pixel(event.position)
        self.emit_status(self._pointer)

    def on_mouse_press(self, viewer, event):
        """A click (press and release without moving) picks the trajectory pixel; a drag pans as usual."""
        if event.button != 1 or self.s.index is None:
            return
        pixel = self.world_to_pixel(event.position)
        yield
        moved = False
        while event.type == "mouse_move":
            moved = True
            yield
        if (
            not moved
            and pixel is not None
            and viewer.layers.selection.active
            in (self.s.image_layer, None, self.s.overlay_layer, self.s.boundary_layer)
        ):
            self.s.pixel_clicked.emit(*pixel)
