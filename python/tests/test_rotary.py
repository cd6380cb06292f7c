"""Tests of the rotary (RoPE) helpers and of attention with fused rotary."""

import numpy as np
import pytest

from blockattn import reference as ref

LAYOUTS = [False, True]  # interleaved?


def random_tables(rng, max_position, dim, unit=True):
    """cos/sin tables ``[max_position, dim/2]``: unit rotations or arbitrary (non-unit) values."""
    if unit:
        angles = rng.uniform(-np.pi, np.pi, size=(max_position, dim // 2))
        return np.cos(angles), np.sin(angles)
    return (rng.standard_normal((max_position, dim // 2)) for _ in range(2))


def half_split_permutation(dim):
    """Index map ``perm`` with ``x_half = x_inter[perm]``: evens first, then odds."""
    return np.concatenate([np.arange(0, dim, 2), np.arange(1, dim, 2)])


# --------------------------------------------------------------------------------------------
# rotate / rotate_backward
# --------------------------------------------------------------------------------------------


def test_rope_tables_values():
    cos, sin = ref.rope_tables(5, 8, base=100.0)
    assert cos.shape == sin.shape == (5, 4)
    angles = np.arange(5)[:, None] * 100.0 ** (-np.arange(0, 8, 2) / 8)[None, :]
    np.testing.assert_allclose(cos, np.cos(angles))
    np.testing.assert_allclose(sin, np.sin(angles))


def test_rotate_hand_computed_half_split_and_interleaved():
    theta0, theta1 = 0.3, -1.1
    cos = np.array([[1.0, 1.0], [np.cos(theta0), np.cos(theta1)]])
    sin = np.array([[0.0, 0.0], [np.sin(theta0), np.sin(theta1)]])
    x = np.array([[1.0, 2.0, 3.0, 4.0]])  # one token, D=4, at position 1

    def rot(a, b, t):
        return a * np.cos(t) - b * np.sin(t), b * np.cos(t) + a * np.sin(t)

    half = ref.rotate(x, cos, sin, positions=[1])
    (a0, b0), (a1, b1) = rot(1.0, 3.0, theta0), rot(2.0, 4.0, theta1)
    np.testing.assert_allclose(half, [[a0, a1, b0, b1]], rtol=1e-15)

    inter = ref.rotate(x, cos, sin, positions=[1], interleaved=True)
    (a0, b0), (a1, b1) = rot(1.0, 2.0, theta0), rot(3.0, 4.0, theta1)
    np.testing.assert_allclose(inter, [[a0, b0, a1, b1]], rtol=1e-15)


@pytest.mark.parametrize("interleaved", LAYOUTS)
def test_rotate_position_zero_is_identity(rng, interleaved):
    cos, sin = ref.rope_tables(8, 16)
    x = rng.standard_normal((6, 3, 16))
    out = ref.rotate(x, cos, sin, interleaved=interleaved, positions=np.zeros(6, dtype=int))
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("interleaved", LAYOUTS)
def test_rotate_preserves_norm_and_inverts(rng, interleaved):
    cu = ref.make_cu_seqlens([7, 0, 12, 1])
    cos, sin = random_tables(rng, 16, 16)
    x = rng.standard_normal((20, 3, 16))
    kw = dict(interleaved=interleaved, cu_seqlens=cu)
    y = ref.rotate(x, cos, sin, **kw)
    assert not np.allclose(y, x)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1))
    np.testing.assert_allclose(ref.rotate_backward(y, cos, sin, **kw), x, atol=1e-13)


@pytest.mark.parametrize("interleaved", LAYOUTS)
@pytest.mark.parametrize("shape", [(11, 8), (11, 2, 8)])
def test_rotate_backward_is_adjoint(rng, interleaved, shape):
    """<rotate(x), y> == <x, rotate_backward(y)>, also for non-unit tables."""
    cos, sin = random_tables(rng, 11, 8, unit=False)
    pos = rng.permutation(11)
    x, y = rng.standard_normal(shape), rng.standard_normal(shape)
    kw = dict(interleaved=interleaved, positions=pos)
    lhs = np.vdot(ref.rotate(x, cos, sin, **kw), y)
    rhs = np.vdot(x, ref.rotate_backward(y, cos, sin, **kw))
    assert lhs == pytest.approx(rhs, rel=1e-12)
    # rotate itself is not self-adjoint: the check above can fail.
    assert lhs != pytest.approx(np.vdot(x, ref.rotate(y, cos, sin, **kw)), rel=1e-6)


@pytest.mark.parametrize("backward", [False, True])
def test_interleaved_is_permuted_half_split(rng, backward):
    fn = ref.rotate_backward if backward else ref.rotate
    cu = ref.make_cu_seqlens([4, 9])
    cos, sin = random_tables(rng, 9, 16, unit=False)
    x = rng.standard_normal((13, 2, 16))
    perm = half_split_permutation(16)
    inv = np.argsort(perm)
    inter = fn(x, cos, sin, interleaved=True, cu_seqlens=cu)
    half = fn(x[..., perm], cos, sin, interleaved=False, cu_seqlens=cu)
    np.testing.assert_allclose(inter, half[..., inv], rtol=1e-14, atol=1e-14)
    assert not np.allclose(inter, fn(x, cos, sin, interleaved=False, cu_seqlens=cu))


@pytest.mark.parametrize("interleaved", LAYOUTS)
def test_positions_default_to_index_in_sequence(rng, interleaved):
    cu = ref.make_cu_seqlens([3, 0, 5, 2])
    cos, sin = random_tables(rng, 5, 8)
    x = rng.standard_normal((10, 2, 8))
    implicit = ref.rotate(x, cos, sin, interleaved=interleaved, cu_seqlens=cu)
    explicit = ref.rotate(
        x, cos, sin, interleaved=interleaved, positions=[0, 1, 2, 0, 1, 2, 3, 4, 0, 1]
    )
    np.testing.assert_array_equal(implicit, explicit)
    # Explicit positions win over cu_seqlens.
    shifted = ref.rotate(
        x, cos, sin, interleaved=interleaved, positions=np.zeros(10, int), cu_seqlens=cu
    )
    np.testing.assert_array_equal(
        shifted,
        ref.rotate(x, cos[:1], sin[:1], positions=np.zeros(10, int), interleaved=interleaved),
    )


def test_explicit_positions_index_the_table(rng):
    """Positions p + 3 with a table equal positions p with the table shifted by 3 rows."""
    cu = ref.make_cu_seqlens([4, 6])
    cos, sin = random_tables(rng, 12, 8)
    x = rng.standard_normal((10, 8))
    pos = ref.sequence_positions(cu)
    np.testing.assert_array_equal(
        ref.rotate(x, cos, sin, positions=pos + 3),
        ref.rotate(x, cos[3:], sin[3:], cu_seqlens=cu),
    )


def test_rotate_uses_same_angle_for_all_heads(rng):
    cos, sin = random_tables(rng, 6, 8)
    x = rng.standard_normal((6, 3, 8))
    out = ref.rotate(x, cos, sin, cu_seqlens=[0, 6])
    for h in range(3):
        np.testing.assert_array_equal(out[:, h], ref.rotate(x[:, h], cos, sin, cu_seqlens=[0, 6]))


def test_rotate_accepts_fp32_tables(rng):
    cos, sin = (t.astype(np.float32) for t in random_tables(rng, 6, 8))
    x = rng.standard_normal((6, 8))
    out = ref.rotate(x, cos, sin, cu_seqlens=[0, 6])
    assert out.dtype == np.float64
    expected = ref.rotate(x, cos.astype(np.float64), sin.astype(np.float64), cu_seqlens=[0, 6])
    np.testing.assert_array_equal(out, expected)


# --------------------------------------------------------------------------------------------
# Attention with rotary
# --------------------------------------------------------------------------------------------


def rotary_problem(rng, lengths, heads, dim, *, unit=True, interleaved=False, rotate_v=False):
    """Random q, k, v, cu_seqlens and a Rotary covering the longest sequence."""
    cu = ref.make_cu_seqlens(lengths)
    total = int(cu[-1])
    q, k, v = (rng.standard_normal((total, heads, dim)) for _ in range(3))
    cos, sin = random_tables(rng, max(lengths) + 1, dim, unit=unit)
    return q, k, v, cu, ref.Rotary(cos, sin, interleaved=interleaved, rotate_v=rotate_v)


@pytest.mark.parametrize("interleaved", LAYOUTS)
@pytest.mark.parametrize("rotate_v", [False, True])
def test_forward_rotary_matches_dense(rng, interleaved, rotate_v):
    q, k, v, cu, rot = rotary_problem(
        rng, [0, 1, 63, 65, 30], 3, 16, interleaved=interleaved, rotate_v=rotate_v
    )
    out = ref.forward(q, k, v, cu, block_size=16, rotary=rot)
    np.testing.assert_allclose(
        out, ref.dense_reference(q, k, v, cu, block_size=16, rotary=rot), rtol=1e-12, atol=1e-12
    )
    # Same as rotating by hand and running the plain forward.
    kw = dict(interleaved=interleaved, cu_seqlens=cu)
    rv = ref.rotate(v, rot.cos, rot.sin, **kw) if rotate_v else v
    manual = ref.forward(
        ref.rotate(q, rot.cos, rot.sin, **kw),
        ref.rotate(k, rot.cos, rot.sin, **kw),
        rv,
        cu,
        block_size=16,
    )
    np.testing.assert_allclose(out, manual, rtol=1e-13, atol=1e-13)
    assert not np.allclose(out, ref.forward(q, k, v, cu, block_size=16))


def test_forward_rotary_explicit_positions_match_dense(rng):
    q, k, v, cu, rot = rotary_problem(rng, [9, 4], 2, 8, interleaved=True)
    pos = rng.integers(0, rot.cos.shape[0], size=q.shape[0])
    rot = ref.Rotary(rot.cos, rot.sin, interleaved=True, positions=pos)
    np.testing.assert_allclose(
        ref.forward(q, k, v, cu, block_size=4, rotary=rot),
        ref.dense_reference(q, k, v, cu, block_size=4, rotary=rot),
        rtol=1e-12,
        atol=1e-12,
    )


@pytest.mark.parametrize("interleaved", LAYOUTS)
def test_rope_scores_depend_only_on_relative_position(rng, interleaved):
    """With standard RoPE tables, shifting all positions by a constant leaves O unchanged."""
    cu = ref.make_cu_seqlens([6, 9])
    q, k, v = (rng.standard_normal((15, 2, 16)) for _ in range(3))
    cos, sin = ref.rope_tables(32, 16)
    pos = ref.sequence_positions(cu)
    out = [
        ref.forward(q, k, v, cu, block_size=4, rotary=ref.Rotary(cos, sin, interleaved, pos + s))
        for s in (0, 11)
    ]
    np.testing.assert_allclose(out[0], out[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("interleaved", LAYOUTS)
@pytest.mark.parametrize("rotate_v", [False, True])
def test_backward_rotary_matches_finite_differences(rng, numeric_grad, interleaved, rotate_v):
    """dq, dk, dv are gradients w.r.t. the UN-rotated inputs (non-unit tables on purpose)."""
    q, k, v, cu, rot = rotary_problem(
        rng, [5, 0, 7, 1], 2, 8, unit=False, interleaved=interleaved, rotate_v=rotate_v
    )
    g = rng.standard_normal(q.shape)

    def loss():
        return float(np.sum(ref.forward(q, k, v, cu, block_size=4, rotary=rot) * g))

    grads = ref.backward(q, k, v, g, cu, block_size=4, rotary=rot)
    for name, analytic, x in zip(("dq", "dk", "dv"), grads, (q, k, v)):
        numeric = numeric_grad(loss, x)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-7, err_msg=name)


def test_backward_rotary_differs_from_rotated_space_gradient(rng):
    """Forgetting the inverse rotation on dq gives a different answer (the test can fail)."""
    q, k, v, cu, rot = rotary_problem(rng, [8], 1, 8)
    g = rng.standard_normal(q.shape)
    dq, _, _ = ref.backward(q, k, v, g, cu, block_size=4, rotary=rot)
    kw = dict(cu_seqlens=cu)
    rq, rk = ref.rotate(q, rot.cos, rot.sin, **kw), ref.rotate(k, rot.cos, rot.sin, **kw)
    dq_rot, _, _ = ref.backward(rq, rk, v, g, cu, block_size=4)
    assert not np.allclose(dq, dq_rot)
    np.testing.assert_allclose(dq, ref.rotate_backward(dq_rot, rot.cos, rot.sin, **kw))


def test_rotary_torch_tables(rng):
    torch = pytest.importorskip("torch")
    q, k, v, cu, rot = rotary_problem(rng, [5, 3], 1, 8)
    trot = ref.Rotary(torch.tensor(rot.cos, dtype=torch.float32), torch.tensor(rot.sin))
    f32 = ref.Rotary(rot.cos.astype(np.float32), rot.sin)
    np.testing.assert_array_equal(
        ref.forward(q, k, v, cu, block_size=4, rotary=trot),
        ref.forward(q, k, v, cu, block_size=4, rotary=f32),
    )
