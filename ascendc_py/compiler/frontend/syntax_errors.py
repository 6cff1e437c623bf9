"""Syntax errors in kernel source: lark's errors and the lexer's, translated into
``KernelSyntaxError`` messages that say what was found and what was expected, and name the
common slips (missing ':', C-style ``for``, ``++``, ``&&``, ``!x``, unbalanced brackets, bad
indentation).
"""
from __future__ import annotations

import keyword
import re

from ..errors import KernelSyntaxError, SourceLoc
from .lexer import _OPENERS, _LexError, _tok_pos
from .source import KernelSource

terminal_text: dict[str, str] = {}   # terminal name -> its literal text (filled with the parser)

_BLOCK_WORDS = {"if", "elif", "else", "for", "while", "def", "class", "with", "try", "except",
                "finally", "async"}
_EXPR_START = {"(", "[", "{", "-", "+", "~", "not", "lambda", "await", "True", "False", "None",
               "*", "**", "yield", "..."}
_OPERATORS = {"+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "@", "<", ">", "==",
              "!=", "<=", ">=", "in", "not in", "is", "is not", "and", "or", "if", ".", "(", "["}
_NAMED_TERMINALS = {"NAME": "a name", "NUMBER": "a number", "STRING": "a string",
                    "_NEWLINE": "the end of the line", "_INDENT": "an indented block",
                    "_DEDENT": "the end of the block", "$END": "the end of the source",
                    "AUGOP": "an operator such as '+='", "ELLIPSIS": "'...'"}


def _error_at(src: KernelSource, pos, message: str, hint: str = "") -> KernelSyntaxError:
    """A KernelSyntaxError at a position (line, col, end_line, end_col) relative to src.text."""
    line, col, end_line, end_col = pos
    dl = src.first_line - 1
    loc = SourceLoc(src.file, line + dl, col + src.col_offset, end_line + dl,
                    end_col + src.col_offset)
    return KernelSyntaxError(message, loc, hint=hint)


def _code_only(line: str) -> str:
    """The line with string literals and the comment removed (a rough cut for heuristics)."""
    line = re.sub(r"'[^']*'|\"[^\"]*\"", "''", line)
    return line.split("#", 1)[0]


def _header_line(lines: list[str], before: int) -> int:
    """The 1-based number of the nearest line before ``before`` ending in ':'."""
    for n in range(before - 1, 0, -1):
        if _code_only(lines[n - 1]).rstrip().endswith(":"):
            return n
    return 0


def _first_word(line: str) -> str:
    m = re.match(r"\s*(\w+)", line)
    return m.group(1) if m else ""


def _words(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _expected_words(expected) -> str:
    names = set(expected)
    text = {**terminal_text, "NOT_IN": "not in", "IS_NOT": "is not"}
    words = []
    if "NAME" in names and "NUMBER" in names:
        words.append("an expression")
        names = {n for n in names if n not in ("NAME", "NUMBER", "STRING", "ELLIPSIS")
                 and text.get(n) not in _EXPR_START}
    ops = {n for n in names if text.get(n) in _OPERATORS}
    if len(ops) >= 4:
        words.append("an operator")
        names -= ops
    rest = sorted(_NAMED_TERMINALS.get(n) or f"'{text.get(n, n)}'" for n in names)
    words += rest[:8]
    return _words(words) if words else ""


def _found_words(tok) -> str:
    kind = tok.type
    if kind in ("$END", "_NEWLINE", "_DEDENT", "_INDENT"):
        return _NAMED_TERMINALS[kind].replace("the ", "", 1)
    if kind in ("NAME", "NUMBER"):
        return f"{kind.lower()} `{tok.value}`"
    if kind == "STRING":
        return "string"
    value = " ".join(tok.value.split())
    return f"keyword `{value}`" if value.replace(" ", "").isalpha() else f"'{value}'"


def _slip(code: str) -> tuple[str, str] | None:
    """Name a common non-Python habit on the failing line, if there is one."""
    if re.match(r"\s*for\s*\(", code) and ";" in code:
        return ("C-style `for (init; condition; step)` loops are not Python",
                "write `for i in range(start, stop, step):`")
    for op, word in (("&&", "and"), ("||", "or")):
        if op in code:
            return f"`{op}` is not a Python operator", f"use `{word}`"
    m = re.search(r"\+\+|--", code)
    if m:
        sign = m.group()[0]
        return (f"`{m.group()}` is not a Python operator", f"write `i {sign}= 1`")
    return None


def _lex_error(e: _LexError, src: KernelSource, text: str) -> KernelSyntaxError:
    """Translate the lexer's error (a bad character, indentation or bracket)."""
    if e.message:
        message = e.message.format(line=e.ref_line + src.first_line - 1)
        return _error_at(src, e.pos, message, e.hint)
    lines = text.splitlines()
    line, col = e.pos[:2]
    code = lines[line - 1] if 0 < line <= len(lines) else ""
    char = code[col - 1: col]
    slip = _slip(_code_only(code))
    if slip:
        return _error_at(src, (line, 1 + len(code) - len(code.lstrip()), line, len(code) + 1),
                         *slip)
    pos = (line, col, line, col + 1)
    if char == "!":
        return _error_at(src, pos, "`!` is not a Python operator",
                         "use `not x` for negation; `!=` compares")
    if char in "\"'":
        return _error_at(src, (line, col, line, len(code) + 1), "unterminated string literal",
                         "close the string with the quote it starts with")
    if char == "?":
        return _error_at(src, pos, "invalid character '?'",
                         "the conditional expression is `a if condition else b`")
    hint = "use straight quotes: ' or \"" if char in "\u201c\u201d\u2018\u2019" else ""
    return _error_at(src, pos, f"invalid character {char!r} (U+{ord(char or ' '):04X})", hint)


def _syntax_error(e, src: KernelSource, text: str, brackets: list) -> KernelSyntaxError:
    """Translate one of lark's UnexpectedInput errors into a KernelSyntaxError."""
    lines = text.splitlines()
    tok = e.token       # KernelLexer raises _LexError, so this is an UnexpectedToken
    kind = tok.type
    try:    # what the parser can really accept here (LALR's `expected` over-approximates)
        expected = set(e.accepts or e.expected or ())
    except Exception:   # pragma: no cover - depends on lark internals
        expected = set(e.expected or ())
    if kind == "$END":
        n = len(lines)
        while n > 1 and not lines[n - 1].strip():
            n -= 1
        pos = (n, len(lines[n - 1]) + 1, n, len(lines[n - 1]) + 2)
    elif kind in ("_INDENT", "_DEDENT"):
        indent = len(tok.value)
        pos = (tok.end_line, indent + 1, tok.end_line, len(lines[tok.end_line - 1]) + 1)
    else:
        pos = _tok_pos(tok)
    line = pos[0]
    code = _code_only(lines[line - 1]) if 0 < line <= len(lines) else ""

    slip = _slip(code)
    if slip and kind != "_INDENT":
        start = 1 + len(code) - len(code.lstrip())
        return _error_at(src, (line, start, line, len(code.rstrip()) + 1), *slip)
    if kind == "_INDENT":
        return _error_at(src, pos, "unexpected indent",
                         "this line is indented more than the block it belongs to")
    if "_INDENT" in expected:
        header = _header_line(lines, line + 1 if kind in ("_NEWLINE", "$END") else line)
        word = _first_word(lines[header - 1]) if header else ""
        what = f"`{word}` statement" if word in _BLOCK_WORDS else "the line ending in ':'"
        where = f" on line {header + src.first_line - 1}" if header else ""
        return _error_at(src, pos, f"expected an indented block after {what}{where}",
                         "indent the body (4 spaces), or write `pass` for an empty body")
    colon = next((n for n in expected if terminal_text.get(n) == ":"), None)
    if colon and kind == "_NEWLINE":
        word = _first_word(lines[line - 1])
        what = f" at the end of the `{word}` line" if word in _BLOCK_WORDS else ""
        return _error_at(src, pos, f"expected ':'{what}",
                         "a block header such as `if x:` ends with a colon")
    if colon and tok.value == "{":
        return _error_at(src, pos, "expected ':'",
                         "Python blocks start with ':' and an indented body, not '{ }'")
    word = _first_word(code)
    if tok.value == "=" and word in ("if", "elif", "while"):
        return _error_at(src, pos, "invalid syntax: '=' assigns", "use '==' to compare")
    if keyword.iskeyword(word) and tok.value.endswith("=") \
            and re.match(rf"\s*{word}\s*{re.escape(tok.value)}", code):
        return _error_at(src, pos, f"`{word}` is a Python keyword and cannot be used as a name",
                         f"rename it, e.g. `{word}_`")
    if brackets and kind not in ("$END",) and line > brackets[-1].line:
        opener = brackets[-1]
        opener_code = lines[opener.line - 1]
        first = lines[line - 1]
        starts_line = first[: tok.column - 1].strip() == ""
        indent_of = (lambda s: len(s) - len(s.lstrip()))
        if starts_line and indent_of(first) <= indent_of(opener_code):
            return _error_at(src, _tok_pos(opener), f"'{opener.value}' was never closed",
                             f"add the matching '{_OPENERS[opener.type]}'")
    message = f"invalid syntax: unexpected {_found_words(tok)}"
    wanted = _expected_words(expected)
    if wanted:
        message += f"; expected {wanted}"
    hint = ""
    if brackets and kind in ("NAME", "NUMBER", "STRING") and "COMMA" in expected:
        hint = "did you forget a comma?"
    return _error_at(src, pos, message, hint)
