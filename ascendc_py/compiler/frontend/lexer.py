"""The kernel language's tokenizer: one regex built from the grammar's terminals, with Python's
indentation and bracket rules. Used through lark (``parse.KernelLexer``) and by the fast front
end (``parse.FastFrontEnd``); it does not import lark (the token class is a parameter).
"""
from __future__ import annotations

_lex_state: dict[str, list] = {"brackets": []}   # the open brackets when lexing stopped
_OPENERS = {"LPAR": ")", "LSQB": "]", "LBRACE": "}"}
_CLOSERS = {"RPAR", "RSQB", "RBRACE"}


class _LexError(Exception):
    """A lexer error at ``pos`` = (line, col, end_line, end_col) in ``src.text``; ``{line}`` in
    the message stands for ``ref_line`` in file coordinates. No message: a bad character."""

    def __init__(self, message: str, pos: tuple, hint: str = "", ref_line: int = 0):
        super().__init__(message)
        self.message, self.pos, self.hint, self.ref_line = message, pos, hint, ref_line


def _tok_pos(tok) -> tuple[int, int, int, int]:
    return tok.line, tok.column, tok.end_line, tok.end_column


def lexer_patterns(terminals, ignore) -> tuple:
    """(skip regex, token regex, keyword map) for ``lex_tokens``, from lark's terminals."""
    terms = sorted(terminals, key=lambda t: (-t.priority, -t.pattern.max_width,
                                             -len(t.pattern.value), t.name))
    keywords = {t.pattern.value: t.name for t in terms if t.pattern.type == "str"
                and t.pattern.value.isidentifier()}
    skip = "|".join(t.pattern.to_regexp() for t in terms if t.name in ignore)
    groups = "|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in terms
                      if t.name not in ignore and t.pattern.value not in keywords)
    return f"(?:{skip})*", f"(?:{skip})*(?:{groups})", keywords


def lex_tokens(text: str, master, skip, keywords: dict, Token):
    """Yield the tokens of ``text``: ``master``/``skip`` are the compiled regexes of
    ``lexer_patterns``, ``Token`` lark's token class or ``lalr.Token``.

    One regex, with Python's indentation and bracket rules: emits _INDENT/_DEDENT, drops
    newlines inside brackets and checks bracket pairs. Indentation strings are compared as
    strings, so mixing tabs and spaces inconsistently is an error (as Python's TabError).
    """
    match = master.match
    brackets: list = []
    _lex_state["brackets"] = brackets       # read by the error messages after a failure
    levels = [""]
    pos, line, line_start, size = 0, 1, 0, len(text)
    tok = None
    while pos < size:
        m = match(text, pos)
        if m is None:
            start = skip.match(text, pos).end()
            if start >= size:
                break
            line += text.count("\n", pos, start)
            col = start - (text.rfind("\n", 0, start) + 1) + 1
            raise _LexError("", (line, col, line, col + 1))
        kind = m.lastgroup
        start, end = m.span(kind)
        if start != pos and text.count("\n", pos, start):     # backslash continuation
            line += text.count("\n", pos, start)
            line_start = text.rfind("\n", pos, start) + 1
        value = m.group(kind)
        first_line, col = line, start - line_start + 1
        if "\n" in value:
            line += value.count("\n")
            line_start = start + value.rfind("\n") + 1
        pos = end
        if kind == "NAME":
            kind = keywords.get(value, "NAME")
        tok = Token(kind, value, start, first_line, col, line, end - line_start + 1, end)
        if kind == "_NEWLINE":
            if brackets or "\n" not in value:
                continue
            yield tok
            indent = value.rsplit("\n", 1)[1].rsplit("\f", 1)[-1]
            if indent == levels[-1]:
                continue
            where = (line, 1, line, len(indent) + 1)
            if indent.startswith(levels[-1]):
                levels.append(indent)
                yield Token.new_borrow_pos("_INDENT", indent, tok)
            elif indent in levels:
                while levels[-1] != indent:
                    levels.pop()
                    yield Token.new_borrow_pos("_DEDENT", indent, tok)
            elif "\t" in indent or any("\t" in lv for lv in levels):
                raise _LexError("inconsistent use of tabs and spaces in indentation",
                                where, "indent with spaces only (4 per level)")
            else:
                raise _LexError("unindent does not match any outer indentation level",
                                where, "line this statement up with the block it ends")
            continue
        if kind in _OPENERS:
            brackets.append(tok)
        elif kind in _CLOSERS:
            if not brackets:
                raise _LexError(f"unmatched '{value}'", _tok_pos(tok),
                                "remove it, or add the opening bracket it closes")
            opener = brackets.pop()
            if _OPENERS[opener.type] != value:
                raise _LexError(f"closing '{value}' does not match opening "
                                f"'{opener.value}' on line {{line}}", _tok_pos(tok),
                                ref_line=opener.line)
        yield tok
    if brackets:
        opener = brackets[-1]
        raise _LexError(f"'{opener.value}' was never closed", _tok_pos(opener),
                        f"add the matching '{_OPENERS[opener.type]}'")
    while len(levels) > 1:
        levels.pop()
        yield Token.new_borrow_pos("_DEDENT", "", tok)
