"""Every ValueError path of blockattn.reference, with the offending argument named."""

import numpy as np
import pytest

from blockattn import reference as ref

T, H, D = 6, 2, 4
CU = np.array([0, 2, 6], dtype=np.int32)


@pytest.fixture
def qkv(rng):
    return tuple(rng.standard_normal((T, H, D)) for _ in range(3))


@pytest.fixture
def tables():
    return ref.rope_tables(8, D)


# --------------------------------------------------------------------------------------------
# q, k, v, do
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [ref.forward, ref.dense_reference])
def test_qkv_validation(qkv, fn):
    q, k, v = qkv
    with pytest.raises(ValueError, match=r"q must be 3-D"):
        fn(q[0], k, v, CU)
    with pytest.raises(ValueError, match=r"k must be 3-D"):
        fn(q, k.reshape(T, H * D), v, CU)
    with pytest.raises(ValueError, match=r"v must be 3-D"):
        fn(q, k, v[None], CU)
    # k and v may have fewer heads than q (grouped-query attention), but not each other's
    with pytest.raises(ValueError, match=r"v shape .* does not match k shape"):
        fn(q, k[:, :1], v, CU)
    with pytest.raises(ValueError, match=r"v shape .* does not match k shape"):
        fn(q, k, v[..., :2], CU)
    with pytest.raises(ValueError, match=r"k shape .* does not match q .* head dim"):
        fn(q, k[..., :2], v[..., :2], CU)
    with pytest.raises(ValueError, match=r"k shape .* does not match q"):
        fn(q, k[:-1], v, CU)
    with pytest.raises(ValueError, match=r"q must have a positive head dim"):
        fn(q[..., :0], k[..., :0], v[..., :0], CU)
    with pytest.raises(ValueError, match=r"q must have a real numeric dtype"):
        fn(q.astype(complex), k, v, CU)
    with pytest.raises(ValueError, match=r"v must have a real numeric dtype"):
        fn(q, k, np.full(v.shape, "x"), CU)
    with pytest.raises(ValueError, match=r"k must be an array"):
        fn(q, None, v, CU)


def test_do_validation(qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match=r"do shape .* does not match q"):
        ref.backward(q, k, v, q[:, :1], CU)
    with pytest.raises(ValueError, match=r"do must be an array"):
        ref.backward(q, k, v, None, CU)
    with pytest.raises(ValueError, match=r"do must have a real numeric dtype"):
        ref.backward(q, k, v, q.astype(complex), CU)


# --------------------------------------------------------------------------------------------
# cu_seqlens, block_size, softmax_scale
# --------------------------------------------------------------------------------------------

BAD_CU = [
    (np.array([[0, 2, 6]]), r"cu_seqlens must be 1-D"),
    (np.array([], dtype=np.int32), r"cu_seqlens must have at least one entry"),
    (np.array([1, 2, 6]), r"cu_seqlens\[0\] must be 0"),
    (np.array([0, 4, 2, 6]), r"cu_seqlens must be non-decreasing"),
    (np.array([0, 2, 5]), r"cu_seqlens\[-1\] must equal the number of tokens T=6"),
    (np.array([0, 2, 7]), r"cu_seqlens\[-1\] must equal the number of tokens T=6"),
    (np.array([0.0, 2.0, 6.0]), r"cu_seqlens must have an integer dtype"),
    (None, r"cu_seqlens must be an integer array"),
]


@pytest.mark.parametrize("cu, msg", BAD_CU)
@pytest.mark.parametrize("fn", [ref.forward, ref.dense_reference])
def test_bad_cu_seqlens_forward(qkv, fn, cu, msg):
    with pytest.raises(ValueError, match=msg):
        fn(*qkv, cu)


@pytest.mark.parametrize("cu, msg", BAD_CU)
def test_bad_cu_seqlens_backward(qkv, cu, msg):
    with pytest.raises(ValueError, match=msg):
        ref.backward(*qkv, qkv[0], cu)


@pytest.mark.parametrize("cu, msg", [c for c in BAD_CU if "T=6" not in c[1]])
def test_bad_cu_seqlens_helpers(cu, msg):
    with pytest.raises(ValueError, match=msg):
        ref.block_tiles(cu, 4)
    with pytest.raises(ValueError, match=msg):
        ref.sequence_positions(cu)
    with pytest.raises(ValueError, match=msg):
        ref.block_mask(cu, 4)


@pytest.mark.parametrize("bs", [0, -3, 2.5, True, "4", None])
def test_bad_block_size(qkv, bs):
    with pytest.raises(ValueError, match=r"block_size"):
        ref.forward(*qkv, CU, block_size=bs)
    with pytest.raises(ValueError, match=r"block_size"):
        ref.backward(*qkv, qkv[0], CU, block_size=bs)
    with pytest.raises(ValueError, match=r"block_size"):
        ref.dense_reference(*qkv, CU, block_size=bs)
    with pytest.raises(ValueError, match=r"block_size"):
        ref.block_tiles(CU, bs)


def test_block_size_accepts_numpy_integer(qkv):
    assert ref.block_tiles(CU, np.int32(4)) == [(0, 2), (2, 4)]


@pytest.mark.parametrize(
    "scale, msg", [(float("nan"), "finite"), (np.inf, "finite"), ("x", "a real"), ("0.5", "a real")]
)
def test_bad_softmax_scale(qkv, scale, msg):
    with pytest.raises(ValueError, match=rf"softmax_scale must be {msg}"):
        ref.forward(*qkv, CU, softmax_scale=scale)
    with pytest.raises(ValueError, match=rf"softmax_scale must be {msg}"):
        ref.backward(*qkv, qkv[0], CU, softmax_scale=scale)


@pytest.mark.parametrize(
    "lengths, msg",
    [
        ([3, -1], r"lengths must be non-negative"),
        ([[1, 2]], r"lengths must be 1-D"),
        ([1.5], r"lengths must have an integer dtype"),
        ([2**31], r"overflows int32"),
    ],
)
def test_bad_lengths(lengths, msg):
    with pytest.raises(ValueError, match=msg):
        ref.make_cu_seqlens(lengths)


# --------------------------------------------------------------------------------------------
# Rotary
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [ref.rotate, ref.rotate_backward])
def test_rotate_validation(rng, tables, fn):
    cos, sin = tables
    x = rng.standard_normal((T, H, D))
    with pytest.raises(ValueError, match=r"x must be \[T, \.\.\., D\]"):
        fn(x[0, 0], cos, sin, positions=np.zeros(T, int))
    with pytest.raises(ValueError, match=r"even head dim D, got D=3"):
        fn(x[..., :3], cos, sin, cu_seqlens=CU)
    with pytest.raises(ValueError, match=r"cos table must have shape \[max_position, D/2=2\]"):
        fn(x, cos[:, :1], sin[:, :1], cu_seqlens=CU)
    with pytest.raises(ValueError, match=r"cos table must have shape"):
        fn(x, cos[:, 0], sin, cu_seqlens=CU)
    with pytest.raises(ValueError, match=r"sin table must have shape"):
        fn(x, cos, sin[None], cu_seqlens=CU)
    with pytest.raises(ValueError, match=r"cos and sin tables differ in shape"):
        fn(x, cos, sin[:4], cu_seqlens=CU)
    with pytest.raises(ValueError, match=r"sin must be an array"):
        fn(x, cos, None, cu_seqlens=CU)
    with pytest.raises(ValueError, match=r"needs either positions or cu_seqlens"):
        fn(x, cos, sin)
    with pytest.raises(ValueError, match=r"positions reach 8 but the cos/sin tables have only 8"):
        fn(x, cos, sin, positions=[0, 1, 2, 3, 4, 8])
    with pytest.raises(ValueError, match=r"positions must be non-negative"):
        fn(x, cos, sin, positions=[0, 1, 2, 3, 4, -1])
    with pytest.raises(ValueError, match=r"positions must have shape \[T=6\]"):
        fn(x, cos, sin, positions=[0, 1, 2])
    with pytest.raises(ValueError, match=r"positions must have shape \[T=6\]"):
        fn(x, cos, sin, positions=np.zeros((T, 1), int))
    with pytest.raises(ValueError, match=r"positions must have an integer dtype"):
        fn(x, cos, sin, positions=np.zeros(T))
    with pytest.raises(
        ValueError, match=r"positions \(derived from cu_seqlens\) reach 5 .* 3 rows"
    ):
        fn(x, cos[:3], sin[:3], cu_seqlens=[0, T])
    with pytest.raises(ValueError, match=r"cu_seqlens\[-1\] must equal the number of tokens"):
        fn(x, cos, sin, cu_seqlens=[0, 2, 5])


def test_attention_rotary_validation(qkv, tables):
    q, k, v = qkv
    cos, sin = tables
    for fn in (ref.forward, ref.dense_reference):
        with pytest.raises(ValueError, match=r"rotary must be a Rotary instance"):
            fn(q, k, v, CU, rotary=(cos, sin))
        with pytest.raises(ValueError, match=r"even head dim D, got D=3"):
            fn(q[..., :3], k[..., :3], v[..., :3], CU, rotary=ref.Rotary(cos, sin))
        with pytest.raises(ValueError, match=r"positions \(derived from cu_seqlens\) reach 3"):
            fn(q, k, v, CU, rotary=ref.Rotary(cos[:3], sin[:3]))
        with pytest.raises(ValueError, match=r"positions reach 9"):
            fn(q, k, v, CU, rotary=ref.Rotary(cos, sin, positions=[0, 1, 2, 3, 4, 9]))
    with pytest.raises(ValueError, match=r"cos table must have shape"):
        ref.backward(q, k, v, q, CU, rotary=ref.Rotary(cos[:, :1], sin[:, :1]))


@pytest.mark.parametrize(
    "args, msg", [((4, 7), r"dim must be a positive even"), ((-1, 4), r"max_position")]
)
def test_bad_rope_tables(args, msg):
    with pytest.raises(ValueError, match=msg):
        ref.rope_tables(*args)


# Issue 15: inputs that raised NotImplementedError, OverflowError or TypeError from deep in
# NumPy now raise ValueError naming the argument.


class FakeMetaTensor:
    """Duck-typed torch meta tensor: a shape and dtype, no data (``cpu()`` and ``__array__``
    raise NotImplementedError as torch does), so the check runs where torch is absent."""

    is_meta = True
    device = "meta"
    dtype = "torch.bfloat16"

    def detach(self):
        return self

    def float(self):
        return self

    def cpu(self):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")


@pytest.mark.parametrize("which", ["q", "k", "v"])
def test_meta_tensor_inputs(qkv, which):
    args = dict(zip("qkv", qkv))
    args[which] = FakeMetaTensor()
    with pytest.raises(ValueError, match=rf"^{which} is a meta tensor"):
        ref.forward(args["q"], args["k"], args["v"], CU)


def test_meta_tensor_cu_seqlens_and_do(qkv):
    with pytest.raises(ValueError, match=r"^cu_seqlens is a meta tensor"):
        ref.forward(*qkv, FakeMetaTensor())
    with pytest.raises(ValueError, match=r"^do is a meta tensor"):
        ref.backward(*qkv, FakeMetaTensor(), CU)


def test_meta_tensor_rotary_tables(qkv):
    cos, sin = ref.rope_tables(8, qkv[0].shape[-1])
    with pytest.raises(ValueError, match=r"^cos is a meta tensor"):
        ref.forward(*qkv, CU, rotary=ref.Rotary(FakeMetaTensor(), sin))


@pytest.mark.parametrize("x, msg", [([[1.0, 2.0], [3.0]], r"^q cannot be converted"),
                                    ([[2**70]], r"^q must have a real numeric dtype")])
def test_unconvertible_inputs(qkv, x, msg):
    with pytest.raises(ValueError, match=msg):
        ref.forward(x, *qkv[1:], CU)


@pytest.mark.parametrize("bs", [2**70, 2**63, np.uint64(2**63)])
def test_block_size_beyond_int64(qkv, bs):
    for call in (
        lambda: ref.forward(*qkv, CU, block_size=bs),
        lambda: ref.backward(*qkv, qkv[0], CU, block_size=bs),
        lambda: ref.dense_reference(*qkv, CU, block_size=bs),
        lambda: ref.block_mask(CU, bs),
        lambda: ref.block_tiles(CU, bs),
    ):
        with pytest.raises(ValueError, match=r"block_size must be at most 2\*\*63 - 1"):
            call()


def test_block_size_int64_max_is_one_block_per_sequence(qkv):
    big = 2**63 - 1
    assert ref.block_tiles(CU, big) == ref.block_tiles(CU, 64)
    np.testing.assert_allclose(
        ref.dense_reference(*qkv, CU, block_size=big), ref.forward(*qkv, CU, block_size=big)
    )


@pytest.mark.parametrize(
    "args, kwargs, msg",
    [
        (("8", 4), {}, r"^max_position must be a non-negative integer, got '8'"),
        ((8, "4"), {}, r"^dim must be a positive even integer, got '4'"),
        ((8.0, 4), {}, r"^max_position must be a non-negative integer"),
        ((8, None), {}, r"^dim must be a positive even integer, got None"),
        ((True, 4), {}, r"^max_position must be a non-negative integer"),
        ((2**70, 4), {}, r"^max_position must be at most 2\*\*63 - 1"),
        ((8, 4), {"base": "x"}, r"^base must be a positive real number, got 'x'"),
        ((8, 4), {"base": None}, r"^base must be a positive real number, got None"),
        ((8, 4), {"base": 0.0}, r"^base must be a positive finite real number"),
        ((8, 4), {"base": float("inf")}, r"^base must be a positive finite real number"),
        ((8, 4), {"base": 10**400}, r"^base must be a positive real number"),
    ],
)
def test_rope_tables_non_numeric_args(args, kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        ref.rope_tables(*args, **kwargs)


def test_rope_tables_accepts_numpy_scalars():
    cos, sin = ref.rope_tables(np.int64(4), np.int32(4), base=np.float32(10000.0))
    expected = ref.rope_tables(4, 4)
    np.testing.assert_array_equal(cos, expected[0])
    np.testing.assert_array_equal(sin, expected[1])
