"""Parts of one site's work as tasks of a dask cluster, taken back in order: the split of a large site.

A runner is a dask.distributed Client (or anything with its submit / cancel / scheduler_info). The parts are
pure functions of their arguments, so what a site writes does not depend on which worker ran which part or
when it finished: the results are taken in the parts' order, as the sequential pass would make them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

#: dask priority of a site's parts: ahead of the sites still queued, since the site waiting for them holds memory
PART_PRIORITY = 10**6


def n_workers(runner: Any) -> int:
    """The runner's workers (1 when it cannot say)."""
    try:
        return max(1, len(runner.scheduler_info()["workers"]))
    except (AttributeError, KeyError, TypeError, ValueError, OSError, TimeoutError):
        # a runner without scheduler_info, a reply without workers, no client (ValueError) or a closed comm
        # (distributed's CommClosedError is an OSError): as if one worker
        return 1


def in_order(runner: Any, jobs: list[tuple[Callable[..., Any], tuple[Any, ...]]]) -> Iterator[Any]:
    """Each job's result, in job order, the jobs running as tasks of `runner`: a few more submitted than it has
    workers, so none waits, and never more than that ahead of the one taken (their results wait in memory).
    Closing the iterator early (a cancel, an error) cancels the tasks not taken."""
    ahead = 2 * n_workers(runner) + 1
    futures: dict[int, Any] = {}
    try:
        for i in range(len(jobs)):
            while len(futures) < ahead and i + len(futures) < len(jobs):
                j = i + len(futures)
                fn, args = jobs[j]
                futures[j] = runner.submit(fn, *args, pure=False, priority=PART_PRIORITY)
            yield futures.pop(i).result()
    finally:
        if futures:
            runner.cancel(list(futures.values()))
