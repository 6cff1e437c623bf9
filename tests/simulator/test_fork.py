"""A launch in a forked child works after any launch in the parent (issue 12 item 4): the
child re-creates the thread pools, the watchdog and the locks (os.register_at_fork). Each case
runs in a fresh interpreter with a timeout, since the bug was a hang."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

KERNELS = r'''
import os, sys
import numpy as np
import ascendc_py as asc

@asc.kernel
def fill(x: asc.GlobalAddress, v: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + asc.get_block_idx() * 8, 8)
    for i in range(8):
        xg.set_value(i, v)

@asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)
def mix(x: asc.GlobalAddress, v: int):
    b = asc.get_block_idx()
    if asc.ascend_is_aic():
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x + b * 8, 8)
        xg.set_value(0, v)
        asc.cross_core_set_flag(3, 2, asc.PipeID.PIPE_S)
    else:
        asc.cross_core_wait_flag(3)

def launch_all(v):
    x = np.zeros(8 * 8, np.int32)
    fill[8](x, v)
    y = np.zeros(8 * 3, np.int32)
    mix[3](y, v)
    return bool((x == v).all() and (y[::8] == v).all())
'''

PLAIN_FORK = KERNELS + r'''
assert launch_all(1)          # threads and locks exist in the parent now
pid = os.fork()
if pid == 0:
    os._exit(0 if launch_all(2) else 3)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
'''

POOL_FORK = KERNELS + r'''
from ascendc_py.simulator import abi, block_runner
block_runner.SERIAL_SECONDS = 0.0      # every launch asks for the host pool's workers
runs = []
real = block_runner.run
block_runner.run = lambda *a, **k: runs.append(real(*a, **k)) or runs[-1]

@asc.kernel
def busy(x: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + asc.get_block_idx() * 8, 8)
    for i in range(n):
        xg.set_value(0, i)

def a_worker_ran():
    """Launch until a pool worker ran blocks of one (the child needs its own workers)."""
    x = np.zeros(16 * 8, np.int32)
    for _ in range(100):
        busy[16](x, 20000)
        assert (x[::8] == 19999).all()
        buf, lay, _ = runs[-1]._records
        if lay.threads > 1 and buf[lay.records + lay.record + abi.THREAD_STATE] == 1:
            return True
    return False

assert a_worker_ran()
pid = os.fork()
if pid == 0:
    os._exit(0 if a_worker_ran() else 4)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
'''

FAST_FORK = KERNELS + r'''
from ascendc_py.simulator import block_runner
block_runner.SERIAL_SECONDS = 0.0      # every launch asks for the host pool's workers

def fast_launches(v):
    """Launches served by the fast path (fast_launch.py) once the first two made it."""
    x = np.zeros(8 * 8, np.int32)
    for _ in range(4):
        fill[8](x, v)
    fast = next(iter(fill[8]._fast.values()), None)   # (one codegen variant)
    return bool((x == v).all()) and fast is not None and fast.pool is block_runner._pool

assert fast_launches(1)
pid = os.fork()
if pid == 0:
    os._exit(0 if fast_launches(2) and fast_launches(3) else 5)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
'''

DATALOADER = KERNELS + r'''
import torch
from torch.utils.data import DataLoader, Dataset

class Launching(Dataset):
    def __len__(self):
        return 4
    def __getitem__(self, i):
        x = torch.zeros(8 * 8, dtype=torch.int32)
        fill[8](x, i + 1)
        return x

assert launch_all(1)
loader = DataLoader(Launching(), batch_size=1, num_workers=2,
                    multiprocessing_context="fork")
got = sorted(int(b[0, 0]) for b in loader)
print("child", 0 if got == [1, 2, 3, 4] else got)
'''


@pytest.mark.parametrize("script", ["plain_fork", "pool_fork", "fast_fork", "dataloader"])
def test_launch_in_a_forked_child_after_launches_in_the_parent(script, tmp_path):
    """pool_fork: the child's multi-thread launches get host-pool workers of their own;
    fast_fork: the parent's fast path (fast_launch.py) serves the child's launches only once
    the child has a pool of its own."""
    if script == "dataloader":
        pytest.importorskip("torch")
    path = tmp_path / f"{script}.py"
    path.write_text({"plain_fork": PLAIN_FORK, "pool_fork": POOL_FORK, "fast_fork": FAST_FORK,
                     "dataloader": DATALOADER}[script])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO),
                                                      os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(path)], env=env, capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "child 0", proc.stdout
