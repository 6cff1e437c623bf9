"""Builtins' signatures and docstrings from the registry; "did you mean" for attributes of
kernel objects and of the asc module (Ascend C CamelCase names, near spellings, math functions
that are not vector ops); type names without "[?]"."""
from __future__ import annotations

import inspect
import pydoc

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops import REGISTRY
from ascendc_py.dsl.api import BUILTINS, Builtin
from ascendc_py.dsl.suggest import camel_match


# ============================================================================ signatures / docs
def test_signature_of_a_vector_op_is_its_count_form():
    sig = inspect.signature(asc.add)
    assert str(sig) == "(dst, src0, src1, count, is_set_mask=True)"
    assert list(inspect.signature(asc.exp).parameters) == ["dst", "src", "count", "is_set_mask"]
    assert str(inspect.signature(asc.set_flag)) == "(event, event_id)"
    assert str(inspect.signature(asc.get_block_idx)) == "()"
    # a parameter record: from its description
    assert str(inspect.signature(asc.DataCopyParams)) == \
        "(block_count=1, block_len=0, src_stride=0, dst_stride=0)"


def test_help_shows_forms_dtypes_and_an_example():
    text = pydoc.render_doc(asc.add, renderer=pydoc.plaintext)
    assert "dst[i] = src0[i] + src1[i]" in text
    assert "asc.add(dst, src0, src1, mask, repeat_times, repeat_params, is_set_mask=True)" \
        in text
    assert "dtypes: int16, float16, int32, float32" in text
    assert "asc.add(z, x, y, 256)" in text and "pipe: V" in text
    assert inspect.getdoc(asc.Builtin if hasattr(asc, "Builtin") else Builtin).startswith(
        "A DSL function")


def test_every_registry_builtin_has_a_signature_and_doc():
    for name, b in BUILTINS.items():
        if isinstance(b, Builtin) and name in REGISTRY and REGISTRY[name].forms:
            sig = inspect.signature(b)
            first = [p.lstrip("*") for p in REGISTRY[name].forms[0]]
            assert list(sig.parameters) == first, name
            assert "Forms:" in b.__doc__ and f"asc.{name}" in b.__doc__, name


# ============================================================================ did you mean
def test_camel_case_maps_to_the_snake_spelling():
    known = ["set_global_buffer", "enque", "deque", "alloc_tensor", "data_copy",
             "get_block_idx"]
    assert camel_match("SetGlobalBuffer", known) == "set_global_buffer"
    assert camel_match("EnQue", known) == "enque"
    assert camel_match("DeQue", known) == "deque"
    assert camel_match("AllocTensor", known) == "alloc_tensor"
    assert camel_match("GetBlockIdx", known) == "get_block_idx"
    assert camel_match("enque", known) is None and camel_match("Foo", known) is None


def test_module_attribute_hints():
    with pytest.raises(AttributeError, match="Ascend C's DataCopy is spelled data_copy here"):
        asc.DataCopy  # noqa: B018
    with pytest.raises(AttributeError, match="SetGlobalBuffer is spelled set_global_buffer "
                                             "here, a method of GlobalTensor"):
        asc.SetGlobalBuffer  # noqa: B018
    with pytest.raises(AttributeError) as e:
        asc.tanh  # noqa: B018
    assert "asc.adv.tanh" in str(e.value) and "the unary ops are exp ln abs" in str(e.value)
    with pytest.raises(AttributeError, match="did you mean 'testing'"):
        asc.testng  # noqa: B018
    with pytest.raises(AttributeError, match="the binary ops are add sub mul"):
        asc.maximum  # noqa: B018


def _compile_error(fn):
    with pytest.raises(asc.KernelError) as e:
        asc.kernel(fn)[1](np.zeros(256, np.float32))
    return e.value


def test_kernel_set_global_buffer_camel_case():
    def k(x: asc.GlobalAddress):
        xg = asc.GlobalTensor()
        xg.SetGlobalBuffer(x, 256)
    err = _compile_error(k)
    assert err.loc.line == inspect.getsourcelines(k)[1] + 2
    assert "hint: Ascend C's SetGlobalBuffer is spelled set_global_buffer here" in str(err)
    assert "[?]" not in str(err) and "no dtype before set_global_buffer" in str(err)


def test_kernel_queue_methods():
    def k(x: asc.GlobalAddress):
        q = asc.TQue(asc.TPosition.VECIN, 2)
        q.EnQue(None)

    def k2(x: asc.GlobalAddress):
        q = asc.TQue(asc.TPosition.VECIN, 2)
        q.enqueue(None)
    assert "EnQue is spelled enque here" in str(_compile_error(k))
    assert "did you mean 'enque'?" in str(_compile_error(k2))


def test_kernel_asc_math_function():
    def k(x: asc.GlobalAddress):
        a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 256)
        asc.tanh(a, a, 256)
    text = str(_compile_error(k))
    assert "asc.tanh is not a vector op of this release" in text and "asc.adv.tanh" in text

    def k2(x: asc.GlobalAddress):
        a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 256)
        asc.DataCopy(a, a, 256)
    assert "Ascend C's DataCopy is spelled data_copy here" in str(_compile_error(k2))


def test_a_slip_of_case_is_suggested():
    """Regression: ``asc.PIPE.ALL`` in a kernel said only "'ascendc_py' has no attribute
    'PIPE'" (difflib is case-sensitive, and PIPE is too far from PipeID)."""
    with pytest.raises(AttributeError, match="did you mean 'PipeID'"):
        asc.PIPE  # noqa: B018

    def k(x: asc.GlobalAddress):
        asc.pipe_barrier(asc.PIPE.ALL)
    err = _compile_error(k)
    assert err.loc.line == inspect.getsourcelines(k)[1] + 1
    assert "did you mean 'PipeID'?" in str(err)


def test_a_misspelt_submodule_import_is_suggested():
    with pytest.raises(ModuleNotFoundError, match="did you mean 'ascendc_py.testing'"):
        import ascendc_py.tesing  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match="did you mean 'ascendc_py.torch_bridge.ops'"):
        import ascendc_py.torch_bridge.opz  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match=r"^No module named 'ascendc_py.zzqqxx'$"):
        import ascendc_py.zzqqxx  # noqa: F401
