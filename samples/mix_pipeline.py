"""A mix kernel (one AIC and two AIVs per AI Core) with a producer/consumer pipeline between
the cube core and the vector cores through a GM workspace, synchronised with cross-core flags.

The AIC stages each tile GM -> L1 -> workspace (standing in for a matmul's results written by
the fixpipe) into one of two workspace slots, and signals its AIVs (flag 0, mode 2). Each AIV
waits, applies leaky_relu to its half of the tile and writes it out, then signals the AIC that
the slot is free (flag 1, mode 2: the AIC is released once both AIVs have set it). The AIC waits
for that before it reuses a slot, so it runs at most two tiles ahead.
"""
import numpy as np

import ascendc_py as asc

HALF = 1024                    # elements per AIV per tile
TILE = 2 * HALF                # elements per tile
ALPHA = 0.1


@asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)
def mix_pipeline(x: asc.GlobalAddress, ws: asc.GlobalAddress, y: asc.GlobalAddress,
                 tiles: int):
    pipe = asc.TPipe()
    if asc.ascend_is_aic():
        b = asc.get_block_idx()
        xg = asc.GlobalTensor(); xg.set_global_buffer(x + b * tiles * TILE, tiles * TILE)
        wg = asc.GlobalTensor(); wg.set_global_buffer(ws + b * 2 * TILE, 2 * TILE)
        q1 = asc.TQue(asc.TPosition.A1, 2)
        pipe.init_buffer(q1, 2, TILE * 4)
        for t in range(tiles):
            if t >= 2:
                asc.cross_core_wait_flag(1)            # both AIVs are done with this slot
                asc.wait_flag(asc.HardEvent.MTE3_MTE2, t % 2)   # L1 buffer read out (t - 2)
            a = q1.alloc_tensor(asc.float32)
            asc.data_copy(a, xg[t * TILE:], TILE)
            # the A1 queue's events order MTE2 -> MTE1; this tile leaves L1 on MTE3
            asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
            asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
            q1.enque(a)
            a = q1.deque(asc.float32)
            asc.data_copy(wg[(t % 2) * TILE:], a, TILE)
            asc.set_flag(asc.HardEvent.MTE3_MTE2, t % 2)
            q1.free_tensor(a)
            asc.cross_core_set_flag(0, 2, asc.PipeID.PIPE_MTE3)   # tile t is in the slot
        for t in range(max(0, tiles - 2), tiles):
            asc.wait_flag(asc.HardEvent.MTE3_MTE2, t % 2)
    else:
        b = asc.get_block_idx() // asc.get_sub_block_num()
        half = asc.get_sub_block_idx() * HALF
        wg = asc.GlobalTensor(); wg.set_global_buffer(ws + b * 2 * TILE, 2 * TILE)
        yg = asc.GlobalTensor(); yg.set_global_buffer(y + b * tiles * TILE, tiles * TILE)
        qi = asc.TQue(asc.TPosition.VECIN, 2)
        qo = asc.TQue(asc.TPosition.VECOUT, 2)
        pipe.init_buffer(qi, 2, HALF * 4)
        pipe.init_buffer(qo, 2, HALF * 4)
        for t in range(tiles):
            asc.cross_core_wait_flag(0)
            v = qi.alloc_tensor(asc.float32)
            asc.data_copy(v, wg[(t % 2) * TILE + half:], HALF)
            qi.enque(v)
            asc.cross_core_set_flag(1, 2, asc.PipeID.PIPE_MTE2)   # the slot half is read
            v = qi.deque(asc.float32)
            o = qo.alloc_tensor(asc.float32)
            asc.leaky_relu(o, v, ALPHA, HALF)
            qo.enque(o)
            qi.free_tensor(v)
            o = qo.deque(asc.float32)
            asc.data_copy(yg[t * TILE + half:], o, HALF)
            qo.free_tensor(o)


def main(blocks: int = 8, tiles: int = 6):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(blocks * tiles * TILE).astype(np.float32)
    ws = np.zeros(blocks * 2 * TILE, np.float32)
    y = np.zeros_like(x)
    report = mix_pipeline[blocks](x, ws, y, tiles)
    asc.testing.assert_close(y, np.where(x >= 0, x, x * np.float32(ALPHA)))
    print(f"mix_pipeline float32 {blocks} blocks × {tiles} tiles of {TILE}: matches golden")
    print(report)
    return report


if __name__ == "__main__":
    main()
