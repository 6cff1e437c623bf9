"""A small LALR(1) driver over parse tables exported from lark, so that a new process parses
kernels without importing lark or deserialising lark's own table cache (together ~35 ms).

``export_tables`` reads a built ``lark.Lark`` parser (LALR, ``propagate_positions=True``,
``maybe_placeholders=True``, no transformer) and returns its tables as plain data (dicts,
tuples, strings, ints) that ``marshal`` stores and loads in about a millisecond. ``FastParser``
runs them and builds the same tree lark builds: ``Tree``/``Token`` here have the attributes
that ``parse._Builder`` reads (``data``, ``children``, ``meta`` with positions and container
positions; ``type``, ``value``, ``line``, ``column``, ...), and each rule's tree shaping
(filtered tokens, inlined ``_rules``, ``?rule`` single-child expansion, ``None`` placeholders
for absent ``[optional]`` parts, position propagation) is read from lark's own callback chain
of the rule, not re-derived, so that the two agree. A parser whose callbacks are not the ones
understood here is not exported (``export_tables`` raises ``TablesUnavailable``) and the caller
keeps using lark.

The driver reports any syntax error by raising ``ParseFailed`` without details: the caller
parses the text again with lark, whose exception feeds the error messages.
"""
from __future__ import annotations

import sys

TABLE_FORMAT = 1
_SHIFT, _REDUCE = 0, 1


class TablesUnavailable(Exception):
    """The lark parser has a shape this driver does not reproduce."""


class ParseFailed(Exception):
    """The token stream is not in the language; re-parse with lark for the error message."""


class Token(str):
    """A token: the text, with lark's ``Token`` attributes (type and positions)."""

    def __new__(cls, type, value, start_pos=None, line=None, column=None, end_line=None,
                end_column=None, end_pos=None):
        self = super().__new__(cls, value)
        self.type, self.value, self.start_pos = type, value, start_pos
        self.line, self.column = line, column
        self.end_line, self.end_column, self.end_pos = end_line, end_column, end_pos
        return self

    @classmethod
    def new_borrow_pos(cls, type_, value, borrow_t):
        """A token of another type and value at ``borrow_t``'s position."""
        return cls(type_, value, borrow_t.start_pos, borrow_t.line, borrow_t.column,
                   borrow_t.end_line, borrow_t.end_column, borrow_t.end_pos)

    def __repr__(self):
        return f"Token({self.type!r}, {self.value!r})"


class Meta:
    """Source positions of a tree node, filled while parsing (``empty`` until then)."""

    empty = True


class Tree:
    """A parse-tree node: rule name (``data``), children (trees, tokens, None placeholders)."""

    __slots__ = ("data", "children", "meta")

    def __init__(self, data, children):
        self.data, self.children, self.meta = data, children, Meta()

    def __repr__(self):
        return f"Tree({self.data!r}, {self.children!r})"


def export_tables(lark_parser, lexer_patterns: tuple) -> tuple:
    """The LALR tables and tree-shaping recipe of ``lark_parser`` as plain data for
    ``FastParser``; ``lexer_patterns`` (skip regex, token regex, keyword map) is stored with
    them. Raises ``TablesUnavailable`` when the parser is not of the expected kind."""
    from functools import partial

    from lark import Tree as LarkTree
    from lark.parse_tree_builder import (ChildFilter, ChildFilterLALR_NoPlaceholders,
                                         ExpandSingleChild, PropagatePositions)
    from lark.parsers.lalr_analysis import Shift

    try:
        inner = lark_parser.parser.parser.parser
        table, callbacks = inner.parse_table, inner.callbacks
        start, end = table.start_states["start"], table.end_states["start"]
    except (AttributeError, KeyError) as exc:
        raise TablesUnavailable(str(exc)) from None
    rules, rule_ids, states = [], {}, {}

    def recipe(rule) -> tuple:
        f = callbacks.get(rule)
        if not isinstance(f, PropagatePositions) or f.node_filter is not None:
            raise TablesUnavailable(f"rule {rule}: no plain position propagation")
        f = f.node_builder
        include, append_none = None, 0
        if isinstance(f, ChildFilterLALR_NoPlaceholders):
            include = tuple((int(i), bool(x), 0) for i, x in f.to_include)
            f = f.node_builder
        elif type(f).__name__ == "ChildFilterLALR" and isinstance(f, ChildFilter):
            include = tuple((int(i), bool(x), int(n)) for i, x, n in f.to_include)
            append_none, f = f.append_none, f.node_builder
        expand1 = isinstance(f, ExpandSingleChild)
        if expand1:
            f = f.node_builder
        if not (isinstance(f, partial) and f.func is LarkTree and len(f.args) == 1
                and not f.keywords):
            raise TablesUnavailable(f"rule {rule}: builds something else than a tree")
        return (str(rule.origin.name), len(rule.expansion), str(f.args[0]), expand1, include,
                int(append_none))

    # equal actions and token names are one object each, which marshal stores once and
    # references after (a third smaller, loaded in half the time)
    shared: dict = {}
    for state, actions in table.states.items():
        row = {}
        for token_type, (action, arg) in actions.items():
            token_type = sys.intern(str(token_type))   # lark's names can be str subclasses
            if action is Shift:
                entry = (_SHIFT, int(arg))
            else:
                if arg not in rule_ids:
                    rule_ids[arg] = len(rules)
                    rules.append(recipe(arg))
                entry = (_REDUCE, rule_ids[arg])
            row[token_type] = shared.setdefault(entry, entry)
        states[int(state)] = row
    if lark_parser.lexer_conf.callbacks or getattr(lark_parser.options, "transformer", None):
        raise TablesUnavailable("lexer callbacks or a transformer")
    skip, master, keywords = lexer_patterns
    keywords = {str(k): str(v) for k, v in keywords.items()}
    return (TABLE_FORMAT, states, int(start), int(end), tuple(rules),
            (str(skip), str(master), keywords))


class FastParser:
    """Parses a token stream with tables from ``export_tables``."""

    def __init__(self, tables: tuple):
        fmt, self.states, self.start, self.end, self.rules, self.lexer_patterns = tables
        if fmt != TABLE_FORMAT:
            raise TablesUnavailable(f"table format {fmt}")

    def parse(self, tokens) -> Tree:
        """The parse tree of ``tokens`` (an iterable of ``Token``); raises ``ParseFailed``."""
        states, rules, end_state = self.states, self.rules, self.end
        state_stack, value_stack = [self.start], []
        reduce = _reduce
        token = None
        for token in tokens:
            ttype = token.type
            while True:
                action = states[state_stack[-1]].get(ttype)
                if action is None:
                    raise ParseFailed(ttype)
                if action[0] == _SHIFT:
                    state_stack.append(action[1])
                    value_stack.append(token)
                    break
                reduce(rules[action[1]], states, state_stack, value_stack)
        while True:
            action = states[state_stack[-1]].get("$END")
            if action is None or action[0] == _SHIFT:
                raise ParseFailed("$END")
            reduce(rules[action[1]], states, state_stack, value_stack)
            if state_stack[-1] == end_state:
                return value_stack[-1]


def _reduce(rule, states, state_stack, value_stack) -> None:
    """Pop one rule's children, shape them as lark does and push the result."""
    origin, size, name, expand1, include, append_none = rule
    if size:
        children = value_stack[-size:]
        del state_stack[-size:]
        del value_stack[-size:]
    else:
        children = []
    if include is None:
        filtered = children
    else:                                   # lark's ChildFilterLALR
        filtered = []
        for i, to_expand, add_none in include:
            if add_none:
                filtered += [None] * add_none
            if to_expand:
                if filtered:
                    filtered += children[i].children
                else:
                    filtered = children[i].children
            else:
                filtered.append(children[i])
        if append_none:
            filtered += [None] * append_none
    if expand1 and len(filtered) == 1:      # lark's ExpandSingleChild
        value = filtered[0]
    else:
        value = Tree(name, filtered)
    if type(value) is Tree:
        _propagate_positions(value.meta, children)
    action = states[state_stack[-1]][origin]
    state_stack.append(action[1])
    value_stack.append(value)


def _first_meta(children):
    """lark's PropagatePositions._pp_get_meta: the first child that has a position."""
    for c in children:
        if type(c) is Tree:
            if not c.meta.empty:
                return c.meta
        elif isinstance(c, Token):
            return c
    return None


def _propagate_positions(meta, children) -> None:
    """lark's PropagatePositions: a node spans its first to its last positioned child,
    container positions included (those of parentheses lark inlined around an operand)."""
    first = _first_meta(children)
    if first is not None:
        line = getattr(first, "container_line", first.line)
        column = getattr(first, "container_column", first.column)
        start_pos = getattr(first, "container_start_pos", first.start_pos)
        if not hasattr(meta, "line"):
            meta.line, meta.column, meta.start_pos, meta.empty = line, column, start_pos, False
        meta.container_line, meta.container_column = line, column
        meta.container_start_pos = start_pos
    last = _first_meta(reversed(children))
    if last is not None:
        end_line = getattr(last, "container_end_line", last.end_line)
        end_column = getattr(last, "container_end_column", last.end_column)
        end_pos = getattr(last, "container_end_pos", last.end_pos)
        if not hasattr(meta, "end_line"):
            meta.end_line, meta.end_column, meta.end_pos = end_line, end_column, end_pos
            meta.empty = False
        meta.container_end_line, meta.container_end_column = end_line, end_column
        meta.container_end_pos = end_pos


__all__ = ["FastParser", "Token", "Tree", "export_tables", "ParseFailed", "TablesUnavailable",
           "TABLE_FORMAT"]
