"""CP-SAT encoding of NodePorts: host ports are node totals.

Conflicts with existing pods are static (no x there). Among pending pods on one node, for each
(protocol, port): a pod binding 0.0.0.0 conflicts with every pod using that protocol/port, pods binding a
specific IP conflict with pods of the same IP; so for each IP in use, the pods using 0.0.0.0 or that IP
number at most one (and pods using only 0.0.0.0 at most one). A class with a host port takes at most one
pod per node (its own pods conflict). The conflict relation is symmetric, so the verifier's two-way check
is the same constraint. Ports <= 0 never conflict.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from ..framework import Reason
from ..state import NodeInfo
from ..problem import PodClass, Problem
from ..context import ModelContext

from .filtering import NAME, filter_node, fits_ports, sanitize


def static_reasons(problem: Problem, cls: PodClass, info: NodeInfo) -> list[Reason]:
    return filter_node(cls.rep, None, info, problem.state)


def _ports(pod: Any) -> set[tuple[str, str, int]]:
    return {sanitize(hp) for hp in pod.host_ports if hp.port > 0}


def upper_bound_vector(problem: Problem, cls: PodClass) -> np.ndarray:
    return np.full(len(problem.nodes), 1 if _ports(cls.rep) else cls.size, dtype=np.int64)


def static_mask(problem: Problem, cls: PodClass) -> np.ndarray | None:
    if not cls.rep.host_ports:
        return None
    infos = [problem.state.nodes[n.name] for n in problem.nodes]

    def used(i: int) -> tuple:
        return tuple(sorted((k, v) for k, v in infos[i].used_ports.items() if v > 0))
    return problem.mask_by_groups("nodeports", used, lambda i: fits_ports(cls.rep.host_ports, infos[i]))


def encode(ctx: ModelContext) -> None:
    p = ctx.problem
    ports = {c: _ports(p.classes[c].rep) for c in ctx.classes}
    if not any(ports.values()):
        return
    for n in ctx.comp.nodes:
        # (protocol, port) -> ip -> classes binding it here
        by_port: dict[tuple[str, int], dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
        for c in ctx.by_node[n]:
            for ip, proto, port in ports[c]:
                by_port[(proto, port)][ip].add(c)
        for (proto, port), ips in by_port.items():
            wild = ips.get("0.0.0.0", set())
            specific = [cs for ip, cs in ips.items() if ip != "0.0.0.0"]
            groups = [wild | cs for cs in specific] or [wild]
            for cs in groups:
                if sum(ctx.ub[(c, n)] for c in cs) < 2:
                    continue
                group = (NAME, f"Node/{ctx.nname(n)}", f"hostPort {port}/{proto}")
                ctx.hard(ctx.model.add(sum(ctx.x[(c, n)] for c in cs) <= 1), group)
