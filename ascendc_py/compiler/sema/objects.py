"""Kernel-language objects: GlobalTensor, LocalTensor, TPipe, TQue, TBuf and their methods."""
from __future__ import annotations

from dataclasses import replace

from ...dsl.types import Memory, TPosition, bool_, int32, int64
from .. import ir
from ..errors import (ArgumentError, ConstantRangeError, DtypeError, KernelTypeError,
                      KernelValueError, OperandKindError, SourceLoc, UnsupportedConstructError)
from . import scalars as S
from .builtins import (bind_args, function, method, want_const_int, want_dtype, want_enum,
                       want_int)
from .values import (ConstV, DTypeV, EnumV, GmAddrV, GmTensorV, LocalTensorV, NoneV, PipeV,
                     QueueV, RtV, SVal)

MAX_QUEUE_BUFFERS = 8


# ----------------------------------------------------------------------------- GlobalTensor
@function("GlobalTensor")
def _global_tensor(an, args, kwargs, loc):
    if args or kwargs:
        raise ArgumentError("asc.GlobalTensor() takes no arguments; then call "
                              "set_global_buffer(addr[, size])", loc)
    n = an.new_label("gt")
    owned = (ir.Var(f"gt{n}.arg", int32), ir.Var(f"gt{n}.off", int64),
             ir.Var(f"gt{n}.size", int64))
    # no argument until set_global_buffer runs (-1: every access faults, GM_UNSET), also when
    # it runs only on some paths
    for var, value in zip(owned, (ir.Const(-1, int32), ir.Const(0, int64),
                                  ir.Const(-1, int64))):
        an.emit(ir.Assign(var, value, loc))
    return GmTensorV(None, ir.Load(owned[0]), ir.Load(owned[1]), ir.Load(owned[2]),
                     owned_vars=owned)


@method(GmTensorV, "set_global_buffer")
def _set_global_buffer(an, gt: GmTensorV, name, args, kwargs, loc):
    b = bind_args("set_global_buffer()", ("buffer", "buffer_size"), args, kwargs, loc,
                  {"buffer_size": ConstV(-1, int64)})
    buf = b["buffer"]
    if not isinstance(buf, GmAddrV):
        raise OperandKindError(f"set_global_buffer needs a GlobalAddress kernel argument "
                              f"(optionally plus an offset), got {buf.describe()}", loc)
    if gt.owned_vars is None:
        raise OperandKindError("set_global_buffer needs a GlobalTensor created with "
                              "asc.GlobalTensor()", loc)
    if gt.dtype is not None and gt.dtype != buf.dtype:
        raise DtypeError(f"this GlobalTensor already holds {gt.dtype.name} data; "
                              f"cannot rebind it to {buf.dtype.name}", loc)
    gt.dtype = buf.dtype
    gt.arg_name = buf.arg_name
    size = want_int(b["buffer_size"], "buffer_size", loc, int64)
    for var, value in zip(gt.owned_vars, (buf.arg, buf.offset, size)):
        an.emit(ir.Assign(var, value, loc))
    return NoneV()


@method(GmTensorV, "get_size")
def _gt_get_size(an, gt: GmTensorV, name, args, kwargs, loc):
    bind_args("get_size()", (), args, kwargs, loc)
    return RtV(gt.size)


@method(GmTensorV, "get_phy_addr")
def _gt_phy(an, gt: GmTensorV, name, args, kwargs, loc):
    """Ascend C's GlobalTensor::GetPhyAddr([offset]): the ``__gm__ T*`` of element ``offset``,
    a GlobalAddress (usable with set_global_buffer and address arithmetic)."""
    b = bind_args("get_phy_addr()", ("offset",), args, kwargs, loc, {"offset": ConstV(0, int32)})
    if gt.dtype is None:
        raise OperandKindError("call set_global_buffer before get_phy_addr", loc)
    off = want_int(b["offset"], "offset", loc, int64)
    return GmAddrV(gt.dtype, gt.arg, ir.Bin("add", gt.offset, off, int64), gt.arg_name)


@method(GmTensorV, "get_value")
@method(LocalTensorV, "get_value")
def _get_value(an, t, name, args, kwargs, loc):
    b = bind_args("get_value()", ("index",), args, kwargs, loc)
    if t.dtype is None:
        raise OperandKindError("call set_global_buffer before get_value", loc)
    index = want_int(b["index"], "the index", loc, int64)
    res = ir.Var("value", t.dtype)
    an.emit(ir.Intrinsic("get_value", (t.ref(), index), (res,), loc, (("dtype", t.dtype),)))
    return RtV(ir.Load(res))


@method(GmTensorV, "set_value")
@method(LocalTensorV, "set_value")
def _set_value(an, t, name, args, kwargs, loc):
    b = bind_args("set_value()", ("index", "value"), args, kwargs, loc)
    if t.dtype is None:
        raise OperandKindError("call set_global_buffer before set_value", loc)
    index = want_int(b["index"], "the index", loc, int64)
    v = b["value"]
    if not isinstance(v, (ConstV, RtV)):
        raise OperandKindError(f"set_value needs a number, got {v.describe()}", loc)
    an.emit(ir.Intrinsic("set_value", (t.ref(), index, S.to_expr(v, t.dtype)), (), loc,
                         (("dtype", t.dtype),)))
    return NoneV()


# ----------------------------------------------------------------------------- LocalTensor
@function("LocalTensor")
def _local_tensor(an, args, kwargs, loc):
    b = bind_args("asc.LocalTensor()", ("dtype", "pos", "addr", "tile_size"), args, kwargs, loc,
                  {"pos": None, "addr": ConstV(0, int32), "tile_size": ConstV(0, int32)})
    dtype = want_dtype(b["dtype"], "dtype", loc)
    pos = TPosition.VECIN if b["pos"] is None else want_enum(b["pos"], TPosition, "pos", loc)
    if pos.memory == Memory.GM:
        raise ConstantRangeError(f"a LocalTensor cannot live at {pos.name}", loc)
    addr = want_int(b["addr"], "the LocalTensor address", loc)
    size = want_int(b["tile_size"], "tile_size", loc)
    sized = "tile_size" in kwargs or len(args) > 3
    t = LocalTensorV(dtype, pos, addr, size, ir.Const(-1, int32), bounded=sized,
                     origin=loc, made_by="LocalTensor(...)")
    an.emit(ir.Intrinsic("check_local", (t.ref(),), (), loc))
    return t


@method(LocalTensorV, "get_size")
def _lt_get_size(an, t, name, args, kwargs, loc):
    bind_args("get_size()", (), args, kwargs, loc)
    return RtV(t.size)


@method(LocalTensorV, "get_length")
def _lt_get_length(an, t, name, args, kwargs, loc):
    bind_args("get_length()", (), args, kwargs, loc)
    return RtV(ir.Bin("mul", t.size, ir.Const(t.dtype.sizeof(), int32), int32))


@method(LocalTensorV, "get_phy_addr")
def _lt_phy(an, t, name, args, kwargs, loc):
    b = bind_args("get_phy_addr()", ("offset",), args, kwargs, loc, {"offset": ConstV(0, int32)})
    off = want_int(b["offset"], "offset", loc)
    return RtV(ir.Bin("add", t.addr, ir.Bin("mul", off, ir.Const(t.dtype.sizeof(), int32),
                                              int32), int32))


def _shrink_to(an, t: LocalTensorV, size: ir.Expr, what: str, loc) -> LocalTensorV:
    """``t`` with ``size`` elements; more than it has stops the kernel at the line (the tensor
    may not be made to cover memory it was not given). In lenient mode a longer tensor is a
    warning, as on the device, which keeps the length without checking it."""
    an.emit(ir.Intrinsic("kernel_assert", (ir.Cmp("ge", size, ir.Const(0, int32)),), (), loc, (
        ("msg", f"LocalTensor.{what}: the new length is negative"),)))
    an.emit(ir.Intrinsic("kernel_assert", (ir.Cmp("le", size, t.size),), (), loc, (
        ("msg", f"LocalTensor.{what}: the new length is larger than the tensor (a tensor can "
                f"only be made shorter)"), ("lenient", True))))
    return replace(t, size=size)


@method(LocalTensorV, "set_size")
def _lt_set_size(an, t, name, args, kwargs, loc):
    """Ascend C's SetSize(size): the tensor now has ``size`` elements."""
    b = bind_args("set_size()", ("size",), args, kwargs, loc)
    size = want_int(b["size"], "size", loc)
    an.rebind_receiver(_shrink_to(an, t, size, name, loc), name, loc)
    return NoneV()


@method(LocalTensorV, "set_buffer_len")
def _lt_set_buffer_len(an, t, name, args, kwargs, loc):
    """Ascend C's SetBufferLen(len): the tensor now covers ``len`` bytes."""
    b = bind_args("set_buffer_len()", ("len",), args, kwargs, loc)
    length = want_int(b["len"], "len", loc)
    size = ir.Bin("floordiv", length, ir.Const(t.dtype.sizeof(), int32), int32)
    an.rebind_receiver(_shrink_to(an, t, size, name, loc), name, loc)
    return NoneV()


@method(LocalTensorV, "set_addr_with_offset")
def _lt_set_addr_with_offset(an, t, name, args, kwargs, loc):
    """Ascend C's SetAddrWithOffset(src, offset): this tensor now starts ``offset`` elements
    (of src's dtype) into ``src``; it covers the rest of src (never more)."""
    b = bind_args("set_addr_with_offset()", ("src", "offset"), args, kwargs, loc)
    src = b["src"]
    if not isinstance(src, LocalTensorV):
        raise OperandKindError(f"set_addr_with_offset needs a LocalTensor src, got "
                               f"{src.describe()}", loc)
    if src.memory != t.memory:
        raise OperandKindError(f"set_addr_with_offset: src is in {src.memory.name}, this tensor "
                               f"in {t.memory.name}", loc)
    from .builtins import subscript_local
    rest = subscript_local(an, src, b["offset"], loc)
    nbytes = ir.Bin("mul", rest.size, ir.Const(src.dtype.sizeof(), int32), int32)
    size = ir.Bin("floordiv", nbytes, ir.Const(t.dtype.sizeof(), int32), int32)
    new = replace(rest, dtype=t.dtype, size=size, position=t.position)
    an.rebind_receiver(new, name, loc)
    return NoneV()


@method(LocalTensorV, "set_user_tag")
def _lt_set_user_tag(an, t, name, args, kwargs, loc):
    """Ascend C's SetUserTag(tag): an int32 the program attaches to the tensor."""
    b = bind_args("set_user_tag()", ("tag",), args, kwargs, loc)
    an.rebind_receiver(replace(t, user_tag=want_int(b["tag"], "tag", loc)), name, loc)
    return NoneV()


@method(LocalTensorV, "get_user_tag")
def _lt_get_user_tag(an, t, name, args, kwargs, loc):
    """Ascend C's GetUserTag(): the tag set_user_tag attached (0 for a tensor held in a variable
    that is tagged later)."""
    bind_args("get_user_tag()", (), args, kwargs, loc)
    if t.user_tag is None:
        raise KernelValueError("get_user_tag(): this tensor's user tag was never set", loc,
                               hint="call t.set_user_tag(tag) on the variable first")
    return RtV(t.user_tag)


@method(LocalTensorV, "get_position")
def _lt_pos(an, t, name, args, kwargs, loc):
    return ConstV(int(t.position), int32)


@method(LocalTensorV, "reinterpret_cast")
def _reinterpret(an, t, name, args, kwargs, loc):
    b = bind_args("reinterpret_cast()", ("dtype",), args, kwargs, loc)
    dtype = want_dtype(b["dtype"], "dtype", loc)
    nbytes = ir.Bin("mul", t.size, ir.Const(t.dtype.sizeof(), int32), int32)
    size = ir.Bin("floordiv", nbytes, ir.Const(dtype.sizeof(), int32), int32)
    return replace(t, dtype=dtype, size=size)


# ----------------------------------------------------------------------------- TPipe / TQue / TBuf
@function("TPipe")
def _tpipe(an, args, kwargs, loc):
    if args or kwargs:
        raise ArgumentError("asc.TPipe() takes no arguments", loc)
    from .local_allocator import forbid_with_tpipe
    forbid_with_tpipe(an, "TPipe", loc)
    an.tpipe_made = True
    return PipeV()


@function("get_tpipe_ptr")
def _get_tpipe_ptr(an, args, kwargs, loc):
    """Ascend C's GetTPipePtr(): the kernel's TPipe (made earlier with asc.TPipe())."""
    if args or kwargs:
        raise ArgumentError("asc.get_tpipe_ptr() takes no arguments", loc)
    if not getattr(an, "tpipe_made", False):
        raise KernelValueError("asc.get_tpipe_ptr() before any asc.TPipe(): there is no TPipe "
                               "to point to", loc, hint="create the TPipe first: "
                                                        "pipe = asc.TPipe()")
    return PipeV()


@method(PipeV, "destroy", "reset")
def _tpipe_release(an, pipe, name, args, kwargs, loc):
    """TPipe.destroy() / reset(): release every buffer init_buffer reserved (Ascend C's
    Destroy releases the pipe's resources; Reset also returns it to its initial state); the
    queues and TBufs must be given buffers again with init_buffer before they are used."""
    bind_args(f"{name}()", (), args, kwargs, loc)
    an.emit(ir.Intrinsic("tpipe_release", (), (), loc, (("what", name),)))
    return NoneV()


@method(PipeV, "init")
def _tpipe_init(an, pipe, name, args, kwargs, loc):
    """TPipe.init(): (re)initialise the pipe, e.g. after destroy(). Buffers are reserved by
    init_buffer and released by destroy/reset, so there is nothing else to set up."""
    bind_args("init()", (), args, kwargs, loc)
    return NoneV()


def _new_queue(an, pos, depth, loc, is_tbuf) -> QueueV:
    if an.scope.loop_depth:
        raise UnsupportedConstructError(f"create {'TBuf' if is_tbuf else 'TQue'} objects outside loops",
                               loc)
    q = QueueV(len(an.queues), pos, depth, f"{'TBuf' if is_tbuf else 'TQue'}@{loc.line}",
               is_tbuf)
    an.queues.append(q)
    return q


@function("TQue")
def _tque(an, args, kwargs, loc):
    b = bind_args("asc.TQue()", ("pos", "depth"), args, kwargs, loc,
                  {"depth": ConstV(1, int32)})
    pos = want_enum(b["pos"], TPosition, "pos", loc)
    if pos.memory == Memory.GM:
        raise ConstantRangeError("a TQue cannot be placed at GM", loc)
    depth = want_const_int(b["depth"], "depth", loc)
    if not 0 <= depth <= MAX_QUEUE_BUFFERS:   # (0: Ascend C's in-place queue)
        low = 1 if depth > 0 else 0
        raise ConstantRangeError(f"TQue depth must be {low}..{MAX_QUEUE_BUFFERS}, got {depth}",
                                 loc)
    if depth == 0:   # the in-place queue of Ascend C (sema/queue_bind.py)
        from .queue_bind import new_bound_queue
        return new_bound_queue(an, pos, pos, 0, loc, "TQue")
    return _new_queue(an, pos, depth, loc, False)


@function("TBuf")
def _tbuf(an, args, kwargs, loc):
    b = bind_args("asc.TBuf()", ("pos",), args, kwargs, loc,
                  {"pos": None})
    pos = TPosition.VECCALC if b["pos"] is None else want_enum(b["pos"], TPosition, "pos", loc)
    return _new_queue(an, pos, 0, loc, True)


def _queue_attrs(q: QueueV):
    return (("queue", q.qid), ("memory", q.position.memory), ("depth", q.depth),
            ("tbuf", q.is_tbuf), ("position", q.position))


@method(PipeV, "init_buffer")
def _init_buffer(an, pipe, name, args, kwargs, loc):
    first = args[0] if args else kwargs.get("que", kwargs.get("buf"))
    if isinstance(first, QueueV) and first.is_tbuf:
        kw = dict(kwargs)
        if "num" in kw and "len" not in kw:
            kw["len"] = kw.pop("num")  # pyasc spells TBuf's length `num`
        b = bind_args("init_buffer(buf, len)", ("buf", "len"), args, kw, loc)
        q, num = b["buf"], ConstV(1, int32)
    else:
        b = bind_args("init_buffer(que, num, len)", ("que", "num", "len"), args, kwargs, loc)
        q, num = b["que"], b["num"]
        if not isinstance(q, QueueV):
            raise OperandKindError(f"init_buffer needs a TQue or TBuf, got {q.describe()}", loc)
    n = want_int(num, "num", loc)
    if isinstance(num, ConstV) and not 1 <= num.value <= MAX_QUEUE_BUFFERS:
        raise ConstantRangeError(f"init_buffer num must be 1..{MAX_QUEUE_BUFFERS}, got "
                               f"{num.value}", loc)
    length = want_int(b["len"], "len", loc)
    an.emit(ir.Intrinsic("init_buffer", (n, length), (), loc, _queue_attrs(q)))
    return NoneV()


def _tensor_from_queue(an, op, q: QueueV, dtype, loc, extra=()) -> LocalTensorV:
    addr, nbytes, tag = (ir.Var(f"{op}.addr", int32), ir.Var(f"{op}.bytes", int32),
                         ir.Var(f"{op}.tag", int32))
    an.emit(ir.Intrinsic(op, extra, (addr, nbytes, tag), loc, _queue_attrs(q)))
    size = ir.Bin("floordiv", ir.Load(nbytes), ir.Const(dtype.sizeof(), int32), int32)
    return LocalTensorV(dtype, q.position, ir.Load(addr), size, ir.Load(tag), origin=loc,
                        made_by="TBuf.get" if op == "tbuf_get" else op)


@method(QueueV, "alloc_tensor")
def _alloc(an, q: QueueV, name, args, kwargs, loc):
    b = bind_args("alloc_tensor()", ("dtype",), args, kwargs, loc)
    dtype = want_dtype(b["dtype"], "dtype", loc)
    if q.is_tbuf:
        # TBuf inherits AllocTensor from TQueBind: its one buffer, whole, as `get(dtype)`
        # (a TBuf has no hand-over events: nothing to wait for)
        return _tensor_from_queue(an, "tbuf_get", q, dtype, loc)
    return _tensor_from_queue(an, "alloc_tensor", q, dtype, loc)


@method(QueueV, "free_tensor")
def _free(an, q: QueueV, name, args, kwargs, loc):
    if not q.is_tbuf:
        return _enque_free(an, q, name, args, kwargs, loc)
    b = bind_args("free_tensor()", ("tensor",), args, kwargs, loc)
    t = b["tensor"]
    if not isinstance(t, LocalTensorV) or t.memory != q.position.memory:
        raise OperandKindError(f"TBuf.free_tensor needs a LocalTensor of this TBuf (from its "
                               f"alloc_tensor or get, in {q.position.memory.name}), got "
                               f"{t.describe()}", loc)
    return NoneV()   # a TBuf's buffer is not pooled: releasing it has no effect


@method(QueueV, "deque")
def _deque(an, q: QueueV, name, args, kwargs, loc):
    b = bind_args("deque()", ("dtype",), args, kwargs, loc)
    _not_tbuf(q, name, loc)
    return _tensor_from_queue(an, "deque", q, want_dtype(b["dtype"], "dtype", loc), loc)


@method(QueueV, "enque")
def _enque_free(an, q: QueueV, name, args, kwargs, loc):
    b = bind_args(f"{name}()", ("tensor",), args, kwargs, loc)
    _not_tbuf(q, name, loc)
    t = b["tensor"]
    if not isinstance(t, LocalTensorV):
        raise OperandKindError(f"{name} needs a LocalTensor, got {t.describe()}", loc)
    an.emit(ir.Intrinsic(name, (t.ref(),), (), loc, _queue_attrs(q)))
    return NoneV()


@method(QueueV, "get")
def _tbuf_get(an, q: QueueV, name, args, kwargs, loc):
    if not q.is_tbuf:
        raise OperandKindError("get() is a TBuf method; a TQue hands out tensors with "
                              "alloc_tensor/deque", loc)
    b = bind_args("get()", ("dtype", "len"), args, kwargs, loc, {"len": None})
    dtype = want_dtype(b["dtype"], "dtype", loc)
    t = _tensor_from_queue(an, "tbuf_get", q, dtype, loc)
    if b["len"] is not None:
        t = replace(t, size=want_int(b["len"], "len", loc))
    return t


@method(QueueV, "get_tensor_count_in_que", "has_tensor_in_que", "has_idle_buffer",
        "vacant_in_que")
def _tque_query(an, q: QueueV, name, args, kwargs, loc):
    """Ascend C's TQue queries, read from the queue's state at this point of the run."""
    from ...dsl.types import bool_
    bind_args(f"{name}()", (), args, kwargs, loc)
    _not_tbuf(q, name, loc)
    res = ir.Var(name, int32 if name == "get_tensor_count_in_que" else bool_)
    an.emit(ir.Intrinsic("tque_query", (), (res,), loc, _queue_attrs(q) + (("query", name),)))
    return RtV(ir.Load(res))


@method(QueueV, "get_with_offset")
def _tbuf_get_with_offset(an, q: QueueV, name, args, kwargs, loc):
    """Ascend C's TBuf::GetWithOffset(size, bufOffset): ``size`` elements starting
    ``buf_offset`` bytes into the TBuf (a multiple of 32); past the buffer's end stops the
    kernel at the line."""
    if not q.is_tbuf:
        raise OperandKindError("get_with_offset() is a TBuf method", loc)
    b = bind_args("get_with_offset()", ("size", "buf_offset", "dtype"), args, kwargs, loc)
    dtype = want_dtype(b["dtype"], "dtype", loc)
    size = want_int(b["size"], "size", loc)
    offset = want_int(b["buf_offset"], "buf_offset", loc)
    if isinstance(offset, ir.Const) and offset.value % 32:
        raise KernelValueError(f"get_with_offset: buf_offset {offset.value} is not a multiple "
                               f"of 32 bytes", loc)
    whole = _tensor_from_queue(an, "tbuf_get", q, dtype, loc)
    nbytes = ir.Bin("mul", whole.size, ir.Const(dtype.sizeof(), int32), int32)
    end = ir.Bin("add", offset, ir.Bin("mul", size, ir.Const(dtype.sizeof(), int32), int32),
                 int32)
    ok = ir.Bin("and", ir.Bin("and", ir.Cmp("ge", offset, ir.Const(0, int32)),
                              ir.Cmp("ge", size, ir.Const(0, int32)), bool_),
                ir.Bin("and", ir.Cmp("le", end, nbytes),
                       ir.Cmp("eq", ir.Bin("mod", offset, ir.Const(32, int32), int32),
                              ir.Const(0, int32)), bool_), bool_)
    an.emit(ir.Intrinsic("kernel_assert", (ok,), (), loc, (
        ("msg", "TBuf.get_with_offset: buf_offset must be a multiple of 32 and the tensor "
                "must lie inside the TBuf's buffer"),)))
    return replace(whole, addr=ir.Bin("add", whole.addr, offset, int32), size=size)


def _not_tbuf(q: QueueV, name: str, loc: SourceLoc) -> None:
    if q.is_tbuf:
        raise OperandKindError(f"{name}() is a TQue method; use get(dtype) on a TBuf", loc)


# ----------------------------------------------------------------------------- parameter records
STRUCTS = {
    "BinaryRepeatParams": (("dst_blk_stride", 1), ("src0_blk_stride", 1), ("src1_blk_stride", 1),
                           ("dst_rep_stride", 8), ("src0_rep_stride", 8), ("src1_rep_stride", 8)),
    "UnaryRepeatParams": (("dst_blk_stride", 1), ("src_blk_stride", 1), ("dst_rep_stride", 8),
                          ("src_rep_stride", 8)),
}


def _struct_constructor(kind: str):
    names = tuple(n for n, _ in STRUCTS[kind])
    defaults = {n: ConstV(d, int32) for n, d in STRUCTS[kind]}

    def construct(an, args, kwargs, loc):
        from .values import StructV
        b = bind_args(f"asc.{kind}()", names, args, kwargs, loc, defaults)
        for n in names:
            want_int(b[n], f"{kind}.{n}", loc)
        return StructV(kind, tuple((n, b[n]) for n in names))
    return construct


for _kind in STRUCTS:
    function(_kind)(_struct_constructor(_kind))


# ----------------------------------------------------------------------------- the mask register
@function("set_vector_mask")
def _set_vector_mask(an, args, kwargs, loc):
    """set_vector_mask(length, dtype=, mode=) or set_vector_mask(mask_high, mask_low, dtype=,
    mode=); the mode argument is informational (set_mask_count/set_mask_norm switch modes)."""
    from ...dsl.types import MaskMode
    kw = dict(kwargs)
    dtype_v = kw.pop("dtype", None)
    kw.pop("mode", None)
    positional = [a for a in args if not isinstance(a, (DTypeV, EnumV))]
    for a in args:
        if isinstance(a, DTypeV):
            dtype_v = a
    if dtype_v is None:
        raise ArgumentError("asc.set_vector_mask needs dtype= (the operands' dtype)", loc)
    dtype = want_dtype(dtype_v, "dtype", loc)
    if len(positional) == 1 and not kw:
        kind, lo, hi = ir.Const(0, int64), want_int(positional[0], "length", loc, int64), \
            ir.Const(0, int64)
    elif len(positional) == 2 and not kw:
        kind = ir.Const(1, int64)
        hi = want_int(positional[0], "mask_high", loc, int64)
        lo = want_int(positional[1], "mask_low", loc, int64)
    else:
        raise ArgumentError("asc.set_vector_mask takes (length, dtype=, mode=) or "
                              "(mask_high, mask_low, dtype=, mode=)", loc)
    an.emit(ir.Intrinsic("set_vector_mask", (kind, lo, hi), (), loc, (("dtype", dtype),)))
    del MaskMode
    return NoneV()


def _mask_state(op: str):
    def handler(an, args, kwargs, loc):
        if args or kwargs:
            raise ArgumentError(f"asc.{op}() takes no arguments", loc)
        an.emit(ir.Intrinsic(op, (), (), loc))
        return NoneV()
    return handler


for _op in ("reset_mask", "set_mask_count", "set_mask_norm"):
    function(_op)(_mask_state(_op))
