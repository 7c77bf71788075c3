"""Reading YAML fast, with PyYAML's own semantics.

PyYAML's CSafeLoader parses and composes in C (libyaml), but resolves every scalar's tag and constructs every
value in pure Python, with a generator per mapping: 80 % of the time reading production 5,000. This module keeps
libyaml's composer and the safe constructor's meaning, and does the two Python steps the cheap way:

- a scalar's implicit tag is resolved once per distinct (text, implicit) pair (manifests repeat the same keys
  and values thousands of times);
- mappings and sequences are built by one plain recursive function; a plain string is taken as it is; any other
  scalar (int, float, bool, null, timestamp, binary...) goes through the safe constructor itself, so its value
  is exactly PyYAML's.

What this fast path does not take on, it hands back to PyYAML's constructor whole (`Unsupported`): merge keys
(`<<`), explicit non-core tags, unhashable keys, and recursive aliases. tests/test_fastyaml.py proves it equal to
yaml.safe_load_all (hypothesis).
"""
from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

STR = "tag:yaml.org,2002:str"
MAP = "tag:yaml.org,2002:map"
SEQ = "tag:yaml.org,2002:seq"
MERGE = "tag:yaml.org,2002:merge"

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
HAS_LIBYAML = _Base is not yaml.SafeLoader


class Unsupported(Exception):
    """A construct the fast path leaves to PyYAML's constructor."""


class Loader(_Base):  # type: ignore[misc, valid-type]
    """CSafeLoader (SafeLoader without libyaml) with a memoised implicit resolver."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._tags: dict[tuple[str, bool, bool], str] = {}

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        if self.yaml_path_resolvers:  # none in the safe loader: the call is pure overhead per node
            super().descend_resolver(current_node, current_index)

    def ascend_resolver(self) -> None:
        if self.yaml_path_resolvers:
            super().ascend_resolver()

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode and implicit is not None and not self.yaml_path_resolvers:
            key = (value, implicit[0], implicit[1])
            tag = self._tags.get(key)
            if tag is None:
                tag = self._tags[key] = super().resolve(kind, value, implicit)
            return tag
        return super().resolve(kind, value, implicit)


def construct(loader: Any, node: Any) -> Any:
    """The Python value of `node`, as loader.construct_document(node) gives it (Unsupported otherwise)."""
    building: set[int] = set()
    done: dict[int, Any] = {}
    scalar = loader.construct_object

    def build(n: Any) -> Any:
        cls = type(n)
        if cls is ScalarNode:
            if n.tag == STR:
                return n.value
            return scalar(n, deep=True)
        ident = id(n)
        if ident in done:
            return done[ident]  # an alias: the same object, as PyYAML gives it
        if ident in building:
            raise Unsupported("recursive alias")
        building.add(ident)
        if cls is MappingNode:
            if n.tag != MAP:
                raise Unsupported(n.tag)
            out: Any = {}
            for k, v in n.value:
                if k.tag == MERGE:
                    raise Unsupported("merge key")
                key = build(k)
                try:
                    out[key] = build(v)
                except TypeError:
                    raise Unsupported("unhashable key") from None
        elif cls is SequenceNode:
            if n.tag != SEQ:
                raise Unsupported(n.tag)
            out = [build(v) for v in n.value]
        else:
            raise Unsupported(str(cls))
        building.discard(ident)
        done[ident] = out
        return out

    return build(node)


def documents(loader: Any) -> Any:
    """Each document of `loader`'s stream (None for an empty one), as yaml.safe_load_all gives them."""
    while loader.check_node():
        node = loader.get_node()
        if node is None:
            yield None
            continue
        try:
            value = construct(loader, node)
        except Unsupported:
            loader.constructed_objects, loader.recursive_objects = {}, {}
            value = loader.construct_document(node)
        # the safe constructor's memo is per document (construct_document clears it too)
        loader.constructed_objects, loader.recursive_objects = {}, {}
        yield value
