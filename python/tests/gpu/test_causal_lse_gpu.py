"""Causal blocks and the log-sum-exp (issue 21) on the GPU, against the float64 reference.

block_attention(..., causal=True) and (..., return_lse=True): o and lse against
blockattn.reference.forward (float64, causal mask, natural-log lse [H, T]); the gradients of
o and lse (a random dlse) against blockattn.reference.backward, which test_reference_gqa_causal_lse.py
checks against finite differences and torch autograd. Jagged lengths with partial blocks;
with and without fused rotary. Tolerances are the plain kernels' (test_forward_gpu.TOL,
test_backward_gpu.TOL); the lse (f32) within 1e-4 without rotary (exact products of the
inputs), within the forward's atol with it (the kernel rounds the rotated q and k).

Kernels (prebuilt for a GPU machine without the compiler):
    python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward,backward \\
        --head-dims 64,128 --dtypes bf16,f16 --rotary none,half_split --causal
    python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward,backward \\
        --head-dims 64,128 --dtypes bf16,f16 --rotary none,half_split --lse
    python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward,backward \\
        --head-dims 64,128 --dtypes bf16,f16 --rotary none,half_split --causal --lse
plus the plain backward (the lse kernels' backward without a dlse runs it):
    python3 scripts/prebuild_kernels.py DIR --chips sm_90a --kinds forward,backward \\
        --head-dims 64,128 --dtypes bf16,f16 --rotary none,half_split
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import blockattn
from blockattn import reference

from .test_backward_gpu import check_grads
from .test_forward_gpu import check, make_inputs

LENGTHS = [0, 1, 63, 64, 65, 200, 7, 130]
LSE_TOL = 1e-4
LSE_TOL_ROTARY = {torch.bfloat16: 2e-2, torch.float16: 5e-3}


def to_numpy(t):
    return t.detach().double().cpu().numpy()


def rotary_for(rope, q, max_position=512):
    """(the API's Rotary, the reference's Rotary) for half-split tables, or (None, None)."""
    if not rope:
        return None, None
    cos, sin = reference.rope_tables(max_position, q.shape[2])
    api = blockattn.Rotary(torch.tensor(cos, dtype=torch.float32, device=q.device),
                           torch.tensor(sin, dtype=torch.float32, device=q.device))
    return api, reference.Rotary(cos, sin)


@pytest.mark.parametrize("rope", [False, True], ids=["plain", "half_split"])
@pytest.mark.parametrize("causal,lse", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_forward_and_backward(head_dim, dtype, causal, lse, rope):
    q, k, v, cu = make_inputs(LENGTHS, 3, head_dim, dtype, seed=head_dim)
    api_rotary, ref_rotary = rotary_for(rope, q)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    result = blockattn.block_attention(*leaves, cu, causal=causal, return_lse=lse, rotary=api_rotary)
    o, l = result if lse else (result, None)
    args = [to_numpy(t) for t in (q, k, v)] + [cu.cpu().numpy()]
    o_ref, lse_ref = reference.forward(*args, rotary=ref_rotary, causal=causal, return_lse=True)
    check(o, torch.from_numpy(o_ref).cuda(), dtype)
    if lse:
        assert l.shape == (3, q.shape[0]) and l.dtype == torch.float32
        assert not torch.isnan(l).any(), "lse elements never written"
        tol = LSE_TOL_ROTARY[dtype] if rope else LSE_TOL
        np.testing.assert_allclose(to_numpy(l), lse_ref, rtol=tol, atol=tol)
    # The causal mask matters here: the non-causal reference is far.
    if causal:
        plain = reference.forward(*args, rotary=ref_rotary)
        assert (o.double().cpu() - torch.from_numpy(plain)).abs().max() > 0.1

    g = torch.Generator(device="cuda").manual_seed(1)
    do = torch.randn(q.shape, generator=g, device="cuda").to(dtype)
    dlse = torch.randn((3, q.shape[0]), generator=g, device="cuda") if lse else None
    torch.autograd.backward([o] + ([l] if lse else []), [do] + ([dlse] if lse else []))
    want = reference.backward(*args[:3], to_numpy(do), args[3], rotary=ref_rotary, causal=causal,
                              dlse=None if dlse is None else to_numpy(dlse))
    check_grads([t.grad for t in leaves], [torch.from_numpy(w).cuda() for w in want], dtype)


@pytest.mark.parametrize("causal", [False, True])
def test_lse_without_its_gradient_is_the_plain_backward(causal):
    """o's gradient only: the backward without dlse (the same gradients as without
    return_lse)."""
    q, k, v, cu = make_inputs(LENGTHS, 2, 128, torch.bfloat16, seed=3)
    do = torch.randn_like(q)
    grads = []
    for return_lse in (False, True):
        leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
        result = blockattn.block_attention(*leaves, cu, causal=causal, return_lse=return_lse)
        (result[0] if return_lse else result).backward(do)
        grads.append([t.grad for t in leaves])
    for a, b in zip(*grads):
        assert torch.equal(a, b)


def test_lse_of_a_long_sequence_and_odd_token_count():
    """T not a multiple of 4 (the [H, T] rows are not 16-byte aligned) and many tiles."""
    lengths = [4099, 3]
    q, k, v, cu = make_inputs(lengths, 5, 64, torch.bfloat16, seed=5)
    o, l = blockattn.block_attention(q, k, v, cu, causal=True, return_lse=True)
    args = [to_numpy(t) for t in (q, k, v)] + [cu.cpu().numpy()]
    o_ref, lse_ref = reference.forward(*args, causal=True, return_lse=True)
    check(o, torch.from_numpy(o_ref).cuda(), torch.bfloat16)
    np.testing.assert_allclose(to_numpy(l), lse_ref, rtol=LSE_TOL, atol=LSE_TOL)
    # The first token of every block attends to itself only: o = v, lse = its own score.
    first = np.concatenate([np.arange(0, 4099, 64), [4099]])
    np.testing.assert_allclose(to_numpy(o)[first], args[2][first], atol=1e-2)
