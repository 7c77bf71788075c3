"""Taints and tolerations, matched as k8s.io/api/core/v1 Toleration.ToleratesTaint does."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


@dataclass(frozen=True)
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"

    def __str__(self) -> str:
        return f"{{{self.key}: {self.value}}}"


@dataclass(frozen=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """An empty effect matches every effect; an empty key with Exists matches every taint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        # Equal (the default): values must match; an empty key with Equal is rejected by validation upstream.
        return self.value == taint.value


def tolerated(taint: Taint, tolerations: Iterable[Toleration]) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


def first_untolerated(taints: Iterable[Taint], tolerations: tuple[Toleration, ...],
                      effects: tuple[str, ...] = ("NoSchedule", "NoExecute")) -> Taint | None:
    """v1helper.FindMatchingUntoleratedTaint: the first taint with one of `effects` no toleration matches."""
    for taint in taints:
        if taint.effect in effects and not tolerated(taint, tolerations):
            return taint
    return None
