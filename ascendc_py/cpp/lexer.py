"""Tokens of an Ascend C kernel file: a small preprocessor, a C++ tokenizer, and the two
retaggings that let an LALR grammar parse C++ (the "lexer hack").

* Preprocessor: ``#include`` and ``#pragma`` are accepted and ignored (nothing is read);
  ``#define NAME tokens`` defines an object-like macro, substituted token by token;
  ``#ifdef``/``#ifndef``/``#else``/``#endif`` keep or drop lines (``ASCENDC_CPU_DEBUG`` and
  ``__CCE_KT_TEST__`` count as defined, as in CANN's CPU debug build, so host-only blocks
  guarded by ``#ifndef ASCENDC_CPU_DEBUG`` are dropped); ``#if`` expressions and function-like
  macros are not supported.
* Type names: an identifier that names a type (a builtin type, a class/struct the file defines,
  a template type parameter, a ``using``/``typedef`` alias, an Ascend C class) becomes a
  ``TYPE`` token, so ``(T)x`` is a cast and ``T x;`` a declaration.
* Template brackets: a ``<`` after a name that opens a template argument list (a known template,
  or a balanced ``<...>`` followed by ``(``, ``::``, a name or ``>``) becomes ``TLT`` and its
  ``>`` ``TGT``.
* ``AscendC::`` and ``std::`` qualifiers are dropped: the names are the same without them.

A construct outside the subset that is recognised by its first word (``switch``, ``goto``,
``new``, ``try`` ...) is reported here as "not supported: <construct>" at its position.
"""
from __future__ import annotations

import re

from ..compiler.errors import KernelSyntaxError, SourceLoc
from .names import BUILTIN_TYPES, TEMPLATE_NAMES

_TOKEN_RE = re.compile(r"""
  (?P<ws>[ \t\r\f\v]+|\\\n)
| (?P<nl>\n)
| (?P<comment>//[^\n]*|/\*(?:.|\n)*?\*/)
| (?P<float>(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?[fFlL]?|\d+[eE][+-]?\d+[fFlL]?|\d+[fF](?![\w]))
| (?P<int>(?:0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)(?:[uU]?[lL]{0,2}|[lL]{1,2}[uU]?)(?![\w.]))
| (?P<string>"(?:[^"\\\n]|\\.)*")
| (?P<char>'(?:[^'\\\n]|\\.)+')
| (?P<ident>[A-Za-z_]\w*)
| (?P<op>->|\+\+|--|<<=|>>=|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\|=|\^=|<<|>>|::|\.\.\.
       |[{}()\[\];,.<>+\-*/%&|^!~?:=\#])
""", re.VERBOSE)

KEYWORDS = {
    "class", "struct", "template", "typename", "using", "namespace", "constexpr", "const",
    "static", "inline", "void", "return", "if", "else", "for", "while", "do", "break",
    "continue", "extern", "sizeof", "this", "true", "false", "public", "private", "protected",
    "__aicore__", "__global__", "__gm__", "auto", "unsigned", "signed", "typedef", "nullptr",
    "volatile", "__inline__", "__forceinline__", "enum", "alignas", "switch", "case",
    "default",
}

#: first words of constructs outside the subset -> the construct's name in the message
UNSUPPORTED_WORDS = {
    "goto": "goto",
    "new": "new expression", "delete": "delete expression", "try": "try/catch",
    "catch": "try/catch", "throw": "throw", "operator": "operator overloading",
    "virtual": "virtual function", "union": "union", "friend": "friend declaration",
    "const_cast": "const_cast",
    "dynamic_cast": "dynamic_cast", "typeid": "typeid", "decltype": "decltype",
    "asm": "inline assembly", "__asm__": "inline assembly", "register": "register variable",
    "mutable": "mutable member", "co_await": "coroutine",
    "static_assert": "static_assert", "thread_local": "thread_local",
    "__attribute__": "__attribute__", "noexcept": "noexcept",
}

#: macros CANN's CPU debug build defines (``#ifdef`` sees them)
PREDEFINED = {"ASCENDC_CPU_DEBUG", "__CCE_KT_TEST__", "__CCE_AICORE__"}
_DROPPED_QUALIFIERS = {"AscendC", "std", "matmul"}


class Tok:
    """A token: ``type`` (terminal name), ``value`` (text), 1-based ``line``/``column``."""

    __slots__ = ("type", "value", "line", "column", "end_line", "end_column")

    def __init__(self, type_, value, line, column):
        self.type, self.value, self.line, self.column = type_, value, line, column
        self.end_line, self.end_column = line, column + len(value)

    def __repr__(self):
        return f"Tok({self.type}, {self.value!r}, {self.line}:{self.column})"


#: lines of tokens from an included header are ``k * LINE_BASE + line`` (k: the header's
#: number in INCLUDED[main file]), so that positions stay plain ints through lark
LINE_BASE = 1_000_000
INCLUDED: dict[str, list[str]] = {}
MAX_INCLUDE_DEPTH = 16


def place_of(file: str, line: int) -> tuple[str, int]:
    """The file and line of an (encoded) token line of ``file``'s token stream."""
    if line >= LINE_BASE:
        headers = INCLUDED.get(file, [])
        k = line // LINE_BASE
        if 0 < k <= len(headers):
            return headers[k - 1], line % LINE_BASE
    return file, line


def error_at(file: str, tok_or_pos, message: str, hint: str = "") -> KernelSyntaxError:
    """A KernelSyntaxError at a token (or a (line, col) pair) of ``file``."""
    if isinstance(tok_or_pos, tuple):
        line, col = tok_or_pos
        end = col + 1
    else:
        line, col, end = tok_or_pos.line, tok_or_pos.column, tok_or_pos.end_column
    file, line = place_of(file, line)
    return KernelSyntaxError(message, SourceLoc(file, line, col, line, end), hint=hint)


def unsupported(file: str, where, construct: str, hint: str = "") -> KernelSyntaxError:
    """The one message shape for constructs outside the subset."""
    return error_at(file, where, f"not supported: {construct}", hint)


_OP_TYPES = {
    "{": "LBRACE", "}": "RBRACE", "(": "LPAR", ")": "RPAR", "[": "LSQB", "]": "RSQB",
    ";": "SEMI", ",": "COMMA", ".": "DOT", "<": "LESSTHAN", ">": "MORETHAN", "+": "PLUS",
    "-": "MINUS", "*": "STAR", "/": "SLASH", "%": "PERCENT", "&": "AMP", "|": "VBAR",
    "^": "CIRCUMFLEX", "!": "BANG", "~": "TILDE", "?": "QMARK", ":": "COLON", "=": "EQUAL",
    "->": "ARROW", "++": "INC", "--": "DEC", "<=": "LE", ">=": "GE", "==": "EQEQ",
    "!=": "NE", "&&": "ANDAND", "||": "OROR", "<<": "SHL", ">>": "SHR", "::": "SCOPE",
    "...": "ELLIPSIS", "+=": "AUGASSIGN", "-=": "AUGASSIGN", "*=": "AUGASSIGN",
    "/=": "AUGASSIGN", "%=": "AUGASSIGN", "&=": "AUGASSIGN", "|=": "AUGASSIGN",
    "^=": "AUGASSIGN", "<<=": "AUGASSIGN", ">>=": "AUGASSIGN",
}


def tokenize(text: str, file: str) -> list[Tok]:
    """Raw tokens of ``text`` (comments and blanks dropped), with ``#`` lines as ``PP`` tokens
    holding the whole directive."""
    toks: list[Tok] = []
    pos, line, line_start = 0, 1, 0
    n = len(text)
    at_line_start = True
    while pos < n:
        if at_line_start:
            m = re.match(r"[ \t]*#", text[pos:pos + 200])
            if m:   # a directive: up to the end of the line (with \ continuations)
                end = pos
                while True:
                    nl = text.find("\n", end)
                    if nl < 0:
                        nl = n
                    if nl > 0 and text[nl - 1] == "\\" and nl < n:
                        end = nl + 1
                        continue
                    break
                directive = text[pos:nl]
                col = pos - line_start + 1 + m.end() - 1
                toks.append(Tok("PP", re.sub(r"\\\n", " ", directive).strip(), line, col))
                line += directive.count("\n")
                pos = nl
                continue
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            raise error_at(file, (line, pos - line_start + 1),
                           f"unexpected character {text[pos]!r}")
        kind, value = m.lastgroup, m.group()
        col = pos - line_start + 1
        if kind == "nl":
            line += 1
            line_start = m.end()
            at_line_start = True
        elif kind in ("ws", "comment"):
            newlines = value.count("\n")
            if newlines:
                line += newlines
                line_start = pos + value.rfind("\n") + 1
                at_line_start = True
        else:
            at_line_start = False
            if kind == "ident":
                typ = value.upper() if value in KEYWORDS else "IDENT"
                if value in KEYWORDS and value.startswith("__"):
                    typ = value.strip("_").upper() + "_KW"
            elif kind == "op":
                typ = _OP_TYPES[value] if value != "#" else "HASH"
            else:
                typ = kind.upper()
            toks.append(Tok(typ, value, line, col))
        pos = m.end()
    return toks


#: macros Ascend C defines for kernels (``if ASCEND_IS_AIV { ... }``)
BUILTIN_MACROS = {"ASCEND_IS_AIV": "(AscendIsAiv())", "ASCEND_IS_AIC": "(AscendIsAic())",
                  "ASCEND_IS_NOT_AIV": "(!AscendIsAiv())", "ASCEND_IS_NOT_AIC": "(!AscendIsAic())"}


def _find_header(name: str, file: str, include_dirs) -> str | None:
    """The path of ``#include "name"``: next to the including file, then in
    ``include_dirs``; None when it is not found (Ascend C's own headers)."""
    import os
    dirs = ([os.path.dirname(file)] if os.path.isfile(file) else []) + list(include_dirs)
    for d in dirs:
        path = os.path.join(d, name)
        if os.path.isfile(path):
            return os.path.abspath(path)
    return None


def preprocess(toks: list[Tok], file: str, defines: dict | None = None,
               include_dirs=()) -> list[Tok]:
    """Apply the directives (see the module docstring) and object-like macros; ``defines``
    are macros given by the caller (``-D``); ``#include "x.h"`` reads x.h when it is found
    next to the file or in ``include_dirs`` (other includes are accepted and not read)."""
    main = file
    INCLUDED[main] = []
    out: list[Tok] = []
    macros: dict[str, list[Tok]] = {k: tokenize(v, file) for k, v in BUILTIN_MACROS.items()}
    for k, v in (defines or {}).items():
        macros[k] = tokenize(str(v), f"<define {k}>")
    defined = set(PREDEFINED) | set(defines or ())
    stack: list[tuple[bool, bool]] = []     # (this branch active, any branch taken)
    active = True
    work = [iter(toks)]
    files = [file]
    while work:
        t = next(work[-1], None)
        if t is None:
            work.pop()
            files.pop()
            continue
        file = files[-1]
        if t.type != "PP":
            if not active:
                continue
            if t.type == "IDENT" and t.value in macros:
                for r in macros[t.value]:
                    c = Tok(r.type, r.value, t.line, t.column)
                    c.end_column = t.end_column
                    out.append(c)
                continue
            if t.type == "HASH":
                raise unsupported(main, t, "'#' outside a directive")
            out.append(t)
            continue
        body = t.value[1:].strip()
        word = re.match(r"\w*", body).group()
        rest = body[len(word):].strip()
        if word in ("ifdef", "ifndef"):
            name = rest.split()[0] if rest.split() else ""
            cond = (name in defined) == (word == "ifdef")
            stack.append((active, cond))
            active = active and cond
        elif word == "else":
            if not stack:
                raise error_at(main, t, "#else without #if")
            outer, taken = stack[-1]
            active = outer and not taken
            stack[-1] = (outer, True)
        elif word == "endif":
            if not stack:
                raise error_at(main, t, "#endif without #if")
            active = stack.pop()[0]
        elif not active:
            continue
        elif word == "pragma" and rest.split()[:1] == ["unroll"]:
            out.append(Tok("PRAGMA_UNROLL", "#pragma unroll", t.line, t.column))
        elif word == "include" and rest.startswith('"') and rest.count('"') >= 2:
            name = rest[1:rest.index('"', 1)]
            path = _find_header(name, file if file == main else place_of(main, t.line)[0],
                                include_dirs)
            if path is None:
                continue
            if len(work) > MAX_INCLUDE_DEPTH:
                raise error_at(main, t, f"#include nested more than {MAX_INCLUDE_DEPTH} deep")
            import linecache
            with open(path) as f:     # the text compiled is the text errors show
                text = f.read()
            linecache.cache[path] = (len(text), None, text.splitlines(keepends=True), path)
            INCLUDED[main].append(path)
            base = len(INCLUDED[main]) * LINE_BASE
            sub = tokenize(text, path)
            for s in sub:
                s.line += base
                s.end_line += base
            work.append(iter(sub))
            files.append(path)
        elif word in ("include", "pragma", "undef", "line", "error", ""):
            if word == "error":
                raise error_at(main, t, f"#error {rest}")
            if word == "undef":
                macros.pop(rest.strip(), None)
                defined.discard(rest.strip())
        elif word == "define":
            m = re.match(r"([A-Za-z_]\w*)(\()?", rest)
            if m is None:
                raise error_at(main, t, "#define needs a name")
            if m.group(2):
                raise unsupported(main, t, "function-like macro",
                                  "write an __aicore__ inline function instead")
            name = m.group(1)
            defined.add(name)
            value = rest[m.end():]
            sub = tokenize(value, file) if value.strip() else []
            for s in sub:
                if s.type == "PP":
                    raise unsupported(main, t, "a macro whose value is a directive")
            macros[name] = sub
        elif word in ("if", "elif"):
            raise unsupported(main, t, f"#{word} (conditional compilation on an expression)",
                              "use #ifdef/#ifndef, or remove the condition")
        else:
            raise unsupported(main, t, f"preprocessor directive #{word}")
    if stack:
        raise error_at(main, toks[-1] if toks else (1, 1), "#ifdef/#ifndef without #endif")
    return out


def _scan_type_names(toks: list[Tok]) -> set[str]:
    """Names the file declares as types: class/struct names, template type parameters,
    ``using X =`` and ``typedef ... X;`` aliases."""
    names = set()
    for i, t in enumerate(toks):
        if t.type in ("CLASS", "STRUCT", "TYPENAME") and i + 1 < len(toks) and \
                toks[i + 1].type == "IDENT":
            names.add(toks[i + 1].value)
        elif t.type == "USING" and i + 2 < len(toks) and toks[i + 1].type == "IDENT" and \
                toks[i + 2].type == "EQUAL":
            names.add(toks[i + 1].value)
        elif t.type == "TYPEDEF":
            j = i + 1
            while j < len(toks) and toks[j].type != "SEMI":
                j += 1
            if toks[j - 1].type == "IDENT":
                names.add(toks[j - 1].value)
    return names


_TEMPLATE_INNER = {"TYPENAME", "CLASS", "EQUAL", "IDENT", "TYPE", "INT", "FLOAT", "SCOPE", "COMMA", "STAR", "PLUS", "MINUS",
                   "SLASH", "LPAR", "RPAR", "SIZEOF", "CONST", "UNSIGNED", "TRUE", "FALSE",
                   "VOID", "GM_KW", "PERCENT", "AMP", "DOT"}
_TEMPLATE_FOLLOW = {"LPAR", "SCOPE", "IDENT", "TYPE", "MORETHAN", "SHR", "COMMA", "AMP",
                    "STAR", "SEMI", "RPAR", "LBRACE"}


def _template_close(toks: list[Tok], i: int, known: bool) -> int:
    """The index of the ``>`` closing the ``<`` at ``i``, or -1 if it is a comparison."""
    depth, paren = 0, 0
    j = i
    while j < len(toks):
        t = toks[j]
        if t.type == "LESSTHAN":
            depth += 1
        elif t.type == "MORETHAN" and paren == 0:
            depth -= 1
            if depth == 0:
                break
        elif t.type == "SHR" and paren == 0 and depth >= 2:
            # split '>>' into two '>'
            a = Tok("MORETHAN", ">", t.line, t.column)
            b = Tok("MORETHAN", ">", t.line, t.column + 1)
            toks[j:j + 1] = [a, b]
            continue
        elif t.type == "LPAR":
            paren += 1
        elif t.type == "RPAR":
            paren -= 1
            if paren < 0:
                return -1
        elif t.type not in _TEMPLATE_INNER:
            return -1
        j += 1
    if j >= len(toks):
        return -1
    if known:
        return j
    nxt = toks[j + 1].type if j + 1 < len(toks) else "$END"
    return j if nxt in _TEMPLATE_FOLLOW else -1


def retag(toks: list[Tok]) -> list[Tok]:
    """Drop ``AscendC::``/``std::``, mark type names (``TYPE``) and template brackets
    (``TLT``/``TGT``) in place (see the module docstring)."""
    toks = [t for k, t in enumerate(toks)     # obj.template Get<T>(): the keyword is dropped
            if not (t.type == "TEMPLATE" and k > 0 and toks[k - 1].type in ("DOT", "ARROW"))]
    toks = [t for k, t in enumerate(toks)
            if not (t.type == "IDENT" and t.value in _DROPPED_QUALIFIERS and k + 1 < len(toks)
                    and toks[k + 1].type == "SCOPE")
            and not (t.type == "SCOPE" and k > 0 and toks[k - 1].type == "IDENT"
                     and toks[k - 1].value in _DROPPED_QUALIFIERS
                     and (k < 2 or toks[k - 2].type != "SCOPE"))]
    types = _scan_type_names(toks) | BUILTIN_TYPES
    for k, t in enumerate(toks):
        if t.type == "IDENT" and (t.value in types or re.match(r"(ORIG_)?DTYPE_\w+$", t.value)):
            prev = toks[k - 1].type if k else ""
            if prev not in ("DOT", "ARROW", "SCOPE"):
                t.type = "TYPE"
    templates = set(TEMPLATE_NAMES) | {t.value for k, t in enumerate(toks) if k > 0 and
                                       toks[k - 1].type == "TEMPLATE"}
    k = 0
    while k < len(toks) - 1:
        t = toks[k]
        if t.type in ("IDENT", "TYPE", "TEMPLATE") and toks[k + 1].type == "LESSTHAN":
            known = t.value in templates or t.type in ("TYPE", "TEMPLATE")
            close = _template_close(toks, k + 1, known)
            if close > 0:
                toks[k + 1].type = "TLT"
                toks[close].type = "TGT"
        k += 1
    _mark_ctor_names(toks)
    return toks


def _mark_ctor_names(toks: list[Tok]) -> None:
    """``K::K(`` / ``K<T>::K(``: the second ``K`` names a constructor defined outside its
    class (a CTOR_NAME token, so the grammar tells it from a qualified type name)."""
    for k in range(1, len(toks) - 2):
        if toks[k].type != "SCOPE" or toks[k + 1].type not in ("TYPE", "IDENT") or \
                toks[k + 2].type != "LPAR":
            continue
        j = k - 1
        if toks[j].type == "TGT":
            depth = 0
            while j > 0:
                if toks[j].type == "TGT":
                    depth += 1
                elif toks[j].type == "TLT":
                    depth -= 1
                    if depth == 0:
                        break
                j -= 1
            j -= 1
        if j >= 0 and toks[j].type in ("TYPE", "IDENT") and toks[j].value == toks[k + 1].value:
            toks[k + 1].type = "CTOR_NAME"


def check_unsupported_words(toks: list[Tok], file: str) -> None:
    """'not supported: <construct>' at the first word of a construct outside the subset."""
    for k, t in enumerate(toks):
        if t.type == "LSQB" and (k == 0 or toks[k - 1].type not in ("IDENT", "RSQB", "RPAR")):
            raise unsupported(file, t, "lambda expression" if k + 1 < len(toks) and
                              toks[k + 1].type in ("RSQB", "EQUAL", "AMP") else
                              "'[' here (arrays are constexpr globals only)")
        if t.type == "IDENT" and t.value in UNSUPPORTED_WORDS:
            prev = toks[k - 1].type if k else ""
            if prev in ("DOT", "ARROW"):
                continue
            raise unsupported(file, t, UNSUPPORTED_WORDS[t.value])


#: terminals the grammar drops from the tree (punctuation, keywords that carry nothing)
FILTERED = frozenset(
    "LBRACE RBRACE LPAR RPAR LSQB RSQB SEMI COMMA DOT QMARK COLON SCOPE ARROW TLT TGT EQUAL "
    "USING NAMESPACE TEMPLATE RETURN IF ELSE FOR WHILE DO BREAK CONTINUE EXTERN SIZEOF "
    "TYPEDEF ENUM CLASS STRUCT TYPENAME SWITCH CASE DEFAULT".split())


def lex(text: str, file: str, defines: dict | None = None, include_dirs=()) -> list[Tok]:
    """The token stream the grammar parses."""
    toks = preprocess(tokenize(text, file), file, defines, include_dirs)
    toks = [t for t in toks if not (t.type == "IDENT" and t.value == "explicit")]
    check_unsupported_words(toks, file)
    toks = retag(toks)
    for t in toks:
        if t.type in FILTERED:
            t.type = "_" + t.type
    return toks
