"""Every sample end to end: import it from samples/ and run its main(), which checks the kernel
against its golden function; plus each sample's launcher on inputs main() does not use."""
from __future__ import annotations

import importlib
import pathlib
import sys

import numpy as np
import pytest

SAMPLES_DIR = pathlib.Path(__file__).resolve().parents[2] / "samples"
SAMPLE_NAMES = sorted(p.stem for p in SAMPLES_DIR.glob("*.py") if p.stem != "run_all")
#: runners of the sample folders (samples/cpp/run_cpp.py runs the C++ kernels; tests/cpp tests them)
FOLDER_RUNNERS = sorted(f"{p.parent.name}.{p.stem}" for p in SAMPLES_DIR.glob("*/run_*.py"))


@pytest.fixture(scope="module", autouse=True)
def samples_on_path():
    sys.path.insert(0, str(SAMPLES_DIR))
    yield
    sys.path.remove(str(SAMPLES_DIR))


def test_run_all_lists_every_sample():
    run_all = importlib.import_module("run_all")
    assert sorted(run_all.SAMPLES) == sorted(SAMPLE_NAMES + FOLDER_RUNNERS)
    assert "cpp.run_cpp" in FOLDER_RUNNERS
    assert {"add_tque", "add_flags", "leaky_relu", "sepia"} <= set(SAMPLE_NAMES)


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_sample_main(name):
    """main() compares every output with the sample's golden function and raises if not."""
    importlib.import_module(name).main()


def test_add_tque_with_other_sizes_and_torch():
    add_tque = importlib.import_module("add_tque")
    rng = np.random.default_rng(9)
    for cores, tile in ((1, 64), (4, 128), (8, 256)):
        x = rng.standard_normal(cores * tile * 4).astype(np.float32)
        y = rng.standard_normal(x.size).astype(np.float32)
        z, _ = add_tque.add(x, y, cores=cores, tile_length=tile)
        np.testing.assert_array_equal(z, x + y)
    torch = pytest.importorskip("torch")
    xt = torch.randn(8 * 2048, dtype=torch.float16)
    yt = torch.randn(8 * 2048, dtype=torch.float16)
    zt, _ = add_tque.add(xt, yt)
    assert torch.equal(zt, (xt.float() + yt.float()).half())


def test_sepia_against_the_article_coefficients():
    sepia = importlib.import_module("sepia")
    rng = np.random.default_rng(3)
    img = rng.random((3, 3, 16, 24), dtype=np.float32)
    out = sepia.sepia(img, cores=3)
    out = out[0] if isinstance(out, tuple) else out
    r, g, b = img[:, 0], img[:, 1], img[:, 2]
    want = np.stack([.393 * r + .769 * g + .189 * b,
                     .349 * r + .686 * g + .168 * b,
                     .272 * r + .534 * g + .131 * b], axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_leaky_relu_uneven_blocks():
    lr = importlib.import_module("leaky_relu")
    rng = np.random.default_rng(4)
    x = rng.standard_normal(3 * 1000 + 24).astype(np.float32)  # last block takes the rest
    y = np.zeros_like(x)
    lr.leaky_relu_kernel[3](x, y, x.size, 0.2, 256)
    np.testing.assert_array_equal(y, np.where(x >= 0, x, x * np.float32(0.2)))
