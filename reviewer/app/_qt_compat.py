"""Work around a refcount bug of PySide6 >= 6.12 under Python < 3.12.

These PySide6 wheels assume None, True and False are immortal (as they are from Python 3.12): every
call of a C++ method that returns void (QLabel.setText, setStyleSheet, timer slots...) drops one
reference to None, and every signal emit drops one to True/False, without taking it first. Under
Python 3.11 the count reaches zero after some thousands of calls and the interpreter aborts
("Fatal Python error: none_dealloc" / "bool_dealloc"). The viewer makes such calls on every step.

Until the environment pins a PySide6 that matches the interpreter (or moves to Python >= 3.12), we
make the three singletons practically immortal, as Python 3.12 does: they are never freed anyway.
"""

from __future__ import annotations

import ctypes
import logging
import sys

logger = logging.getLogger(__name__)

_PAD = 1 << 40
_done = False


def immortalize_singletons() -> bool:
    """Raise the reference counts of None, True and False far out of reach (only on Python < 3.12)."""
    global _done
    if _done or sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    for obj in (None, True, False):
        ctypes.c_ssize_t.from_address(id(obj)).value += _PAD
    _done = True
    logger.debug("padded the reference counts of None/True/False (PySide6 refcount bug on Python < 3.12)")
    return True
