"""Ctrl-C as a flag: a SIGINT handler sets it and stops the CP-SAT runs under way, so no KeyboardInterrupt ever
unwinds through the solver's callbacks; long Python loops (greedy, model building) poll it and hand back what
they have. A module of its own, without OR-Tools, so that the command line can set it up before any solver is
imported (importing the solver stack costs about a second of CPU at every start)."""
from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ortools.sat.python import cp_model


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
