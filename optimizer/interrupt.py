"""Ctrl-C as a flag: a SIGINT handler sets it and stops the CP-SAT runs under way, so no KeyboardInterrupt ever
unwinds through the solver's callbacks; long Python loops (greedy, model building) poll it and hand back what
they have. A module of its own, without OR-Tools, so that the command line can set it up before any solver is
imported (importing the solver stack costs about a second of CPU at every start)."""
from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

T = TypeVar("T")


class Interrupt:
    """Ctrl-C as a flag (see the module docstring). `install()` routes SIGINT here for the duration of a
    command; without it, `is_set` stays False and a KeyboardInterrupt behaves as usual."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._solvers: set["cp_model.CpSolver"] = set()
        self._lock = threading.Lock()

    def is_set(self) -> bool:
        return self._event.is_set()

    def stop(self) -> None:
        """Set the flag and stop every CP-SAT run under way (safe from a signal handler)."""
        self._event.set()
        with self._lock:
            for solver in list(self._solvers):
                solver.stop_search()

    @contextmanager
    def running(self, solver: "cp_model.CpSolver") -> Iterator[None]:
        with self._lock:
            self._solvers.add(solver)
        try:
            if self.is_set():
                solver.stop_search()
            yield
        finally:
            with self._lock:
                self._solvers.discard(solver)

    def unless_set(self, work: Callable[[], T], poll: float = 0.05,
                   deadline: float | None = None) -> tuple[bool, T | None]:
        """(True, work()), or (False, None) once the flag is set, or the wall clock passes `deadline`
        (perf_counter seconds), while work runs. For one long call into C that lets go of the GIL (HiGHS's LP:
        18 s at 5,000 nodes): Python runs a SIGINT handler only between bytecodes of the main thread, so Ctrl-C
        during such a call would wait for its end; and HiGHS does not always keep its own time limit (its
        interior point method ran 330 s past a 4 s limit on a 5,000-node LP). The call runs in a thread of its
        own while the main thread waits and polls; a call given up runs on to its end in the background (its
        result is dropped), which is what a process about to print its plan can afford."""
        if deadline is None and (self is NEVER or threading.current_thread() is not threading.main_thread()):
            return True, work()  # nothing can set the flag during the call (no handler here): no thread
        box: list[Any] = []

        def target() -> None:
            try:
                box.append((True, work()))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
                box.append((False, exc))

        worker = threading.Thread(target=target, name="podplan-unless-set", daemon=True)
        worker.start()
        while worker.is_alive():
            if self.is_set() or (deadline is not None and time.perf_counter() >= deadline):
                return False, None
            worker.join(poll)
        ok, value = box[0]
        if not ok:
            raise value
        return True, value

    @contextmanager
    def install(self) -> Iterator["Interrupt"]:
        """SIGINT sets this flag while the block runs (main thread only; elsewhere a no-op)."""
        with _sigint(lambda signum, frame: self.stop()):
            yield self


NEVER = Interrupt()  # for callers that cannot be interrupted (tests, library use)


@contextmanager
def keyboard_interrupts() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt while the block runs (main thread only), also in a process started with
    SIGINT ignored (a parent may leave it so: a test runner, a script's background job), as Interrupt.install
    routes it for the other commands: for a command that takes Ctrl-C as an exception (whatif's engines)."""
    with _sigint(signal.default_int_handler):
        yield


@contextmanager
def _sigint(handler: Any) -> Iterator[None]:
    """SIGINT goes to `handler` while the block runs, whatever it was before (ignored included); the handler
    before is put back after. Signals reach the main thread only: elsewhere a no-op. A handler set outside
    Python (signal.signal reports None for it) is left as the block leaves it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
