"""A kernel's cache key covers the asc.adv library functions it calls even in a fresh process,
where asc.adv has not loaded them yet (they are bound on first use): a changed library
function must not be served from a kernel compiled against its old source."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

KERNEL = textwrap.dedent('''
    import ascendc_py as asc

    @asc.kernel
    def k(z: asc.GlobalAddress):
        a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
        asc.adv.{api}(a, a, 64)

    sources, _ = k.dependencies()
    print(" ".join(name for name, _ in sources))
''')


@pytest.mark.parametrize("api,helper", [("silu", "_sigmoid_scaled_body"), ("tanh", "unary")])
def test_fresh_process_key_names_the_library(tmp_path, api, helper):
    script = tmp_path / "k.py"
    script.write_text(KERNEL.replace("{api}", api))
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    names = out.stdout.split()
    assert api in names and helper in names, names


PYASC_KERNEL = textwrap.dedent('''
    import sys
    from ascendc_py import pyasc_compat
    with pyasc_compat.install():
        sys.path.insert(0, {here!r})
        import pk
        print(" ".join(name for name, _ in pk.k.dependencies()[0]))
''')
PYASC_MODULE = textwrap.dedent('''
    import asc

    @asc.jit
    def k():
        dst = asc.LocalTensor(dtype=asc.float16)
        asc.adv.softmax(dst, dst, dst, dst, asc.adv.SoftmaxTiling())
''')


def test_pyasc_kernel_key_names_the_library(tmp_path):
    """Through the pyasc shim, ``asc`` forwards ``adv`` to ascendc_py: the walk follows it."""
    (tmp_path / "pk.py").write_text(PYASC_MODULE)
    script = tmp_path / "run.py"
    script.write_text(PYASC_KERNEL.replace("{here!r}", repr(str(tmp_path))))
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "softmax" in out.stdout.split(), out.stdout
