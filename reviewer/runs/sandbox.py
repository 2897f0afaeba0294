"""Where a run's code runs and what it sees: the record of the question's site (the altered copy for a pair) as the
providers delivered it, read-only, without the files no agent may see; nothing at all in the closed book.

* local: the sandbox is a temporary folder on this machine and the record is linked into it file by file. Model-
  written code then runs on the host as you, with your file permissions: for tests and small trials only.
* docker: a container of the image built from assets/runs/sandbox/Dockerfile, no network, 4 CPUs and 24 GB by
  default (settings.json), the record bind-mounted read-only at /work/record and the withheld files masked.
* k8s: inspect-k8s-sandbox's Helm chart with assets/runs/sandbox/values.yaml; the records come from a volume
  claim holding the site folders, the question's folder mounted read-only by subPath.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from reviewer.record.catalog import catalog
from reviewer.runs.config import RunError, sandbox_file, settings

SANDBOXES = ("local", "docker", "k8s")
#: the record's folder inside the sandbox's working folder (the prompt says ./record)
RECORD = "record"
WORKDIR = "/work"
#: files of a record folder no agent sees beyond the catalog's withheld products and truth: our own reports
OUR_REPORTS = ("alter_report.json",)


def withheld(name: str) -> bool:
    """True for a file no agent may see: a product the catalog marks as not part of the record (withheld
    references such as Hansen GFC or MCD64A1), a synthetic site's truth, the alteration report of a pair."""
    cat = catalog()
    if name in OUR_REPORTS:
        return True
    match = cat.match(name) or cat.match_alias(name) or cat.match_container(name)
    if match is not None:
        return not match.product.record
    role = cat.companion(name)
    return role is not None and "withheld" in role


@lru_cache(maxsize=64)
def record_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """(shown, withheld) files of a record folder, relative to it, in a stable order (walked once per process: a
    record does not change during a run)."""
    shown, hidden = [], []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            rel = (Path(root) / name).relative_to(folder)
            (hidden if withheld(name) else shown).append(rel)
    return shown, hidden


def link_record(src: Path, workdir: Path) -> int:
    """The local sandbox's ./record: a folder tree of links to the shown files (nothing is copied)."""
    shown, _ = record_files(src)
    dst = workdir / RECORD
    for rel in shown:
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(src / rel)
    dst.chmod(0o555)
    return len(shown)


def _key(folder: Path | None) -> str:
    return "closed-book" if folder is None else hashlib.sha256(str(folder).encode()).hexdigest()[:12]


def docker_compose(folder: Path | None, out_dir: Path) -> Path:
    """A compose file for one record folder (None: the closed book, no data mount), written into out_dir."""
    d = settings()["docker"]
    lines = [
        "# written by reviewer run: one service, no network, the record read-only (masked: withheld files)",
        "services:",
        "  default:",
        f"    image: {d['image']}",
        "    build:",
        f"      context: {sandbox_file('').resolve()}",
        "    init: true",
        "    command: tail -f /dev/null",
        f"    working_dir: {WORKDIR}",
        "    network_mode: none",
        f"    cpus: {d['cpus']}",
        f"    mem_limit: {d['memory']}",
    ]
    if folder is not None:
        _, hidden = record_files(folder)
        lines.append("    volumes:")
        lines.append(f'      - "{folder}:{WORKDIR}/{RECORD}:ro"')
        lines += [f'      - "/dev/null:{WORKDIR}/{RECORD}/{rel.as_posix()}:ro"' for rel in hidden]
    path = out_dir / f"compose-{_key(folder)}.yaml"
    out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def k8s_values(folder: Path | None, out_dir: Path, records_root: Path | None) -> Path:
    """A Helm values file for one record folder: the shipped values.yaml with the folder's subPath of the records
    claim mounted read-only at /work/record (none in the closed book)."""
    import yaml

    doc: dict[str, Any] = yaml.safe_load(sandbox_file("values.yaml").read_text(encoding="utf-8"))
    service = doc["services"]["default"]
    if folder is None:
        service.pop("volumeMounts", None)
        service.pop("volumes", None)
    else:
        if records_root is None:
            raise RunError("--sandbox k8s needs --records-root: the folder the records claim holds")
        try:
            sub = folder.resolve().relative_to(records_root.resolve())
        except ValueError:
            raise RunError(f"{folder} is not under --records-root {records_root}") from None
        for mount in service.get("volumeMounts", []):
            if mount.get("mountPath") == f"{WORKDIR}/{RECORD}":
                mount["subPath"] = sub.as_posix()
    path = out_dir / f"values-{_key(folder)}.yaml"
    out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def check_available(kind: str) -> None:
    """Refuse before any work when the sandbox's engine is not there (rather than 1,518 runs with errors)."""
    import shutil
    import subprocess

    if kind == "docker":
        docker = shutil.which("docker")
        if docker is None:
            raise RunError("--sandbox docker: the docker command is not installed (or use --sandbox local for a trial)")
        if subprocess.run([docker, "info"], capture_output=True, timeout=60).returncode != 0:
            raise RunError("--sandbox docker: the Docker engine is not running (docker info failed)")
    elif kind == "k8s":
        import importlib.util

        if importlib.util.find_spec("k8s_sandbox") is None:
            raise RunError("--sandbox k8s needs inspect-k8s-sandbox: pip install 'earthrecord-reviewer[k8s]'")
        if shutil.which("helm") is None or shutil.which("kubectl") is None:
            raise RunError("--sandbox k8s needs helm and kubectl on PATH, configured for your cluster")


def sample_sandbox(kind: str, folder: Path | None, out_dir: Path, records_root: Path | None = None) -> tuple[str, Any]:
    """The Inspect sandbox spec of a sample whose record is `folder` (None: closed book)."""
    if kind == "local":
        return ("local", None)
    if kind == "docker":
        return ("docker", str(docker_compose(folder, out_dir)))
    if kind == "k8s":
        return ("k8s", str(k8s_values(folder, out_dir, records_root)))
    raise RunError(f"unknown sandbox {kind!r} (one of {', '.join(SANDBOXES)})")
