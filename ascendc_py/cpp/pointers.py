"""Local pointers over a struct's words and GM scalar pointers: the ``CopyTiling`` idiom.

Ascend C kernels copy a tiling struct (their own or a ``TCubeTiling``) from GM word by word::

    uint32_t *ptr = reinterpret_cast<uint32_t *>(tiling);          // a local struct
    auto tiling32 = reinterpret_cast<__gm__ uint32_t *>(tilingGM);   // the GM_ADDR parameter
    for (uint32_t i = 0; i < sizeof(TCubeTiling) / sizeof(uint32_t); i++, ptr++) {
        *ptr = *(tiling32 + i);
    }

Pointers are compile-time values here: a local pointer is a view of a local struct at a word
offset (``WordPtr``), a GM scalar pointer is a GM_ADDR parameter at a word offset (``GmPtr``);
``p + k``, ``p[k]``, ``p++``, ``*p`` move and read them with C's semantics as long as every
offset is known at compile time. A ``for`` loop that names a pointer is therefore unrolled at
compile time (its bounds must be constants). Copying word ``j`` of a GM_ADDR parameter into
word ``k`` of a local struct makes that parameter carry the struct (the tiling is passed from
Python as for ``GET_TILING_DATA``: ``tiling.py``), and field ``k`` takes field ``j``'s value; a
``TCubeTiling`` local copied whole, word ``k`` from word ``k``, is that parameter's
``asc.adv.TCubeTiling``. Anything else through a pointer is refused at its line.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..compiler import ast as A
from ..compiler.errors import KernelTypeError
from . import ctypes_c as C
from .ctypes_c import CT
from .lower_expr import E, Obj, Var, attr, name

MAX_UNROLL = 65536
_WORD = ("uint32", "int32", "float32")


@dataclass(frozen=True)
class WordPtr:
    """``ct *`` pointing at 32-bit word ``word`` of a local struct (an Obj or a TCubeTiling
    Var)."""
    target: Any
    word: int
    ct: CT


@dataclass(frozen=True)
class GmPtr:
    """``__gm__ ct *`` over the GM_ADDR parameter ``pname`` at element ``word``."""
    pname: str
    word: int
    ct: CT


@dataclass(frozen=True)
class GmWord:
    """The value ``*GmPtr``: only a word copied into a local struct is supported."""
    pname: str
    word: int
    ct: CT


@dataclass
class PtrVar:
    """A local pointer variable: its current value (an E with a ``ref``) and the run-time
    nesting it was declared at (it may only move where every enclosing condition is known at
    compile time)."""
    e: Any
    depth: int


@dataclass
class CtVar:
    """A loop counter of a compile-time unrolled loop: a value known at each step."""
    value: Any
    ct: CT


def ptr_e(ref) -> E:
    return E(None, CT(ref.ct.name, ptr=1, gm=isinstance(ref, GmPtr)), None, ref=ref)


def binding_value(lw, b, t):
    if isinstance(b, PtrVar):
        return b.e
    if isinstance(b, CtVar):
        return lw.const_e(b.value, b.ct, lw.loc(t))
    from .control import Arr, ArrRef
    if isinstance(b, Arr):
        return E(None, CT(b.ct.name, ptr=1), None, ref=ArrRef(b))
    return None


def struct_words(lw, target, t) -> list:
    """[(field name, CT)] of the 32-bit words of a local struct (all fields 32-bit)."""
    if isinstance(target, Obj):
        fields = list(target.cls.field_types(lw).items())
    else:
        from ..adv import TCUBE_TILING_FIELDS
        fields = [(f, C.INT32) for f in TCUBE_TILING_FIELDS]
    for fname, fct in fields:
        if fct.ptr or fct.name not in _WORD:
            raise lw.unsupported(t, f"a word pointer over a struct with the field '{fname}' "
                                    f"of type {fct.text()} (only 32-bit scalar fields)")
    return fields


def sizeof_struct(lw, ct: CT, t) -> int:
    if ct.name == "TCubeTiling":
        from ..adv import TCUBE_TILING_FIELDS
        return 4 * len(TCUBE_TILING_FIELDS)
    size, align = 0, 1
    for fname, fct in ct.cls.field_types(lw).items():
        if not fct.is_scalar or fct.ptr:
            raise lw.unsupported(t, f"sizeof({ct.text()}) with the field '{fname}' of type "
                                    f"{fct.text()}")
        n = max(fct.bits // 8, 1)
        size = -(-size // n) * n + n
        align = max(align, n)
    return -(-size // align) * align


def cast(lw, ct: CT, e: E, loc):
    """``reinterpret_cast<T *>(x)`` / ``(T *)x`` when ``x`` is a local struct or a pointer,
    else None (the caller's casts apply)."""
    if ct.ptr != 1:
        return None
    target = e.const if isinstance(e.const, Obj) and e.const.cls.is_struct else None
    if target is None and isinstance(e.ref, Var) and e.ref.ct.name == "TCubeTiling":
        target = e.ref
    if target is not None:
        if ct.gm or ct.name not in _WORD:
            raise KernelTypeError(f"a local struct is read here through uint32_t *, int32_t * "
                                  f"or float *, not {ct.text()}", loc)
        return ptr_e(WordPtr(target, 0, CT(ct.name)))
    if isinstance(e.ref, (WordPtr, GmPtr)):
        if ct.name not in _WORD:
            raise KernelTypeError(f"a word pointer cast to {ct.text()}", loc)
        return ptr_e(type(e.ref)(e.ref.target if isinstance(e.ref, WordPtr) else e.ref.pname,
                                 e.ref.word, CT(ct.name)))
    return None


def gm_ref(lw, ct: CT, e: E):
    """The GmPtr of ``(__gm__ T *)param`` for a 32-bit T, else None."""
    if ct.name in _WORD and isinstance(e.node, A.Name) and e.ct.name == "GM_ADDR" and \
            e.node.id in getattr(lw, "entry_params", {}):
        return GmPtr(e.node.id, 0, CT(ct.name))
    return None


def arith(lw, op: str, a: E, b: E, loc):
    """``p + k``, ``k + p``, ``p - k`` with ``k`` a compile-time integer (None: a GM pointer
    moved by a run-time offset, which the caller lowers as before)."""
    p, k = (a, b) if a.ref is not None else (b, a)
    if not isinstance(p.ref, (WordPtr, GmPtr)):
        raise KernelTypeError(f"operator '{op}' on an address (only pointers declared as "
                              f"T * move)", loc)
    if op not in ("+", "-") or (op == "-" and p is b) or b.ref is not None and a.ref is not None:
        raise KernelTypeError(f"operator '{op}' on a pointer (only p + k and p - k)", loc)
    if isinstance(p.ref, GmPtr) and p.node is not None and not k.is_const:
        return None
    if not k.is_const or not k.ct.is_int:
        raise KernelTypeError("a pointer offset must be known at compile time here (the loop "
                              "that moves the pointer is unrolled; its bounds must be "
                              "constants)", loc)
    r = p.ref
    word = r.word + (k.const if op == "+" else -k.const)
    out = ptr_e(type(r)(r.target if isinstance(r, WordPtr) else r.pname, word, r.ct))
    if p.node is not None:
        out.node = A.BinOp(loc, op, p.node, k.node) if p is a else A.BinOp(loc, op, k.node,
                                                                           p.node)
    return out


def deref(lw, e: E, t) -> E:
    """``*p``."""
    loc = lw.loc(t)
    r = e.ref
    if isinstance(r, GmPtr) and getattr(lw, "word_store", False):   # a tiling copy's word
        return E(None, r.ct, None, ref=GmWord(r.pname, r.word, r.ct))
    if e.node is not None and e.ct.ptr and e.ct.gm and not isinstance(r, WordPtr):
        return gm_read(lw, e.node, CT(e.ct.name), lw.const_e(0, C.INT32, loc).node, loc)
    if not isinstance(r, WordPtr):
        raise lw.unsupported(t, "pointer dereference (*p) of this pointer",
                             "only local pointers over a struct and GM pointers in a tiling "
                             "copy are modelled")
    fields = struct_words(lw, r.target, t)
    if not 0 <= r.word < len(fields):
        raise KernelTypeError(f"the pointer is {r.word} words into a struct of {len(fields)} "
                              f"words: outside it", loc)
    fname, fct = fields[r.word]
    if fct.name != r.ct.name:
        raise lw.unsupported(t, f"reading the {fct.text()} field '{fname}' through a "
                                f"{r.ct.text()} pointer (a bit reinterpretation)")
    if isinstance(r.target, Obj):
        return lw.binding_value(r.target.members[fname], t)
    from .matmul import tiling_field
    return E(attr(name(r.target.py, loc), tiling_field(fname), loc), C.INT32, "int32")


def gm_read(lw, pointer, elem: CT, index, loc) -> E:
    """``p[i]`` / ``*p`` of a ``__gm__ T *``: a scalar read from GM (as ``GlobalTensor<T>``'s
    ``GetValue`` on a tensor over ``p``)."""
    from .loops import names_in
    from .lower_expr import asc_attr, call
    reads = lw.__dict__.setdefault("gm_reads", {})
    for pname in names_in(pointer) & set(getattr(lw, "entry_params", {})):
        reads.setdefault(pname, loc)
    py = lw.fresh("$gm")
    lw.emit(A.Assign(loc, (name(py, loc),), call(asc_attr("GlobalTensor", loc), [], loc)))
    lw.emit(A.ExprStmt(loc, call(attr(name(py, loc), "set_global_buffer", loc), [pointer],
                                 loc)))
    return E(call(attr(name(py, loc), "get_value", loc), [index], loc), elem, elem.name)


def word_target(lw, t) -> bool:
    """Is ``t`` (an assignment's left side) ``*p``/``p[k]`` with ``p`` a word pointer over a
    local struct? Then a GM pointer read on the right is a tiling copy's word."""
    if getattr(t, "data", None) not in ("deref", "index"):
        return False
    while hasattr(t, "data") and t.data in ("deref", "index", "paren", "binop",
                                            "post_incdec", "pre_incdec"):
        t = t.children[1] if t.data in ("deref", "pre_incdec") else t.children[0]
    if getattr(t, "data", None) != "name":
        return False
    b = lw.lookup_soft(str(t.children[0]))
    return isinstance(b, PtrVar) and isinstance(b.e.ref, WordPtr)


def store(lw, ptr: E, value: E, t) -> None:
    """``*p = value``."""
    loc = lw.loc(t)
    r = ptr.ref
    if isinstance(r, GmPtr):
        raise lw.unsupported(t, "writing GM through a scalar pointer",
                             "use a GlobalTensor's SetValue or DataCopy")
    if not isinstance(r, WordPtr):
        raise lw.unsupported(t, "assignment through this pointer")
    fields = struct_words(lw, r.target, t)
    if not 0 <= r.word < len(fields):
        raise KernelTypeError(f"the pointer is {r.word} words into a struct of {len(fields)} "
                              f"words: outside it", loc)
    fname, fct = fields[r.word]
    src = value.ref
    if isinstance(src, GmWord):
        return _copy_word(lw, r, fname, fct, src, t)
    if fct.name != r.ct.name:
        raise lw.unsupported(t, f"writing the {fct.text()} field '{fname}' through a "
                                f"{r.ct.text()} pointer (a bit reinterpretation)")
    if not isinstance(r.target, Obj):
        raise lw.unsupported(t, "writing one field of a TCubeTiling through a pointer",
                             "copy the whole TCubeTiling word by word from the GM_ADDR "
                             "parameter")
    lw.assign_member(r.target, fname, lw.convert(value, fct, loc), t)


def _copy_word(lw, r: WordPtr, fname, fct, src: GmWord, t) -> None:
    loc = lw.loc(t)
    if src.ct.name != r.ct.name:
        raise lw.unsupported(t, "copying words between pointers of different types")
    if isinstance(r.target, Obj):
        info = r.target.cls
        from .tiling import bind_struct_param
        bound = bind_struct_param(lw, E(name(src.pname, loc), CT("GM_ADDR")), info, loc)
        gm_fields = struct_words(lw, r.target, t)
        if not 0 <= src.word < len(gm_fields):
            raise KernelTypeError(f"word {src.word} of '{src.pname}' is outside the struct "
                                  f"{info.name} it holds ({len(gm_fields)} words)", loc)
        gname, gct = gm_fields[src.word]
        if gct.name != fct.name:
            raise lw.unsupported(t, f"copying the {gct.text()} field '{gname}' into the "
                                    f"{fct.text()} field '{fname}' (a bit reinterpretation)")
        lw.assign_member(r.target, fname, E(attr(bound.node, gname, loc), gct, gct.name), t)
        return
    if src.word != r.word:
        raise lw.unsupported(t, "a TCubeTiling copied out of order (word k must come from "
                                "word k)")
    if lw.struct_params.get(src.pname) is not None:
        raise KernelTypeError(f"parameter '{src.pname}' is read as a struct and as a "
                              f"TCubeTiling", loc)
    lw.adv_params.add(src.pname)
    words = lw.cube_copies.setdefault(r.target.py, set())
    words.add(r.word)
    if len(words) == len(struct_words(lw, r.target, t)):
        lw.emit(A.Assign(loc, (name(r.target.py, loc),), name(src.pname, loc)))


def assign_binding(lw, b, value: E, target, loc) -> None:
    """``p = q``, ``p++``, ``i++`` on a pointer variable or an unrolled loop's counter."""
    if isinstance(b, PtrVar):
        if value.ref is None:
            raise lw.unsupported(target, "moving a pointer variable by an offset not known at "
                                         "compile time")
        if lw.rt_depth != b.depth:
            raise lw.unsupported(target, "moving a pointer inside a loop or branch whose "
                                         "condition is not known at compile time")
        b.e = value
        return
    if not value.is_const:
        raise lw.unsupported(target, "assigning a run-time value to the counter of a loop "
                                     "that moves a pointer")
    b.value = C.wrap(value.const, b.ct)


def names_pointer(lw, trees) -> bool:
    """Does any of these trees name a pointer variable in scope?"""
    for tr in trees:
        if tr is None or not hasattr(tr, "iter_subtrees"):
            continue
        for s in tr.iter_subtrees():
            if s.data == "name" and isinstance(lw.lookup_soft(str(s.children[0])), PtrVar):
                return True
    return False


def _breaks(stmts) -> bool:
    for s in stmts:
        if isinstance(s, (A.Break, A.Continue)):
            return True
        if isinstance(s, A.If) and (_breaks(s.body) or _breaks(s.orelse)):
            return True
    return False


def unrolled_for(lw, s) -> None:
    """A ``for`` loop that names a pointer, unrolled at compile time."""
    init_t, cond_t, incr_t, body_t = s.children
    loc = lw.loc(s)
    lw.scopes.append({})
    try:
        if init_t is not None and init_t.data == "var_decl":
            from .unit import _declarator
            ct = lw.resolve_type(init_t.children[0])
            for dcl in init_t.children[1:]:
                ident, init = _declarator(dcl, lw.unsupported)
                e = lw.init_value(init, ct, dcl) if init is not None else None
                if e is None or not e.is_const or not ct.is_scalar:
                    raise lw.unsupported(dcl, "a run-time counter in a loop that moves a "
                                              "pointer (its bounds must be constants)")
                lw.declare(ident, CtVar(e.const, ct))
        elif init_t is not None and init_t.data != "empty":
            lw.stmt(init_t)
        for n in range(MAX_UNROLL + 1):
            if n == MAX_UNROLL:
                raise lw.unsupported(s, f"a loop over a pointer of more than {MAX_UNROLL} "
                                        f"iterations")
            if cond_t is not None:
                c = lw.truth(lw.expr(cond_t), loc)
                if not c.is_const:
                    raise lw.unsupported(cond_t, "a loop that moves a pointer whose condition "
                                                 "is not known at compile time")
                if not c.const:
                    break
            saved = lw.cur
            lw.cur = []
            lw.scopes.append({})
            try:
                lw.stmts(list(body_t.children) if body_t.data == "block" else [body_t])
            finally:
                lw.scopes.pop()
            body, lw.cur = lw.cur, saved
            if _breaks(body):
                raise lw.unsupported(s, "break/continue in a loop that moves a pointer")
            lw.cur.extend(body)
            if incr_t is not None:
                lw.effect(incr_t)
    finally:
        lw.scopes.pop()
    from ..adv import TCUBE_TILING_FIELDS
    for py, words in lw.cube_copies.items():
        if len(words) != len(TCUBE_TILING_FIELDS):
            raise lw.unsupported(s, f"a TCubeTiling copied only in part ({len(words)} of "
                                    f"{len(TCUBE_TILING_FIELDS)} words)",
                                 "copy sizeof(TCubeTiling) / sizeof(uint32_t) words")


def check_gm_reads(lw) -> None:
    """A GM_ADDR read as data through a pointer cannot also carry a tiling struct."""
    for pname, loc in getattr(lw, "gm_reads", {}).items():
        if pname in lw.struct_params or pname in lw.adv_params:
            raise KernelTypeError(f"'{pname}' carries a tiling struct (copied word by word "
                                  f"or read as a struct) and is read here as GM data",
                                  loc, hint="copy the tiling words with constant offsets "
                                            "into a local struct and read its fields")
