"""Block sizes 16 and 32 (several blocks per 64-row tile, of several sequences without
rotary embeddings, masked to each row's own block), forward and backward, plain and with
fused rotary embeddings, against the float64 reference on the GPU.

These kernels are not in the wheel's prebuilt set: they compile on first use unless
BLOCKATTN_KERNEL_DIR holds them; the 224 kernels these tests launch on sm_90a are

    python3 scripts/prebuild_kernels.py DIR --kinds forward,backward \
        --head-dims 32,64,96,128,192,256 --block-sizes 16,32
    python3 scripts/prebuild_kernels.py DIR --kinds forward,backward \
        --head-dims 64,128 --block-sizes 16,32 --rotary half_split,interleaved \
        --rotary-variants plain,pos,rv,pos_rv

The tolerances and checks are test_forward_gpu's and
test_backward_gpu's: the output is poisoned with NaN and guarded by poisoned rows, so an
unwritten or overwritten row fails.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import blockattn
from blockattn import reference

from . import reference_torch
from .test_backward_gpu import check_grads
from .test_forward_gpu import GUARD_ROWS, check, make_inputs, poisoned_output

BLOCK_SIZES = [16, 32]
HEAD_DIMS = [64, 128]


def edge_lengths(bs: int) -> list[int]:
    """Lengths 0, 1, bs - 1, bs, bs + 1, a tile's 63, 64, 65, long ones, empty ones between."""
    return [0, 1, bs - 1, bs, bs + 1, 63, 64, 65, 2000, 0, 130, 7, 0, 200]


# Many tiny sequences: several per tile of 64 rows, and around the block size.
TINY_LENGTHS = [int(n) for n in np.random.default_rng(5).integers(0, 40, size=700)]


def run_forward(lengths, heads, head_dim, bs, dtype=torch.bfloat16, seed=0, scale=None):
    q, k, v, cu = make_inputs(lengths, heads, head_dim, dtype, seed)
    buffer, o = poisoned_output(q)
    result = blockattn.block_attention(q, k, v, cu, block_size=bs, softmax_scale=scale, out=o)
    torch.cuda.synchronize()
    assert result.data_ptr() == o.data_ptr()
    guards = torch.cat([buffer[:GUARD_ROWS], buffer[-GUARD_ROWS:]])
    assert torch.isnan(guards).all(), "the kernel wrote outside the output tensor"
    check(o, reference_torch.forward(q, k, v, cu, block_size=bs, softmax_scale=scale), dtype)


def reference_grads(q, k, v, cu, do, bs, scale=None):
    leaves = [t.detach().double().requires_grad_(True) for t in (q, k, v)]
    o = reference_torch.forward(*leaves, cu, block_size=bs, softmax_scale=scale)
    o.backward(do.double())
    return [t.grad for t in leaves]


def run_backward(lengths, heads, head_dim, bs, dtype=torch.bfloat16, seed=0, scale=None):
    q, k, v, cu = make_inputs(lengths, heads, head_dim, dtype, seed)
    do = torch.randn_like(q)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    o = blockattn.block_attention(*leaves, cu, block_size=bs, softmax_scale=scale)
    o.backward(do)
    check_grads([t.grad for t in leaves], reference_grads(q, k, v, cu, do, bs, scale), dtype)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("bs", BLOCK_SIZES)
@pytest.mark.parametrize("heads", [1, 4])
def test_forward_jagged_edges(heads, bs, head_dim, dtype):
    run_forward(edge_lengths(bs), heads, head_dim, bs, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("bs", BLOCK_SIZES)
@pytest.mark.parametrize("heads", [1, 4])
def test_backward_jagged_edges(heads, bs, head_dim, dtype):
    run_backward(edge_lengths(bs), heads, head_dim, bs, dtype=dtype)


@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_long_and_tiny(bs):
    run_forward([100_003], 2, 128, bs)
    run_forward(TINY_LENGTHS, 3, 128, bs, seed=1)
    run_backward([20_011], 2, 128, bs, seed=2)
    run_backward(TINY_LENGTHS, 3, 64, bs, seed=3)


@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_grids_and_scale(bs):
    """Every CTA busy with a second tile (the persistent and chunked paths), a grid smaller
    than the SM count (the small-grid variant on sm_90a), a run-time softmax scale."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    run_forward([64 * sms + 5], 1, 128, bs)
    run_forward([64 * 3 + 1, 0, 17], 2, 128, bs)
    run_backward([64 * sms + 5], 1, 128, bs)
    run_forward(edge_lengths(bs), 4, 64, bs, scale=0.3)
    run_backward(edge_lengths(bs), 4, 64, bs, scale=0.3)


@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_random_jagged_batch(bs):
    lengths = np.random.default_rng(9).integers(0, 3000, size=200)
    run_backward(lengths, 4, 128, bs, seed=4)


# Packed tiles (docs/block-sizes.md, "Tiny sequences packed"): thousands of sequences of 1 to
# 48 tokens with runs of empty ones, the blocks of several sequences in each tile.
PACKED_LENGTHS = [int(n) for n in np.random.default_rng(11).integers(1, 49, size=4000)]
PACKED_LENGTHS[100:104] = [0, 0, 0, 0]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("head_dim", [32, 64, 96, 128])
@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_packed_tiny_sequences(bs, head_dim, dtype):
    run_forward(PACKED_LENGTHS, 4, head_dim, bs, dtype=dtype, seed=6)
    run_backward(PACKED_LENGTHS, 2, head_dim, bs, dtype=dtype, seed=7)


@pytest.mark.parametrize("head_dim", [32, 96, 192, 256])
@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_every_head_dim(bs, head_dim):
    run_forward(edge_lengths(bs), 2, head_dim, bs)
    run_backward(edge_lengths(bs), 2, head_dim, bs, dtype=torch.float16)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("head_dim", [192, 256])
@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_large_head_dims_packed(bs, head_dim, dtype):
    """Head dims 192 and 256 (outputs in 64-column chunks) on packed tiles."""
    run_forward(PACKED_LENGTHS, 2, head_dim, bs, dtype=dtype, seed=8)
    run_backward(PACKED_LENGTHS, 2, head_dim, bs, dtype=dtype, seed=9)


def test_block_size_matters():
    """The same inputs at block sizes 16, 32 and 64 give three different outputs, each
    matching its own reference (a kernel that ignored its mask would fail here)."""
    q, k, v, cu = make_inputs([200, 64, 17], 2, 64, torch.bfloat16, seed=8)
    outs = {bs: blockattn.block_attention(q, k, v, cu, block_size=bs) for bs in (16, 32, 64)}
    for bs, o in outs.items():
        check(o, reference_torch.forward(q, k, v, cu, block_size=bs), torch.bfloat16)
    assert not torch.allclose(outs[16], outs[32])
    assert not torch.allclose(outs[32], outs[64])


# Fused rotary embeddings: the position of a row is its index in its sequence, whatever
# block of the tile it is in.
ROTARY_LAYOUTS = [pytest.param(False, id="half_split"), pytest.param(True, id="interleaved")]
ROTARY_LENGTHS = [0, 1, 15, 16, 17, 31, 33, 63, 64, 65, 130, 300]


def cuda64(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(a).cuda()


def random_tables(max_position: int, head_dim: int, seed: int = 0):
    angles = np.random.default_rng(seed).uniform(-np.pi, np.pi, size=(max_position, head_dim // 2))
    return (torch.tensor(f(angles), dtype=torch.float32, device="cuda") for f in (np.cos, np.sin))


def run_rotary(q, k, v, cu, rotary, bs, dtype, seed):
    buffer, o = poisoned_output(q)
    blockattn.block_attention(q, k, v, cu, block_size=bs, out=o, rotary=rotary)
    torch.cuda.synchronize()
    guards = torch.cat([buffer[:GUARD_ROWS], buffer[-GUARD_ROWS:]])
    assert torch.isnan(guards).all(), "the kernel wrote outside the output tensor"
    cu_host = cu.cpu().numpy()
    check(o, cuda64(reference.forward(q, k, v, cu_host, block_size=bs, rotary=rotary)), dtype)
    do = torch.randn(q.shape, generator=torch.Generator(device="cuda").manual_seed(seed + 1000),
                     device="cuda").to(dtype)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    blockattn.block_attention(*leaves, cu, block_size=bs, rotary=rotary).backward(do)
    want = reference.backward(q, k, v, do, cu_host, block_size=bs, rotary=rotary)
    check_grads([t.grad for t in leaves], [cuda64(g) for g in want], dtype)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("bs", BLOCK_SIZES)
@pytest.mark.parametrize("interleaved", ROTARY_LAYOUTS)
def test_rotary_jagged(interleaved, bs, head_dim, dtype):
    q, k, v, cu = make_inputs(ROTARY_LENGTHS, 4, head_dim, dtype, seed=1)
    cos, sin = random_tables(max(ROTARY_LENGTHS), head_dim, seed=2)
    run_rotary(q, k, v, cu, blockattn.Rotary(cos, sin, interleaved=interleaved), bs, dtype, seed=3)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("bs", BLOCK_SIZES)
@pytest.mark.parametrize("interleaved", ROTARY_LAYOUTS)
def test_rotary_positions_and_rotate_v(interleaved, bs, head_dim):
    q, k, v, cu = make_inputs(ROTARY_LENGTHS, 2, head_dim, torch.bfloat16, seed=6)
    T, P = q.shape[0], 777
    g = torch.Generator(device="cuda").manual_seed(6)
    positions = torch.randint(0, P, (T,), generator=g, device="cuda", dtype=torch.int32)
    positions[0], positions[-1] = 0, P - 1
    cos, sin = random_tables(P, head_dim, seed=7)
    for rotate_v in (False, True):
        rotary = blockattn.Rotary(cos, sin, interleaved=interleaved, positions=positions, rotate_v=rotate_v)
        run_rotary(q, k, v, cu, rotary, bs, torch.bfloat16, seed=6)


@pytest.mark.parametrize("bs", [8, 48, 96])
def test_other_block_sizes_refused(bs):
    q, k, v, cu = make_inputs([10], 1, 64, torch.bfloat16)
    with pytest.raises(ValueError, match=r"^block_size: .*supported block sizes: 16, 32, 64"):
        blockattn.block_attention(q, k, v, cu, block_size=bs)


def test_layer():
    """nn.BlockAttention with block_size: the packed kernels at that block size."""
    bs = 16
    layer = blockattn.nn.BlockAttention(256, 4, block_size=bs, rotary="half_split", device="cuda",
                                        dtype=torch.bfloat16)
    x = torch.randn(300, 256, device="cuda", dtype=torch.bfloat16)
    cu = torch.tensor([0, 17, 17, 100, 300], dtype=torch.int32, device="cuda")
    qkv = layer.qkv(x).view(300, 3, 4, 64)
    rotary = blockattn.Rotary(layer.rotary_cos, layer.rotary_sin)
    want = blockattn.block_attention(*qkv.unbind(1), cu, block_size=bs, rotary=rotary)
    got = layer(x, cu)
    torch.testing.assert_close(got, layer.out_proj(want.reshape(300, 256)))
