"""Turn a kernel's run-time error record (ctx error slots) into a clear exception."""
from __future__ import annotations

from ..compiler import errors as err
from ..dsl.types import EVENT_IDS_PER_EVENT, HardEvent, Memory
from . import abi
from .abi import ErrorCode as E

_STATE_NAMES = {0: "free", 1: "allocated", 2: "enqueued"}


def _flag_name(flag: int) -> str:
    event, eid = divmod(int(flag), EVENT_IDS_PER_EVENT)
    try:
        return f"{HardEvent(event).name} id {eid}"
    except ValueError:
        return f"flag {flag}"


def _memory_name(mem: int) -> str:
    """UB, L1, L0A, ... for a Memory value (0, from records without one: UB)."""
    return Memory(mem).name if 0 < mem < len(Memory) else "UB"


def build_fault(code: int, site, a: int, b: int, c: int, compiled, block: int,
                ctx=None, core: str = "") -> err.KernelRuntimeError:
    """The exception for error ``code`` raised at ``site`` by block ``block`` (``core``: the
    sub-core, e.g. ', AIV1', in launches on several sub-cores per block)."""
    loc = site.loc if site is not None else None
    op = site.op if site is not None else "?"
    detail = site.detail if site is not None else ()
    where = f" (block {block}{core})"
    gm_names = [name for name, _ in compiled.gm_args]
    code = E(code)
    which_raw = int(ctx[abi.ERR_D]) if ctx is not None else 0
    which, mem_id = which_raw % 256, which_raw // 256
    names = [d for d in detail if isinstance(d, str)]
    what = names[which] if which < len(names) else (names[0] if names else "operand")
    if code == E.GM_OUT_OF_BOUNDS:
        name = gm_names[a] if 0 <= a < len(gm_names) else f"#{a}"
        dtype = compiled.gm_args[a][1] if 0 <= a < len(gm_names) else None
        return err.GMOutOfBoundsError(
            f"{op} {what} touches elements [{b}, {c}) of global argument '{name}'"
            f"{f' ({dtype.name})' if dtype else ''}, outside the buffer{where}", loc,
            hint=(f"check the offsets and counts against the size of '{name}'; on an NPU this "
                  f"is 'MTE address out of range' or silent corruption"
                  + ("; a Matmul block at the edge of the matrix needs mm.set_tail(tail_m, "
                     "tail_n) before iterate_all" if op.startswith("matmul") else "")))
    if code == E.READ_ONLY_WRITE:
        from .gm_access import read_only_write
        return read_only_write(op, gm_names[a] if 0 <= a < len(gm_names) else f"#{a}", b,
                               where, loc)
    if code == E.LOCAL_OUT_OF_RANGE:
        mem = Memory(mem_id).name if mem_id in Memory._value2member_map_ else "local memory"
        return err.LocalOutOfRangeError(
            f"{op} {what} covers bytes [{a}, {b}) of {mem}, which has {c} bytes{where}", loc,
            hint="the tensor runs past the end of local memory: reduce the count or the tile")
    if code == E.GM_UNSET:
        return err.GlobalTensorUnsetError(
            f"{op} {what} is a GlobalTensor whose set_global_buffer has not run{where}", loc,
            hint="call set_global_buffer on every path before the tensor is used (here it "
                 "ran on none, or only on a branch this block did not take)")
    if code == E.USE_AFTER_FREE:
        freed = compiled.sites[a] if 0 <= a < len(compiled.sites) else None
        at = f" at {_line_of(freed.loc, loc)}" if freed is not None and freed.loc else ""
        tensors = getattr(site, "tensors", ()) or ()
        info = tensors[which] if which < len(tensors) else None
        name = f" '{info.name}'" if info is not None and info.name else ""
        if op == "free_tensor":
            return err.DoubleFreeError(f"free_tensor of a tensor whose buffer is already free "
                                       f"(free_tensor{at} returned it: a double free){where}",
                                       loc,
                                       hint="free each tensor once")
        role = f"{what}{name}" if op != "enque" else f"the tensor{name}"
        return err.UseAfterFreeError(
            f"{op} uses {role} after free_tensor{at} returned its buffer to the queue{where}:"
            f" on hardware the buffer may already hold another tensor", loc,
            hint="use a tensor only between alloc_tensor/deque and free_tensor; allocate a new "
                 "one (or deque it again) to use the buffer afterwards")
    if code == E.NO_HANDOVER:
        from ..dsl.types import PIPE_NAMES
        writer, reader = (PIPE_NAMES[p] if 0 <= p < len(PIPE_NAMES) else "?" for p in (a, b))
        wrote = compiled.sites[c] if 0 <= c < len(compiled.sites) else None
        tensors = getattr(site, "tensors", ()) or ()
        info = tensors[which] if which < len(tensors) else None
        name = f" '{info.name}'" if info is not None and info.name else ""
        event = f"{writer}_{reader}"
        flags = (f" or asc.set_flag(HardEvent.{event}, id) after the write and asc.wait_flag"
                 f"(HardEvent.{event}, id) before this use" if event in HardEvent.__members__
                 else "")
        return err.HandoverError(
            f"{op} on pipe {reader} uses {what}{name}, which pipe {writer} wrote"
            f"{f' ({wrote.op} at {_line_of(wrote.loc, loc)})' if wrote and wrote.loc else ''} "
            f"with no hand-over between them{where}: on hardware {reader} may run before "
            f"{writer} has finished", loc,
            hint=f"pass the tensor through its TQue (enque after the write, deque before the "
                 f"use; the queue's position orders its producer pipe before its consumer: "
                 f"VECIN MTE2→V, VECOUT V→MTE3, A1/B1 MTE2→MTE1, A2/B2 MTE1→M, CO1 M→FIX)"
                 f"{flags}")
    if code == E.TENSOR_EXTENT:
        return _tensor_extent(op, what, which, _memory_name(mem_id), site, a, b, c, where, loc)
    if code == E.VALUE_RANGE:
        if op in ("init_buf_pool", "init_buffer", "reset") and a == 10:   # ops/buf_pool.py
            return err.QueueNotInitializedError(
                f"{op} uses a TBufPool that was never given memory{where}", loc,
                hint="give it memory first: pipe.init_buf_pool(pool, len)")
        if op in ("cast_deq", "add_deq_relu"):   # ops/deq.py, ops/add_deq.py
            what = {20: "set_deq_scale(scale, offset, sign_mode) (is_vec_deq=False)",
                    21: "set_deq_scale(vdeq, VdeqInfo(...)) (is_vec_deq=True, the default)",
                    22: "set_deq_scale(scale) (the int32 -> half form)"}.get(a, "set_deq_scale")
            return err.ValueRangeError(f"{op} before {what} set its parameters{where}", loc,
                                       hint="call set_deq_scale first (every block starts "
                                            "with the register unset)")
        if op in ("brcb", "gatherb", "gather", "scatter"):
            from ..compiler.ops.gather import describe
            return err.ValueRangeError(describe(op, a, b, c) + where, loc)
        if op == "value":   # a checked narrowing or offset: detail names the value
            name = detail[0] if detail and isinstance(detail[0], str) else "a value"
            return err.ValueRangeError(f"{name} is {a}, outside {b}..{c}{where}", loc,
                                       hint="it would be truncated or wrap on hardware; check "
                                            "the arithmetic that computes it")
        return err.ValueRangeError(f"{op}: a leading dimension of the {what} is {a}, smaller "
                                   f"than the {b} elements of a row{where}", loc,
                                   hint="check the shapes given to set_org_shape/set_tail and "
                                        "the TCubeTiling")
    if code == E.STRIDE_RANGE:
        kind = "repeat" if b == 255 else "block"
        return err.StrideRangeError(
            f"{op} {what} {kind} stride {a} is outside 0..{b}{where}", loc,
            hint="block strides are 16-bit and repeat strides 8-bit unsigned fields, in "
                 "32-byte blocks")
    if code == E.LOCAL_MISALIGNED:
        mem = Memory(mem_id).name if mem_id in Memory._value2member_map_ else "local memory"
        return err.MisalignedAddressError(
            f"{op} {what} starts at {mem} byte address {a}, which is not 32-byte aligned{where}",
            loc, hint="local tensors used by vector ops and data_copy must start on a 32-byte "
                      "boundary; slice at multiples of 32 bytes")
    if code == E.CAPACITY:
        qid, mem = detail if len(detail) == 2 else (None, Memory.UB)
        holders = _holders(compiled, ctx, int(mem))
        return err.BufferCapacityError(
            f"{op} asks for {a} bytes of {Memory(mem).name} but only {b} of {c} bytes are "
            f"free{where}{'; already reserved: ' + holders if holders else ''}", loc,
            hint="use smaller tiles, fewer buffers, or fewer queues")
    if code == E.QUEUE_EMPTY:
        return err.QueueEmptyError(f"deque on an empty queue{where}: nothing was enqueued, which "
                              f"hangs a real NPU", loc,
                              hint="every deque needs an earlier enque on the same queue")
    if code == E.QUEUE_NO_FREE_BUFFER:
        return err.NoFreeBufferError(f"alloc_tensor found none of the queue's {a} buffers free{where} "
                              f"(a hang on hardware)", loc,
                              hint="free_tensor each tensor after use, or init_buffer with more "
                                   "buffers")
    if code == E.QUEUE_FULL:
        return err.QueueFullError(f"enque on a full queue (depth {a}){where}", loc,
                              hint="deque before enqueueing more, or create the TQue with a "
                                   "larger depth")
    if code == E.QUEUE_FOREIGN_TENSOR:
        return err.ForeignTensorError(f"{op} of a tensor that does not belong to this queue{where}", loc,
                              hint="enque/free a tensor on the queue that allocated it")
    if code == E.QUEUE_NOT_INITIALISED:
        return err.QueueNotInitializedError(f"{op} on a queue or buffer before pipe.init_buffer{where}", loc,
                              hint="call pipe.init_buffer(que, num, len) first")
    if code == E.QUEUE_BAD_STATE:
        state = _STATE_NAMES.get(a, str(a))
        if op == "free_tensor" and a == 0:
            return err.DoubleFreeError(f"free_tensor of a tensor whose buffer is already free "
                                       f"(double free){where}", loc,
                                       hint="free each tensor once")
        if a == 2:
            return err.DoubleEnqueError(f"{op} of a tensor that is already enqueued{where}", loc,
                                        hint="deque it before enqueueing or freeing it again")
        return err.UseAfterFreeError(f"{op} of a tensor whose buffer is {state}{where} (used "
                                     f"after free_tensor)", loc,
                                     hint="allocate a new tensor with alloc_tensor")
    if code == E.QUEUE_REINIT:
        return err.QueueReinitError(f"init_buffer called twice for the same queue{where}", loc)
    if code == E.BAD_BUFFER_COUNT:
        return err.BufferCountError(f"init_buffer num must be 1..8, got {a}{where}", loc)
    if code == E.FLAG_ID_RANGE:
        return err.EventIdError(f"{op} event id {a} is out of range 0..{EVENT_IDS_PER_EVENT - 1}"
                             f"{where}", loc)
    if code == E.FLAG_DOUBLE_SET:
        return err.DoubleSetFlagError(f"set_flag {_flag_name(a)} while it is already set{where}: the first "
                             f"set is lost on hardware", loc,
                             hint="pair every set_flag with a wait_flag before setting it again")
    if code == E.FLAG_NEVER_SET:
        return err.UnsatisfiedWaitError(f"wait_flag {_flag_name(a)} is never satisfied: no set_flag for it "
                             f"follows{where}; a real NPU hangs here", loc,
                             hint="add the matching set_flag before (or after) this wait")
    if code == E.LOOP_LIMIT and ctx is not None and ctx[abi.LOOP_BUDGET] < abi.WATCHDOG_BUDGET // 2 \
            and abi.stopped_by_interrupt(int(ctx[abi.LOOP_BUDGET])):
        return err.LoopLimitError(f"the launch was interrupted (Ctrl-C){where}; it stopped "
                                  f"here", loc)
    if code == E.LOOP_LIMIT and ctx is not None and ctx[abi.LOOP_BUDGET] < abi.WATCHDOG_BUDGET // 2:
        return err.LoopLimitError(f"{op if op in ('for', 'while') else 'a'} loop: the launch ran "
                                  f"longer than {abi.launch_timeout():g} s{where} and was "
                                  f"stopped here; the kernel looks hung", loc,
                                  hint=f"check the loop's bounds and exit condition; a launch "
                                       f"that really needs longer can raise the limit with "
                                       f"{abi.LAUNCH_TIMEOUT_ENV}=SECONDS (0: no limit)")
    if code == E.LOOP_LIMIT:
        return err.LoopLimitError(f"{op if op in ('for', 'while') else 'a'} loop: the "
                                  f"block's loops ran more than {abi.loop_budget()} iterations "
                                  f"in all{where}; the kernel looks hung (a loop whose "
                                  f"condition never changes?)", loc,
                                  hint=f"check the loop's exit condition; a kernel that really "
                                       f"needs more iterations can raise the budget with "
                                       f"{abi.LOOP_BUDGET_ENV}=N")
    if code == E.ASSERTION:
        msg = detail[0] if detail and detail[0] else ""
        return err.KernelAssertionError(f"assertion failed{': ' + msg if msg else ''}{where}", loc)
    if code == E.ZERO_STEP:
        return err.ZeroStepError(f"range() step is zero{where}", loc)
    if code == E.DIVISION_BY_ZERO:
        return err.DivisionByZeroError(f"integer division by zero{where}", loc)
    if code == E.NEGATIVE_COUNT:
        return err.NegativeCountError(f"{op} count/length is negative ({a}){where}", loc)
    if code == E.MASK_RANGE:
        return err.MaskRangeError(f"{op}: mask {a} is outside 1..{b} lanes of one repeat (or the "
                                  f"bit mask is all zero){where}", loc,
                                  hint="in normal mode the mask selects lanes of a 256-byte "
                                       "repeat; call set_mask_count() for an element count")
    if code == E.REPEAT_RANGE:
        return err.RepeatRangeError(f"{op}: repeat_times {a} is outside 0..255{where}", loc,
                                    hint="split the work into several instructions")
    if code == E.DATA_RACE:
        from ..dsl.types import PIPE_NAMES
        other_pipe, this_pipe = divmod(b, 16)
        names = [PIPE_NAMES[p] if 0 <= p < len(PIPE_NAMES) else "?"
                 for p in (other_pipe, this_pipe)]
        kind = {0: "reads data written", 1: "writes data read", 2: "overwrites data written"}
        race_mem, race_kind = divmod(c, 4)
        mem = _memory_name(race_mem)
        other = compiled.sites[a] if 0 <= a < len(compiled.sites) else None
        event = f"HardEvent.{names[0]}_{names[1]}"
        if f"{names[0]}_{names[1]}" in HardEvent.__members__:
            fix = (f"asc.set_flag({event}, id) after the {names[0]} access and "
                   f"asc.wait_flag({event}, id) before this one (or pass the tensor through a "
                   f"TQue)")
        else:
            fix = (f"there is no {event}: asc.pipe_barrier(asc.PipeID.PIPE_ALL) between them (or "
                   f"order them through another pipe's flags)")
        cause = _flag_cause(compiled, ctx, f"{names[0]}_{names[1]}", loc)
        return err.DataRaceError(
            f"data race: {op} on pipe {names[1]} {kind.get(race_kind, 'touches data used')} by "
            f"pipe {names[0]} at {other.loc if other else '?'} with no synchronisation between "
            f"them ({mem} bytes [{which_raw}, {which_raw + 32})){where}"
            + (f"\n    other access: {other.loc.source_line().strip()}"
               if other and other.loc else "") + cause, loc,
            hint=f"order them: {fix}")
    if code == E.UNINITIALIZED_READ:
        mem_code, granules = c % 256, max(1, c // 256)
        mem = _memory_name(mem_code)
        whole = " (not one 32-byte row of it)" if granules > 1 else ""
        fill = ("copy data in (data_copy/duplicate) before reading it" if mem_code in (0, 1) else
                "fill it first: data_copy/init_const_value into L1, load_data into L0A/L0B, "
                "mmad (cmatrix_init_val=True) into L0C, data_copy into BT; and check the offsets")
        cause = _truncation_cause(compiled, ctx, mem_code, a, a + 32 * granules, loc)
        return err.UninitializedReadError(
            f"{op} reads {mem} bytes [{a}, {a + 32 * granules}) that nothing has written{whole}"
            f"{where}{cause}", loc,
            hint="copy whole 32-byte blocks and the tail with data_copy_pad" if cause else fill)
    if code == E.TOO_MANY_LIVE_TENSORS:
        return err.TooManyLiveTensorsError(
            f"{op}: more than 8 tensors allocated at once in one TPosition{where} (a hang on "
            f"hardware)", loc, hint="free tensors before allocating more")
    if code in (E.CUBE_PARAM_RANGE, E.CUBE_MISALIGNED):
        from .cube_faults import cube_fault
        return cube_fault(code, op, detail, a, b, c, where, loc)
    if code.name == "MATMUL_OPERAND_MISSING":
        if which == 5:
            org_m, org_n = c >> 32, c & 0xFFFFFFFF
            return err.MatmulStateError(
                f"{op} computes a {a} x {b} block of C (the tiling's single_core_m x "
                f"single_core_n, or set_tail's) but the matrix is {org_m} x {org_n}{where}",
                loc, hint="the tiling rounds single_core_m/n up; a block at the edge of the "
                          "matrix calls mm.set_tail(tail_m, tail_n) before iterate_all (as "
                          "CANN requires; samples/matmul.py shows how)")
        if which == 6:
            return err.MatmulStateError(
                f"{op}: int8 inputs with a float16/int8 C need a dequant scale, but "
                f"Matmul.set_quant_scalar/set_quant_vector was not executed on this path{where}",
                loc, hint="call matmul.set_quant_scalar(...) or set_quant_vector(...) before "
                          "this call on every path")
        if which in (0, 1):
            m = "AB"[which]
            return err.MatmulStateError(
                f"{op} runs without the {m} matrix: Matmul.set_tensor_{m.lower()} was not "
                f"executed on this path{where}", loc,
                hint=f"call matmul.set_tensor_{m.lower()}(tensor) before this call on every path")
        return err.MatmulStateError(f"{op}: the tiling's base_m/base_n/base_k are not positive "
                                    f"(an unfilled TCubeTiling?){where}",
                                    loc, hint="fill the TCubeTiling with MultiCoreMatmulTiling."
                                              "get_tiling before launching")
    if code.name == "DATA_COPY_PARAM_RANGE":
        return err.DataCopyParamError(f"{op}: a copy parameter is out of range ({a}){where}",
                                      loc)
    return err.KernelRuntimeError(f"kernel failed with error {code.name}{where}", loc)


def _truncation_cause(compiled, ctx, mem: int, lo: int, hi: int, loc) -> str:
    """The root cause of an uninitialised read, when a truncated data_copy left exactly those
    bytes unwritten (``abi.TRUNC_*``, recorded by the copy)."""
    if ctx is None or not ctx[abi.TRUNC_SITE] or int(ctx[abi.TRUNC_MEM]) != mem:
        return ""
    t_lo, t_hi = int(ctx[abi.TRUNC_LO]), int(ctx[abi.TRUNC_HI])
    if hi <= t_lo or lo >= t_hi:
        return ""
    site = compiled.sites[int(ctx[abi.TRUNC_SITE]) - 1]
    at = _line_of(site.loc, loc) if site.loc else "?"
    return (f"\n    root cause: the data_copy at {at} asked for {t_hi - t_lo} bytes more than it "
            f"copied: the hardware truncates a copy to whole 32-byte blocks, so bytes "
            f"[{t_lo}, {t_hi}) were never written")


def _flag_cause(compiled, ctx, event_name: str, loc) -> str:
    """The root cause of a race between two pipes, when their HardEvent was used but its set and
    wait did not pair up (a wait_flag still pending, a set_flag nobody waited for)."""
    if ctx is None or event_name not in HardEvent.__members__:
        return ""
    event = int(HardEvent[event_name])
    base = abi.flag_base(compiled.num_queues)
    sites = abi.flag_site_base(compiled.num_queues)
    pending, unwaited = [], []
    for eid in range(EVENT_IDS_PER_EVENT):
        flag = event * EVENT_IDS_PER_EVENT + eid
        value = int(ctx[base + flag])
        if value < 0:
            site = int(ctx[sites + flag])
            wait = compiled.sites[site] if 0 <= site < len(compiled.sites) else None
            pending.append(f"wait_flag(HardEvent.{event_name}, {eid})"
                           + (f" at {_line_of(wait.loc, loc)}" if wait and wait.loc else ""))
        elif value > 0:
            unwaited.append(f"set_flag(HardEvent.{event_name}, {eid})")
    if not pending and not unwaited:
        return ""
    parts = []
    if pending:
        parts.append(f"{', '.join(pending)} waits for a set_flag that never came before it")
    if unwaited:
        parts.append(f"{', '.join(unwaited)} was set and nothing waited for it")
    return "\n    root cause: " + "; ".join(parts) + " (do the event ids of the pair match?)"


def _line_of(other, here) -> str:
    """'line 14' for a place in the same file as ``here``, else 'file.py:14'."""
    if here is not None and other.file == here.file:
        return f"line {other.line}"
    return err.place(other.file, other.line, short=True)


def _tensor_extent(op, what, which, mem, site, a, b, c, where, loc):
    """An operand ran past its LocalTensor: bytes [a, b) of a c-byte tensor, relative to its
    start, in the operand's elements."""
    tensors = getattr(site, "tensors", ()) or ()
    info = tensors[which] if which < len(tensors) else None
    esize = info.esize if info is not None else 1
    unit = "elements" if info is not None else "bytes"
    name = f" '{info.name}'" if info is not None and info.name else ""
    made = info.describe(loc) if info is not None else ""
    first, end, size = a // esize, -(-b // esize), max(c, 0) // esize
    about = f" ({made}, in {mem})" if made else f" (in {mem})"
    if op in ("get_value", "set_value"):
        return err.TensorExtentError(
            f"{op} index {first} is outside the tensor{name}, which has {size} {unit}"
            f"{about}{where}", loc, hint="indices run from 0 to get_size() - 1")
    span = f"elements [{first}, {end})" if info is not None else f"bytes [{a}, {b})"
    return err.TensorExtentError(
        f"{op} {what}{name} would use {span} but the tensor has {size} {unit}{about}{where}",
        loc, hint="counts are in elements, not bytes; the count (or the repeats, strides and "
                  "mask of the masked form) must stay inside the tensor: the bytes after it "
                  "belong to another buffer")


def _holders(compiled, ctx, mem: int) -> str:
    if ctx is None:
        return ""
    from . import abi
    parts = []
    for qid, name in enumerate(compiled.queue_names):
        rec = abi.queue_slot(compiled.num_queues, qid, 0)
        if ctx[rec + abi.Q_INITED] and ctx[rec + abi.Q_MEM] == mem:
            nbytes = int(ctx[rec + abi.Q_STRIDE] * ctx[rec + abi.Q_NUM])
            parts.append(f"{name} {nbytes} B")
    return ", ".join(parts)
