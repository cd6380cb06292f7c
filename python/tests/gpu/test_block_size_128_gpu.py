"""Block size 128 (the forward: 64-row query halves against the whole 128-key
block, docs/block-sizes.md) against the float64 reference on the GPU, plain and
with fused rotary embeddings; the plain backward against the float64
reference's gradients.

These kernels are not in the wheel's prebuilt set: they compile on first use
unless BLOCKATTN_KERNEL_DIR holds them (scripts/prebuild_kernels.py DIR
--block-sizes 128 --head-dims 32,64,96,128 --rotary none,half_split,interleaved
--rotary-variants plain,pos,rv,pos_rv; the backward's: --kinds backward
--block-sizes 128 --head-dims 64,128). The rotary forward is built for both
chips (on sm_100a emulated only: no Blackwell GPU has run it), the plain
backward too; the causal, lse and rotary backwards at 128 are
test_block_size_128_modes_gpu.py's. The tolerances are test_forward_gpu's; the
output is poisoned with NaN and guarded by poisoned rows, so an unwritten or
overwritten row fails.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import blockattn
from blockattn import reference

from .test_backward_gpu import check_grads
from .test_block_sizes_gpu import reference_grads
from .test_forward_gpu import GUARD_ROWS, check, make_inputs, poisoned_output
from .test_rotary_gpu import random_tables

BS = 128
# Lengths 0, 1, block - 1, block, block + 1, a long one, one past half a block,
# empty ones between.
EDGE_LENGTHS = [0, 1, 127, 128, 129, 300, 0, 64, 65, 2000, 7, 0, 191, 192, 193]
# Many tiny sequences: several per 128-row block of memory.
TINY_LENGTHS = list(np.random.default_rng(5).integers(0, 9, size=700))

# The rotary forward at block size 128 is built for sm_90a and sm_100a (the sm_100a one emulated
# only: no Blackwell GPU has run it, docs/block-sizes.md).
rotary_forward_chips = pytest.mark.skipif(
    torch.cuda.get_device_capability() not in ((9, 0), (10, 0)),
    reason="block_size 128 with rotary: the forward on sm_90a and sm_100a"
)


def cuda64(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(a).cuda()


def run_case(lengths, heads, head_dim, dtype=torch.bfloat16, seed=0, scale=None, rotary=None,
             ref_rotary=None):
    q, k, v, cu = make_inputs(lengths, heads, head_dim, dtype, seed)
    buffer, o = poisoned_output(q)
    result = blockattn.block_attention(q, k, v, cu, block_size=BS, softmax_scale=scale, out=o,
                                       rotary=rotary)
    torch.cuda.synchronize()
    assert result.data_ptr() == o.data_ptr()
    guards = torch.cat([buffer[:GUARD_ROWS], buffer[-GUARD_ROWS:]])
    assert torch.isnan(guards).all(), "the kernel wrote outside the output tensor"
    want = reference.forward(*(t.float().cpu().numpy() for t in (q, k, v)), cu.cpu().numpy(),
                             block_size=BS, softmax_scale=scale, rotary=ref_rotary)
    check(o, cuda64(want), dtype)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("head_dim", [32, 64, 96, 128])
@pytest.mark.parametrize("heads", [1, 4])
def test_forward_jagged_edges(head_dim, heads, dtype):
    run_case(EDGE_LENGTHS, heads, head_dim, dtype=dtype)


@pytest.mark.parametrize("head_dim", [64, 128])
def test_forward_long_tiny_and_scaled(head_dim):
    run_case([100_003], 2, head_dim)
    run_case(TINY_LENGTHS, 3, head_dim, seed=1)
    run_case(EDGE_LENGTHS, 4, head_dim, scale=0.3)


@pytest.mark.parametrize("head_dim", [64, 128])
def test_forward_tiles_past_the_sm_count(head_dim):
    """Every CTA busy and some with more (the chunked launch), and a grid
    smaller than the SM count (the small-grid variant)."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    run_case([128 * sms + 5], 1, head_dim)
    run_case([128 * 3 + 1, 0, 17], 2, head_dim)


@rotary_forward_chips
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("interleaved", [pytest.param(False, id="half_split"),
                                         pytest.param(True, id="interleaved")])
def test_forward_rotary(interleaved, head_dim, dtype):
    """The key tile starts at the block's first row, the second query half 64
    rows later: each rotated at its own positions."""
    T = sum(EDGE_LENGTHS)
    P = 777
    g = torch.Generator(device="cuda").manual_seed(6)
    positions = torch.randint(0, P, (T,), generator=g, device="cuda", dtype=torch.int32)
    cos, sin = random_tables(max(max(EDGE_LENGTHS), P), head_dim, seed=2)
    for pos, rotate_v in ((None, False), (positions, False), (None, True), (positions, True)):
        rotary = blockattn.Rotary(cos, sin, interleaved=interleaved, positions=pos, rotate_v=rotate_v)
        ref_rotary = reference.Rotary(cos.cpu().numpy(), sin.cpu().numpy(), interleaved=interleaved,
                                      positions=None if pos is None else pos.cpu().numpy(),
                                      rotate_v=rotate_v)
        run_case(EDGE_LENGTHS, 2, head_dim, dtype=dtype, seed=3, rotary=rotary, ref_rotary=ref_rotary)


# The backward (plain: the whole block per work item, dQ per query half, dK and dV per key
# half summed over both query halves; docs/block-sizes.md). sm_90a has run it on the H200;
# the sm_100a kernel is compiled and emulated only (no Blackwell GPU has run it).
sm90a_backward = pytest.mark.skipif(
    torch.cuda.get_device_capability() not in ((9, 0), (10, 0)),
    reason="the backward at block_size 128: sm_90a and sm_100a kernels only"
)


def run_backward(lengths, heads, head_dim, dtype=torch.bfloat16, seed=0, scale=None):
    q, k, v, cu = make_inputs(lengths, heads, head_dim, dtype, seed)
    do = torch.randn_like(q)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    o = blockattn.block_attention(*leaves, cu, block_size=BS, softmax_scale=scale)
    o.backward(do)
    check_grads([t.grad for t in leaves], reference_grads(q, k, v, cu, do, BS, scale), dtype)


@sm90a_backward
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("heads", [1, 4])
def test_backward_jagged_edges(head_dim, heads, dtype):
    run_backward(EDGE_LENGTHS, heads, head_dim, dtype=dtype)


@sm90a_backward
def test_backward_long_tiny_and_scaled():
    run_backward([20_011], 2, 128, seed=2)
    run_backward(TINY_LENGTHS, 3, 64, seed=3)
    run_backward(EDGE_LENGTHS, 2, 64, seed=4, scale=0.05)

