"""Parse an Ascend C kernel file into lark's tree (``grammar_cpp.lark``, LALR), with syntax
errors as ``KernelSyntaxError`` at the file's line and column (never a lark stack)."""
from __future__ import annotations

import hashlib
import pathlib
import sys
import threading

import lark
from lark.lexer import Lexer as _LarkLexer

from ..compiler.errors import KernelSyntaxError
from .lexer import Tok, error_at, lex

_GRAMMAR = pathlib.Path(__file__).with_name("grammar_cpp.lark")
_parser = None
_lock = threading.Lock()
_state = threading.local()

_TEXT = {"LBRACE": "'{'", "RBRACE": "'}'", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['",
         "RSQB": "']'", "SEMI": "';'", "COMMA": "','", "DOT": "'.'", "EQUAL": "'='",
         "IDENT": "a name", "TYPE": "a type name", "INT": "a number", "FLOAT": "a number",
         "$END": "the end of the file", "COLON": "':'", "TGT": "'>'", "TLT": "'<'"}


class _Feed(_LarkLexer):
    """Hands lark the tokens cpp/lexer.py made (as lark Tokens)."""

    def __init__(self, conf):
        pass

    def lex(self, data):
        for t in _state.tokens:
            yield lark.Token(t.type, t.value, line=t.line, column=t.column,
                             end_line=t.end_line, end_column=t.end_column)


def _parser_instance():
    """The process-wide parser; its LALR tables are cached under the compile cache folder
    (building them takes about two seconds)."""
    global _parser
    with _lock:
        if _parser is None:
            from ..compiler.cachedir import cache_dir, is_regular_or_missing
            grammar = _GRAMMAR.read_text()
            opts = dict(parser="lalr", lexer=_Feed, propagate_positions=True,
                        maybe_placeholders=True)
            key = hashlib.sha256(f"{grammar}\0{lark.__version__}\0{sys.version_info[:2]}"
                                 .encode()).hexdigest()[:16]
            root = cache_dir()
            path = root / f"cpp_lark_tables_{key}.pickle" if root is not None else None
            if path is None or not is_regular_or_missing(path):
                _parser = lark.Lark(grammar, **opts)
            else:
                try:
                    _parser = lark.Lark(grammar, cache=str(path), **opts)
                except OSError:     # the cache could not be written: build without it
                    _parser = lark.Lark(grammar, **opts)
        return _parser


def parse_tokens(tokens: list[Tok], file: str):
    """The lark tree of a token list; a KernelSyntaxError at the first token that does not
    fit the grammar."""
    parser = _parser_instance()
    _state.tokens = tokens
    try:
        return parser.parse("")
    except lark.exceptions.UnexpectedToken as exc:
        tok = exc.token
        if tok.type == "$END":
            last = tokens[-1] if tokens else None
            where = (last.line, last.end_column) if last else (1, 1)
            found = "the end of the file"
        else:
            where = (tok.line, tok.column)
            found = repr(str(tok))
        expected = sorted({_TEXT.get(e.lstrip("_"), e.lstrip("_").lower()) for e in (exc.expected or ())
                           if not e.startswith("__")})
        hint = ("expected " + ", ".join(expected[:8]) + (" ..." if len(expected) > 8 else "")) \
            if expected else ""
        err = error_at(file, where, f"syntax error: unexpected {found}", hint)
        raise err from None
    except lark.exceptions.LarkError as exc:   # any other parser failure, at its position
        line = getattr(exc, "line", 1) or 1
        col = getattr(exc, "column", 1) or 1
        raise KernelSyntaxError(f"syntax error: {type(exc).__name__}",
                                error_at(file, (line, col), "").loc) from None
    finally:
        _state.tokens = ()


def parse_text(text: str, file: str):
    """Tokens (preprocessed, retagged) and then the tree of a whole kernel file."""
    return parse_tokens(lex(text, file), file)
