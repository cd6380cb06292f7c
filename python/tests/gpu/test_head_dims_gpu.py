"""Head dims 32 and 96 (32-column chunks with the 64-byte swizzle), forward and
backward, plain and with fused rotary embeddings, and head dims 192 and 256
(outputs in 64-column chunks; plain and, at block size 64, with fused rotary
embeddings: the gradients turned back a group of chunks at a time),
against the float64 reference on the GPU.

These kernels are not in the wheel's prebuilt set: they compile on first use
unless BLOCKATTN_KERNEL_DIR holds them (scripts/prebuild_kernels.py DIR
--kinds forward,backward --head-dims 32,96 --rotary none,half_split,interleaved
--rotary-variants plain,pos,rv,pos_rv; and the same with --head-dims 192,256). The tolerances and checks are test_forward_gpu's and
test_backward_gpu's: the output is poisoned with NaN and guarded by poisoned
rows, so an unwritten or overwritten row fails.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from . import test_backward_gpu as backward
from . import test_forward_gpu as forward

HEAD_DIMS = [32, 96, 192, 256]
# Fused rotary embeddings at every head dim (at 192 and 256 not yet run on a GPU when
# these were added: emulated only, docs/head-dims.md).
ROTARY_HEAD_DIMS = [32, 96, 192, 256]
# Lengths 0, 1, block - 1, block, block + 1, a long one, empty ones between.
EDGE_LENGTHS = [0, 1, 63, 64, 65, 2000, 0, 130, 7, 0]
# Many tiny sequences: more than one per tile of 64 rows.
TINY_LENGTHS = list(np.random.default_rng(5).integers(0, 9, size=700))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("heads", [1, 4])
def test_forward_jagged_edges(head_dim, heads, dtype):
    forward.run_case(EDGE_LENGTHS, heads, head_dim, dtype=dtype)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_forward_long_and_tiny(head_dim):
    forward.run_case([100_003], 2, head_dim)
    forward.run_case(TINY_LENGTHS, 3, head_dim, seed=1)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_forward_tiles_past_the_sm_count(head_dim):
    """Every CTA busy, one with a second tile (the persistent and chunked paths),
    and a grid smaller than the SM count (the small-grid variant on sm_90a)."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    forward.run_case([64 * sms + 5], 1, head_dim)
    forward.run_case([64 * 3 + 1, 0, 17], 2, head_dim)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_forward_strided_and_scaled(head_dim):
    """q, k, v as views of one packed qkv tensor; a run-time softmax scale."""
    _, q, k, v, cu = forward.packed_qkv([130, 64, 1, 0, 500], 4, head_dim)
    import blockattn
    from . import reference_torch

    o = blockattn.block_attention(q, k, v, cu)
    forward.check(o, reference_torch.forward(q, k, v, cu), torch.bfloat16)
    forward.run_case(EDGE_LENGTHS, 4, head_dim, scale=0.3)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("heads", [1, 4])
def test_backward_jagged_edges(head_dim, heads, dtype):
    backward.run_case(EDGE_LENGTHS, heads, head_dim, dtype=dtype)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_backward_long_and_tiny(head_dim):
    backward.run_case([20_011], 2, head_dim, seed=2)
    backward.run_case(TINY_LENGTHS, 3, head_dim, seed=3)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_backward_random_jagged_batch(head_dim):
    lengths = np.random.default_rng(9).integers(0, 3000, size=200)
    backward.run_case(lengths, 4, head_dim, seed=4)


# Fused rotary embeddings at 32, 96, 192 and 256 (the 96 half-split pairs column i of one
# 32-column chunk with column i + 48 of another; above 128 the gradients' 64-column chunks are
# turned back in rotation groups): random tables, both layouts, positions and rotate_v.
ROTARY_LAYOUTS = [pytest.param(False, id="half_split"), pytest.param(True, id="interleaved")]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("head_dim", ROTARY_HEAD_DIMS)
@pytest.mark.parametrize("interleaved", ROTARY_LAYOUTS)
def test_rotary_jagged(interleaved, head_dim, dtype):
    import blockattn

    from . import test_rotary_gpu as rot

    q, k, v, cu = forward.make_inputs(rot.LENGTHS, 4, head_dim, dtype, seed=1)
    cos, sin = rot.random_tables(max(rot.LENGTHS), head_dim, seed=2)
    rotary = blockattn.Rotary(cos, sin, interleaved=interleaved)
    rot.run_forward(q, k, v, cu, rotary, dtype)
    rot.run_backward(q, k, v, cu, rotary, dtype, seed=3)


@pytest.mark.parametrize("head_dim", ROTARY_HEAD_DIMS)
@pytest.mark.parametrize("interleaved", ROTARY_LAYOUTS)
def test_rotary_positions_and_rotate_v(interleaved, head_dim):
    import blockattn

    from . import test_rotary_gpu as rot

    q, k, v, cu = forward.make_inputs(rot.LENGTHS, 2, head_dim, torch.bfloat16, seed=6)
    T, P = q.shape[0], 777
    g = torch.Generator(device="cuda").manual_seed(6)
    positions = torch.randint(0, P, (T,), generator=g, device="cuda", dtype=torch.int32)
    positions[0], positions[-1] = 0, P - 1
    cos, sin = rot.random_tables(P, head_dim, seed=7)
    for rotate_v in (False, True):
        rotary = blockattn.Rotary(cos, sin, interleaved=interleaved, positions=positions, rotate_v=rotate_v)
        rot.run_forward(q, k, v, cu, rotary, torch.bfloat16)
        rot.run_backward(q, k, v, cu, rotary, torch.bfloat16, seed=6)
