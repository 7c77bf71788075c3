"""One exception root for podplan: every error a user can cause derives from PodplanError."""
from __future__ import annotations

import json
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
            return printable(self.file)
        if not self.kind and not self.name:
            return f"{printable(self.file)}[{self.doc}]"
        obj = self.kind or "object"
        if self.name:
            obj += "/" + (f"{self.namespace}/{self.name}" if self.namespace else self.name)
        # A name may hold a newline or an escape sequence: the message stays one line either way.
        return f"{printable(self.file)}[{self.doc}] {printable(obj)}"


class InputError(PodplanError):
    """Bad input: names file, document, object and field path in one line."""

    def __init__(self, where: Where, field: str, message: str) -> None:
        self.where = where
        self.field = field
        self.message = message
        at = f" {printable(field)}:" if field else ":"
        super().__init__(f"{where.describe()}{at} {message}")


class PlanInvalidError(PodplanError):
    """A plan failed the verifier: always a bug in podplan, never printed as a plan."""


def describe_value(value: object) -> str:
    """A value as YAML wrote it, for messages: `the string "3"`, `true`, `null`, `a mapping`; never a Python repr."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {quote(value)}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"


def quote(text: str) -> str:
    """Double-quoted, with control characters escaped as in JSON (a name may hold anything)."""
    return json.dumps(text, ensure_ascii=False)


def printable(text: str) -> str:
    """Text as is when it prints as one plain line, else with control characters escaped as in JSON."""
    return text if text.isprintable() else json.dumps(text, ensure_ascii=False)[1:-1]
