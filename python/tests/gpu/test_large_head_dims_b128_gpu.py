"""Head dims 192 and 256 at block size 128 (docs/head-dims.md) against the float64 reference
on the GPU: the forward (each 64-row query half against the whole 128-key block, O in
64-column chunks of the head dim) and the backward (the block streamed in 64-column chunks,
three passes: on sm_90a to one consumer per query half, on sm_100a to the MMA warp, which
accumulates S and dP in tensor memory, and one softmax warpgroup per query half), on both
chips, and causal blocks and the log-sum-exp (the sm_100a backward has not run on a GPU yet).

With fused rotary embeddings (session 17) the forward on both chips: every table variant
(half-split and interleaved, a positions tensor, rotate_v), also with causal blocks and the
log-sum-exp; the rotary backward with interleaved pairs (session 18: every table variant,
causal blocks with dlse, long and tiny sequences) and with half-split pairs (the same cases;
session 23: the producer loads each pair-complete chunk as two 32-column pieces under the
64-byte swizzle, whose layout these cases check on the GPU), on both chips (sm_100a not run on a GPU yet). With angles from rotary_theta (session 18; the API passes tables, so the
kernels are launched directly): the forward, every variant, causal + lse, a grid past the SM
count (test_rotary_theta_*); the interleaved backward (session 20) and the half-split one
(session 21) likewise, with causal + dlse (test_rotary_theta_backward_*).

These kernels are not in the wheel's prebuilt set: they compile on first use unless
BLOCKATTN_KERNEL_DIR holds them:
    python3 scripts/prebuild_kernels.py DIR --kinds forward,backward --head-dims 192,256 \
        --block-sizes 128 --dtypes bf16,f16
    (the same with --causal, with --lse, and with --causal --lse; for the rotary forwards
    --kinds forward --rotary half_split,interleaved --rotary-variants plain,pos,rv,pos_rv,
    and with --causal --lse; for the rotary backwards --kinds backward
    --rotary half_split,interleaved --rotary-variants plain,pos,rv,pos_rv, and with --causal --lse;
    the test_rotary_theta_* kernels: the same with --rotary-theta, and for the backward also --rotary-theta 500, with --causal, --lse, --causal --lse)
The tolerances are test_forward_gpu's; the output is poisoned with NaN and guarded by
poisoned rows, so an unwritten or overwritten row fails.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import blockattn
from blockattn import reference

from .test_backward_gpu import check_grads
from .test_block_size_128_gpu import EDGE_LENGTHS, TINY_LENGTHS, run_backward, run_case
from .test_forward_gpu import check, make_inputs
from .test_rotary_gpu import random_tables

BS = 128
HEAD_DIMS = [192, 256]
LSE_TOL = 1e-4

@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("heads", [1, 4])
def test_forward_jagged_edges(head_dim, heads, dtype):
    run_case(EDGE_LENGTHS, heads, head_dim, dtype=dtype)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_forward_long_tiny_scaled_and_past_the_sm_count(head_dim):
    """A long sequence, many tiny ones, a run-time scale, and every CTA of the persistent
    grid busy with some taking a second block."""
    run_case([100_003], 2, head_dim)
    run_case(TINY_LENGTHS, 3, head_dim, seed=1)
    run_case(EDGE_LENGTHS, 4, head_dim, scale=0.3)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    run_case([128 * sms + 5], 1, head_dim)


def test_block_size_matters():
    """The same inputs give other outputs at block size 64 (the reference of 64 is far)."""
    q, k, v, cu = make_inputs([0, 1, 127, 128, 129, 300], 2, 256, torch.bfloat16, 3)
    o = blockattn.block_attention(q, k, v, cu, block_size=BS)
    as64 = reference.forward(*(t.float().cpu().numpy() for t in (q, k, v)), cu.cpu().numpy(), block_size=64)
    assert (o.double().cpu() - torch.from_numpy(as64)).abs().max() > 0.1


# The forward's causal blocks and log-sum-exp: both chips (sm_100a emulated only so far).
@pytest.mark.parametrize("causal,lse", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_causal_and_lse(head_dim, dtype, causal, lse):
    q, k, v, cu = make_inputs(EDGE_LENGTHS, 3, head_dim, dtype, head_dim)
    with torch.no_grad():
        result = blockattn.block_attention(q, k, v, cu, block_size=BS, causal=causal, return_lse=lse)
    o, l = result if lse else (result, None)
    args = [t.double().cpu().numpy() for t in (q, k, v)] + [cu.cpu().numpy()]
    o_ref, lse_ref = reference.forward(*args, block_size=BS, causal=causal, return_lse=True)
    check(o, torch.from_numpy(o_ref).cuda(), dtype)
    if lse:
        assert not torch.isnan(l).any(), "lse elements never written"
        np.testing.assert_allclose(l.double().cpu().numpy(), lse_ref, rtol=LSE_TOL, atol=LSE_TOL)
    if causal:  # the mask matters: the non-causal reference is far
        plain = reference.forward(*args, block_size=BS)
        assert (o.double().cpu() - torch.from_numpy(plain)).abs().max() > 0.1


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("heads", [1, 4])
def test_backward_jagged_edges(head_dim, heads, dtype):
    run_backward(EDGE_LENGTHS, heads, head_dim, dtype=dtype)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_backward_long_tiny_scaled_and_past_the_sm_count(head_dim):
    run_backward([20_011], 2, head_dim, seed=2)
    run_backward(TINY_LENGTHS, 3, head_dim, seed=3)
    run_backward(EDGE_LENGTHS, 4, head_dim, scale=0.3)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    run_backward([128 * sms + 5], 1, head_dim)


@pytest.mark.parametrize("causal,lse", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_backward_causal_and_dlse(head_dim, dtype, causal, lse):
    """The gradients of o (and of lse: a random dlse) against the float64 reference."""
    q, k, v, cu = make_inputs(EDGE_LENGTHS, 3, head_dim, dtype, head_dim + 1)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    result = blockattn.block_attention(*leaves, cu, block_size=BS, causal=causal, return_lse=lse)
    o, l = result if lse else (result, None)
    g = torch.Generator(device="cuda").manual_seed(head_dim)
    do = torch.randn(q.shape, generator=g, device="cuda").to(dtype)
    dlse = torch.randn((3, q.shape[0]), generator=g, device="cuda") if lse else None
    torch.autograd.backward([o] + ([l] if lse else []), [do] + ([dlse] if lse else []))
    args = [t.double().cpu().numpy() for t in (q, k, v)]
    want = reference.backward(*args, do.double().cpu().numpy(), cu.cpu().numpy(), block_size=BS, causal=causal,
                              dlse=None if dlse is None else dlse.double().cpu().numpy())
    check_grads([t.grad for t in leaves], [torch.from_numpy(w).cuda() for w in want], dtype)


# Fused rotary embeddings: the forward on both chips (sm_100a emulated only so far). Each query
# half is rotated at its own positions (the second at the block's position + 64), k (and v) at
# the block's; O is made in 64-column chunks per half.
ROTARY_TOL_LSE = {torch.bfloat16: 2e-2, torch.float16: 5e-3}


def run_rotary_forward(lengths, heads, head_dim, dtype, interleaved, positions=False, rotate_v=False,
                       causal=False, lse=False, seed=0):
    q, k, v, cu = make_inputs(lengths, heads, head_dim, dtype, seed)
    T = q.shape[0]
    g = torch.Generator(device="cuda").manual_seed(seed + 7)
    pos = torch.randint(0, 777, (T,), generator=g, device="cuda", dtype=torch.int32) if positions else None
    cos, sin = random_tables(max(777, max(lengths) + 1), head_dim, seed=seed + 2)
    rotary = blockattn.Rotary(cos, sin, interleaved=interleaved, positions=pos, rotate_v=rotate_v)
    ref_rotary = reference.Rotary(cos.cpu().numpy(), sin.cpu().numpy(), interleaved=interleaved,
                                  positions=None if pos is None else pos.cpu().numpy(), rotate_v=rotate_v)
    with torch.no_grad():
        result = blockattn.block_attention(q, k, v, cu, block_size=BS, rotary=rotary, causal=causal,
                                           return_lse=lse)
    o, l = result if lse else (result, None)
    args = [t.double().cpu().numpy() for t in (q, k, v)] + [cu.cpu().numpy()]
    o_ref, lse_ref = reference.forward(*args, block_size=BS, rotary=ref_rotary, causal=causal, return_lse=True)
    check(o, torch.from_numpy(o_ref).cuda(), dtype)
    if lse:
        assert not torch.isnan(l).any(), "lse elements never written"
        np.testing.assert_allclose(l.double().cpu().numpy(), lse_ref, rtol=ROTARY_TOL_LSE[dtype],
                                   atol=ROTARY_TOL_LSE[dtype])
    # The rotation matters: the un-rotated reference is far.
    plain = reference.forward(*args, block_size=BS, causal=causal)
    assert (o.double().cpu() - torch.from_numpy(plain)).abs().max() > 0.1


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("interleaved", [False, True], ids=["half_split", "interleaved"])
def test_rotary_forward(interleaved, head_dim, dtype):
    """Every table variant on the edge lengths, 3 heads."""
    for positions, rotate_v in ((False, False), (True, False), (False, True), (True, True)):
        run_rotary_forward(EDGE_LENGTHS, 3, head_dim, dtype, interleaved, positions, rotate_v, seed=head_dim)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("interleaved", [False, True], ids=["half_split", "interleaved"])
def test_rotary_forward_causal_lse(interleaved, head_dim):
    """With causal blocks and the log-sum-exp, both dtypes."""
    for dtype in (torch.bfloat16, torch.float16):
        run_rotary_forward(EDGE_LENGTHS, 2, head_dim, dtype, interleaved, positions=True, rotate_v=True,
                           causal=True, lse=True, seed=5)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_rotary_forward_long_tiny_and_past_the_sm_count(head_dim):
    run_rotary_forward([20_011], 2, head_dim, torch.bfloat16, False, seed=11)
    run_rotary_forward(TINY_LENGTHS, 3, head_dim, torch.bfloat16, True, positions=True, seed=12)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    run_rotary_forward([128 * sms + 5], 1, head_dim, torch.float16, False, rotate_v=True, seed=13)


# The rotary backward with interleaved pairs (sm_90a session 18, sm_100a session 19): each
# 64-column chunk slot of q and k (v with rotate_v) holds whole pairs and is rotated in place (on
# sm_90a by the two consumers, consumer 0 k, consumer 1 both query halves, the second at
# position + 64; on sm_100a by a rotary warpgroup between the load and the MMA warp), and dQ, dK
# (dV) are turned back chunk by chunk. Half-split pairs (both chips): the producer loads
# pair-complete chunks (columns [32 j, 32 j + 32) and their partners: since session 23 two boxes
# of 32 columns under the 64-byte swizzle, one a piece), rotated in place the same way; the
# gradients are stored as two 32-column pieces. The same on sm_100a (its rotary warpgroup turns
# the chunks).


def run_rotary_backward(lengths, heads, head_dim, dtype, positions=False, rotate_v=False, causal=False,
                        lse=False, seed=0, interleaved=True):
    q, k, v, cu = make_inputs(lengths, heads, head_dim, dtype, seed)
    T = q.shape[0]
    g = torch.Generator(device="cuda").manual_seed(seed + 7)
    pos = torch.randint(0, 777, (T,), generator=g, device="cuda", dtype=torch.int32) if positions else None
    cos, sin = random_tables(max(777, max(lengths) + 1), head_dim, seed=seed + 2)
    rotary = blockattn.Rotary(cos, sin, interleaved=interleaved, positions=pos, rotate_v=rotate_v)
    ref_rotary = reference.Rotary(cos.cpu().numpy(), sin.cpu().numpy(), interleaved=interleaved,
                                  positions=None if pos is None else pos.cpu().numpy(), rotate_v=rotate_v)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    result = blockattn.block_attention(*leaves, cu, block_size=BS, rotary=rotary, causal=causal, return_lse=lse)
    o, l = result if lse else (result, None)
    do = torch.randn(q.shape, generator=g, device="cuda").to(dtype)
    dlse = torch.randn((heads, T), generator=g, device="cuda") if lse else None
    torch.autograd.backward([o] + ([l] if lse else []), [do] + ([dlse] if lse else []))
    args = [t.double().cpu().numpy() for t in (q, k, v)]
    want = reference.backward(*args, do.double().cpu().numpy(), cu.cpu().numpy(), block_size=BS,
                              rotary=ref_rotary, causal=causal,
                              dlse=None if dlse is None else dlse.double().cpu().numpy())
    check_grads([t.grad for t in leaves], [torch.from_numpy(w).cuda() for w in want], dtype)
    # The rotation matters: the un-rotated reference is far from dq.
    plain = reference.backward(*args, do.double().cpu().numpy(), cu.cpu().numpy(), block_size=BS,
                               causal=causal, dlse=None if dlse is None else dlse.double().cpu().numpy())
    assert (leaves[0].grad.double().cpu() - torch.from_numpy(plain[0])).abs().max() > 0.1


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_rotary_backward_interleaved(head_dim, dtype):
    """Every table variant on the edge lengths, 3 heads."""
    for positions, rotate_v in ((False, False), (True, False), (False, True), (True, True)):
        run_rotary_backward(EDGE_LENGTHS, 3, head_dim, dtype, positions, rotate_v, seed=head_dim)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_rotary_backward_interleaved_causal_dlse(head_dim):
    for dtype in (torch.bfloat16, torch.float16):
        run_rotary_backward(EDGE_LENGTHS, 2, head_dim, dtype, positions=True, rotate_v=True, causal=True,
                            lse=True, seed=5)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_rotary_backward_interleaved_long_tiny_and_past_the_sm_count(head_dim):
    run_rotary_backward([20_011], 2, head_dim, torch.bfloat16, seed=11)
    run_rotary_backward(TINY_LENGTHS, 3, head_dim, torch.bfloat16, positions=True, seed=12)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    run_rotary_backward([128 * sms + 5], 1, head_dim, torch.float16, rotate_v=True, seed=13)


# Half-split pairs (session 23): pair-complete chunks as two 32-column pieces under the 64-byte
# swizzle, two boxes of the ordinary 32-column map (`chunk_cols = 32`). Sessions 20-21 loaded them
# as one rank-4 box of two 64-byte pieces under the 128-byte swizzle, which missed the reference
# on an H100 (refused in session 22): these cases are the hardware check of the new layout.
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_rotary_backward_half_split(head_dim, dtype):
    """Every table variant on the edge lengths, 3 heads (pair-complete chunks of two 64-byte-
    swizzled pieces: a piece landed or read at the wrong place would miss the reference)."""
    for positions, rotate_v in ((False, False), (True, False), (False, True), (True, True)):
        run_rotary_backward(EDGE_LENGTHS, 3, head_dim, dtype, positions, rotate_v, seed=head_dim,
                            interleaved=False)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_rotary_backward_half_split_causal_dlse(head_dim):
    for dtype in (torch.bfloat16, torch.float16):
        run_rotary_backward(EDGE_LENGTHS, 2, head_dim, dtype, positions=True, rotate_v=True, causal=True,
                            lse=True, seed=5, interleaved=False)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_rotary_backward_half_split_long_tiny_and_past_the_sm_count(head_dim):
    run_rotary_backward([20_011], 2, head_dim, torch.bfloat16, seed=11, interleaved=False)
    run_rotary_backward(TINY_LENGTHS, 3, head_dim, torch.bfloat16, positions=True, seed=12, interleaved=False)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    run_rotary_backward([128 * sms + 5], 1, head_dim, torch.float16, rotate_v=True, seed=13, interleaved=False)


# Angles computed in the kernel from rotary_theta (session 18): the Python API passes tables, so
# these launch the compiled kernel directly (blockattn._driver, as the API does) and compare with
# the float64 reference on tables made at the kernel's base. The sm_90a consumer turns k (and v)
# in a loop of passes that is not unrolled (docs/head-dims.md).
def run_theta_forward(lengths, heads, head_dim, dtype, interleaved, positions=False, rotate_v=False,
                      causal=False, lse=False, theta=10000.0, seed=0):
    from blockattn import _driver, _kernels

    q, k, v, cu = make_inputs(lengths, heads, head_dim, dtype, seed)
    T = q.shape[0]
    g = torch.Generator(device="cuda").manual_seed(seed + 7)
    pos = torch.randint(0, 777, (T,), generator=g, device="cuda", dtype=torch.int32) if positions else None
    key = _kernels.KernelKey(kind="forward", head_dim=head_dim, block_size=BS,
                             dtype="bf16" if dtype == torch.bfloat16 else "f16", chip=_driver.chip_of(q.device),
                             rotary="interleaved" if interleaved else "half_split", positions=positions,
                             rotate_v=rotate_v, causal=causal, lse=lse, rotary_theta=theta)
    kernel = _driver.load_kernel(_kernels.find_kernel(key), q.device)
    o = torch.full_like(q, float("nan"))
    tensors = {"q": q, "k": k, "v": v, "o": o, "cu_seqlens": cu}
    if pos is not None:
        tensors["positions"] = pos
    if lse:
        tensors["lse"] = torch.full((heads, T), float("nan"), device="cuda", dtype=torch.float32)
    kernel.call(tensors, {"softmax_scale": head_dim ** -0.5})
    torch.cuda.synchronize()
    largest = max(max(lengths), 777) + 1
    cos, sin = reference.rope_tables(largest, head_dim, base=theta)
    ref_rotary = reference.Rotary(cos, sin, interleaved=interleaved,
                                  positions=None if pos is None else pos.cpu().numpy(), rotate_v=rotate_v)
    args = [t.double().cpu().numpy() for t in (q, k, v)] + [cu.cpu().numpy()]
    o_ref, lse_ref = reference.forward(*args, block_size=BS, rotary=ref_rotary, causal=causal, return_lse=True)
    check(o, torch.from_numpy(o_ref).cuda(), dtype)
    if lse:
        l = tensors["lse"]
        assert not torch.isnan(l).any(), "lse elements never written"
        np.testing.assert_allclose(l.double().cpu().numpy(), lse_ref, rtol=ROTARY_TOL_LSE[dtype],
                                   atol=ROTARY_TOL_LSE[dtype])
    # The angles matter: the un-rotated reference and the other base's are far.
    plain = reference.forward(*args, block_size=BS, causal=causal)
    assert (o.double().cpu() - torch.from_numpy(plain)).abs().max() > 0.1
    cos2, sin2 = reference.rope_tables(largest, head_dim, base=10500.0 - theta)
    other = reference.forward(*args, block_size=BS, causal=causal, rotary=reference.Rotary(
        cos2, sin2, interleaved=interleaved, positions=ref_rotary.positions, rotate_v=rotate_v))
    assert (o.double().cpu() - torch.from_numpy(other)).abs().max() > 0.1


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("interleaved", [False, True], ids=["half_split", "interleaved"])
def test_rotary_theta_forward(interleaved, head_dim, dtype):
    """Every variant from theta on the edge lengths, 3 heads; bases 10000 and 500."""
    for positions, rotate_v in ((False, False), (True, False), (False, True), (True, True)):
        run_theta_forward(EDGE_LENGTHS, 3, head_dim, dtype, interleaved, positions, rotate_v,
                          theta=500.0 if rotate_v else 10000.0, seed=head_dim)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_rotary_theta_forward_causal_lse_and_past_the_sm_count(head_dim):
    for dtype in (torch.bfloat16, torch.float16):
        run_theta_forward(EDGE_LENGTHS, 2, head_dim, dtype, True, positions=True, rotate_v=True,
                          causal=True, lse=True, seed=5)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    run_theta_forward([128 * sms + 5], 1, head_dim, torch.bfloat16, False, seed=13)


# The backward from rotary_theta (interleaved: session 20; half-split: session 21): the chunk
# rotations and the turned-back gradient chunks compute their angles in the kernel. Launched
# directly, as the forward above; dq, dk, dv start as NaN, so an unwritten element fails.
def run_theta_backward(lengths, heads, head_dim, dtype, positions=False, rotate_v=False, causal=False,
                       lse=False, theta=10000.0, seed=0, interleaved=True):
    from blockattn import _driver, _kernels

    q, k, v, cu = make_inputs(lengths, heads, head_dim, dtype, seed)
    T = q.shape[0]
    g = torch.Generator(device="cuda").manual_seed(seed + 7)
    pos = torch.randint(0, 777, (T,), generator=g, device="cuda", dtype=torch.int32) if positions else None
    do = torch.randn(q.shape, generator=g, device="cuda").to(dtype)
    dlse = torch.randn((heads, T), generator=g, device="cuda") if lse else None
    key = _kernels.KernelKey(kind="backward", head_dim=head_dim, block_size=BS,
                             dtype="bf16" if dtype == torch.bfloat16 else "f16", chip=_driver.chip_of(q.device),
                             rotary="interleaved" if interleaved else "half_split", positions=positions,
                             rotate_v=rotate_v, causal=causal, lse=lse, rotary_theta=theta)
    kernel = _driver.load_kernel(_kernels.find_kernel(key), q.device)
    grads = [torch.full_like(t, float("nan")) for t in (q, k, v)]
    tensors = {"q": q, "k": k, "v": v, "do": do, "dq": grads[0], "dk": grads[1], "dv": grads[2],
               "cu_seqlens": cu}
    if pos is not None:
        tensors["positions"] = pos
    if lse:
        tensors["dlse"] = dlse
    kernel.call(tensors, {"softmax_scale": head_dim ** -0.5})
    torch.cuda.synchronize()
    largest = max(max(lengths), 777) + 1
    args = [t.double().cpu().numpy() for t in (q, k, v)]
    common = dict(block_size=BS, causal=causal, dlse=None if dlse is None else dlse.double().cpu().numpy())

    def ref(base):
        cos, sin = reference.rope_tables(largest, head_dim, base=base)
        rotary = reference.Rotary(cos, sin, interleaved=interleaved,
                                  positions=None if pos is None else pos.cpu().numpy(), rotate_v=rotate_v)
        return reference.backward(*args, do.double().cpu().numpy(), cu.cpu().numpy(), rotary=rotary, **common)

    check_grads(grads, [torch.from_numpy(w).cuda() for w in ref(theta)], dtype)
    # The angles matter: the un-rotated reference and the other base's are far from dq.
    plain = reference.backward(*args, do.double().cpu().numpy(), cu.cpu().numpy(), **common)
    assert (grads[0].double().cpu() - torch.from_numpy(plain[0])).abs().max() > 0.1
    other = ref(10500.0 - theta)
    assert (grads[0].double().cpu() - torch.from_numpy(other[0])).abs().max() > 0.1


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_rotary_theta_backward_interleaved(head_dim, dtype):
    """Every variant from theta on the edge lengths, 3 heads; bases 10000 and 500."""
    for positions, rotate_v in ((False, False), (True, False), (False, True), (True, True)):
        run_theta_backward(EDGE_LENGTHS, 3, head_dim, dtype, positions, rotate_v,
                           theta=500.0 if rotate_v else 10000.0, seed=head_dim)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_rotary_theta_backward_interleaved_causal_dlse_tiny_and_past_the_sm_count(head_dim):
    for dtype in (torch.bfloat16, torch.float16):
        run_theta_backward(EDGE_LENGTHS, 2, head_dim, dtype, positions=True, rotate_v=True, causal=True,
                           lse=True, theta=500.0, seed=5)
    run_theta_backward(EDGE_LENGTHS, 2, head_dim, torch.bfloat16, causal=True, seed=6)
    run_theta_backward(EDGE_LENGTHS, 2, head_dim, torch.float16, lse=True, seed=7)
    run_theta_backward(TINY_LENGTHS, 3, head_dim, torch.bfloat16, positions=True, seed=12)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    run_theta_backward([128 * sms + 5], 1, head_dim, torch.float16, rotate_v=True, seed=13)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_rotary_theta_backward_half_split(head_dim, dtype):
    """Half-split pairs from theta (pair-complete chunks of two 64-byte-swizzled pieces, session
    23): every variant on the edge lengths, 3 heads; bases 10000 and 500."""
    for positions, rotate_v in ((False, False), (True, False), (False, True), (True, True)):
        run_theta_backward(EDGE_LENGTHS, 3, head_dim, dtype, positions, rotate_v,
                           theta=500.0 if rotate_v else 10000.0, seed=head_dim + 1, interleaved=False)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_rotary_theta_backward_half_split_causal_dlse_and_past_the_sm_count(head_dim):
    run_theta_backward(EDGE_LENGTHS, 2, head_dim, torch.bfloat16, positions=True, rotate_v=True, causal=True,
                       lse=True, theta=500.0, seed=15, interleaved=False)
    run_theta_backward(TINY_LENGTHS, 3, head_dim, torch.float16, causal=True, seed=16, interleaved=False)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    run_theta_backward([128 * sms + 5], 1, head_dim, torch.bfloat16, lse=True, seed=17, interleaved=False)
