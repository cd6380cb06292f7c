"""Block size 128 with causal blocks and the log-sum-exp and the rotary backward (sm_90a and
sm_100a) (issue 20; docs/block-sizes.md) against the float64 reference on the GPU.
The sm_100a kernels have not run on a Blackwell GPU yet (emulated only).

A 128-token block is one work item whose two 64-row query halves run one after the other:
the second half's causal mask starts at the block's row 64, its lse is stored and its dlse
read at the half's rows, and the rotary backward turns dQ back per query half and dK, dV per
key half. o and lse against blockattn.reference.forward; the gradients of o and lse (a random
dlse) against blockattn.reference.backward (itself checked against torch autograd at block
size 128 in test_emulator_block_size_128_modes.py). Tolerances are test_causal_lse_gpu's.

Kernels (prebuilt for a GPU machine without the compiler; DIR also needs the plain block-128
kernels of test_block_size_128_gpu.py for the backward without dlse):
    python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward,backward \\
        --block-sizes 128 --head-dims 64,128 --dtypes bf16,f16 --rotary none,half_split --causal
    (the same with --lse, and with --causal --lse)
    python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward,backward \\
        --block-sizes 128 --head-dims 64,128 --dtypes bf16,f16 --rotary none,half_split,interleaved \\
        --rotary-variants plain,pos,rv,pos_rv
(--chips sm_100a for a Blackwell GPU.)
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import blockattn
from blockattn import reference

from .test_backward_gpu import check_grads
from .test_forward_gpu import check, make_inputs
from .test_rotary_gpu import random_tables

BS = 128
# Empty and one-token sequences, partial blocks around the block and its half, a long one.
LENGTHS = [0, 1, 127, 128, 129, 300, 0, 64, 65, 7, 191, 192, 193, 2]
TINY_LENGTHS = list(np.random.default_rng(5).integers(0, 9, size=500))
LSE_TOL = 1e-4
LSE_TOL_ROTARY = {torch.bfloat16: 2e-2, torch.float16: 5e-3}

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.get_device_capability() not in ((9, 0), (10, 0)),
    reason="block_size 128 with causal, lse or a rotary backward: sm_90a and sm_100a")
def to_numpy(t):
    return t.detach().double().cpu().numpy()


def run(lengths, heads, head_dim, dtype, causal=False, lse=False, rotary=None, ref_rotary=None, seed=0):
    q, k, v, cu = make_inputs(lengths, heads, head_dim, dtype, seed)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    result = blockattn.block_attention(*leaves, cu, block_size=BS, causal=causal, return_lse=lse,
                                       rotary=rotary)
    o, l = result if lse else (result, None)
    args = [to_numpy(t) for t in (q, k, v)] + [cu.cpu().numpy()]
    o_ref, lse_ref = reference.forward(*args, block_size=BS, rotary=ref_rotary, causal=causal,
                                       return_lse=True)
    check(o, torch.from_numpy(o_ref).cuda(), dtype)
    if lse:
        assert not torch.isnan(l).any(), "lse elements never written"
        tol = LSE_TOL_ROTARY[dtype] if rotary is not None else LSE_TOL
        np.testing.assert_allclose(to_numpy(l), lse_ref, rtol=tol, atol=tol)
    if causal:  # the mask matters: the non-causal reference is far
        plain = reference.forward(*args, block_size=BS, rotary=ref_rotary)
        assert (o.double().cpu() - torch.from_numpy(plain)).abs().max() > 0.1
    g = torch.Generator(device="cuda").manual_seed(seed + 1)
    do = torch.randn(q.shape, generator=g, device="cuda").to(dtype)
    dlse = torch.randn((heads, q.shape[0]), generator=g, device="cuda") if lse else None
    torch.autograd.backward([o] + ([l] if lse else []), [do] + ([dlse] if lse else []))
    want = reference.backward(*args[:3], to_numpy(do), args[3], block_size=BS, rotary=ref_rotary,
                              causal=causal, dlse=None if dlse is None else to_numpy(dlse))
    check_grads([t.grad for t in leaves], [torch.from_numpy(w).cuda() for w in want], dtype)


@pytest.mark.parametrize("causal,lse", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_causal_and_lse(head_dim, dtype, causal, lse):
    run(LENGTHS, 3, head_dim, dtype, causal=causal, lse=lse, seed=head_dim)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("interleaved", [False, True], ids=["half_split", "interleaved"])
def test_rotary_backward(interleaved, head_dim, dtype):
    """Every rotary variant: the gradients turned back per query half and key half."""
    T = sum(LENGTHS)
    g = torch.Generator(device="cuda").manual_seed(6)
    positions = torch.randint(0, 777, (T,), generator=g, device="cuda", dtype=torch.int32)
    cos, sin = random_tables(777, head_dim, seed=2)
    for pos, rotate_v in ((None, False), (positions, False), (None, True), (positions, True)):
        rotary = blockattn.Rotary(cos, sin, interleaved=interleaved, positions=pos, rotate_v=rotate_v)
        ref_rotary = reference.Rotary(cos.cpu().numpy(), sin.cpu().numpy(), interleaved=interleaved,
                                      positions=None if pos is None else pos.cpu().numpy(),
                                      rotate_v=rotate_v)
        run(LENGTHS, 2, head_dim, dtype, rotary=rotary, ref_rotary=ref_rotary, seed=3)


def test_rotary_causal_lse_long_and_tiny():
    """Everything at once (half-split tables, causal, lse), a long sequence and tiny ones."""
    for lengths, d in (([9_001, 5], 128), (TINY_LENGTHS, 64)):
        cos, sin = reference.rope_tables(max(lengths) + 1, d)
        rotary = blockattn.Rotary(torch.tensor(cos, dtype=torch.float32, device="cuda"),
                                  torch.tensor(sin, dtype=torch.float32, device="cuda"))
        run(lengths, 2, d, torch.bfloat16, causal=True, lse=True, rotary=rotary,
            ref_rotary=reference.Rotary(cos, sin), seed=9)
