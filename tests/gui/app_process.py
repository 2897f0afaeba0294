"""The real app (`main.py --db STORE --user NAME`) in a process of its own under Xvfb, driven by real key
presses, for tests of several processes on one store. The child prints READY once its window is active,
then for each `key K` line on its stdin presses K on the window's focus widget and prints the review dock's
"saved: ... (decision N)" line once it shows; `quit` closes the window as a user would."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

DRIVER = textwrap.dedent(
    r"""
    import queue, re, sys, threading
    from napari.qt import get_qapp
    from qtpy.QtCore import QTimer, Qt
    from qtpy.QtTest import QTest
    from qtpy.QtWidgets import QApplication, QLabel, QMainWindow

    SAVED = re.compile(r"saved: .*\(decision \d+\)")
    commands = queue.Queue()
    threading.Thread(target=lambda: [commands.put(x.strip()) for x in sys.stdin], daemon=True).start()
    get_qapp()
    state = {"window": None, "last": None, "waiting": False}

    def window():
        shown = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMainWindow) and w.isVisible()]
        return shown[0] if shown else None

    def saved_line(win):
        for label in win.findChildren(QLabel):
            found = SAVED.search(label.text()) if label.isVisible() else None
            if found:
                return found.group(0)
        return None

    def tick():
        win = window()
        if win is None:
            return
        if state["window"] is None:
            win.activateWindow()
            if win.isActiveWindow():
                state["window"] = win
                print("READY", flush=True)
            return
        if state["waiting"]:
            line = saved_line(win)
            if line and line != state["last"]:
                state["last"], state["waiting"] = line, False
                print("SAVED", line, flush=True)
            return
        if state.get("pending") is None:
            try:
                state["pending"] = commands.get_nowait()
            except queue.Empty:
                return
        command = state["pending"]
        if command == "quit":
            win.close()
            return
        if not win.isActiveWindow():  # another app's window took the focus: click back into this one first
            win.activateWindow()
            return
        state["pending"] = None
        QTest.keyClick(QApplication.focusWidget() or win, getattr(Qt, "Key_" + command.split()[1]))
        state["waiting"] = True

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(100)
    import main
    sys.exit(main.main(sys.argv[1:]))
    """
)

_DECISION = re.compile(r"saved: (\w+).* on \S+/(\S+) \(decision (\d+)\)")


class AppProcess:
    """One person's app on a store, in a child process."""

    def __init__(self, db: Path, user: str, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "REVIEWER_USER": "",
            "PYTHONUNBUFFERED": "1",
            "XDG_CONFIG_HOME": str(home / "config"),  # the app's own state (recent sites) never in the user's
            "XDG_DATA_HOME": str(home / "data"),
        }
        self.user = user
        self.proc = subprocess.Popen(
            [sys.executable, "-c", DRIVER, "--db", str(db), "--user", user],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=REPO,
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=lambda: [self.lines.put(x.rstrip("\n")) for x in self.proc.stdout], daemon=True).start()
        self.expect("READY")

    def expect(self, prefix: str, timeout: float = 120.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            self.seen.append(line)
            if line.startswith(prefix):
                return line
        raise AssertionError(f"{self.user}'s app never printed {prefix!r}; it printed:\n" + "\n".join(self.seen[-40:]))

    def press(self, key: str) -> tuple[str, str, int]:
        """Press a decision key; (verdict, question id, decision number) as the dock said it was saved."""
        self.proc.stdin.write(f"key {key}\n")
        self.proc.stdin.flush()
        found = _DECISION.search(self.expect("SAVED"))
        assert found, self.seen[-1]
        return found.group(1), found.group(2), int(found.group(3))

    def quit(self) -> None:
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        try:
            assert self.proc.wait(90) == 0, "\n".join(self.seen[-40:])
        finally:
            self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
