"""Where the scenarios run: a local process pool, or Ray tasks. Both run the same function on the same task
(optimizer.whatif.run.run_task), so the same input and seed give the same rows on either.

- local: `parallel` worker processes. The bases travel once per worker (the pool's initializer; with the
  fork start method they are inherited, not serialised at all). Workers ignore SIGINT: Ctrl-C reaches the
  command, which cancels what has not started, stops the workers and returns the finished rows.
- ray: the bases go into Ray's object store once (`ray.put`); each task receives the reference inside a list,
  so that Ray does not resolve it per task, and a worker process fetches and deserialises it once, then
  keeps it for the next tasks of the run (`_BASES`). At most `in_flight` tasks are submitted at a time.
  `address`: join that cluster (`ray://head:10001`, `auto`); none: a local Ray starts with `parallel` CPUs,
  no dashboard, and stops with the command. Ctrl-C cancels the tasks in flight (force: their workers are
  killed) and returns the finished rows.

Every engine returns an `Outcome`: the rows it finished (by position), whether it was interrupted, and what
it measured about its workers (peak resident memory per worker process, the bases' serialised size).
"""
from __future__ import annotations

import os
import pickle
import resource
import signal
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from ...models.errors import PodplanError
from .apply import Base
from .run import Settings, Task, error_row, run_task

OnRow = Callable[[dict[str, Any]], None]


@dataclass
class Outcome:
    rows: dict[int, dict[str, Any]] = field(default_factory=dict)  # position -> row
    interrupted: bool = False
    worker_rss: dict[str, int] = field(default_factory=dict)  # worker id -> peak resident set, bytes
    bases_bytes: int | None = None  # the bases serialised (Ray: the one object put into the store)
    puts: int = 0  # how many times the bases were put into an object store (Ray: 1)


def _peak_rss() -> int:
    """This process's peak resident set in bytes (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


# ------------------------------------------------------------------------------------------------ local

_BASES: Any = None  # in a worker: the run's bases (local: set by the initializer; Ray: (ref hex, bases))


def _local_init(bases: Sequence[Base]) -> None:
    global _BASES
    _BASES = bases
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the command's to handle


def _local_work(task: Task, settings: Settings) -> tuple[int, dict[str, Any], str, int]:
    row = run_task(_BASES[task.cluster], task, settings)
    return task.position, row, f"pid {os.getpid()}", _peak_rss()


def _collect(out: Outcome, result: tuple[int, dict[str, Any], str, int], on_row: OnRow) -> None:
    position, row, worker, rss = result
    out.rows[position] = row
    out.worker_rss[worker] = max(rss, out.worker_rss.get(worker, 0))
    on_row(row)


def _alone(bases: Sequence[Base], task: Task, settings: Settings, out: Outcome, on_row: OnRow) -> None:
    """`task` in a pool of its own: its row, or the row saying its worker died."""
    with ProcessPoolExecutor(max_workers=1, initializer=_local_init, initargs=(tuple(bases),)) as pool:
        try:
            _collect(out, pool.submit(_local_work, task, settings).result(), on_row)
        except BrokenProcessPool:
            row = error_row(bases[task.cluster].name, task.scenario,
                            "its worker process died while it ran (out of memory?); the other scenarios still ran")
            out.rows[task.position] = row
            on_row(row)


def run_local(bases: Sequence[Base], tasks: Sequence[Task], settings: Settings, parallel: int,
              on_row: OnRow = lambda row: None) -> Outcome:
    out = Outcome()
    pool = ProcessPoolExecutor(max_workers=max(1, min(parallel, len(tasks) or 1)), initializer=_local_init,
                               initargs=(tuple(bases),))
    cap = 2 * parallel
    queue = list(tasks)
    running: dict[Future[Any], Task] = {}
    try:
        while queue or running:
            while queue and len(running) < cap:
                task = queue.pop(0)
                running[pool.submit(_local_work, task, settings)] = task
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for f in sorted(done, key=lambda f: running[f].position):
                task = running.pop(f)
                try:
                    _collect(out, f.result(), on_row)
                except BrokenProcessPool:
                    # A worker died (killed: out of memory?) and every scenario in flight failed with it; which
                    # one killed it cannot be told. Each is run again alone: a scenario that kills its worker
                    # again is a row saying so, the others get their rows; the rest run on a fresh pool.
                    lost = [task]
                    for g in sorted(running, key=lambda g: running[g].position):
                        if g.done() and not g.cancelled() and g.exception() is None:
                            _collect(out, g.result(), on_row)  # it finished before the pool broke
                        else:
                            lost.append(running[g])
                    running.clear()
                    pool.shutdown(wait=False, cancel_futures=True)
                    for t in lost:
                        _alone(bases, t, settings, out, on_row)
                    pool = ProcessPoolExecutor(max_workers=max(1, parallel), initializer=_local_init,
                                               initargs=(tuple(bases),))
                    break
    except KeyboardInterrupt:
        out.interrupted = True
        for f in running:
            f.cancel()
        for proc in list(getattr(pool, "_processes", {}).values()):  # stop the scenarios under way now
            proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        return out
    pool.shutdown(wait=True)
    return out


# -------------------------------------------------------------------------------------------------- ray


def _ray_work(boxed: list[Any], task: Task, settings: Settings) -> tuple[int, dict[str, Any], str, int]:
    """A Ray task: the bases' reference arrives boxed (not resolved by Ray), fetched once per worker process."""
    global _BASES
    import ray

    ref = boxed[0]
    if _BASES is None or _BASES[0] != ref.hex():
        _BASES = (ref.hex(), ray.get(ref))
    row = run_task(_BASES[1][task.cluster], task, settings)
    return task.position, row, f"{ray.get_runtime_context().get_node_id()[:8]}/pid {os.getpid()}", _peak_rss()


def ray_module() -> Any:
    try:
        import ray
    except ImportError:
        raise PodplanError("--engine ray needs Ray: pip install 'podplan[ray]'") from None
    return ray


def run_ray(bases: Sequence[Base], tasks: Sequence[Task], settings: Settings, parallel: int,
            address: str | None = None, on_row: OnRow = lambda row: None, in_flight: int | None = None) -> Outcome:
    ray = ray_module()
    out = Outcome()
    started_here = not ray.is_initialized()
    if started_here:
        quiet = {"log_to_driver": False, "configure_logging": True, "logging_level": "ERROR"}
        try:
            if address:
                ray.init(address=address, **quiet)
            else:
                # a task asks for `workers` CPUs: a smaller local Ray would never schedule it
                # "local": a new Ray of our own, never one another program started on this machine. Its workers
                # run the command's work at the command's priority (Ray renices workers to 15 by default, which
                # starves them on a busy machine); the environment still wins when it sets RAY_worker_niceness.
                os.environ.setdefault("RAY_worker_niceness", "0")
                ray.init(address="local", num_cpus=max(parallel, settings.workers), include_dashboard=False, **quiet)
        except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError...
            raise PodplanError(f"--engine ray: cannot {'join ' + address if address else 'start a local Ray'}: "
                               f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    try:
        cpus = int(ray.cluster_resources().get("CPU", parallel))
        cap = in_flight or 2 * max(1, cpus if address else parallel)
        payload = pickle.dumps(tuple(bases), protocol=pickle.HIGHEST_PROTOCOL)
        out.bases_bytes = len(payload)
        ref = ray.put(tuple(bases))
        out.puts = 1
        del payload
        work = ray.remote(num_cpus=settings.workers, max_retries=0)(_ray_work)
        queue = list(tasks)
        running: dict[Any, Task] = {}
        try:
            while queue or running:
                while queue and len(running) < cap:
                    task = queue.pop(0)
                    running[work.remote([ref], task, settings)] = task
                done, _ = ray.wait(list(running), num_returns=1)
                for r in done:
                    task = running.pop(r)
                    try:
                        _collect(out, ray.get(r), on_row)
                    except Exception as exc:  # noqa: BLE001 - a worker that died, a task Ray failed
                        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                        row = error_row(bases[task.cluster].name, task.scenario, f"Ray task failed: {first}")
                        out.rows[task.position] = row
                        on_row(row)
        except KeyboardInterrupt:
            out.interrupted = True
            for r in running:
                try:
                    ray.cancel(r, force=True)
                except Exception:  # noqa: BLE001 - already finished or gone
                    pass
    finally:
        if started_here:
            ray.shutdown()
    return out
