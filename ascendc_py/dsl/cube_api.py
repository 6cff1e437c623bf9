"""Kernel-language names of the cube unit (``asc.mmad``, ``asc.Nd2NzParams``,
``asc.FixpipeConfig.cfg_nz`` …), merged into ``dsl.api.BUILTINS``. Semantics:
``compiler/ops/cube.py``; checks: ``compiler/sema/cube.py``."""
from __future__ import annotations

from ..compiler.ops import REGISTRY
from ..compiler.ops.cube import CO2Layout, QuantModes


def _builtin(name: str, doc: str):
    from .api import Builtin
    return Builtin(name, doc)


class FixpipeConfig:
    """``FixpipeConfig(CO2Layout.X)`` or the presets ``FixpipeConfig.cfg_row_major`` (NZ2ND,
    the default) and ``FixpipeConfig.cfg_nz`` (NZ kept); usable only inside kernels."""

    asc_name = "FixpipeConfig"
    cfg_row_major = _builtin("FixpipeConfig.cfg_row_major", "fixpipe output in ND (row-major)")
    cfg_nz = _builtin("FixpipeConfig.cfg_nz", "fixpipe output kept in NZ fractals")

    def __init__(self, *args, **kwargs):
        raise RuntimeError("asc.FixpipeConfig can only be created inside an @asc.kernel "
                           "function")


_DOCS = {
    "Nd2NzParams": "Nd2NzParams(nd_num, n_value, d_value, src_nd_matrix_stride, src_d_value, "
                   "dst_nz_c0_stride, dst_nz_n_stride, dst_nz_matrix_stride): data_copy GM "
                   "(ND) -> L1 (NZ); strides of the destination in 32-byte rows, of the source "
                   "in elements",
    "LoadData2DParams": "LoadData2DParams(start_index=0, repeat_times=1, src_stride=0, sid=0, "
                        "dst_gap=0, if_transpose=False, addr_mode=0): load_data in 512-byte "
                        "fractals",
    "LoadData2dTransposeParams": "LoadData2dTransposeParams(start_index=0, repeat_times=1, "
                                 "src_stride=0, dst_gap=0, dst_frac_gap=0, addr_mode=0): "
                                 "load_data_with_transpose in squares of 1 or 2 fractals",
    "LoadData2dTransposeParamsV2": "LoadData2dTransposeParamsV2(start_index=0, repeat_times=0, "
                                   "src_stride=0, dst_gap=0, dst_frac_gap=0, src_frac_gap=0, "
                                   "addr_mode=0): the Ascend 950 overload of "
                                   "load_data_with_transpose (refused on A2/A3)",
    "MmadParams": "MmadParams(m=0, n=0, k=0, unit_flag=0, cmatrix_source=False, "
                  "cmatrix_init_val=True)",
    "FixpipeParamsV220": "FixpipeParamsV220(n_size, m_size, src_stride, dst_stride, "
                         "quant_pre=QuantModes.NoQuant, deq_scalar=0, nd_num=1, "
                         "src_nd_stride=0, dst_nd_stride=0, relu_en=False, unit_flag=0, "
                         "is_channel_split=False)",
    "InitConstValueParams": "InitConstValueParams(repeat_times=0, block_num=0, dst_gap=0, "
                            "init_value=0): init_const_value writes block_num blocks (32 B in "
                            "L1, 512 B in L0A/L0B) per repeat, then skips dst_gap blocks",
}

CUBE_BUILTINS: dict = {name: _builtin(name, REGISTRY[name].doc)
                       for name in ("load_data", "load_data_with_transpose", "mmad", "fixpipe",
                                   "init_const_value")}
CUBE_BUILTINS.update({name: _builtin(name, doc) for name, doc in _DOCS.items()})
CUBE_BUILTINS.update(FixpipeConfig=FixpipeConfig, QuantModes=QuantModes, CO2Layout=CO2Layout)
# img2col (Load3D) records (conv19; semantics: compiler/ops/load3d.py)
CUBE_BUILTINS.update({name: _builtin(name, doc) for name, doc in {
    "LoadData3DParamsV2": "LoadData3DParamsV2(pad_list, l1_h, l1_w, channel_size, k_extension, "
                          "m_extension, k_start_pt, m_start_pt, stride_w, stride_h, filter_w, "
                          "filter_h, dilation_filter_w, dilation_filter_h, en_transpose, "
                          "pad_value, filter_size_w, filter_size_h, f_matrix_ctrl): load_data "
                          "img2col from an NC1HWC0 map in L1",
    "LoadData3DParamsV1": "LoadData3DParamsV1(...): Load3Dv1, not an A2/A3 interface (an error "
                          "in load_data)",
    "LoadData3DParamsV2Pro": "LoadData3DParamsV2Pro(channel_size=0, en_transpose=False, "
                             "en_small_k=False, filter_size_w=False, filter_size_h=False, "
                             "f_matrix_ctrl=False, ext_config=0, filter_config=0x10101010101): "
                             "load_data img2col with the window packed in two words and the "
                             "map and pad value from the registers",
    "set_load_data_boundary": "set_load_data_boundary(boundary): load_data 3D's L1 boundary "
                              "(bytes; 0 = none, else >= 1024): reads past it wrap to L1's start",
    "LoadDataRepeatParam": "LoadDataRepeatParam(repeat_time=1, repeat_stride=0, repeat_mode=0): "
                           "Load3Dv2's repeat settings for set_load_data_repeat",
    "set_load_data_repeat": "set_load_data_repeat(LoadDataRepeatParam(...)): Load3Dv2's repeat "
                            "register (one iteration modelled)",
}.items()})
# 2:4 sparse cube, Load2Dv2 and the cube registers (pyasc15; semantics: ops/cube_sparse.py)
CUBE_BUILTINS.update({name: _builtin(name, REGISTRY[name].doc)
                      for name in ("load_data_with_sparse", "mmad_with_sparse",
                                   "set_fix_pipe_pre_quant_flag", "set_load_data_padding_value")})
CUBE_BUILTINS["LoadData2DParamsV2"] = _builtin(
    "LoadData2DParamsV2", "LoadData2DParamsV2(m_start_position=0, k_start_position=0, m_step=0, "
    "k_step=0, src_stride=0, dst_stride=0, if_transpose=False, sid=0): load_data of an "
    "m_step × k_step block of 512-byte fractals")
