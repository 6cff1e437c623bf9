"""The queue-tensor checks of an instruction's operands run in one library call
(``intrinsics.tensor_uses``, up to three operands): a failure names the operand that failed,
whichever position it has, as the one-call-per-operand checks did."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc

N = 64


@asc.kernel
def three_operands(x: asc.GlobalAddress, z: asc.GlobalAddress, FREED: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, N)
    pipe = asc.TPipe()
    qa = asc.TQue(asc.TPosition.VECIN, 1)
    qb = asc.TQue(asc.TPosition.VECIN, 1)
    qo = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(qa, 1, N * 4)
    pipe.init_buffer(qb, 1, N * 4)
    pipe.init_buffer(qo, 1, N * 4)
    a = qa.alloc_tensor(asc.float32)
    b = qb.alloc_tensor(asc.float32)
    asc.data_copy(a, xg, N)
    asc.data_copy(b, xg, N)
    qa.enque(a)
    qb.enque(b)
    a = qa.deque(asc.float32)
    b = qb.deque(asc.float32)
    o = qo.alloc_tensor(asc.float32)
    if FREED == 1:
        qa.free_tensor(a)
    if FREED == 2:
        qb.free_tensor(b)
    asc.add(o, a, b, N)
    qo.enque(o)
    o = qo.deque(asc.float32)
    asc.data_copy(zg, o, N)


def test_three_operands_that_are_all_handed_over_run():
    x = np.arange(N, dtype=np.float32)
    z = np.zeros(N, np.float32)
    three_operands[1](x, z, 0)
    np.testing.assert_array_equal(z, 2 * x)


@pytest.mark.parametrize("freed,name", [(1, "src0 'a'"), (2, "src1 'b'")])
def test_the_failing_operand_is_named(freed, name):
    x = np.arange(N, dtype=np.float32)
    with pytest.raises(asc.UseAfterFreeError) as info:
        three_operands[1](x, np.zeros(N, np.float32), freed)
    assert f"add uses {name} after free_tensor" in str(info.value), str(info.value)
