"""Reading the block YAML that kubectl and generators write, line by line, without libyaml.

libyaml's parser and composer cost one Python object per event and per node (a node, its mark, its tag): at
5,000 nodes (2 million lines) that was 24 s before a single manifest was looked at. Manifests dumped by
`kubectl get -o yaml`, `podplan generate` or yaml.safe_dump use a small part of YAML: block mappings and
sequences, one scalar a line, `{}`/`[]`, literal blocks (`|`, `|-`). This module reads exactly that part,
a line at a time with str methods, and says "not mine" (None) for everything else, so that the caller reads the
file with the full loader instead:

- anchors, aliases, tags, merge keys, flow collections with content, folded or indented block scalars, complex
  keys, multi-line plain or quoted scalars, escapes in double-quoted scalars, comments after a value,
  directives, `...`, tabs, carriage returns, non-printable characters or a byte-order mark anywhere;
- any line whose shape or indentation it does not expect (which includes every YAML error: an invalid file is
  always read, and reported, by the full loader).

Values are PyYAML's: a plain scalar goes through PyYAML's own implicit resolver and safe constructor (once per
distinct text), so `yes`, `010`, `1.10`, `~`, `2024-01-01` read as yaml.safe_load_all reads them; quoted
scalars and literal blocks are strings. tests/test_blockyaml.py proves the result equal to yaml.safe_load_all
on generated clusters and on random documents and edits of them (hypothesis).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml
from yaml.nodes import ScalarNode

try:  # the loop over the lines, compiled where the installation could (see models/_blockloop.c)
    from . import _blockloop
except ImportError:
    _blockloop = None

# Whether _parse runs the compiled loop when it is there (tests compare the two by switching it).
COMPILED = True

STR = "tag:yaml.org,2002:str"
# Characters PyYAML refuses or treats as line breaks, and the ones this reader leaves to it (tab, CR, BOM).
# (U+2028 and U+2029 are line breaks to PyYAML, as NEL U+0085 is.)
_NOT_MINE = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
# The same test for ASCII text (what manifests almost always are), by C-level byte operations: the regular
# expression above took 0.5 s over production 5,000's 51 MB, this takes 0.07 s.
_ASCII_MINE = b"\n" + bytes(range(0x20, 0x7F))


def _has_foreign_characters(text: str) -> bool:
    """Whether `text` holds a character _NOT_MINE matches."""
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _ASCII_MINE))
    return _NOT_MINE.search(text) is not None


# First characters of a plain scalar or key this reader leaves to PyYAML: indicators (anchors, aliases, tags,
# flow collections, block scalars, directives, reserved) and quotes it did not take as a whole.
_INDICATORS = frozenset(",[]{}#&*!|>'\"%@`")


class NotMine(Exception):
    """A construct this reader leaves to the full loader."""


class _Scalars:
    """Plain scalars as PyYAML resolves and constructs them, once per distinct text."""

    def __init__(self) -> None:
        self.loader = yaml.SafeLoader("")
        self.memo: dict[str, Any] = {}
        # The first characters some implicit resolver looks at: PyYAML's resolve() gives a text starting with any
        # other character the string tag without matching a pattern (most names, at 1 to 3 µs each). None when a
        # resolver looks at every text, or paths decide.
        resolvers = self.loader.yaml_implicit_resolvers
        self.resolved_firsts = None if None in resolvers or self.loader.yaml_path_resolvers else frozenset(resolvers)

    def value(self, text: str) -> Any:
        firsts = self.resolved_firsts
        if firsts is not None and text and text[0] not in firsts:
            tag = STR  # what resolve() would say, without its look-ups
        else:
            tag = self.loader.resolve(ScalarNode, text, (True, False))
        if tag == STR:
            value: Any = text
        elif tag == "tag:yaml.org,2002:merge":
            raise NotMine("merge key")
        else:
            try:
                value = self.loader.construct_object(ScalarNode(tag, text), deep=True)
            except Exception as exc:  # PyYAML's own error (or ValueError) comes from the full loader
                raise NotMine(str(exc)) from None
            self.loader.constructed_objects.clear()
        self.memo[text] = value
        return value


def _plain(text: str) -> str:
    """`text` (rstripped already) as a one-line plain scalar, or NotMine."""
    first = text[0]
    if first in _INDICATORS or (first in "-?:" and (len(text) == 1 or text[1] == " ")):
        raise NotMine(text)
    if ": " in text or " #" in text or text[-1] == ":":
        raise NotMine(text)
    return text


def _quoted(text: str) -> tuple[str, str]:
    """(the string, what follows it on the line) for a one-line quoted scalar at the start of `text`."""
    q = text[0]
    if q == '"':
        end = text.find('"', 1)
        if end < 0:
            raise NotMine("multi-line double-quoted scalar")
        body = text[1:end]
        if "\\" in body:
            raise NotMine("escape")
    else:
        end = 1
        while True:
            end = text.find("'", end)
            if end < 0:
                raise NotMine("multi-line single-quoted scalar")
            if text[end + 1:end + 2] == "'":
                end += 2
                continue
            break
        body = text[1:end].replace("''", "'")
    return body, text[end + 1:]


_MISSING = object()
# Deeper than this is left to the full loader (whose recursion limit names the error): manifests nest ~12 deep.
_DEPTH = 100
_APPEND = object()  # the pending value is a sequence's next item, not a mapping's key


def _literal(lines: list[str], i: int, header: str, indent: int) -> tuple[str, int]:
    """A literal block scalar (`|` keeps one final line break, `|-` none) whose lines start at lines[i], under a
    node at `indent`: (its text, the index of the first line after it)."""
    header = header.rstrip(" ")
    if header not in ("|", "|-"):
        raise NotMine(header)
    n = len(lines)
    first = lines[i] if i < n else ""
    s = first.lstrip(" ")
    width = len(first) - len(s)
    if not s or width <= indent:
        raise NotMine("empty literal block, or one that starts with a blank line")
    out = []
    while i < n:
        line = lines[i]
        if not line:
            out.append("")
        else:
            s = line.lstrip(" ")
            if not s:
                if len(line) > width:
                    raise NotMine("spaces past the indentation on a blank line of a literal block")
                out.append("")
            elif len(line) - len(s) >= width:
                out.append(line[width:])
            else:
                break
        i += 1
    # the block's last line is the stream's, with no line break after it: clip has no break to keep
    unbroken = i == n and lines[n - 1].strip(" ") != ""
    while out and not out[-1]:
        out.pop()
    text = "\n".join(out)
    return (text + "\n" if header == "|" and not unbroken else text), i


# What a line is (the first item of its _Line), decided once per distinct line text: a cluster's 2 million lines
# hold about 140 thousand distinct ones (`    resources:`, `  - operator: Exists`...).
_SKIP, _DOC, _ITEM, _ITEM_MAP, _KEY = range(5)
# What its value is: none on the line (the next lines tell), a scalar, a new {} or [], a literal block.
_PENDING, _SCALAR, _NEW_DICT, _NEW_LIST, _LITERAL = range(5)
# (what, indentation, column of the key in `- key: value`, key, what the value is, the value or literal header)
_Line = tuple[int, int, int, Any, int, Any]
_REFUSED: _Line = (5, -1, 0, None, 0, None)  # a line the reader leaves to the full loader


class _Lines:
    """A line's _Line (each distinct line is classified once): its syntax checked, its scalars resolved once."""

    def __init__(self, scalars: _Scalars) -> None:
        self.scalars = scalars
        self.memo = scalars.memo

    def scalar(self, text: str) -> Any:
        value = self.memo.get(text, _MISSING)
        return self.scalars.value(_plain(text)) if value is _MISSING else value

    def value(self, rest: str) -> tuple[int, Any]:
        """(what, value) of what follows `key: ` or `- ` (stripped on the left)."""
        if not rest:
            return _PENDING, None
        r0 = rest[0]
        if r0 == '"' or r0 == "'":
            body, after = _quoted(rest)
            if after.strip(" "):
                raise NotMine(after)
            return _SCALAR, body
        if r0 == "{" or r0 == "[":
            stripped = rest.rstrip(" ")
            if stripped == "{}":
                return _NEW_DICT, None
            if stripped == "[]":
                return _NEW_LIST, None
            raise NotMine("flow collection")
        if r0 == "|":
            header = rest.rstrip(" ")
            if header not in ("|", "|-"):
                raise NotMine(header)
            return _LITERAL, header
        return _SCALAR, self.scalar(rest.rstrip(" "))

    def key(self, s: str) -> tuple[Any, str]:
        """(key, the rest after `: `) of a `key: value` text."""
        c0 = s[0]
        if c0 == '"' or c0 == "'":
            key, after = _quoted(s)
            if after[:1] != ":" or after[1:2] not in ("", " "):
                raise NotMine(after)
            return key, after[2:].lstrip(" ")
        colon = s.find(": ")
        if colon < 0:
            if s[-1] != ":":
                raise NotMine(s)  # a scalar where a key belongs, a continuation line, or an error
            text, rest = s[:-1], ""
        else:
            text, rest = s[:colon], s[colon + 2:].lstrip(" ")
        if not text or text[-1] == " ":
            raise NotMine(text)
        return self.scalar(text), rest

    def __call__(self, line: str) -> _Line:
        s = line.lstrip(" ")
        if not s or s[0] == "#":
            out: _Line = (_SKIP, 0, 0, None, 0, None)
        else:
            ind = len(line) - len(s)
            c0 = s[0]
            if ind == 0 and ((c0 == "-" and s[:3] == "---") or (c0 == "." and s[:3] == "...") or c0 == "%"):
                if s.rstrip(" ") != "---":
                    raise NotMine(s)  # `--- value`, `...`, a directive
                out = (_DOC, 0, 0, None, 0, None)
            elif c0 == "-" and (len(s) == 1 or s[1] == " "):
                rest = s[1:].lstrip(" ")
                if rest and rest[0] == "-" and (len(rest) == 1 or rest[1] == " "):
                    raise NotMine("nested inline sequence")
                if rest and rest[0] in "\"'":
                    is_key = _quoted(rest)[1][:1] == ":"
                else:
                    is_key = bool(rest) and (": " in rest or rest.rstrip(" ")[-1] == ":")
                if is_key:  # `- key: value`: a mapping whose keys stand at the column after the dash
                    key, after = self.key(rest)
                    out = (_ITEM_MAP, ind, len(line) - len(rest), key, *self.value(after))
                else:
                    out = (_ITEM, ind, 0, None, *self.value(rest))
            elif c0 == "?" and (len(s) == 1 or s[1] == " "):
                raise NotMine("complex key")
            else:
                key, rest = self.key(s)
                out = (_KEY, ind, 0, key, *self.value(rest))
        return out

    def all(self, lines: Iterable[str]) -> list[_Line]:
        """Each line's _Line, _REFUSED for a line this reader does not take: it raises NotMine only if the loop
        reaches it (a literal block's lines are text, whatever they look like).

        The commonest distinct line, `key: plain value` (names, uids, addresses: 100,000 of production 5,000's
        141,000), is classified here by the steps __call__ takes for it (key, value, scalar), without their calls;
        any other line, and one whose key or value is new or refused, goes the whole way."""
        out = []
        memo, value_of = self.memo, self.scalars.value
        for line in lines:
            try:
                s = line.lstrip(" ")
                colon = s.find(": ")
                if colon > 0 and s[0] not in _WHOLE_WAY and s[colon - 1] != " ":
                    rest = s[colon + 2:].lstrip(" ")
                    if rest and rest[0] not in _WHOLE_WAY_VALUES:
                        text = s[:colon]
                        key = memo.get(text, _MISSING)
                        if key is _MISSING:
                            key = value_of(_plain(text))
                        text = rest.rstrip(" ")
                        value = memo.get(text, _MISSING)
                        if value is _MISSING:
                            value = value_of(_plain(text))
                        out.append((_KEY, len(line) - len(s), 0, key, _SCALAR, value))
                        continue
                out.append(self(line))
            except NotMine:
                out.append(_REFUSED)
        return out


# First characters of a line, and of a value, that _Lines.all leaves to the whole classification: comments, sequence
# entries, document markers, directives, complex keys, quotes; quoted values, flow collections, literal blocks.
_WHOLE_WAY = frozenset("#-.%?\"'")
_WHOLE_WAY_VALUES = frozenset("\"'{[|")


def _parse(text: str, scalars: _Scalars) -> list[Any]:
    """Every document of the stream's lines (text.split("\n")): one loop over the lines with a stack of the open
    collections, each at its indentation; what a line is comes from _Lines, once per distinct line, up front."""
    classify = _Lines(scalars)
    if _blockloop is not None and COMPILED:
        return _blockloop.read(text, classify.all, _literal, NotMine, _DEPTH)
    lines = text.split("\n")
    distinct = list(set(lines))
    return _build(lines, dict(zip(distinct, classify.all(distinct))))


def _build(lines: list[str], seen: dict[str, _Line]) -> list[Any]:
    """The loop over the lines (the reference of models/_blockloop.c, which podplan runs where it was compiled).
    Every line's _Line is taken by one C-level map."""
    docs: list[Any] = []
    infos = list(map(seen.__getitem__, lines))
    SKIP, DOC, ITEM, ITEM_MAP, KEY, REFUSED = _SKIP, _DOC, _ITEM, _ITEM_MAP, _KEY, _REFUSED[0]
    PENDING, SCALAR, NEW_DICT, NEW_LIST = _PENDING, _SCALAR, _NEW_DICT, _NEW_LIST
    stack: list[tuple[int, Any]] = []  # (indentation, dict or list) of each open collection
    top: Any = None  # the innermost open collection (stack[-1]), its indentation, whether it is a mapping
    top_ind, in_map = -1, False
    root: Any = _MISSING
    explicit = False  # the current document began with `---`
    # a `key:` or `-` with nothing after it holds null until the next line opens a collection in its place:
    # (collection, key or -1 for the last item, indentation, in a mapping)
    pend: tuple[Any, Any, int, bool] | None = None
    n, i = len(lines), 0
    while i < n:
        what, ind, column, key, how, value = infos[i]
        i += 1
        if ind == top_ind and what == KEY and how == SCALAR and in_map:  # the common line: one more key
            top[key] = value
            pend = None
            continue
        if what == SKIP:
            continue
        if what == REFUSED:
            raise NotMine(lines[i - 1])
        if what == DOC:
            if root is not _MISSING:
                docs.append(root)
            elif explicit:
                docs.append(None)
            root, explicit, stack, top, top_ind, in_map, pend = _MISSING, True, [], None, -1, False, None
            continue
        dash = what == ITEM or what == ITEM_MAP
        if pend is not None:
            target, pkey, at, pmap = pend
            pend = None
            if ind > at or (dash and pmap and ind == at):  # kubectl's compact `key:\n- item` included
                top = [] if dash else {}
                target[pkey] = top
                top_ind, in_map = ind, not dash
                stack.append((ind, top))
                if len(stack) > _DEPTH:
                    raise NotMine("nested too deeply")
        elif root is _MISSING:
            if ind:
                raise NotMine("indented document")
            root = top = [] if dash else {}
            top_ind, in_map = 0, not dash
            stack.append((0, root))
        if top_ind > ind:
            while stack[-1][0] > ind:
                stack.pop()
            top_ind, top = stack[-1]
            in_map = type(top) is dict
        if top_ind != ind:
            raise NotMine("unexpected indentation")  # a continuation line, or an error
        if dash:
            if in_map:
                raise NotMine("a sequence entry where a key belongs")
            if what == ITEM:
                if how == SCALAR:
                    top.append(value)
                elif how == PENDING:
                    top.append(None)
                    pend = (top, -1, ind, False)
                elif how == NEW_DICT:
                    top.append({})
                elif how == NEW_LIST:
                    top.append([])
                else:
                    text, i = _literal(lines, i, value, ind)
                    top.append(text)
                continue
            new: dict[Any, Any] = {}
            top.append(new)
            top, top_ind, in_map = new, column, True
            stack.append((column, top))
            ind = column
        elif not in_map:  # a compact sequence ends: its mapping goes on at the same indentation
            stack.pop()
            if not stack:
                raise NotMine("a key after a root sequence")
            top_ind, top = stack[-1]
            in_map = type(top) is dict
            if top_ind != ind or not in_map:
                raise NotMine("unexpected indentation")
        if how == SCALAR:
            top[key] = value
        elif how == PENDING:
            top[key] = None
            pend = (top, key, ind, True)
        elif how == NEW_DICT:
            top[key] = {}
        elif how == NEW_LIST:
            top[key] = []
        else:
            top[key], i = _literal(lines, i, value, ind)
    if root is not _MISSING:
        docs.append(root)
    elif explicit:
        docs.append(None)
    return docs


def load_all(text: str) -> list[Any] | None:
    """The documents of `text` exactly as yaml.safe_load_all gives them, or None when the text uses YAML this
    reader leaves to the full loader (which then also reports any error)."""
    if _has_foreign_characters(text):
        return None
    try:
        return _parse(text, _Scalars())
    except (NotMine, RecursionError, IndexError):
        return None
