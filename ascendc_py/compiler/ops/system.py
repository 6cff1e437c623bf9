"""Data movement, synchronisation, queue and scalar-access intrinsics."""
from __future__ import annotations

from ...dsl.types import PipeID
from . import CostClass, Family, OpSpec, register

# ----------------------------------------------------------------------------- data movement
register(OpSpec("data_copy", Family.DATA_COPY, None, CostClass.DMA, (),
                (("dst", "src", "count"),),
                doc="Copy count elements GM→UB (MTE2), UB→GM (MTE3) or UB→UB (V). A byte "
                    "length that is not a multiple of 32 is truncated down, as on hardware.",
                flops_per_elem=0))

# ----------------------------------------------------------------------------- synchronisation
for _name, _doc in (("set_flag", "Set flag (event, id) once all earlier work of the source "
                                 "pipe completes."),
                    ("wait_flag", "Block the destination pipe until flag (event, id) is set, "
                                  "then clear it."),
                    ("pipe_barrier", "Later instructions of the pipe wait for all earlier "
                                     "ones.")):
    register(OpSpec(_name, Family.SYNC, None, CostClass.SYNC, (),
                    (("event", "event_id"),) if _name != "pipe_barrier" else (("pipe",),),
                    doc=_doc, flops_per_elem=0))

# ----------------------------------------------------------------------------- queues and buffers
for _name, _doc in (("init_buffer", "Reserve num buffers of len bytes (rounded up to 32 B) "
                                    "for a TQue, or len bytes for a TBuf."),
                    ("alloc_tensor", "Take a free buffer of the queue."),
                    ("enque", "Hand a tensor to the consumer side of the queue."),
                    ("deque", "Take the oldest enqueued tensor."),
                    ("free_tensor", "Return the tensor's buffer to the queue."),
                    ("tbuf_get", "The TBuf's memory as a LocalTensor."),
                    ("tque_query", "A TQue query: get_tensor_count_in_que (tensors enqueued "
                                   "and not yet dequeued), has_tensor_in_que (that count > 0), "
                                   "has_idle_buffer (a buffer alloc_tensor could take), "
                                   "vacant_in_que (an enque would not exceed the depth)."),
                    ("tpipe_release", "TPipe.destroy() / TPipe.reset(): release every buffer "
                                      "init_buffer reserved (every queue and TBuf becomes "
                                      "uninitialised, the memories' allocation starts over, "
                                      "tensors handed out before are stale), so init_buffer "
                                      "may be called again.")):
    register(OpSpec(_name, Family.QUEUE, None, CostClass.SCALAR, (), (), doc=_doc,
                    flops_per_elem=0))

# ----------------------------------------------------------------------------- scalar memory
register(OpSpec("get_value", Family.SCALAR_MEM, PipeID.PIPE_S, CostClass.SCALAR, (),
                (("index",),), doc="Read one element (scalar unit).", flops_per_elem=0))
register(OpSpec("set_value", Family.SCALAR_MEM, PipeID.PIPE_S, CostClass.SCALAR, (),
                (("index", "value"),), doc="Write one element (scalar unit).",
                flops_per_elem=0))
register(OpSpec("check_local", Family.SYSTEM, None, CostClass.NONE, (), (),
                doc="Check that a static LocalTensor lies inside its memory.", flops_per_elem=0))
register(OpSpec("check_offset", Family.SYSTEM, None, CostClass.NONE, (), (),
                doc="Check that a run-time LocalTensor slice offset is not negative and keeps "
                    "the address inside 32 bits.", flops_per_elem=0))
register(OpSpec("kernel_assert", Family.SYSTEM, None, CostClass.NONE, (), (),
                doc="A runtime `assert` inside a kernel.", flops_per_elem=0))

for _name, _doc in (("set_vector_mask", "Set the vector mask register (lanes, or a count in "
                                        "counter mode)."),
                    ("reset_mask", "Enable every lane."),
                    ("set_mask_count", "Counter mode: the mask is the number of elements."),
                    ("set_mask_norm", "Normal mode: the mask selects lanes of each repeat.")):
    register(OpSpec(_name, Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (), (), doc=_doc,
                    flops_per_elem=0))
