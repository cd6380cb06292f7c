"""The forward kernel against the float64 reference, on the GPU.

Tolerance. The kernel reads bf16/fp16 inputs exactly, accumulates in f32,
rounds P = exp(S - max) to the input type before P V (as every flash-style
kernel does) and rounds o once at the end. Against a float64 reference on the
same inputs that gives errors of a few units in the last place of bf16
(2^-8 relative): we allow 2e-2 absolute + 2e-2 relative for bf16 and a quarter
of that for fp16 (2^-11), and require the relative Frobenius error to stay
under 1e-2 (bf16) / 2.5e-3 (fp16). NaN never passes (the output is poisoned
with NaN first, so an unwritten row fails).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import blockattn
from blockattn import reference

from . import reference_torch

TOL = {
    torch.bfloat16: dict(atol=2e-2, rtol=2e-2, frob=1e-2),
    torch.float16: dict(atol=5e-3, rtol=5e-3, frob=2.5e-3),
}
GUARD_ROWS = 3


def make_inputs(lengths, heads, head_dim, dtype, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    cu = cu_seqlens_of(lengths)
    T = int(cu[-1])
    q, k, v = (
        torch.randn((T, heads, head_dim), generator=g, device="cuda", dtype=torch.float32).to(dtype)
        for _ in range(3)
    )
    return q, k, v, cu


def cu_seqlens_of(lengths):
    return torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), dtype=torch.int32, device="cuda")


def packed_qkv(lengths, heads, head_dim, requires_grad=False):
    """q, k, v as views of one packed bf16 [T, 3, H, D] tensor (token stride 3 H D).

    Returns (qkv, q, k, v, cu_seqlens); with requires_grad, qkv is the leaf."""
    qkv = torch.randn((sum(lengths), 3, heads, head_dim), device="cuda").to(torch.bfloat16)
    qkv.requires_grad_(requires_grad)
    return qkv, qkv[:, 0], qkv[:, 1], qkv[:, 2], cu_seqlens_of(lengths)


def saved_for_backward(fn):
    """Runs fn() and returns its result and the tensors autograd saved for the backward."""
    saved = []

    def pack(t):
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = fn()
    return result, saved


def poisoned_output(q):
    """o as a view into a NaN-filled buffer with guard rows around it."""
    T, H, D = q.shape
    buffer = torch.full((T + 2 * GUARD_ROWS, H, D), float("nan"), dtype=q.dtype, device=q.device)
    return buffer, buffer[GUARD_ROWS:GUARD_ROWS + T]


def check(o, ref, dtype):
    tol = TOL[dtype]
    assert not torch.isnan(o).any(), f"{int(torch.isnan(o).sum())} output elements never written"
    err = (o.double() - ref).abs()
    bound = tol["atol"] + tol["rtol"] * ref.abs()
    worst = int(torch.argmax((err - bound).flatten()))
    assert bool((err <= bound).all()), (
        f"max error {err.max().item():.3e}; worst element {np.unravel_index(worst, o.shape)}"
    )
    frob = (torch.linalg.vector_norm(o.double() - ref) / torch.linalg.vector_norm(ref)).item()
    assert frob < tol["frob"], f"relative Frobenius error {frob:.3e}"


def run_case(lengths, heads, head_dim, dtype=torch.bfloat16, seed=0, scale=None):
    q, k, v, cu = make_inputs(lengths, heads, head_dim, dtype, seed)
    buffer, o = poisoned_output(q)
    result = blockattn.block_attention(q, k, v, cu, softmax_scale=scale, out=o)
    torch.cuda.synchronize()
    assert result.data_ptr() == o.data_ptr()
    guards = torch.cat([buffer[:GUARD_ROWS], buffer[-GUARD_ROWS:]])
    assert torch.isnan(guards).all(), "the kernel wrote outside the output tensor"
    check(o, reference_torch.forward(q, k, v, cu, softmax_scale=scale), dtype)


EDGE_LENGTHS = [0, 1, 63, 64, 65, 2000, 0, 130, 7, 0]


@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("heads", [1, 4, 16])
def test_jagged_edges(head_dim, heads):
    run_case(EDGE_LENGTHS, heads, head_dim)


@pytest.mark.parametrize("head_dim", [64, 128])
def test_single_long_sequence(head_dim):
    run_case([100_003], 4, head_dim)


@pytest.mark.parametrize("length", [1, 37, 64])
def test_batch_of_one(length):
    run_case([length], 4, 128)


def test_tile_count_far_from_sm_multiple():
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    # sms + 1 tiles for one head: every CTA gets one tile, one gets two.
    run_case([64 * sms + 5], 1, 128)
    # fewer tiles than SMs: most CTAs have nothing to do.
    run_case([64 * 3 + 1, 0, 17], 2, 64)


@pytest.mark.parametrize("head_dim", [64, 128])
def test_random_jagged_batch(head_dim):
    rng = np.random.default_rng(7)
    lengths = rng.integers(0, 3000, size=300)
    run_case(lengths, 4, head_dim, seed=3)


@pytest.mark.parametrize("head_dim", [64, 128])
def test_fp16(head_dim):
    run_case(EDGE_LENGTHS, 4, head_dim, dtype=torch.float16)


def test_custom_scale():
    run_case(EDGE_LENGTHS, 4, 128, scale=0.3)
    run_case(EDGE_LENGTHS, 4, 64, scale=1e-3)


def test_large_logits_stay_finite():
    q, k, v, cu = make_inputs([200, 64, 3], 2, 128, torch.bfloat16, seed=5)
    q = (q * 30).to(torch.bfloat16)
    o = blockattn.block_attention(q, k, v, cu)
    check(o, reference_torch.forward(q, k, v, cu), torch.bfloat16)


def test_strided_inputs():
    """q, k, v as views of one packed qkv tensor (token stride 3 H D)."""
    _, q, k, v, cu = packed_qkv([130, 64, 1, 0, 500], 4, 128)
    o = blockattn.block_attention(q, k, v, cu)
    check(o, reference_torch.forward(q, k, v, cu), torch.bfloat16)


def test_empty_batches():
    for lengths in ([], [0], [0, 0, 0]):
        q, k, v, cu = make_inputs(lengths, 2, 64, torch.bfloat16)
        o = blockattn.block_attention(q, k, v, cu)
        assert o.shape == q.shape


def test_torch_reference_matches_numpy_reference():
    lengths = [0, 1, 63, 64, 65, 130]
    q, k, v, cu = make_inputs(lengths, 3, 64, torch.float32)
    ref = reference.forward(q.cpu().numpy(), k.cpu().numpy(), v.cpu().numpy(), cu.cpu().numpy())
    np.testing.assert_allclose(reference_torch.to_numpy(reference_torch.forward(q, k, v, cu)), ref, atol=1e-12)


def test_deterministic():
    q, k, v, cu = make_inputs([1000, 77, 2000], 4, 128, torch.bfloat16, seed=11)
    a = blockattn.block_attention(q, k, v, cu)
    b = blockattn.block_attention(q, k, v, cu)
    assert torch.equal(a, b)


def test_cuda_graph_capture():
    q, k, v, cu = make_inputs([300, 64, 5], 4, 128, torch.bfloat16, seed=2)
    blockattn.block_attention(q, k, v, cu)  # load the kernel outside capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        o = blockattn.block_attention(q, k, v, cu)
    q.copy_(torch.randn_like(q))
    graph.replay()
    torch.cuda.synchronize()
    check(o, reference_torch.forward(q, k, v, cu), torch.bfloat16)


def test_fast_path_skips_the_python_checks(monkeypatch):
    """Once a call has passed the checks, the next ones on plain tensors launch through the
    native record with no Python check (issue 22): a forward, a forward with grad and its
    backward (which reuses the forward's launch state) give the checks' path's values."""
    from blockattn import api

    q, k, v, cu = make_inputs([300, 64, 5], 4, 128, torch.bfloat16, seed=4)
    blockattn.block_attention(q, k, v, cu)

    def no_check(*args, **kwargs):
        raise AssertionError("a Python check ran")

    monkeypatch.setattr(api, "_check_activation", no_check)
    monkeypatch.setattr(api, "_check_common", no_check)
    with torch.no_grad():
        o = blockattn.block_attention(q, k, v, cu)
    check(o, reference_torch.forward(q, k, v, cu), torch.bfloat16)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    o = blockattn.block_attention(*leaves, cu, softmax_scale=0.1)
    assert type(o.grad_fn).__name__ == "_FastAttentionFunctionBackward"
    torch.testing.assert_close(o, api.forward(q, k, v, cu, 64, 0.1), atol=0, rtol=0)
    do = torch.randn_like(o)
    grads = torch.autograd.grad(o, leaves, do)
    for got, expected in zip(grads, api.backward(do, q, k, v, cu, 64, 0.1)):
        torch.testing.assert_close(got, expected, atol=0, rtol=0)  # the kernels are deterministic


def test_fast_path_under_cuda_graph_capture():
    """The fast path launches on the capturing stream (torch's current one)."""
    q, k, v, cu = make_inputs([300, 64, 5], 4, 128, torch.bfloat16, seed=5)
    blockattn.block_attention(q, k, v, cu, check_inputs=False)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        o = blockattn.block_attention(q, k, v, cu, check_inputs=False)
    q.copy_(torch.randn_like(q))
    graph.replay()
    torch.cuda.synchronize()
    check(o, reference_torch.forward(q, k, v, cu), torch.bfloat16)


def test_cuda_graph_capture_with_cu_seqlens_never_checked():
    """A cu_seqlens the checks have not seen: its values cannot be copied during the capture,
    so they are not checked, and the capture succeeds."""
    q, k, v, cu = make_inputs([300, 64, 5], 4, 128, torch.bfloat16, seed=3)
    blockattn.block_attention(q, k, v, cu)  # load the kernel outside capture
    fresh = cu.clone()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        o = blockattn.block_attention(q, k, v, fresh)
    graph.replay()
    torch.cuda.synchronize()
    check(o, reference_torch.forward(q, k, v, cu), torch.bfloat16)


def test_values_checked_again_after_an_in_place_change():
    """check_inputs copies cu_seqlens once per tensor and version: an in-place change is seen."""
    q, k, v, cu = make_inputs([70, 10], 2, 64, torch.bfloat16)
    blockattn.block_attention(q, k, v, cu)
    blockattn.block_attention(q, k, v, cu)
    cu[1] = 90
    with pytest.raises(ValueError, match="^cu_seqlens: must be non-decreasing"):
        blockattn.block_attention(q, k, v, cu)
    cu[1] = 70
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    # A new version of cu_seqlens: the fast path leaves the call to the checks' path, which
    # checks the values again (and the eager autograd.Function); the next call is fast.
    o = blockattn.block_attention(*leaves, cu)
    assert type(o.grad_fn).__name__ == "_AttentionFunctionBackward"
    check(o, reference_torch.forward(q, k, v, cu), torch.bfloat16)
    o = blockattn.block_attention(*leaves, cu)
    assert type(o.grad_fn).__name__ == "_FastAttentionFunctionBackward"
    check(o, reference_torch.forward(q, k, v, cu), torch.bfloat16)


def test_argument_errors():
    q, k, v, cu = make_inputs([70, 10], 2, 64, torch.bfloat16)
    blockattn.block_attention(q, k, v, cu)  # the fast path takes the next calls: refusals say the same
    with pytest.raises(ValueError, match="^k: dtype"):
        blockattn.block_attention(q, k.half(), v, cu)
    with pytest.raises(ValueError, match="^v: shape"):
        blockattn.block_attention(q, k, v[:-1], cu)
    with pytest.raises(ValueError, match="^q: expected a CUDA tensor"):
        blockattn.block_attention(q.cpu(), k, v, cu)
    with pytest.raises(ValueError, match="^q: expected dtype"):
        blockattn.block_attention(q.float(), k.float(), v.float(), cu)
    with pytest.raises(ValueError, match="^q: head_dim 16"):
        blockattn.block_attention(q[..., :16], k[..., :16], v[..., :16], cu)
    wide = torch.zeros(q.shape[:2] + (2 * q.shape[2],), dtype=q.dtype, device="cuda")
    with pytest.raises(ValueError, match="^q: the head_dim dimension must be contiguous"):
        blockattn.block_attention(wide[..., ::2], k, v, cu)
    with pytest.raises(ValueError, match="^cu_seqlens: expected dtype torch.int32"):
        blockattn.block_attention(q, k, v, cu.long())
    with pytest.raises(ValueError, match="^cu_seqlens: must start at 0"):
        blockattn.block_attention(q, k, v, cu + 1)
    with pytest.raises(ValueError, match="^cu_seqlens: must be non-decreasing"):
        blockattn.block_attention(q, k, v, torch.tensor([0, 75, 70, 80], dtype=torch.int32, device="cuda"))
    with pytest.raises(ValueError, match="^cu_seqlens: the last offset"):
        blockattn.block_attention(q, k, v, cu[:-1])
    with pytest.raises(ValueError, match="^cu_seqlens: on"):
        blockattn.block_attention(q, k, v, cu.cpu())
    with pytest.raises(ValueError, match="^block_size"):
        blockattn.block_attention(q, k, v, cu, block_size=48)
    with pytest.raises(ValueError, match="^softmax_scale"):
        blockattn.block_attention(q, k, v, cu, softmax_scale=-1.0)
    with pytest.raises(ValueError, match="^softmax_scale"):
        blockattn.block_attention(q, k, v, cu, softmax_scale=math.nan)
