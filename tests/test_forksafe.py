"""ForkSafeLock: a lock another thread holds when the process forks is free in the child."""
from __future__ import annotations

import os
import threading

import pytest

from ascendc_py import profiler
from ascendc_py.compiler import jit
from ascendc_py.compiler.codegen import runtime_loader
from ascendc_py.forksafe import ForkSafeLock


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("lock", [ForkSafeLock(), ForkSafeLock(reentrant=True), profiler._lock,
                                  jit._llvm_lock, runtime_loader._lock],
                         ids=["lock", "rlock", "profiler", "jit", "runtime_loader"])
def test_a_lock_held_at_fork_is_free_in_the_child(lock):
    held, release = threading.Event(), threading.Event()

    def holder():
        with lock:
            held.set()
            release.wait(10)

    t = threading.Thread(target=holder)
    t.start()
    assert held.wait(10)
    pid = os.fork()
    if pid == 0:                                   # the child: the holder thread is gone
        ok = lock.acquire(timeout=2)
        os._exit(0 if ok else 1)
    release.set()
    t.join()
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    with lock:                                     # the parent's lock still works
        pass
