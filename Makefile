# Two commands (README Quick start): `make demo` opens the app on the demo site; `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Debian packages napari + PySide6 need for a real OpenGL canvas on a virtual screen (DESIGN.md section 9);
# chromium renders the HTML report in a test, as a reader sees it.
SYS_PKGS := xvfb xauth libgl1-mesa-dri libegl1 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 \
	libxcb-keysyms1 libxcb-shape0 libxcb-xinerama0 libxcb-randr0 libxcb-render-util0 libxcb-image0 \
	libdbus-1-3 libfontconfig1 chromium
XVFB := xvfb-run -a -s "-screen 0 1600x1000x24"

.PHONY: setup sysdeps demo test bench lint clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip setuptools wheel
	$(VENV)/bin/pip install -q -e '.[test]'
	touch $@

setup: $(VENV)/.installed

sysdeps:
	@missing=""; for p in $(SYS_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing system packages:$$missing"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# Opens the app on the embedded demo site (generated once into the user cache directory).
# Without a display it renders the demo pair to out/demo_pair.png and runs the app on a virtual screen.
demo: setup sysdeps
	$(VENV)/bin/reviewer demo --render out/demo_pair.png
	@if [ -n "$$DISPLAY" ] || [ -n "$$WAYLAND_DISPLAY" ]; then \
		$(PY) main.py --demo; \
	else \
		echo "no display: opening the app on a virtual screen and saving a screenshot to out/demo_app.png"; \
		$(XVFB) $(PY) main.py --demo --screenshot out/demo_app.png; \
	fi

test: setup sysdeps
	$(XVFB) $(VENV)/bin/pytest -q

bench: setup sysdeps
	$(PY) tests/bench/bench_record.py
	@for b in tests/bench/bench_scoring.py tests/bench/bench_viewer.py tests/bench/bench_review.py tests/bench/bench_agreement.py tests/bench/bench_cli.py tests/bench/bench_drafting.py tests/bench/bench_review_dock.py tests/bench/bench_napari_floor.py tests/bench/bench_generate.py tests/bench/bench_failures.py tests/bench/bench_audit.py tests/bench/bench_quality.py tests/bench/bench_runs.py tests/bench/bench_launch.py; do [ -f $$b ] && $(XVFB) $(PY) $$b || true; done
	$(PY) tests/bench/bench_fullsize.py --generate  # issue 31's rows: whole scenes built once in the bench cache; generate ~4 min

lint: setup
	$(VENV)/bin/ruff check reviewer plugins tests main.py
	$(VENV)/bin/ruff format --check reviewer plugins tests main.py

clean:
	rm -rf $(VENV) out .pytest_cache
