"""The backward kernel (dq, dk, dv) against float64 autograd, on the GPU.

The reference differentiates the float64 block-attention of
reference_torch.forward with torch.autograd on the same (bf16/fp16) inputs.

Tolerance. The kernel rounds P and dS to the input type before the products
that use them as operands (P^T dO, dS^T Q, dS K), as every flash-style kernel
does, and rounds each gradient once at the end; the errors are a few bf16
units in the last place of the largest terms. We require a relative
Frobenius error below 2e-2 (bf16) / 4e-3 (fp16) per gradient and a maximum
absolute error below 4e-2 (bf16) / 8e-3 (fp16) of the gradient's largest
magnitude. Unwritten rows fail through NaN: the kernel allocates its outputs
with torch.empty and every row of every tensor must be written.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import blockattn

from . import reference_torch
from .test_forward_gpu import EDGE_LENGTHS, make_inputs, packed_qkv, saved_for_backward

TOL = {torch.bfloat16: (2e-2, 4e-2), torch.float16: (4e-3, 8e-3)}


def reference_grads(q, k, v, cu, do, scale=None):
    leaves = [t.detach().double().requires_grad_(True) for t in (q, k, v)]
    o = reference_torch.forward(*leaves, cu, softmax_scale=scale)
    o.backward(do.double())
    return [t.grad for t in leaves]


def check_grads(got, want, dtype):
    frob_tol, max_tol = TOL[dtype]
    for name, g, r in zip(("dq", "dk", "dv"), got, want):
        assert not torch.isnan(g).any(), f"{name}: NaN (unwritten rows?)"
        scale = r.abs().max().item() or 1.0
        diff = g.double() - r
        frob = (torch.linalg.vector_norm(diff) / (torch.linalg.vector_norm(r) + 1e-30)).item()
        worst = diff.abs().max().item() / scale
        assert frob < frob_tol, f"{name}: relative Frobenius error {frob:.3e}"
        assert worst < max_tol, f"{name}: max error {worst:.3e} of the largest |grad|"


def run_case(lengths, heads, head_dim, dtype=torch.bfloat16, seed=0, scale=None):
    q, k, v, cu = make_inputs(lengths, heads, head_dim, dtype, seed)
    do = torch.randn_like(q)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    o = blockattn.block_attention(*leaves, cu, softmax_scale=scale)
    o.backward(do)
    check_grads([t.grad for t in leaves], reference_grads(q, k, v, cu, do, scale), dtype)


@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("heads", [1, 4, 16])
def test_jagged_edges(head_dim, heads):
    run_case(EDGE_LENGTHS, heads, head_dim)


@pytest.mark.parametrize("head_dim", [64, 128])
def test_random_jagged_batch(head_dim):
    lengths = np.random.default_rng(9).integers(0, 3000, size=200)
    run_case(lengths, 4, head_dim, seed=4)


@pytest.mark.parametrize("head_dim", [64, 128])
def test_single_long_sequence(head_dim):
    run_case([50_017], 2, head_dim)


def test_tile_count_far_from_sm_multiple():
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    run_case([64 * sms + 5], 1, 128)
    run_case([64 * 3 + 1, 0, 17], 2, 64)


@pytest.mark.parametrize("head_dim", [64, 128])
def test_fp16(head_dim):
    run_case(EDGE_LENGTHS, 4, head_dim, dtype=torch.float16)


def test_custom_scale():
    run_case(EDGE_LENGTHS, 4, 128, scale=0.3)


def test_strided_inputs_and_grad():
    """q, k, v as views of a packed qkv tensor; dO non-contiguous."""
    qkv, q, k, v, cu = packed_qkv([130, 64, 1, 0, 500], 4, 128, requires_grad=True)
    T, _, H, D = qkv.shape
    do = torch.randn((T, H, 2 * D), device="cuda").to(torch.bfloat16)[..., ::2]
    blockattn.block_attention(q, k, v, cu).backward(do)
    got = [qkv.grad[:, i] for i in range(3)]
    check_grads(got, reference_grads(q, k, v, cu, do), torch.bfloat16)


def test_deterministic():
    q, k, v, cu = make_inputs([1000, 77, 2000, 0, 64], 4, 128, torch.bfloat16, seed=11)
    do = torch.randn_like(q)
    grads = []
    for _ in range(2):
        leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
        blockattn.block_attention(*leaves, cu).backward(do)
        grads.append([t.grad for t in leaves])
    for a, b in zip(*grads):
        assert torch.equal(a, b)


def test_only_inputs_saved():
    """The autograd graph keeps q, k, v and cu_seqlens: no o, no statistics."""
    q, k, v, cu = make_inputs([300, 64], 4, 64, torch.bfloat16)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    o, saved = saved_for_backward(lambda: blockattn.block_attention(*leaves, cu))
    assert len(saved) == 4
    assert all(any(s is t for t in (*leaves, cu)) for s in saved)
    o.sum().backward()


def test_torch_compile_no_graph_break():
    q, k, v, cu = make_inputs(EDGE_LENGTHS, 4, 128, torch.bfloat16, seed=6)
    do = torch.randn_like(q)

    def loss(q, k, v):
        return (blockattn.block_attention(q, k, v, cu, check_inputs=False) * do).sum()

    compiled = torch.compile(loss, fullgraph=True)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    compiled(*leaves).backward()
    check_grads([t.grad for t in leaves], reference_grads(q, k, v, cu, do), torch.bfloat16)


def test_opcheck():
    # ``import blockattn`` defers the runtime, and with it the registration of
    # the torch.library ops: alone in a process (pytest -k, or first in an
    # xdist worker) nothing else has imported it yet.
    import blockattn.api  # noqa: F401

    q, k, v, cu = make_inputs([130, 1, 64], 2, 64, torch.bfloat16, seed=8)
    q, k, v = (t.requires_grad_(True) for t in (q, k, v))
    torch.library.opcheck(
        torch.ops.blockattn.block_attention.default, (q, k, v, cu, 64, 0.125),
        test_utils=("test_schema", "test_faketensor", "test_autograd_registration", "test_aot_dispatch_dynamic"),
    )


@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("lengths", [[512], [1000, 37, 2000, 64]])
def test_small_grid_variant_matches_the_default(monkeypatch, head_dim, lengths):
    """A tiny grid takes the kernels with one tile per CTA (api._small_grid); they compute every
    tile as the default ones do, and match the reference."""
    from blockattn import api

    q, k, v, cu = make_inputs(lengths, 4, head_dim, torch.bfloat16)
    do = torch.randn_like(q)
    for kind in ("forward", "backward"):
        assert api._small_grid(api._small_entry(kind, q, 64)[0], 64, q.shape, cu.shape[0])

    def fwd_bwd():
        leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
        o = blockattn.block_attention(*leaves, cu)
        o.backward(do)
        return [o.detach()] + [t.grad for t in leaves]

    small = fwd_bwd()
    check_grads(small[1:], reference_grads(q, k, v, cu, do), torch.bfloat16)
    # Both paths' rule off: the checks' path calls _small_grid, the fast path
    # compares with its limits.
    monkeypatch.setattr(api, "_small_grid", lambda *args: False)
    for fast in api._FAST.values():
        if fast is not None:
            monkeypatch.setattr(fast, "forward_limit", -1)
            monkeypatch.setattr(fast, "backward_limit", -1)
    default = fwd_bwd()
    for name, a, b in zip(("o", "dq", "dk", "dv"), small, default):
        torch.testing.assert_close(a, b, atol=1e-2, rtol=0, msg=lambda m, name=name: f"{name}: {m}")
