"""Generation over many sites as dask.distributed tasks: a LocalCluster by default, or a running scheduler.

Each site is one task writing its own bank folder OUT/<site folder name>/ (written whole or not at all, so a
folder with its generation_report.json is a finished site: a second run skips it, which is how a cancelled
or failed run resumes). The tasks report progress and look for a cancel request through two small files in
OUT/.generate/ (the workers of a cluster share OUT with the client anyway: they write the banks there). A
site that fails is reported with its error; the others go on. What a site writes does not depend on the
number of workers or the order they finish: every site is generated alone, with its own seed.

A large site (SPLIT_ABOVE Landsat scene-megapixels, or any site when there are fewer sites than workers) is
split too: its task hands its Landsat years, runs of MODIS/VIIRS composites and per-pixel trend blocks to the
cluster as tasks (reviewer.bank.tasks) and takes their results back in order, so its bank is the same bytes.
Sites go to the cluster heaviest first, so the last to finish is a small one.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reviewer.bank.options import GenerationOptions
from reviewer.errors import BankError, Cancelled, ReviewerError

#: the folder of OUT where running tasks leave progress and find a cancel request
STATE_DIR = ".generate"
CANCEL = "cancel"
#: a finished site's folder holds this file (written last by generate, with the bank)
DONE_FILE = "generation_report.json"

#: progress of a run: ({site name: fraction 0-1}, message)
ManyProgress = Callable[[dict[str, float], str], None]


@dataclass
class SiteOutcome:
    """What became of one site: done (generated now), skipped (finished before), failed or cancelled."""

    site_dir: str
    name: str
    out: str
    status: str
    summary: str = ""
    error: str | None = None
    peak_memory: int = 0


@dataclass
class ManyReport:
    out_dir: str
    sites: list[SiteOutcome] = field(default_factory=list)
    seconds: float = 0.0
    workers: str = ""

    def count(self, status: str) -> int:
        return sum(1 for s in self.sites if s.status == status)

    def lines(self) -> list[str]:
        out = []
        for s in self.sites:
            if s.status == "done":
                out.append(s.summary)
            elif s.status == "skipped":
                out.append(f"{s.name}: finished before, not recomputed ({s.out})")
            elif s.status == "failed":
                out.append(f"{s.name}: FAILED: {s.error}")
            else:
                out.append(f"{s.name}: cancelled (run again to resume)")
        out.append(
            f"{len(self.sites)} sites: {self.count('done')} generated, {self.count('skipped')} finished before, "
            f"{self.count('failed')} failed, {self.count('cancelled')} cancelled in {self.seconds:.1f} s "
            f"({self.workers}); banks in {self.out_dir}"
        )
        return out


def site_names(site_dirs: list[str | Path]) -> list[str]:
    """Each site's output folder name (its folder's name); two sites of one name are refused."""
    names = [Path(d).resolve().name for d in site_dirs]
    seen: dict[str, str] = {}
    for d, n in zip(site_dirs, names, strict=True):
        if n in seen:
            raise BankError(f"two sites would write to the same folder {n!r}: {seen[n]} and {d}", field="site_dir")
        seen[n] = str(d)
    return names


def finished(out: str | Path) -> bool:
    return (Path(out) / DONE_FILE).is_file()


def run_site(
    site_dir: str,
    out: str,
    state: str,
    options: GenerationOptions,
    *,
    split: str = "never",
    progress: Callable[[float, str], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """One site's generation (the dask task): an outcome dict, never an exception, so one site's failure does
    not stop the run. Progress goes to STATE/<name>.json (and to `progress`); the task stops at the next scene
    once STATE/cancel exists (or, run in this process, once `stop()` is true)."""
    from reviewer.bank.generate import generate

    name = Path(out).name
    prog = Path(state) / f"{name}.json"
    last = [0.0]

    def to_file(fraction: float, message: str) -> None:
        now = time.monotonic()
        if now - last[0] < 0.2 and fraction < 1.0:
            return
        last[0] = now
        tmp = prog.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"fraction": fraction, "message": message}))
        os.replace(tmp, prog)

    def cancel() -> bool:
        return (stop is not None and stop()) or (Path(state) / CANCEL).exists()

    def both(fraction: float, message: str) -> None:
        to_file(fraction, message)
        if progress is not None:
            progress(fraction, message)

    try:
        if cancel():
            raise Cancelled("generation cancelled")
        runner = _TaskClient() if split != "never" and _on_worker() else None
        options = replace(options, split_above=0.0 if split == "always" else SPLIT_ABOVE)
        try:
            report = generate(site_dir, out, options, progress=both, cancel=cancel, runner=runner)
        finally:
            if runner is not None:
                runner.close()
    except Cancelled:
        return {"status": "cancelled"}
    except ReviewerError as exc:
        return {"status": "failed", "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - a site's unexpected error is its outcome; the others go on
        return {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
    to_file(1.0, report.summary())
    return {"status": "done", "summary": report.summary(), "peak_memory": report.peak_memory}


#: a site of at least this many Landsat scene-megapixels (scenes x pixels / 1e6) read on a cluster has its years
#: split into tasks (250 px x 25 scenes a year over 1984-2026 is about 66; the demo site at 100 px about 2.5)
SPLIT_ABOVE = 50.0


class _TaskClient:
    """The cluster's client as seen from a site's task, taken only when the site splits its years into tasks:
    then the task steps out of its worker's thread pool while it waits for them (dask's secede), and back in
    at close (rejoin). A site that does not split keeps its worker's slot, so no second site starts there."""

    def __init__(self) -> None:
        self._client = None

    def _get(self):
        if self._client is None:
            from distributed import get_client, secede

            self._client = get_client()
            secede()
        return self._client

    def submit(self, *args, **kwargs):
        return self._get().submit(*args, **kwargs)

    def cancel(self, futures) -> None:
        self._get().cancel(futures)

    def scheduler_info(self):
        return self._get().scheduler_info()

    def close(self) -> None:
        if self._client is not None:
            from distributed import rejoin

            rejoin()
            self._client = None


def _on_worker() -> bool:
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return False
    return True


def _folder_bytes(folder: str | Path) -> int:
    """Bytes of the files under a folder (what a site's record weighs; unreadable entries count 0)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for f in files:
            try:
                total += os.stat(os.path.join(root, f)).st_size
            except OSError:
                continue
    return total


def _read_progress(state: Path, names: list[str]) -> dict[str, tuple[float, str]]:
    out = {}
    for n in names:
        try:
            d = json.loads((state / f"{n}.json").read_text())
            out[n] = (float(d["fraction"]), str(d["message"]))
        except (OSError, ValueError, KeyError):
            continue
    return out


def _client(scheduler: str | None, workers: int | None):
    """A dask.distributed client: to the scheduler at `scheduler`, else a LocalCluster of `workers` processes
    (default 2) of one thread each (generation reads with its own threads: `threads` per task is what the
    machine's CPUs give each worker, so the workers' reading threads do not outnumber the CPUs)."""
    import logging

    from distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.WARNING)
    if scheduler:
        return Client(scheduler), None, f"scheduler {scheduler}", None
    n = workers or 2
    cluster = LocalCluster(
        n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0", memory_limit=0, silence_logs=40
    )
    return Client(cluster), cluster, f"LocalCluster of {n} workers", max(1, (os.cpu_count() or 1) // n)


def generate_many(
    site_dirs: list[str | Path],
    out_dir: str | Path,
    options: GenerationOptions | None = None,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: ManyProgress | None = None,
    cancel: Callable[[], bool] | None = None,
    split: str = "auto",
) -> ManyReport:
    """Generate every site into OUT/<site name>/ as dask tasks, each with the same `options` (the defaults when
    None). Sites already finished are skipped; `workers=0` runs the sites one after
    another in this process (no cluster). `cancel` is polled while the sites run.

    `split` says when a site's own years become tasks too: "auto" (a site of SPLIT_ABOVE scene-megapixels or
    more, or every site when there are fewer sites than workers), "always" or "never". The banks are the same
    bytes whichever."""
    if split not in ("auto", "always", "never"):
        raise BankError(f"split must be auto, always or never, not {split!r}", field="split")
    from reviewer.bank.generate import GENERATED_ENTRIES
    from reviewer.fileio import check_output_folder

    t0 = time.perf_counter()
    names = site_names(site_dirs)
    # OUT holds the sites' folders (these, or finished ones of an earlier run) and the run's state, nothing else;
    # each site's folder holds what generate writes, nothing else: refused before any site starts
    out_dir = check_output_folder(
        out_dir, ours=lambda e: e.name in names or e.name == STATE_DIR or (e.is_dir() and finished(e))
    )
    for n in names:
        check_output_folder(out_dir / n, ours=GENERATED_ENTRIES)
    report = ManyReport(str(out_dir))
    outs = {n: out_dir / n for n in names}
    todo = []
    for d, n in zip(site_dirs, names, strict=True):
        if finished(outs[n]):
            report.sites.append(SiteOutcome(str(d), n, str(outs[n]), "skipped"))
        else:
            todo.append((str(d), n))
    state = out_dir / STATE_DIR
    state.mkdir(parents=True, exist_ok=True)
    (state / CANCEL).unlink(missing_ok=True)
    fractions = {n: (1.0 if finished(outs[n]) else 0.0) for n in names}
    options = options or GenerationOptions()
    try:
        if workers == 0:
            report.workers = "one after another in this process"
            results = _run_here(todo, outs, state, options, fractions, progress, cancel)
        else:
            results = _run_dask(
                todo, outs, state, options, fractions, progress, cancel, (scheduler, workers, split), report
            )
    finally:
        shutil.rmtree(state, ignore_errors=True)
    for d, n in todo:
        r = results.get(n, {"status": "cancelled"})
        report.sites.append(
            SiteOutcome(d, n, str(outs[n]), r["status"], r.get("summary", ""), r.get("error"), r.get("peak_memory", 0))
        )
    order = {n: i for i, n in enumerate(names)}
    report.sites.sort(key=lambda s: order[s.name])
    report.seconds = time.perf_counter() - t0
    return report


def _run_here(todo, outs, state, options, fractions, progress, cancel) -> dict[str, dict[str, Any]]:
    results = {}
    for d, n in todo:

        def site_progress(f: float, m: str, n: str = n) -> None:
            fractions[n] = min(f, 0.999)
            if progress is not None:
                progress(dict(fractions), f"{n}: {m}")

        results[n] = run_site(d, str(outs[n]), str(state), options, progress=site_progress, stop=cancel)
        fractions[n] = 1.0
        if progress is not None:
            progress(dict(fractions), f"{n}: {results[n]['status']}")
    return results


def _run_dask(todo, outs, state, options, fractions, progress, cancel, where, report):
    """Submit the sites, poll their progress files every 0.2 s, collect outcomes as they finish. `where`:
    (scheduler, workers, split) of generate_many."""
    from distributed import wait

    scheduler, workers, split = where

    if not todo:
        report.workers = "nothing to run"
        return {}
    client, cluster, report.workers, threads = _client(scheduler, workers)
    results: dict[str, dict[str, Any]] = {}
    try:
        if threads is not None and options.threads is None:
            options = replace(options, threads=threads)
        if split == "auto" and len(todo) < len(client.scheduler_info()["workers"]):
            split = "always"  # fewer sites than workers: the idle ones take the sites' years
        # the heaviest records first, so the last site to finish is a small one (sizes from the files' bytes)
        order = sorted(todo, key=lambda t: -_folder_bytes(t[0]))
        futures = {
            client.submit(
                run_site,
                d,
                str(outs[n]),
                str(state),
                options,
                split=split,
                key=f"generate-{n}",
                pure=False,
                priority=len(order) - i,
            ): n
            for i, (d, n) in enumerate(order)
        }
        pending = set(futures)
        cancelled = False
        while pending:
            try:
                done, pending = wait(pending, timeout=0.2, return_when="FIRST_COMPLETED")
            except TimeoutError:
                done = set()
            except KeyboardInterrupt:  # Ctrl-C: running tasks stop at their next scene, queued ones never start
                (state / CANCEL).touch()
                client.cancel(list(pending))
                raise
            for f in done:
                n = futures[f]
                if f.status == "finished":
                    results[n] = f.result()
                elif f.status == "cancelled":
                    results[n] = {"status": "cancelled"}
                else:
                    results[n] = {"status": "failed", "error": f"{type(f.exception()).__name__}: {f.exception()}"}
                fractions[n] = 1.0
            msgs = [f"{futures[f]}: {results[futures[f]]['status']}" for f in done]
            for n, (frac, msg) in _read_progress(state, [futures[f] for f in pending]).items():
                fractions[n] = min(frac, 0.999)
                msgs.append(f"{n}: {msg}")
            if progress is not None:
                progress(dict(fractions), "; ".join(msgs))
            if not cancelled and cancel is not None and cancel():
                cancelled = True
                (state / CANCEL).touch()  # running tasks stop at their next scene
                client.cancel([f for f in pending if f.status == "pending"])
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return results
