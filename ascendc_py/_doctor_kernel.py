"""The kernel ``ascendc-py doctor`` compiles and launches (``doctor.check_kernel``)."""
import ascendc_py as asc


@asc.kernel
def doctor_scale(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    """z = 2 * x, n elements per block, through one UB tile."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x + asc.get_block_idx() * n, n)
    zg.set_global_buffer(z + asc.get_block_idx() * n, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    asc.data_copy(a, xg, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.muls(a, a, 2.0, n)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, a, n)
