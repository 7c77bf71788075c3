"""The pattern program's restricted linear program, grown a column at a time (optimizer.provision.patterns).

Column generation solves the same rows again and again with a few more columns each round. Solved from scratch
(scipy's linprog), each round pays HiGHS's presolve and every simplex iteration of the whole program again, and
the Python work of building the whole matrix: at 1,000 nodes (1/anti of the 1,000-node row, 4,000-5,000 columns)
the program's 147 solves were charged 50 s of the deterministic clock and its per-round matrix work 28 s, where
the program needed about 60 s to converge and had 24 s. Held in one HiGHS instance, a round adds its columns
(nonbasic at zero: the last basis stays primal feasible) and the simplex starts from the last basis, which takes a
few iterations where a cold start took hundreds. The dive's residual programs are the same rows with other
right-hand sides: they keep the instance and its basis too.

`Master` is that; `ScratchMaster` is the simple reference (the whole program to linprog on every solve), which
the tests hold the fast one equal to (the same optimum value; duals that price every column at >= 0 and meet the
value), and which stands in where scipy's HiGHS binding is not there. Both are deterministic: the same columns in
the same order give the same solves.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Solved:
    """One solve: status 0 optimal, 1 stopped by the time limit, 2 anything else (as linprog's, for charge_lp);
    x per column in the order added; duals of the rows (>= 0 at an optimum: the rows are <=)."""
    status: int
    fun: float
    x: np.ndarray
    duals: np.ndarray
    nit: int


class ScratchMaster:
    """min cost.x subject to A x <= rhs, x >= 0, the columns given one by one: each solve from scratch (linprog)."""

    def __init__(self, rhs: np.ndarray) -> None:
        self.rhs = np.asarray(rhs, dtype=float)
        self.cost: list[float] = []
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.vals: list[float] = []

    @property
    def warm(self) -> bool:
        """Does the next solve start from a basis? (never: each is from scratch)"""
        return False

    @property
    def columns(self) -> int:
        return len(self.cost)

    @property
    def nonzeros(self) -> int:
        return len(self.vals)

    def set_rhs(self, rhs: np.ndarray) -> None:
        """New right-hand sides for the same rows (the dive's residual programs)."""
        self.rhs = np.asarray(rhs, dtype=float)

    def add(self, cost: float, rows: Sequence[int], vals: Sequence[float]) -> None:
        j = len(self.cost)
        self.cost.append(float(cost))
        self.rows.extend(int(r) for r in rows)
        self.cols.extend([j] * len(rows))
        self.vals.extend(float(v) for v in vals)

    def solve(self, time_limit: float | None = None) -> Solved:
        from scipy.optimize import linprog
        from scipy.sparse import coo_matrix

        n = len(self.cost)
        a_ub = coo_matrix((self.vals, (self.rows, self.cols)), shape=(len(self.rhs), n)).tocsr()
        options: dict = {"disp": False}
        if time_limit is not None:
            options["time_limit"] = time_limit
        res = linprog(np.array(self.cost), A_ub=a_ub, b_ub=self.rhs, bounds=(0, None), method="highs",
                      options=options)
        if res.status != 0:
            return Solved(1 if res.status == 1 else 2, float("inf"), np.zeros(n), np.zeros(len(self.rhs)),
                          int(getattr(res, "nit", 0) or 0))
        return Solved(0, float(res.fun), np.asarray(res.x, dtype=float),
                      -np.asarray(res.ineqlin.marginals, dtype=float), int(res.nit))


class Master(ScratchMaster):
    """The same program in one HiGHS instance: the columns added since the last solve join it, and the solve starts
    from the last basis. Falls back to ScratchMaster's solve when scipy has no HiGHS binding (it is private)."""

    def __init__(self, rhs: np.ndarray) -> None:
        super().__init__(rhs)
        self.highs = None
        self.sent = 0  # columns passed to HiGHS
        self.sent_nz = 0
        self.solved = False  # a solve ran (its basis is the next one's start)
        try:
            from scipy.optimize._highspy import _core
            h = _core._Highs()
        except (ImportError, AttributeError):  # (a scipy without the binding, or another one: the reference path)
            return
        h.setOptionValue("output_flag", False)
        inf = h.getInfinity()
        m = len(self.rhs)
        h.addRows(m, np.full(m, -inf), self.rhs, 0, np.zeros(m, dtype=np.int32), np.zeros(0, dtype=np.int32),
                  np.zeros(0))
        self.core = _core
        self.highs = h
        self.inf = inf

    @property
    def warm(self) -> bool:
        return self.highs is not None and self.solved

    def set_rhs(self, rhs: np.ndarray) -> None:
        rhs = np.asarray(rhs, dtype=float)
        if self.highs is not None:
            for i in np.flatnonzero(rhs != self.rhs):  # (the basis stays: the next solve starts from it)
                self.highs.changeRowBounds(int(i), -self.inf, float(rhs[i]))
        self.rhs = rhs

    def solve(self, time_limit: float | None = None) -> Solved:
        if self.highs is None:
            return super().solve(time_limit)
        h = self.highs
        n = len(self.cost)
        if n > self.sent:
            # this round's columns, column-wise (their entries are contiguous in the lists: added one at a time)
            cols = np.asarray(self.cols[self.sent_nz:], dtype=np.int64) - self.sent
            starts = np.searchsorted(cols, np.arange(n - self.sent)).astype(np.int32)
            h.addCols(n - self.sent, np.asarray(self.cost[self.sent:]), np.zeros(n - self.sent),
                      np.full(n - self.sent, self.inf), len(cols), starts,
                      np.asarray(self.rows[self.sent_nz:], dtype=np.int32), np.asarray(self.vals[self.sent_nz:]))
            self.sent, self.sent_nz = n, len(self.vals)
        h.setOptionValue("time_limit", float(time_limit) if time_limit is not None else self.inf)
        h.run()
        self.solved = True
        nit = int(h.getInfo().simplex_iteration_count)
        status = h.getModelStatus()
        if status != self.core.HighsModelStatus.kOptimal:
            limit = status in (self.core.HighsModelStatus.kTimeLimit, self.core.HighsModelStatus.kIterationLimit)
            return Solved(1 if limit else 2, float("inf"), np.zeros(n), np.zeros(len(self.rhs)), nit)
        sol = h.getSolution()
        return Solved(0, float(h.getInfo().objective_function_value), np.asarray(sol.col_value, dtype=float),
                      -np.asarray(sol.row_dual, dtype=float), nit)
