"""The correction form by keys (issue 27, keyboard-complete): a save it refuses says why and puts the keyboard in
the field to mend. It stayed in the field left, so the reason typed next went into the year ("2015scar is 2015")
and the form answered with Python's "invalid literal for int() with base 10"."""

from __future__ import annotations

import pytest
from qtpy.QtCore import Qt
from qtpy.QtWidgets import QApplication

pytestmark = pytest.mark.gui

QUESTION = {
    "id": "q17",
    "text": "Which year in 2004-2024 shows the largest burn scar, and what is its area in km2?",
    "fields": [{"name": "year", "type": "year"}, {"name": "area", "type": "number", "unit": "km2"}],
    "reference": {"year": 2014, "area": 0.2718},
    "reference_range": {"area": [0.2582, 0.2854]},
}


def test_a_refused_save_puts_the_keyboard_where_the_form_needs_it(qtbot):
    from reviewer.app.qt_review_forms import CorrectionForm

    form = CorrectionForm(None, QUESTION)
    qtbot.addWidget(form)
    sent = []
    form.submitted.connect(lambda corr, why, code: sent.append((corr, why)))
    form.show()
    form.activateWindow()
    qtbot.waitUntil(form.isActiveWindow, timeout=5000)
    year = form.edits[("reference", "year")][0]
    year.setFocus()
    qtbot.waitUntil(year.hasFocus, timeout=2000)

    def typed(text: str) -> None:
        qtbot.keyClicks(QApplication.focusWidget(), text)
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key_Return)

    year.selectAll()
    typed("20x5")  # a typo: named, and the keyboard stays in the year
    assert form.problem.text() == "year: '20x5' is not a year" and year.hasFocus() and not sent
    year.selectAll()
    typed("2015")  # no reason given: said, and the keyboard goes to the reason field
    assert form.problem.text().startswith("say why") and form.why.hasFocus() and not sent
    typed("the scar is in the 2015 image")
    assert sent == [({"reference": {"year": 2015}}, "the scar is in the 2015 image")]
