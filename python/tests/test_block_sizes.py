"""Block sizes 16, 32 and 64 in the Python API, on the CPU: accepted where the compiler
accepts them (test_kernel_key.py checks the list against the verifier), refused with a
ValueError naming the argument elsewhere, and named in the kernels (docs/block-sizes.md).
The kernels run in test_emulator.py and on the GPU (gpu/test_block_sizes_gpu.py, which also
checks block_attention's ValueError with a CUDA tensor)."""

import pytest

from blockattn import _kernels

torch = pytest.importorskip("torch")

import blockattn  # noqa: E402
from blockattn import api  # noqa: E402


def test_supported_block_sizes():
    assert api.SUPPORTED_BLOCK_SIZES == _kernels.BLOCK_SIZES
    assert {16, 32, 64} <= set(_kernels.BLOCK_SIZES)
    key = _kernels.KernelKey(kind="backward", head_dim=64, block_size=16, dtype="f16", chip="sm_100a")
    assert key.name == "blockattn_backward_d64_b16_f16"
    assert "--block-size=16" in key.compiler_flags()


def test_layer_block_size():
    layer = blockattn.nn.BlockAttention(128, 2, block_size=16)
    assert layer.block_size == 16 and "block_size=16" in repr(layer)
    assert "block_size" not in repr(blockattn.nn.BlockAttention(128, 2))
    for bs in (8, 48, 96, 16.0, True, "16"):
        with pytest.raises(ValueError, match=r"^block_size: .* supported block sizes: 16, 32, 64"):
            blockattn.nn.BlockAttention(128, 2, block_size=bs)


def test_layer_causal_flag():
    layer = blockattn.nn.BlockAttention(128, 2, causal=True)
    assert layer.causal is True and "causal=True" in repr(layer)
    assert blockattn.nn.BlockAttention(128, 2).causal is False
    assert "causal" not in repr(blockattn.nn.BlockAttention(128, 2))
    for bad in (1, "yes", None):
        with pytest.raises(ValueError, match=r"^causal: expected True or False"):
            blockattn.nn.BlockAttention(128, 2, causal=bad)


def test_layer_grouped_query_heads():
    layer = blockattn.nn.BlockAttention(128, 4, num_kv_heads=2)
    # One projection: q's 4 heads, then k's and v's 2 each, of head dim 32.
    assert layer.num_kv_heads == 2 and layer.qkv.weight.shape == (8 * 32, 128)
    assert "num_kv_heads=2" in repr(layer)
    assert blockattn.nn.BlockAttention(128, 4).qkv.weight.shape == (3 * 128, 128)
    assert "num_kv_heads" not in repr(blockattn.nn.BlockAttention(128, 4, num_kv_heads=4))
    with pytest.raises(ValueError, match=r"^num_kv_heads: 3 does not divide num_heads 4"):
        blockattn.nn.BlockAttention(128, 4, num_kv_heads=3)
    for bad in (0, -1, 2.0, True, "2"):
        with pytest.raises(ValueError, match=r"^num_kv_heads: expected a positive int"):
            blockattn.nn.BlockAttention(128, 4, num_kv_heads=bad)
