"""pyasc's own test corpus, unmodified, as a test suite of ours.

Each corpus (``ascendc_py.pyasc_compat.corpus.CORPORA``) is one pytest run of pyasc's files from
a local checkout named by ``$PYASC_REPO`` (nothing is copied or fetched; skipped without it).
A test fails when a case that passes today stops passing (the per-file floors below; raise
them as names land), or when a case fails other than by an error ascendc_py raises on purpose:
a wrong result (pyasc's own check failing) or an internal exception is a failure (a case
whose check fails is run twice more first, see below: torch's CPU reference is not always
exact on this machine).
What is still missing is listed by ``python -m ascendc_py.pyasc_compat.corpus``.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from ascendc_py.pyasc_compat import corpus

PYASC_REPO = os.environ.get(corpus.REPO_ENV)
SKIP = "set PYASC_REPO to a checkout of hicann/pyasc to run these"

_GEN = "python/test/generalization/basic/"
_GEN_ADV = "python/test/generalization/adv/"
_LANG = "python/test/unit/language/"
_HOST = "python/test/unit/lib/host/"

#: corpus -> {file: cases of it that pass today (a floor)}
PASSING = {
    "kernels": {"python/test/kernels/test_vadd.py": 1,
                "python/test/kernels/test_matmul_torch.py": 1,
                "python/test/kernels/insert_sync/test_vadd.py": 1,
                "python/test/kernels/insert_sync/test_vadd_scalar.py": 1,
                "python/test/kernels/test_bilinear_interpolation.py": 1,
                "python/test/kernels/test_matmul.py": 1,
                "python/test/kernels/insert_sync/test_matmul.py": 1,
                "python/test/kernels/insert_sync/test_quant.py": 1,
                "python/test/kernels/insert_sync/test_quant_dynamic.py": 1,
                "python/test/kernels/insert_sync/test_softmax.py": 1},
    "generalization": {_GEN + "test_axpy.py": 4, _GEN + "test_duplicate.py": 2, _GEN + "test_vadd.py": 2,
                       _GEN + "test_vadd_bits.py": 1, _GEN + "test_vadd_l0.py": 3,
                       _GEN + "test_vadd_sw.py": 1, _GEN + "test_vadd_tiling.py": 2,
                       _GEN + "test_vadds.py": 2, _GEN + "test_vsqrt.py": 1,
                       _GEN + "test_copy.py": 6, _GEN + "test_transpose.py": 2,
                       _GEN + "test_transpose_ext.py": 2,
                       _GEN + "test_trans_5hd_addr_tensor.py": 2,
                       _GEN + "test_trans_5hd_tensor_list.py": 2,
                       _GEN + "test_aipp.py": 3,
                       _GEN_ADV + "test_matmul_iterate_all.py": 1,
                       _GEN_ADV + "test_matmul.py": 1, _GEN_ADV + "test_matmul_iterate_batch.py": 2,
                       _GEN_ADV + "test_quant.py": 4},
    "generalization-lenient": {_GEN + "test_axpy.py": 4, _GEN + "test_duplicate.py": 5, _GEN + "test_vadd.py": 7,
                               _GEN + "test_vadd_bits.py": 7, _GEN + "test_vadd_l0.py": 7,
                               _GEN + "test_vadd_sw.py": 7, _GEN + "test_vadd_tiling.py": 7,
                               _GEN + "test_vadds.py": 7,
                               _GEN + "test_vsqrt.py": 4, _GEN + "test_aipp.py": 3,
                               _GEN + "test_copy.py": 7, _GEN + "test_transpose.py": 2,
                               _GEN + "test_transpose_ext.py": 2,
                               _GEN + "test_trans_5hd_addr_tensor.py": 2,
                               _GEN + "test_trans_5hd_tensor_list.py": 2,
                               _GEN_ADV + "test_matmul_iterate_all.py": 1,
                               _GEN_ADV + "test_matmul.py": 1,
                               _GEN_ADV + "test_matmul_iterate_batch.py": 2,
                               _GEN_ADV + "test_quant.py": 4},
    "lib-host": {_HOST + "test_batch_matmul_tiling.py": 28,
                 _HOST + "test_matmul_api_tiling.py": 27,
                 _HOST + "test_multi_core_matmul_tiling.py": 34},
    "language": {_LANG + "adv/test_activation.py": 1, _LANG + "adv/test_sort.py": 2,
                 _LANG + "adv/test_matmul.py": 13, _LANG + "adv/test_normalization.py": 1,
                 _LANG + "adv/test_ops.py": 27, _LANG + "basic/test_common_api.py": 64,
                 _LANG + "basic/test_list_tensor.py": 11, _LANG + "basic/test_proposal.py": 2,
                 _LANG + "basic/test_mm.py": 4, _LANG + "basic/test_data_copy.py": 1, _LANG + "basic/test_scalar.py": 5,
                 _LANG + "basic/test_set_atomic.py": 5, _LANG + "basic/test_vector_binary.py": 18,
                 _LANG + "basic/test_vector_cmpsel.py": 7, _LANG + "basic/test_vector_reduce.py": 8,
                 _LANG + "basic/test_vector_scalar.py": 7, _LANG + "basic/test_vector_ternary.py": 1,
                 _LANG + "basic/test_vector_unary.py": 12, _LANG + "core/test_global_tensor.py": 10,
                 _LANG + "core/test_local_mem_allocator.py": 4,
                 _LANG + "core/test_local_tensor.py": 15, _LANG + "core/test_types.py": 13,
                 _LANG + "fwk/test_tbuf.py": 3, _LANG + "fwk/test_tbuf_pool.py": 4,
                 _LANG + "fwk/test_tpipe.py": 9, _LANG + "fwk/test_tque.py": 9,
                 _LANG + "fwk/test_tque_bind.py": 9,
                 _LANG + "basic/test_determine_compute_sync.py": 2},
}


@pytest.mark.skipif(not PYASC_REPO, reason=SKIP)
@pytest.mark.parametrize("name", list(corpus.CORPORA))
def test_pyasc_corpus(name):
    result = corpus.run_corpus(corpus.CORPORA[name], Path(PYASC_REPO))
    summary = corpus.format_result(result)
    files = result.files()
    regressed = {f: (files.get(f, [0])[0], n) for f, n in PASSING[name].items()
                 if files.get(f, [0])[0] < n}
    assert not regressed, f"fewer cases pass than before (file: (now, before)): {regressed}\n" \
                          f"{summary}"
    wrong = {node: message for node, message in result.failed.items()
             if not corpus.is_deliberate(message)}
    if wrong:
        # pyasc's references are torch on the CPU, and this machine's torch.sqrt has been seen
        # to return values off by up to 3e-4 (relative) now and then, also in a process that
        # never imported ascendc_py: such a case is run again (twice) before it counts.
        again = wrong
        for _ in range(2):
            rerun = corpus.run_corpus(corpus.CORPORA[name], Path(PYASC_REPO), nodes=list(again))
            again = {n: m for n, m in rerun.failed.items() if n in again}
            if not again:
                break
        if not again:
            warnings.warn(f"pyasc {name}: failed once, then passed: {wrong}")
        wrong = again
    assert not wrong, f"failures that are not a deliberate ascendc_py error (a wrong result " \
                      f"or an internal exception): {wrong}\n{summary}"
    if name == "lib-host":
        assert not result.failed and len(result.passed) == 89, summary


def test_skip_reason_names_the_variable():
    assert "PYASC_REPO" in SKIP and "hicann/pyasc" in SKIP


@pytest.mark.parametrize("message, key", [
    ("ascendc_py.compiler.errors.UnknownAttributeError: /x/t.py:3:5: 'asc' has no attribute "
     "'set_atomic_add'\n  asc.set_atomic_add()", "missing asc.set_atomic_add"),
    ("ascendc_py.compiler.errors.UnknownAttributeError: /x/t.py:3:5: 'ascendc_py.adv' has no "
     "attribute 'softmax'", "missing asc.adv.softmax"),
    ("ascendc_py.compiler.errors.UnknownAttributeError: /x/t.py:9:1: LocalTensor[float16, VECIN] "
     "has no attribute 'set_size' in kernels", "missing LocalTensor.set_size"),
    ("collection failure: AttributeError: module 'asc' has no attribute 'LocalTensorAuto' "
     "(ascendc_py does not provide asc.LocalTensorAuto; ...)", "missing asc.LocalTensorAuto"),
    ("ascendc_py.compiler.errors.ConstantRangeError: /x/t.py:1:2: integer 18446744073709551616 "
     "does not fit in 64 bits", "ConstantRangeError: integer N does not fit in N bits"),
])
def test_group_key(message, key):
    assert corpus.group_key(message) == key
    assert corpus.is_deliberate(message)


@pytest.mark.parametrize("message", [
    "assert False", "AssertionError: assert tensor(False)", "TypeError: 'NoneType' object is "
    "not callable", "collection failure: TypeError: '_AliasModule' object is not callable"])
def test_wrong_results_and_internal_errors_are_not_deliberate(message):
    assert not corpus.is_deliberate(message)
