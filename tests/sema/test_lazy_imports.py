"""What a compile imports only when a kernel uses it (issue 14: cold compile time)."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_matmul_config_constructors_are_registered_by_name():
    """sema/adv.py registers the constructors of asc.adv's config records and helpers by name,
    without importing advlib/matmul_config.py: the names must be exactly those it serves."""
    from ascendc_py.advlib import matmul_config
    from ascendc_py.compiler.sema import adv  # noqa: F401  (registrations)
    from ascendc_py.compiler.sema.builtins import FUNCTIONS
    served = {c.asc_name for c in matmul_config.CONFIG_RECORDS} | \
        {f.asc_name for f in matmul_config.CONFIG_HELPERS} | {"adv.QuantConfig"}
    registered = {n for n in FUNCTIONS if n.startswith("adv.") and (
        n[4:] in matmul_config.__dict__ and n != "adv.Matmul")}
    assert served == registered


def test_a_compile_without_adv_configs_does_not_import_them(tmp_path):
    """Compiling sepia (no asc.adv config) in a fresh process leaves matmul_config unimported,
    and a kernel that builds a MatmulConfig still compiles (the constructor loads it)."""
    script = (
        "import sys, numpy as np\n"
        f"sys.path.insert(0, {str(ROOT / 'samples')!r})\n"
        "from sepia import sepia\n"
        "sepia(np.zeros((1, 3, 4, 4), np.float32))\n"
        "print('matmul_config' in ' '.join(sys.modules))\n"
        "from ascendc_py.compiler.sema import adv\n"
        "cfg = adv._config('MatmulConfig')()\n"
        "print(adv.MatmulV.__dataclass_fields__['config'].default_factory() == cfg)\n")
    env = dict(os.environ, ASCENDC_PY_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True"]
