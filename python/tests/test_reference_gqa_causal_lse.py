"""The float64 reference's grouped-query attention, causal blocks and log-sum-exp (issue 21).

The blocked reference is checked against the dense one (which indexes grouped heads instead of
repeating them and masks by token order) and its backward against finite differences of the
forward, the LSE's gradient included; torch autograd in float64 cross-checks both when torch
is installed.
"""

import numpy as np
import pytest

from blockattn import reference as ref

JAGGED = [0, 1, 3, 4, 5, 9, 0, 2]  # with block 4: empty, 1, block-1, block, block+1, two blocks


def qkv(rng, lengths, hq, hkv, dim):
    cu = ref.make_cu_seqlens(lengths)
    total = int(cu[-1])
    q = rng.standard_normal((total, hq, dim))
    k, v = (rng.standard_normal((total, hkv, dim)) for _ in range(2))
    return q, k, v, cu


GROUPS = [(4, 4), (4, 2), (8, 2), (8, 1), (3, 1)]  # G = 1, 2, 4, 8 (MQA) and 3 (MQA)


@pytest.mark.parametrize("hq,hkv", GROUPS)
@pytest.mark.parametrize("causal", [False, True])
def test_forward_and_lse_match_dense(rng, hq, hkv, causal):
    q, k, v, cu = qkv(rng, JAGGED, hq, hkv, 8)
    o, lse = ref.forward(q, k, v, cu, block_size=4, causal=causal, return_lse=True)
    o_dense, lse_dense = ref.dense_reference(q, k, v, cu, block_size=4, causal=causal, return_lse=True)
    assert o.shape == q.shape and lse.shape == (hq, q.shape[0])
    np.testing.assert_allclose(o, o_dense, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lse, lse_dense, rtol=1e-12, atol=1e-12)


def test_grouped_heads_equal_repeated_heads(rng):
    """G query heads on one kv head give what G copies of that kv head give."""
    q, k, v, cu = qkv(rng, JAGGED, 6, 2, 8)
    grouped = ref.forward(q, k, v, cu, block_size=4)
    repeated = ref.forward(q, np.repeat(k, 3, axis=1), np.repeat(v, 3, axis=1), cu, block_size=4)
    np.testing.assert_allclose(grouped, repeated, rtol=1e-13, atol=1e-13)
    # and the kv head that a query head reads matters: the other grouping differs
    tiled = ref.forward(q, np.tile(k, (1, 3, 1)), np.tile(v, (1, 3, 1)), cu, block_size=4)
    assert not np.allclose(grouped, tiled)


def test_causal_rows(rng):
    """A block's first token sees only itself; its last sees the whole block; no token of
    one block sees another block."""
    q, k, v, cu = qkv(rng, [6], 2, 2, 4)
    o = ref.forward(q, k, v, cu, block_size=4, causal=True)
    np.testing.assert_allclose(o[0], v[0], atol=1e-15)  # block 1, token 0
    np.testing.assert_allclose(o[4], v[4], atol=1e-15)  # block 2, token 0
    full = ref.forward(q, k, v, cu, block_size=4)
    np.testing.assert_allclose(o[3], full[3], atol=1e-15)
    np.testing.assert_allclose(o[5], full[5], atol=1e-15)
    assert not np.allclose(o[1], full[1])


def test_lse_by_hand():
    q = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])
    k = np.array([[[2.0, 0.0]], [[0.0, 3.0]]])
    v = np.zeros_like(k)
    _, lse = ref.forward(q, k, v, [0, 2], block_size=2, softmax_scale=1.0, return_lse=True)
    np.testing.assert_allclose(lse[0], [np.log(np.exp(2.0) + 1.0), np.log(1.0 + np.exp(3.0))])
    _, lse = ref.forward(q, k, v, [0, 2], block_size=2, softmax_scale=1.0, causal=True, return_lse=True)
    np.testing.assert_allclose(lse[0], [2.0, np.log(1.0 + np.exp(3.0))])


@pytest.mark.parametrize("hq,hkv", [(2, 2), (4, 2), (3, 1)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("with_dlse", [False, True])
def test_backward_matches_finite_differences(rng, numeric_grad, hq, hkv, causal, with_dlse):
    q, k, v, cu = qkv(rng, [5, 0, 3, 1], hq, hkv, 4)
    g = rng.standard_normal(q.shape)
    glse = rng.standard_normal((hq, q.shape[0])) if with_dlse else None

    def loss():
        o, lse = ref.forward(q, k, v, cu, block_size=4, causal=causal, return_lse=True)
        return float(np.sum(o * g) + (np.sum(lse * glse) if with_dlse else 0.0))

    dq, dk, dv = ref.backward(q, k, v, g, cu, block_size=4, causal=causal, dlse=glse)
    assert dk.shape == k.shape and dv.shape == v.shape
    for name, analytic, x in (("dq", dq, q), ("dk", dk, k), ("dv", dv, v)):
        np.testing.assert_allclose(analytic, numeric_grad(loss, x), rtol=1e-6, atol=1e-8, err_msg=name)


def test_dlse_changes_the_gradient(rng):
    """Without its dlse term the backward is the plain one, and the term is not zero."""
    q, k, v, cu = qkv(rng, [7], 2, 1, 4)
    g = rng.standard_normal(q.shape)
    plain = ref.backward(q, k, v, g, cu, block_size=4)
    zero = ref.backward(q, k, v, g, cu, block_size=4, dlse=np.zeros((2, 7)))
    some = ref.backward(q, k, v, g, cu, block_size=4, dlse=np.ones((2, 7)))
    for a, b in zip(plain, zero):
        np.testing.assert_array_equal(a, b)
    assert not np.allclose(plain[0], some[0])
    np.testing.assert_array_equal(plain[2], some[2])  # dV = P^T dO has no lse term


def test_torch_autograd_cross_check(rng):
    torch = pytest.importorskip("torch")
    q, k, v, cu = qkv(rng, [6, 3], 4, 2, 8)
    g, glse = rng.standard_normal(q.shape), rng.standard_normal((4, 9))
    tq, tk, tv = (torch.tensor(x, requires_grad=True) for x in (q, k, v))
    mask = torch.tensor(ref.block_mask(cu, 4)) & torch.ones(9, 9, dtype=torch.bool).tril()
    s = torch.einsum("ihd,jhd->hij", tq, tk.repeat_interleave(2, dim=1)) / np.sqrt(8)
    s = s.masked_fill(~mask, float("-inf"))
    o = torch.einsum("hij,jhd->ihd", s.softmax(-1), tv.repeat_interleave(2, dim=1))
    lse = s.logsumexp(-1)
    (o * torch.tensor(g)).sum().add((lse * torch.tensor(glse)).sum()).backward()
    o_ref, lse_ref = ref.forward(q, k, v, cu, block_size=4, causal=True, return_lse=True)
    np.testing.assert_allclose(o_ref, o.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lse_ref, lse.detach().numpy(), rtol=1e-12, atol=1e-12)
    grads = ref.backward(q, k, v, g, cu, block_size=4, causal=True, dlse=glse)
    for analytic, t in zip(grads, (tq, tk, tv)):
        np.testing.assert_allclose(analytic, t.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call,match", [
    (lambda q, k, v, cu: ref.forward(q, k[:, :3], v[:, :3], cu), "q's 4 heads must be a multiple of k's and v's 3 heads"),
    (lambda q, k, v, cu: ref.forward(q, k, v[:, :1], cu), "v shape .* does not match k shape"),
    (lambda q, k, v, cu: ref.forward(q, k[:, :0], v[:, :0], cu), "k must have at least one head"),
    (lambda q, k, v, cu: ref.forward(q, k[:-1], v[:-1], cu), "does not match q shape .* in tokens or head dim"),
    (lambda q, k, v, cu: ref.forward(q, k, v, cu, causal=1), "causal must be a bool"),
    (lambda q, k, v, cu: ref.forward(q, k, v, cu, return_lse="yes"), "return_lse must be a bool"),
    (lambda q, k, v, cu: ref.dense_reference(q, k, v, cu, causal=None), "causal must be a bool"),
    (lambda q, k, v, cu: ref.backward(q, k, v, q, cu, dlse=np.zeros((5, 4))), r"dlse shape \(5, 4\) must be \[Hq, T\] = \(4, 5\)"),
])
def test_bad_arguments_are_named(rng, call, match):
    q, k, v, cu = qkv(rng, [5], 4, 4, 4)
    with pytest.raises(ValueError, match=match):
        call(q, k, v, cu)
