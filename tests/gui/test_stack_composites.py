"""The Stack dock's composite list on a site whose products cannot make every composite: the GUI demo site has
Landsat, Sentinel-2, MODIS and VIIRS NDVI but no ERA5-Land and no land-surface temperature, so its two ERA5-Land
composites and LST are greyed out, each with a tooltip saying no scene of the site has it (in the catalogue's words, not
the data's band names such as "temperature_2m"); the others stay offered."""

from __future__ import annotations

import pytest
from qtpy.QtCore import Qt

pytestmark = pytest.mark.gui


def test_the_composites_the_site_cannot_make_are_greyed_out_with_the_band_missing(opened, qtbot):
    combo = opened.controls.composite_combo
    model = combo.model()
    offered, greyed = [], {}
    for i in range(combo.count()):
        item = model.item(i)
        if item.isEnabled():
            offered.append(combo.itemData(i))
        else:
            greyed[combo.itemData(i)] = combo.itemData(i, Qt.ToolTipRole)
    assert offered == ["truecolor", "swir", "ndvi", "ndwi", "mndwi", "nbr"]
    assert greyed == {
        "lst": "Land surface temperature (day): no scene of this site has it",
        "t2m": "Air temperature at 2 m (ERA5-Land): no scene of this site has it",
        "precipitation": "Total precipitation (ERA5-Land): no scene of this site has it",
    }
    # the keyboard steps over them: from NBR, Down stays on NBR (the composites below it are all greyed out)
    combo.setCurrentIndex(combo.findData("nbr"))
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key_Down)
    assert combo.currentData() == "nbr" and opened.session.state.composite == "nbr"


def test_the_stretch_shown_again_repaints_none_of_its_boxes(opened, qtbot):
    """Each review item shows its stretch in the Stack dock (`show_stack`). A stretch value that reads as before
    is left alone: Qt repainted a spin box, its frame and the group around it at every setValue, even of the value
    it held (the gamma's 1.000 at every item). A value that changed is shown and its box repainted."""
    from qtpy.QtCore import QEvent, QObject

    app, s = opened, opened.session
    c = app.controls
    app.docks["Stack"].raise_()
    qtbot.wait(100)
    _name, lo, hi, gamma = c.stretch_rows[0]
    painted: list[QObject] = []

    class Paints(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.Paint:
                painted.append(obj)
            return False

    paints = Paints()
    boxes = [w for row in c.stretch_rows for w in row[1:] if w.isVisible()]
    for w in boxes:
        w.installEventFilter(paints)
    c.show_stack(s.stack)  # the same stack and stretch, as for the next item of the same index and stretch
    qtbot.wait(100)
    assert painted == []
    low, gam = lo.value(), gamma.value()
    s.set_stretch(s.state.stretch.with_channel(0, gamma=1.5))
    qtbot.waitUntil(lambda: gamma in painted, timeout=5000)
    assert gamma.value() == 1.5 and gamma.text() == "1.500" and gam != 1.5
    assert lo.value() == low and lo not in painted  # the other values as they were, not repainted
