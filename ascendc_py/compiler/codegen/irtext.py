"""The LLVM IR text of an llvmlite module: ``str(module)``, character for character, in about
half the time.

llvmlite prints each instruction through a chain of ``str.format`` calls and a ``rstrip``;
a kernel module has a couple of thousand instructions, so printing took about a tenth of a
cold compile. ``module_text`` prints the instruction classes codegen emits most (loads, stores,
GEPs, compares, casts, binary operators, branches, allocas, selects, returns, plain calls) with
one f-string each, in llvmlite's exact format, and everything else (calls with attributes,
phis, atomics, metadata, function prototypes, globals) through llvmlite itself. ``tests/codegen/test_irtext.py`` checks that the
text equals ``str(module)`` for the samples' kernels.
"""
from __future__ import annotations

from llvmlite.ir import instructions as I
from llvmlite.ir import types as T
from llvmlite.ir import values as V


def _md(instr) -> str:
    return instr._stringify_metadata(leading_comma=True) if instr.metadata else ""


def _load(i) -> str:
    (ptr,) = i.operands
    align = f", align {i.align}" if i.align is not None else ""
    return f"load {i.type}, {ptr.type} {ptr.get_reference()}{align}{_md(i)}"


def _store(i) -> str:
    val, ptr = i.operands
    align = f", align {i.align}" if getattr(i, "align", None) is not None else ""
    return (f"store {val.type} {val.get_reference()}, {ptr.type} {ptr.get_reference()}"
            f"{align}{_md(i)}")


def _gep(i) -> str | None:
    if i.metadata:
        return None
    op = "getelementptr inbounds" if i.inbounds else "getelementptr"
    indices = ", ".join([f"{x.type} {x.get_reference()}" for x in i.indices])
    return f"{op} {i.source_etype}, {i.pointer.type} {i.pointer.get_reference()}, {indices}"


def _compare(i) -> str | None:
    if i.flags or i.metadata:
        return None
    a, b = i.operands
    return f"{i.opname} {i.op} {a.type} {a.get_reference()}, {b.get_reference()}"


def _cast(i) -> str | None:
    if i.metadata:
        return None
    (a,) = i.operands
    return f"{i.opname} {a.type} {a.get_reference()} to {i.type}"


def _binary(i) -> str:
    opname = " ".join([i.opname] + i.flags) if i.flags else i.opname
    return f"{opname} {i.type} {', '.join([op.get_reference() for op in i.operands])}{_md(i)}"


def _terminator(i) -> str:
    operands = ", ".join([f"{op.type} {op.get_reference()}" for op in i.operands])
    return f"{i.opname} {operands}{_md(i)}"


def _ret(i) -> str:
    if i.operands:
        (v,) = i.operands
        return f"{i.opname} {v.type} {v.get_reference()}{_md(i)}"
    return f"{i.opname}{_md(i)}"


def _alloca(i) -> str | None:
    if i.operands or i.metadata:
        return None
    return f"alloca {i.allocated_type}" + (f", align {i.align}" if i.align is not None else "")


def _select(i) -> str | None:
    if i.metadata:
        return None
    c, a, b = i.operands
    return (f"select {' '.join(i.flags)} {c.type} {c.get_reference()}, {a.type} "
            f"{a.get_reference()}, {b.type} {b.get_reference()}")


def _unreachable(i) -> str:
    return i.opname


def _call(i) -> str | None:
    fnty = i.callee.function_type
    if (i.arg_attributes or i.cconv or i.tail or i.attributes or i.fastmath or i.metadata
            or fnty.var_arg):
        return None
    args = ", ".join([f"{a.type} {a.get_reference()}" for a in i.operands[1:]])
    return f"call {fnty.return_type} {i.callee.get_reference()}({args})"


#: exact class -> printer (None from a printer: print it with llvmlite)
_PRINTERS = {
    I.LoadInstr: _load, I.StoreInstr: _store, I.GEPInstr: _gep, I.ICMPInstr: _compare,
    I.FCMPInstr: _compare, I.CastInstr: _cast, I.Instruction: _binary, I.Branch: _terminator,
    I.ConditionalBranch: _terminator, I.Ret: _ret, I.AllocaInstr: _alloca,
    I.SelectInstr: _select, I.Unreachable: _unreachable, I.CallInstr: _call,
}


def _instruction(i) -> str:
    printer = _PRINTERS.get(type(i))
    body = printer(i) if printer is not None else None
    if body is None:
        return str(i)
    return body if isinstance(i.type, T.VoidType) else f"{i.get_reference()} = {body}"


def _function(fn: V.Function) -> str:
    buf: list = []
    fn.descr_prototype(buf)
    buf.append("{\n")
    for blk in fn.blocks:
        buf.append(f"{blk._format_name()}:\n")
        buf.extend([f"  {_instruction(i)}\n" for i in blk.instructions])
    buf.append("}\n")
    return "".join(buf)


def module_text(module) -> str:
    """``str(module)`` of an llvmlite ``ir.Module``, printed faster."""
    lines = ['; ModuleID = "%s"' % (module.name,), 'target triple = "%s"' % (module.triple,),
             'target datalayout = "%s"' % (module.data_layout,), '']
    lines += [t.get_declaration() for t in module.get_identified_types().values()]
    lines += [_function(v) if isinstance(v, V.Function) and v.blocks else str(v)
              for v in module.globals.values()]
    lines += module._get_metadata_lines()
    return "\n".join(lines)
