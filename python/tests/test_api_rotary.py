"""blockattn.block_attention's rotary plumbing, on the CPU (no GPU needed).

The argument checks of ``rotary=`` (api._check_rotary) run on CPU tensors: they
compare devices with q's, so q on the CPU stands for q on the GPU. The custom
ops run with the kernel launch replaced by a recorder, which checks which
kernel (KernelKey) and which tensors a launch would get, through autograd and
torch.compile.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("cuda.bindings")

import blockattn  # noqa: E402
from blockattn import api, reference  # noqa: E402

T, H, D = 10, 2, 64
CU = [0, 3, 3, 10]  # longest sequence: 7 tokens


def q_like(d=D, t=T):
    return torch.randn(t, H, d)


def tables(p=8, d=D, dtype=torch.float32):
    cos, sin = reference.rope_tables(p, d)
    return torch.tensor(cos, dtype=dtype), torch.tensor(sin, dtype=dtype)


def cu_values(cu=CU):
    return torch.tensor(cu, dtype=torch.int32)


def check(rotary, q=None, cu=CU):
    return api._check_rotary(rotary, q_like() if q is None else q, None if cu is None else cu_values(cu))


# --------------------------------------------------------------------------------------------
# The public class
# --------------------------------------------------------------------------------------------


def test_rotary_is_the_reference_class():
    assert blockattn.Rotary is reference.Rotary is api.Rotary
    cos, sin = tables()
    r = blockattn.Rotary(cos, sin)
    assert (r.interleaved, r.positions, r.rotate_v) == (False, None, False)
    assert r == r and r != blockattn.Rotary(cos, sin)  # identity, never elementwise
    hash(r)


def test_reference_accepts_the_same_object():
    """One Rotary with torch tables and positions serves the float64 reference too."""
    cos, sin = tables(16)
    q, k, v = (q_like() for _ in range(3))
    pos = torch.arange(T, dtype=torch.int32).flip(0)
    r = blockattn.Rotary(cos, sin, interleaved=True, positions=pos, rotate_v=True)
    got = reference.forward(q, k, v, np.array(CU), rotary=r)
    want = reference.dense_reference(q, k, v, np.array(CU), rotary=r)
    np.testing.assert_allclose(got, want, atol=1e-12)


# --------------------------------------------------------------------------------------------
# Valid arguments
# --------------------------------------------------------------------------------------------


def test_valid_default_positions():
    cos, sin = tables(7)  # exactly the longest sequence
    c, s, pos, interleaved, rotate_v = check(blockattn.Rotary(cos, sin))
    assert c is cos and s is sin and pos is None and interleaved is False and rotate_v is False


def test_valid_explicit_positions_and_flags():
    cos, sin = tables(4)  # shorter than the longest sequence: fine with explicit positions
    pos = torch.tensor([0, 1, 2, 3, 3, 2, 1, 0, 0, 3], dtype=torch.int32)
    c, s, p, interleaved, rotate_v = check(blockattn.Rotary(cos, sin, True, pos, True))
    assert p is pos and interleaved is True and rotate_v is True


def test_values_unchecked_without_host_copy():
    """check_inputs=False / capture / compile: no range checks (cu_values is None)."""
    cos, sin = tables(2)
    check(blockattn.Rotary(cos, sin), cu=None)
    pos = torch.full((T,), 99, dtype=torch.int32)
    check(blockattn.Rotary(cos, sin, positions=pos), cu=None)


def test_non_contiguous_tables_and_positions_are_copied():
    cos, sin = tables(8, 2 * D)
    cos, sin = cos[:, ::2], sin[:, :D // 2].t().contiguous().t()  # strided views [8, D/2]
    assert not cos.is_contiguous() and not sin.is_contiguous()
    pos = torch.zeros(2 * T, dtype=torch.int32)[::2]
    c, s, p, _, _ = check(blockattn.Rotary(cos, sin, positions=pos))
    assert c.is_contiguous() and s.is_contiguous() and p.is_contiguous()
    assert torch.equal(c, cos) and torch.equal(s, sin) and torch.equal(p, pos)


def test_misaligned_table_is_copied():
    cos, sin = tables()
    flat = torch.zeros(cos.numel() + 1)
    shifted = flat[1:].view_as(cos)  # contiguous, address 4 bytes past 16-byte alignment
    shifted.copy_(cos)
    c, _, _, _, _ = check(blockattn.Rotary(shifted, sin))
    assert c.data_ptr() % 16 == 0 and torch.equal(c, cos)


def test_empty_batch():
    cos, sin = tables(1)
    check(blockattn.Rotary(cos, sin), q=q_like(t=0), cu=[0])
    check(blockattn.Rotary(cos, sin, positions=torch.zeros(0, dtype=torch.int32)), q=q_like(t=0), cu=[0, 0])


# --------------------------------------------------------------------------------------------
# Invalid arguments: a ValueError naming the argument
# --------------------------------------------------------------------------------------------


def bad_cases():
    cos, sin = tables()
    pos = torch.zeros(T, dtype=torch.int32)
    R = blockattn.Rotary
    return [
        ((cos, sin), r"^rotary: expected a blockattn.Rotary or None, got tuple"),
        (R(cos.numpy(), sin), r"^rotary.cos: expected a torch.Tensor, got ndarray"),
        (R(cos, sin.double()), r"^rotary.sin: expected dtype torch.float32, got torch.float64"),
        (R(cos.bfloat16(), sin), r"^rotary.cos: expected dtype torch.float32"),
        (R(cos[:, :16], sin), r"^rotary.cos: expected a \[max_position, head_dim/2\] = \[P, 32\] table"),
        (R(cos, sin[None]), r"^rotary.sin: expected a \[max_position, head_dim/2\]"),
        (R(cos[:, 0], sin), r"^rotary.cos: expected a \[max_position"),
        (R(cos[:0], sin[:0]), r"^rotary.cos: the table has no rows"),
        (R(torch.empty(2**27, 32, device="meta"), sin), r"^rotary.cos: 4294967296 elements; the kernels"),
        (R(cos, sin[:7]), r"^rotary.sin: shape \(7, 32\) differs from rotary.cos's \(8, 32\)"),
        (R(cos, sin.to("meta")), r"^rotary.sin: on meta, but q is on cpu"),
        (R(cos, sin, interleaved=1), r"^rotary.interleaved: expected a bool, got int"),
        (R(cos, sin, rotate_v="yes"), r"^rotary.rotate_v: expected a bool, got str"),
        (R(cos, sin, positions=pos.numpy()), r"^rotary.positions: expected a torch.Tensor or None, got ndarray"),
        (R(cos, sin, positions=pos.long()), r"^rotary.positions: expected dtype torch.int32, got torch.int64"),
        (R(cos, sin, positions=pos[:-1]), r"^rotary.positions: expected a 1-D tensor of one position per token \[10\]"),
        (R(cos, sin, positions=pos[None]), r"^rotary.positions: expected a 1-D tensor"),
        (R(cos, sin, positions=pos.to("meta")), r"^rotary.positions: on meta, but q is on cpu"),
        (R(cos, sin, positions=pos + 8), r"^rotary.positions: must lie in \[0, 8\) .* got values from 8 to 8"),
        (R(cos, sin, positions=pos - 1), r"^rotary.positions: must lie in \[0, 8\) .* from -1 to -1"),
        (R(cos[:6], sin[:6]), r"^rotary: the longest sequence has 7 tokens, .* reach 6, but the cos/sin "
                              r"tables have only 6 rows"),
    ]


@pytest.mark.parametrize("case", range(len(bad_cases())))
def test_bad_rotary(case):
    rotary, msg = bad_cases()[case]
    with pytest.raises(ValueError, match=msg):
        check(rotary)


def test_tables_that_require_grad():
    cos, sin = tables()
    cos.requires_grad_(True)
    with pytest.raises(ValueError, match=r"^rotary.cos: requires grad, .* pass rotary.cos.detach\(\)"):
        check(blockattn.Rotary(cos, sin))
    with torch.no_grad():
        check(blockattn.Rotary(cos, sin))


@pytest.mark.parametrize("d", [48, 80])
def test_head_dim_rule(d):
    """Odd multiples of 16 pass the rotary rule (the kernels then support 32, 64, 96 and 128 only)."""
    cos, sin = tables(8, d)
    check(blockattn.Rotary(cos, sin), q=q_like(d))


def test_block_attention_checks_q_before_rotary():
    cos, sin = tables()
    q = q_like()
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
        blockattn.block_attention(q, q, q, cu_values(), rotary=blockattn.Rotary(cos, sin))


# --------------------------------------------------------------------------------------------
# The custom ops with a recording launcher
# --------------------------------------------------------------------------------------------


@pytest.fixture
def launches(monkeypatch):
    """Replaces the kernel launch: records (kind, tensors, rotary options) and writes
    deterministic outputs (o = v; dq = dk = dv = dO)."""
    calls = []

    def fake_launch(kind, like, block_size, tensors, softmax_scale, rotary="none", positions=False,
                    rotate_v=False):
        key = blockattn._kernels.KernelKey(kind, like.shape[2], block_size, api._DTYPE_NAMES[like.dtype],
                                           "sm_90a", rotary, positions, rotate_v)
        calls.append(dict(kind=kind, key=key, tensors=dict(tensors), scale=softmax_scale))
        if kind == "forward":
            tensors["o"].copy_(tensors["v"])
        else:
            for name in ("dq", "dk", "dv"):
                tensors[name].copy_(tensors["do"])

    monkeypatch.setattr(api, "_launch", fake_launch)
    return calls


def op_inputs(dtype=torch.bfloat16, positions=False):
    q, k, v = (torch.randn(T, H, D).to(dtype).requires_grad_(True) for _ in range(3))
    cos, sin = tables()
    pos = torch.arange(T, dtype=torch.int32) % 8 if positions else None
    return q, k, v, cu_values(), cos, sin, pos


def test_plain_op_launches_plain_kernels(launches):
    q, k, v, cu, _, _, _ = op_inputs()
    o = api._block_attention_op(q, k, v, cu, 64, 0.125)
    o.backward(torch.ones_like(o))
    assert [c["key"].name for c in launches] == [
        "blockattn_forward_d64_b64_bf16", "blockattn_backward_d64_b64_bf16"]
    for c in launches:
        assert not {"cos", "sin", "positions"} & set(c["tensors"])


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("positions", [False, True])
@pytest.mark.parametrize("rotate_v", [False, True])
def test_rotary_op_forward_and_backward(launches, interleaved, positions, rotate_v):
    q, k, v, cu, cos, sin, pos = op_inputs(positions=positions)
    o = api._block_attention_op(q, k, v, cu, 64, 0.125, cos, sin, pos, interleaved, rotate_v)
    torch.testing.assert_close(o, v.detach())
    do = torch.randn_like(o)
    o.backward(do)
    fwd, bwd = launches
    mode = "interleaved" if interleaved else "half_split"
    suffix = f"_{mode}" + ("_pos" if positions else "") + ("_rv" if rotate_v else "")
    assert fwd["key"].name == "blockattn_forward_d64_b64_bf16" + suffix
    assert bwd["key"].name == "blockattn_backward_d64_b64_bf16" + suffix
    for c in (fwd, bwd):
        assert c["tensors"]["cos"] is cos and c["tensors"]["sin"] is sin
        assert (c["tensors"].get("positions") is pos) if positions else "positions" not in c["tensors"]
        assert c["scale"] == 0.125
    assert torch.equal(bwd["tensors"]["q"], q.detach()) and torch.equal(bwd["tensors"]["do"], do)
    for t in (q, k, v):
        torch.testing.assert_close(t.grad, do)


def test_rotary_through_block_attention_out_path(launches, monkeypatch):
    """block_attention(..., rotary=, out=) reaches the forward launch with the checked tensors."""
    monkeypatch.setattr(api, "_check_activation", lambda *a: None)  # q, k, v on the CPU
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)  # no driver here
    q, k, v, cu, cos, sin, _ = op_inputs()
    q, k, v = (t.detach() for t in (q, k, v))
    out = torch.empty_like(q)
    cos_strided = torch.cat([cos, cos], 1)[:, : D // 2]
    r = blockattn.Rotary(cos_strided, sin, interleaved=True)
    assert blockattn.block_attention(q, k, v, cu, out=out, rotary=r) is out
    (c,) = launches
    assert c["key"].name == "blockattn_forward_d64_b64_bf16_interleaved"
    assert c["tensors"]["cos"].is_contiguous() and torch.equal(c["tensors"]["cos"], cos)
    with pytest.raises(ValueError, match=r"^rotary: the longest sequence has 7 tokens"):
        blockattn.block_attention(q, k, v, cu, rotary=blockattn.Rotary(cos[:5], sin[:5]))
    # check_inputs=False skips the value checks (the kernel clamps positions).
    blockattn.block_attention(q, k, v, cu, out=out, check_inputs=False,
                              rotary=blockattn.Rotary(cos[:5], sin[:5]))


def test_autograd_saves_rotary_tensors(launches):
    q, k, v, cu, cos, sin, pos = op_inputs(positions=True)
    saved = []

    def pack(t):
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        o = api._block_attention_op(q, k, v, cu, 64, 0.125, cos, sin, pos, False, False)
    assert len(saved) == 7
    assert all(any(s is t for t in (q, k, v, cu, cos, sin, pos)) for s in saved)
    o.sum().backward()


def test_no_gradient_for_tables(launches):
    q, k, v, cu, cos, sin, _ = op_inputs()
    cos.requires_grad_(True)  # the op itself accepts it; block_attention rejects it
    o = api._block_attention_op(q, k, v, cu, 64, 0.125, cos, sin, None, False, False)
    o.sum().backward()
    assert cos.grad is None and q.grad is not None


def test_torch_compile_fullgraph(launches):
    q, k, v, cu, cos, sin, pos = op_inputs(positions=True)
    do = torch.randn(T, H, D).to(torch.bfloat16)

    def loss(q, k, v):
        o = api._block_attention_op(q, k, v, cu, 64, 0.125, cos, sin, pos, True, True)
        return (o.float() * do.float()).sum()

    compiled = torch.compile(loss, fullgraph=True, backend="aot_eager")
    compiled(q, k, v).backward()
    names = [c["key"].name for c in launches]
    assert names == ["blockattn_forward_d64_b64_bf16_interleaved_pos_rv",
                     "blockattn_backward_d64_b64_bf16_interleaved_pos_rv"]
    torch.testing.assert_close(q.grad, do)


def test_opcheck(launches):
    q, k, v, cu, cos, sin, pos = op_inputs(positions=True)
    for args in [(q, k, v, cu, 64, 0.125), (q, k, v, cu, 64, 0.125, cos, sin, pos, True, True),
                 (q, k, v, cu, 64, 0.125, cos, sin, None, False, False)]:
        torch.library.opcheck(torch.ops.blockattn.block_attention.default, args)


def test_torch_compile_block_attention_builds_rotary_inside(launches, monkeypatch):
    """block_attention itself under torch.compile(fullgraph=True): the Rotary, its tables and
    positions made inside the compiled function; the checks trace without a graph break."""
    monkeypatch.setattr(api, "_check_activation", lambda *a: None)  # q, k, v on the CPU
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    q, k, v, cu, _, _, _ = op_inputs()
    inv_freq = 10000.0 ** (-torch.arange(0, D, 2, dtype=torch.float32) / D)

    def attn(q, k, v, positions):
        angles = torch.arange(64, dtype=torch.float32)[:, None] * inv_freq[None, :]
        rotary = blockattn.Rotary(angles.cos(), angles.sin(), positions=positions, rotate_v=True)
        return blockattn.block_attention(q, k, v, cu, rotary=rotary)

    positions = torch.arange(T, dtype=torch.int32)
    o = torch.compile(attn, fullgraph=True, backend="aot_eager")(q, k, v, positions)
    o.sum().backward()
    assert [c["key"].name for c in launches] == [
        "blockattn_forward_d64_b64_bf16_half_split_pos_rv", "blockattn_backward_d64_b64_bf16_half_split_pos_rv"]
    assert torch.equal(launches[0]["tensors"]["positions"], positions)


def test_driver_builds_rotary_arguments():
    """The launch arguments of the manifest's rotary parameters (the contract of the lowering):
    table pointers with their i32 row count and i64 row stride, positions pointer and size."""
    import ctypes

    from blockattn import _driver

    cos, sin = tables(300, 128)
    positions = torch.arange(T, dtype=torch.int32)
    tensors = {"cos": cos, "sin": sin, "positions": positions}
    specs = []
    for name in ("cos", "sin"):
        specs += [
            {"name": name, "tensor": name, "kind": "pointer", "value": "base", "dtype": "f32"},
            {"name": f"{name}_size0", "tensor": name, "kind": "i32", "value": "size", "dim": 0},
            {"name": f"{name}_stride0", "tensor": name, "kind": "i64", "value": "stride", "dim": 0},
        ]
    specs += [
        {"name": "positions", "tensor": "positions", "kind": "pointer", "value": "base", "dtype": "i32"},
        {"name": "positions_size0", "tensor": "positions", "kind": "i32", "value": "size", "dim": 0},
    ]
    args = [_driver.LoadedKernel._argument(None, s, tensors, {}) for s in specs]
    want = [(ctypes.c_uint64, cos.data_ptr()), (ctypes.c_int32, 300), (ctypes.c_int64, 64),
            (ctypes.c_uint64, sin.data_ptr()), (ctypes.c_int32, 300), (ctypes.c_int64, 64),
            (ctypes.c_uint64, positions.data_ptr()), (ctypes.c_int32, T)]
    assert [(type(a), a.value) for a in args] == want
