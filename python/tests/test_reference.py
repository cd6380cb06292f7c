"""Tests of the float64 block-diagonal attention reference (no rotary)."""

import numpy as np
import pytest

from blockattn import reference as ref

JAGGED_LENGTHS = [0, 1, 63, 64, 65, 130, 0, 2]


def random_qkv(rng, lengths, heads, dim, scale=1.0):
    """Random q, k, v ``[T, H, D]`` and cu_seqlens for the given sequence lengths."""
    cu = ref.make_cu_seqlens(lengths)
    total = int(cu[-1])
    q, k, v = (scale * rng.standard_normal((total, heads, dim)) for _ in range(3))
    return q, k, v, cu


# --------------------------------------------------------------------------------------------
# Sequences and blocks
# --------------------------------------------------------------------------------------------


def test_make_cu_seqlens():
    cu = ref.make_cu_seqlens([3, 0, 5, 1])
    assert cu.dtype == np.int32
    assert cu.tolist() == [0, 3, 3, 8, 9]
    assert ref.make_cu_seqlens([]).tolist() == [0]
    assert ref.make_cu_seqlens(np.array([0, 0], dtype=np.uint8)).tolist() == [0, 0, 0]


@pytest.mark.parametrize(
    "lengths, block_size, expected",
    [
        ([], 64, []),
        ([0, 0, 0], 64, []),
        ([1], 64, [(0, 1)]),
        ([64], 64, [(0, 64)]),
        ([65], 64, [(0, 64), (64, 1)]),
        ([63, 0, 130], 64, [(0, 63), (63, 64), (127, 64), (191, 2)]),
        ([3, 2], 1, [(0, 1), (1, 1), (2, 1), (3, 1), (4, 1)]),
        ([5, 0, 9, 4], 4, [(0, 4), (4, 1), (5, 4), (9, 4), (13, 1), (14, 4)]),
        ([7, 3], 100, [(0, 7), (7, 3)]),
    ],
)
def test_block_tiles_edge_cases(lengths, block_size, expected):
    assert ref.block_tiles(ref.make_cu_seqlens(lengths), block_size) == expected


def test_block_tiles_returns_python_ints():
    tiles = ref.block_tiles(np.array([0, 70], dtype=np.int32), 64)
    assert all(type(a) is int and type(b) is int for tile in tiles for a, b in [tile])


@pytest.mark.parametrize("block_size", [1, 3, 16, 64])
def test_block_tiles_partition_each_sequence(rng, block_size):
    """Tiles are in order, cover [0, T) exactly once, and never straddle a sequence end."""
    lengths = rng.integers(0, 150, size=12)
    cu = ref.make_cu_seqlens(lengths)
    tiles = ref.block_tiles(cu, block_size)
    row = 0
    for start, n in tiles:
        assert start == row and 1 <= n <= block_size
        b = np.searchsorted(cu, start, side="right") - 1
        assert (start - cu[b]) % block_size == 0  # aligned to the sequence start
        assert start + n <= cu[b + 1]
        assert n == block_size or start + n == cu[b + 1]  # only the last block is partial
        row += n
    assert row == cu[-1]
    assert len(tiles) == sum(-(-int(n) // block_size) for n in lengths)


def test_sequence_positions():
    cu = ref.make_cu_seqlens([3, 0, 2, 1])
    assert ref.sequence_positions(cu).tolist() == [0, 1, 2, 0, 1, 0]
    assert ref.sequence_positions([0]).tolist() == []


def test_block_mask_matches_tiles(rng):
    cu = ref.make_cu_seqlens([5, 0, 9, 1, 4])
    mask = ref.block_mask(cu, 4)
    expected = np.zeros_like(mask)
    for start, n in ref.block_tiles(cu, 4):
        expected[start : start + n, start : start + n] = True
    np.testing.assert_array_equal(mask, expected)


# --------------------------------------------------------------------------------------------
# Forward
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("heads", [1, 3])
@pytest.mark.parametrize("dim", [16, 64])
@pytest.mark.parametrize("block_size", [64, 16])
def test_forward_matches_dense(rng, heads, dim, block_size):
    lengths = list(JAGGED_LENGTHS)
    rng.shuffle(lengths)
    q, k, v, cu = random_qkv(rng, lengths, heads, dim, scale=2.0)
    out = ref.forward(q, k, v, cu, block_size=block_size)
    dense = ref.dense_reference(q, k, v, cu, block_size=block_size)
    assert out.dtype == np.float64 and out.shape == q.shape
    np.testing.assert_allclose(out, dense, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scale", [0.3, 1.7, -0.5])
def test_forward_custom_scale_matches_dense(rng, scale):
    q, k, v, cu = random_qkv(rng, [7, 0, 20, 33], 2, 16)
    out = ref.forward(q, k, v, cu, block_size=8, softmax_scale=scale)
    dense = ref.dense_reference(q, k, v, cu, block_size=8, softmax_scale=scale)
    np.testing.assert_allclose(out, dense, rtol=1e-12, atol=1e-12)


def test_forward_default_scale_is_inv_sqrt_d(rng):
    q, k, v, cu = random_qkv(rng, [10, 5], 2, 16)
    np.testing.assert_allclose(
        ref.forward(q, k, v, cu, block_size=4),
        ref.forward(q, k, v, cu, block_size=4, softmax_scale=0.25),
        rtol=0,
        atol=0,
    )


def test_forward_is_sensitive_to_block_boundaries(rng):
    """The oracles disagree when the block size differs: the comparison can fail."""
    q, k, v, cu = random_qkv(rng, [130], 1, 16)
    out = ref.forward(q, k, v, cu, block_size=64)
    assert not np.allclose(out, ref.dense_reference(q, k, v, cu, block_size=32))
    # Global (not per-sequence) alignment would also differ: shift by a 3-token sequence.
    q2, k2, v2, cu2 = random_qkv(rng, [3, 130], 1, 16)
    wrong_cu = np.array([0, q2.shape[0]])
    assert not np.allclose(
        ref.forward(q2, k2, v2, cu2, block_size=64)[3:],
        ref.forward(q2, k2, v2, wrong_cu, block_size=64)[3:],
    )


def test_forward_single_token_blocks_return_v(rng):
    q, k, v, cu = random_qkv(rng, [4, 1, 3], 2, 8)
    np.testing.assert_allclose(ref.forward(q, k, v, cu, block_size=1), v, rtol=0, atol=1e-15)


def test_forward_zero_scale_averages_v_per_block(rng):
    """With scale 0 the softmax is uniform, so each row is the mean of v over its block."""
    q, k, v, cu = random_qkv(rng, [5, 0, 9], 3, 4)
    out = ref.forward(q, k, v, cu, block_size=4, softmax_scale=0.0)
    for start, n in [(0, 4), (4, 1), (5, 4), (9, 4), (13, 1)]:
        expected = v[start : start + n].mean(axis=0, keepdims=True)
        np.testing.assert_allclose(out[start : start + n], np.repeat(expected, n, 0), atol=1e-14)


def test_forward_hand_computed_two_tokens():
    """One block of two tokens, D=1: check against a hand-written softmax."""
    q = np.array([[[1.0]], [[2.0]]])
    k = np.array([[[0.5]], [[-1.0]]])
    v = np.array([[[3.0]], [[-4.0]]])
    out = ref.forward(q, k, v, [0, 2], block_size=2, softmax_scale=1.0)
    for i, qi in enumerate([1.0, 2.0]):
        w = np.exp([qi * 0.5, qi * -1.0])
        w /= w.sum()
        assert out[i, 0, 0] == pytest.approx(w[0] * 3.0 + w[1] * -4.0, rel=1e-14)


def test_forward_is_stable_for_large_logits(rng):
    q, k, v, cu = random_qkv(rng, [9], 1, 4)
    out = ref.forward(1e3 * q, k, v, cu, block_size=9)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, ref.dense_reference(1e3 * q, k, v, cu, block_size=9))


def test_forward_empty_batch():
    empty = np.zeros((0, 2, 8))
    assert ref.forward(empty, empty, empty, [0], block_size=4).shape == (0, 2, 8)
    assert ref.forward(empty, empty, empty, [0, 0, 0]).shape == (0, 2, 8)
    assert ref.dense_reference(empty, empty, empty, [0, 0]).shape == (0, 2, 8)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32])
def test_forward_accepts_other_dtypes(rng, dtype):
    q, k, v, cu = random_qkv(rng, [6, 3], 2, 8, scale=3.0)
    q, k, v = (x.astype(dtype) for x in (q, k, v))
    out = ref.forward(q, k, v, cu.astype(np.int64), block_size=4)
    assert out.dtype == np.float64
    expected = ref.forward(*(x.astype(np.float64) for x in (q, k, v)), cu, block_size=4)
    np.testing.assert_array_equal(out, expected)


def test_forward_accepts_nested_lists():
    q = [[[1.0, 0.0]], [[0.0, 1.0]], [[1.0, 1.0]]]
    out = ref.forward(q, q, q, [0, 2, 3], block_size=2)
    assert out.shape == (3, 1, 2)
    np.testing.assert_allclose(out[2], [[1.0, 1.0]])


# --------------------------------------------------------------------------------------------
# Backward
# --------------------------------------------------------------------------------------------

FD_LENGTHS = [5, 0, 9, 1, 4]  # T = 19 with block 4: full, partial and single-token blocks


@pytest.mark.parametrize("scale", [None, 0.7])
def test_backward_matches_finite_differences(rng, numeric_grad, scale):
    q, k, v, cu = random_qkv(rng, FD_LENGTHS, 2, 8)
    g = rng.standard_normal(q.shape)

    def loss():
        return float(np.sum(ref.forward(q, k, v, cu, block_size=4, softmax_scale=scale) * g))

    dq, dk, dv = ref.backward(q, k, v, g, cu, block_size=4, softmax_scale=scale)
    for name, analytic, x in (("dq", dq, q), ("dk", dk, k), ("dv", dv, v)):
        numeric = numeric_grad(loss, x)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8, err_msg=name)


def test_finite_difference_check_can_fail(rng, numeric_grad):
    """Gradients computed with the wrong block size are rejected by the same comparison."""
    q, k, v, cu = random_qkv(rng, [9], 1, 4)
    g = rng.standard_normal(q.shape)

    def loss():
        return float(np.sum(ref.forward(q, k, v, cu, block_size=4) * g))

    dq, _, _ = ref.backward(q, k, v, g, cu, block_size=3)
    assert not np.allclose(dq, numeric_grad(loss, q), rtol=1e-6, atol=1e-8)


def test_backward_is_linear_in_do(rng):
    q, k, v, cu = random_qkv(rng, [7, 12], 2, 8)
    do1, do2 = rng.standard_normal(q.shape), rng.standard_normal(q.shape)
    g1 = ref.backward(q, k, v, do1, cu, block_size=4)
    g2 = ref.backward(q, k, v, do2, cu, block_size=4)
    g12 = ref.backward(q, k, v, 2.0 * do1 - do2, cu, block_size=4)
    for a, b, c in zip(g1, g2, g12):
        np.testing.assert_allclose(c, 2.0 * a - b, rtol=1e-10, atol=1e-12)


def test_backward_single_token_blocks(rng):
    """A one-token block has P = [[1]]: dv = do and dq = dk = 0."""
    q, k, v, cu = random_qkv(rng, [3, 1], 2, 8)
    do = rng.standard_normal(q.shape)
    dq, dk, dv = ref.backward(q, k, v, do, cu, block_size=1)
    np.testing.assert_allclose(dv, do, atol=1e-15)
    np.testing.assert_allclose(dq, 0.0, atol=1e-15)
    np.testing.assert_allclose(dk, 0.0, atol=1e-15)


def test_backward_empty_batch():
    empty = np.zeros((0, 1, 4))
    grads = ref.backward(empty, empty, empty, empty, [0, 0], block_size=4)
    assert [g.shape for g in grads] == [(0, 1, 4)] * 3


# --------------------------------------------------------------------------------------------
# Torch interop (optional)
# --------------------------------------------------------------------------------------------


def test_torch_inputs_and_autograd(rng):
    torch = pytest.importorskip("torch")
    q, k, v, cu = random_qkv(rng, [5, 0, 9], 2, 8)
    do = rng.standard_normal(q.shape)
    tq, tk, tv = (torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (q, k, v))
    # Independent torch implementation with autograd, one block at a time.
    outs = []
    for start, n in ref.block_tiles(cu, 4):
        sl = slice(start, start + n)
        s = torch.einsum("ihd,jhd->hij", tq[sl], tk[sl]) / np.sqrt(8)
        outs.append(torch.einsum("hij,jhd->ihd", torch.softmax(s, -1), tv[sl]))
    out = torch.cat(outs)
    out.backward(torch.tensor(do))
    np.testing.assert_allclose(
        ref.forward(tq, tk, tv, torch.tensor(cu), block_size=4),
        out.detach().numpy(),
        rtol=1e-12,
        atol=1e-12,
    )
    grads = ref.backward(tq, tk, tv, torch.tensor(do), torch.tensor(cu), block_size=4)
    for g, t in zip(grads, (tq, tk, tv)):
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-10, atol=1e-12)
    # bf16 tensors are converted through float32.
    bf = tq.detach().to(torch.bfloat16)
    np.testing.assert_array_equal(
        ref.forward(bf, bf, bf, cu, block_size=4),
        ref.forward(*(bf.float().numpy(),) * 3, cu, block_size=4),
    )


class FakeTensor:
    """Duck-typed stand-in for a torch tensor (detach/float/cpu/dtype), so the conversion
    path is tested even where torch is not installed."""

    def __init__(self, array):
        self.array = np.asarray(array)
        self.dtype = f"torch.{self.array.dtype}"
        self.calls = []

    def detach(self):
        self.calls.append("detach")
        return self

    def float(self):
        self.calls.append("float")
        return FakeTensor(self.array.astype(np.float32))

    def cpu(self):
        self.calls.append("cpu")
        return self

    def __array__(self, dtype=None, copy=None):
        return self.array if dtype is None else self.array.astype(dtype)


def test_tensor_like_inputs_are_detached_and_converted(rng):
    q, k, v, cu = random_qkv(rng, [5, 3], 2, 8)
    fq = FakeTensor(q.astype(np.float16))
    fk, fv, fcu = FakeTensor(k), FakeTensor(v), FakeTensor(cu)
    out = ref.forward(fq, fk, fv, fcu, block_size=4)
    assert fq.calls == ["detach", "float"]  # low precision goes through float32 ...
    assert fk.calls == ["detach", "cpu"]  # ... float64 stays float64 ...
    assert fcu.calls == ["detach", "cpu"]  # ... and integer cu_seqlens stay integers.
    expected = ref.forward(q.astype(np.float16), k, v, cu, block_size=4)
    np.testing.assert_array_equal(out, expected)
