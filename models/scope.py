"""Scope, as kubectl's -n/--namespace, -A/--all-namespaces and -l/--selector say it: which pending pods form the
batch (simulate, solve, compare, explain) and which running pods may move (rebalance). The rest of the cluster
still counts: existing pods stay where they are, whatever their namespace or labels.

The selector string is parsed as k8s.io/apimachinery/pkg/labels.Parse reads it:
`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x,y)`, `a` (exists), `!a` (does not exist), `a>1`, `a<1`;
requirements separated by commas are ANDed.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from .errors import InputError, Where
from .objects import Cluster, Pod
from .selectors import LabelSelector, Requirement

# labels.Parse's lexer: these characters end an identifier.
_TOKEN = re.compile(r"\s*(?:(?P<op>==|!=|=|\(|\)|,|!|>|<)|(?P<word>[^\s=!(),<>]+))")
# IsQualifiedName / IsValidLabelValue (k8s.io/apimachinery/pkg/util/validation).
_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_KEY = re.compile(rf"^(?:[a-z0-9](?:[-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_NAME}$")
_VALUE = re.compile(rf"^(?:{_NAME})?$")


def _fail(text: str, message: str) -> InputError:
    return InputError(Where("-l/--selector", None), "", f"{text!r}: {message}")


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise _fail(text, f"unexpected character at position {pos + 1}")
        out.append(m.group("op") or m.group("word"))
        pos = m.end()
    return out


def parse_selector(text: str) -> LabelSelector:
    """A kubectl label selector string as a LabelSelector (the empty string selects everything)."""
    toks = _tokens(text)
    reqs: list[Requirement] = []
    i = 0

    def key(at: int) -> str:
        if at >= len(toks) or not _KEY.match(toks[at]):
            got = repr(toks[at]) if at < len(toks) else "the end"
            raise _fail(text, f"expected a label key, got {got}")
        return toks[at]

    def value(v: str) -> str:
        if not _VALUE.match(v):
            raise _fail(text, f"invalid label value {v!r}: at most 63 characters, alphanumerics, '-', '_' or '.', "
                              "starting and ending with an alphanumeric")
        return v

    while i < len(toks):
        if toks[i] == "!":
            reqs.append(Requirement(key(i + 1), "DoesNotExist"))
            i += 2
        else:
            k = key(i)
            op = toks[i + 1] if i + 1 < len(toks) else ","
            if op == ",":
                reqs.append(Requirement(k, "Exists"))
                i += 1
            elif op in ("=", "==", "!="):
                v = toks[i + 2] if i + 2 < len(toks) and toks[i + 2] not in ("=", "==", "!=", "(", ")", "!") else ""
                if v == ",":
                    v = ""
                reqs.append(Requirement(k, "NotIn" if op == "!=" else "In", (value(v),)))
                i += 3 if v else 2
            elif op in (">", "<"):
                v = toks[i + 2] if i + 2 < len(toks) else ""
                if not re.fullmatch(r"-?\d+", v):
                    raise _fail(text, f"{k}{op} needs an integer, got {v or 'nothing'!r}")
                reqs.append(Requirement(k, "Gt" if op == ">" else "Lt", (v,)))
                i += 3
            elif op.lower() in ("in", "notin"):
                if i + 2 >= len(toks) or toks[i + 2] != "(":
                    raise _fail(text, f"expected '(' after {k} {op}")
                values: list[str] = []
                j = i + 3
                while j < len(toks) and toks[j] != ")":
                    if toks[j] != ",":
                        values.append(value(toks[j]))
                    j += 1
                if j >= len(toks):
                    raise _fail(text, f"missing ')' after {k} {op} (")
                reqs.append(Requirement(k, "In" if op.lower() == "in" else "NotIn", tuple(values)))
                i = j + 1
            else:
                raise _fail(text, f"expected an operator (=, ==, !=, in, notin, >, <) or ',' after {k!r}, got {op!r}")
        if i < len(toks):
            if toks[i] != ",":
                raise _fail(text, f"expected ',' between requirements, got {toks[i]!r}")
            i += 1
            if i == len(toks):
                raise _fail(text, "ends with ','")
    return LabelSelector((), tuple(reqs))


def in_scope(namespace: str | None, selector: LabelSelector | None) -> Callable[[Pod], bool]:
    """The predicate: a pod is in scope when it is in `namespace` (None: any) and matches `selector` (None: all)."""
    def test(pod: Pod) -> bool:
        return (namespace is None or pod.namespace == namespace) and (selector is None or selector.matches(pod.labels))
    return test


def scope(cluster: Cluster, namespace: str | None, selector: LabelSelector | None) -> Cluster:
    """`cluster` whose batch (`pending`) holds only the pods in scope; everything else is unchanged."""
    keep = in_scope(namespace, selector)
    return replace(cluster, pending=tuple(p for p in cluster.pending if keep(p)))
