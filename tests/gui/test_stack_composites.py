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
