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
