"""One exception root for podplan: every error a user can cause derives from PodplanError."""
from __future__ import annotations

from dataclasses import dataclass


class PodplanError(Exception):
    """Root of every error podplan raises on purpose; the CLI turns it into one line and exit code 2."""


@dataclass(frozen=True)
class Where:
    """Where in the input an object came from: file, document index, kind/namespace/name."""

    file: str = "<input>"
    doc: int | None = 0  # None: about the file itself (missing, unreadable), before any document
    kind: str = ""
    namespace: str = ""
    name: str = ""

    def describe(self) -> str:
        """`file[doc] Kind/ns/name`; `file[doc]` before the kind is known; `file` for the file itself."""
        if self.doc is None:
            return self.file
        if not self.kind and not self.name:
            return f"{self.file}[{self.doc}]"
        obj = self.kind or "object"
        if self.name:
            obj += "/" + (f"{self.namespace}/{self.name}" if self.namespace else self.name)
        return f"{self.file}[{self.doc}] {obj}"


class InputError(PodplanError):
    """Bad input: names file, document, object and field path in one line."""

    def __init__(self, where: Where, field: str, message: str) -> None:
        self.where = where
        self.field = field
        self.message = message
        at = f" {field}:" if field else ":"
        super().__init__(f"{where.describe()}{at} {message}")


class PlanInvalidError(PodplanError):
    """A plan failed the verifier: always a bug in podplan, never printed as a plan."""
