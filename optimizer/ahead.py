"""Verification ahead of the gate: the verifier judges a plan that may well be the one printed (greedy's warm
start, the search's starting incumbent) in a background thread while the pipeline goes on, so that when it IS
the plan printed (Ctrl-C before the search improved on it, or a search that kept it) the verify gate has its
report already instead of judging 77,000 pods after the user pressed Ctrl-C.

The gate (pipeline.check) takes a report from here only for the very plan it is asked about: the same Cluster
object, equal placements, no preemptions, the same policy and profile, which is everything the verifier's
report depends on. So the plan printed is exactly the plan verified. Any other plan (one the search improved,
greedy stopped half-way) is verified by the gate as before. A verification that failed with an exception gives
nothing here: the gate runs the verifier itself and reports what it says.

The thread runs pure Python, so it shares the interpreter with the pipeline (CP-SAT's own threads are not held
back); at most one verification runs at a time, and when the gate asks about another plan, a verification
still running is given up (within a few hundred pods) so that it does not slow the gate down. It pays only while
its plan can still be the one printed: as soon as the search holds an incumbent other than its starting plan
(optimizer.solve calls `supersede`), the verification is given up, so that it does not take seconds of the
interpreter from the search for a report nobody will read.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..models.objects import Cluster

from .framework import Profile
from .plan import Plan
from .policy import Policy
from .profiles import Profiles
from .verify import Report, verify_basis
from .verify_delta import Basis, forget


@dataclass
class _Entry:
    cluster: Cluster
    placements: dict[str, str]
    policy: Policy | None
    profile: Profile | Profiles
    done: threading.Event = field(default_factory=threading.Event)
    cancel: threading.Event = field(default_factory=threading.Event)
    report: Report | None = None
    basis: Basis | None = None  # what the gate judges a later plan of the same input against (verify_delta)

    def same(self, cluster: Cluster, plan: Plan, policy: Policy | None, profile: Profile | Profiles) -> bool:
        return self.alike(cluster, policy, profile) and not plan.preemptions and not plan.recreated \
            and plan.placements == self.placements

    def alike(self, cluster: Cluster, policy: Policy | None, profile: Profile | Profiles) -> bool:
        """The same input, policy and profile: a basis for verifying another plan incrementally."""
        return cluster is self.cluster and profile is self.profile and (policy or Policy()) == (self.policy or Policy())


class Ahead:
    """The verifications started ahead of the gate (the two latest are kept)."""

    KEEP = 2

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[_Entry] = []
        self._turn = threading.Lock()  # one verification at a time: two would only share the interpreter
        self.started = 0  # how many were started; how many the gate took (tests and --verbose read them)
        self.taken = 0
        self.superseded = 0  # how many plans the search moved on from (their verification goes on: a basis)
        self.based = 0  # how many times the gate verified another plan against one of them (basis)

    def start(self, cluster: Cluster, plan: Plan, policy: Policy | None, profile: Profile | Profiles) -> None:
        """Verify `plan` in the background (no preemptions only: the optimizer's plans never preempt)."""
        if plan.preemptions or plan.recreated:
            return
        entry = _Entry(cluster, dict(plan.placements), policy, profile)
        with self._lock:
            if any(e.same(cluster, plan, policy, profile) for e in self._entries):
                return
            self._entries = (self._entries + [entry])[-self.KEEP:]
            self.started += 1
        threading.Thread(target=self._run, args=(entry,), name="podplan-verify-ahead", daemon=True).start()

    def _run(self, entry: _Entry) -> None:
        try:
            with self._turn:
                with self._lock:
                    wanted = entry in self._entries
                if wanted:  # a later plan has not already replaced it
                    entry.report, entry.basis = verify_basis(entry.cluster, entry.placements, entry.policy,
                                                             entry.profile, entry.cancel)
        except Exception:  # noqa: BLE001 - Cancelled, or an error the gate's own verification will report
            entry.report = entry.basis = None
        finally:
            entry.done.set()

    def take(self, cluster: Cluster, plan: Plan, policy: Policy | None,
             profile: Profile | Profiles) -> Report | None:
        """The report of `plan` if it was verified ahead (waiting for a verification still running), else None."""
        with self._lock:
            entry = next((e for e in reversed(self._entries) if e.same(cluster, plan, policy, profile)), None)
            if entry is None:  # the verifications of this input stay: basis() may judge the plan against one
                keep = [e for e in self._entries if e.alike(cluster, policy, profile)][-1:]
            else:
                keep = [entry]
            for other in self._entries:
                if other not in keep:  # no use to the plan printed: stop it, the gate needs the interpreter now
                    other.cancel.set()
            self._entries = keep
        if entry is None:
            return None
        entry.done.wait()
        if entry.report is not None:
            with self._lock:
                self.taken += 1
        return entry.report

    def basis(self, cluster: Cluster, policy: Policy | None, profile: Profile | Profiles) -> Basis | None:
        """A plan of the same input, policy and profile verified in full in the background (waiting for it when
        it is still running: judging its remaining pods and then the difference costs less than judging every
        pod of another plan), to verify another plan against it (verify_delta); None if there is none."""
        with self._lock:
            entry = next((e for e in reversed(self._entries) if e.alike(cluster, policy, profile)), None)
            for other in self._entries:
                if other is not entry:
                    other.cancel.set()
            self._entries = []
        if entry is None:
            return None
        entry.done.wait()
        forget(cluster)  # the caller holds it now; nothing else will ask for its state
        if entry.basis is not None:
            with self._lock:
                self.based += 1
        return entry.basis

    def supersede(self, cluster: Cluster) -> None:
        """The search has an incumbent other than the plan it started from (for `cluster`): that plan is no
        longer the likely one to print, but its verification goes on to the end, once: it is the basis the gate
        verifies the plan printed against, judging only what the search changed (basis(), verify_delta). At
        5,000 nodes that is a few seconds of the interpreter during a search of minutes, against seconds
        between Ctrl-C and the printed plan."""
        with self._lock:
            self.superseded += sum(1 for entry in self._entries if entry.cluster is cluster)

    def clear(self) -> None:
        with self._lock:
            self._entries = []


AHEAD = Ahead()


def started_and_taken() -> tuple[int, int]:
    return AHEAD.started, AHEAD.taken


__all__ = ["AHEAD", "Ahead", "started_and_taken"]

