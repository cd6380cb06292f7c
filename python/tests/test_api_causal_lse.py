"""block_attention's causal= and return_lse= (issue 21), on the CPU with the kernel launch
replaced by the float64 reference.

What reaches the launches (the causal kernels, the log-sum-exp tensor, its gradient only when
it has one), that the autograd Function's gradients with the log-sum-exp are those of torch
autograd over a float64 torch reference (so the dlse term's sign and scale reach the kernel as
the kernel's contract states them), and the argument errors. The kernels' own numerics are
checked by test_emulator_causal_lse.py (emulated PTX) and python/tests/gpu.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("cuda.bindings")

import blockattn  # noqa: E402
from blockattn import api, reference  # noqa: E402

T, H, D = 10, 2, 64
CU = [0, 3, 3, 10]
SCALE = D ** -0.5


@pytest.fixture
def launches(monkeypatch):
    """The kernel launch replaced by the float64 reference (block size 64; k and v may have a
    G-th of q's heads), the way the kernels' contract states it: the forward writes o (and
    lse); the backward reads dlse."""
    calls = []

    def fake_launch(kind, like, block_size, tensors, softmax_scale, rotary="none", positions=False,
                    rotate_v=False, causal=False, lse=False, group=1):
        calls.append(dict(kind=kind, causal=causal, lse=lse, group=group, tensors=dict(tensors),
                          block_size=block_size))
        f = {n: t.detach().double().numpy() for n, t in tensors.items() if n in ("q", "k", "v", "do")}
        cu = tensors["cu_seqlens"].numpy()
        if kind == "forward":
            o, l = reference.forward(f["q"], f["k"], f["v"], cu, softmax_scale=softmax_scale, causal=causal,
                                     return_lse=True)
            tensors["o"].copy_(torch.from_numpy(o))
            if lse:
                tensors["lse"].copy_(torch.from_numpy(l))
        else:
            dlse = tensors["dlse"].numpy() if lse else None
            grads = reference.backward(f["q"], f["k"], f["v"], f["do"], cu, softmax_scale=softmax_scale,
                                       causal=causal, dlse=dlse)
            for name, g in zip(("dq", "dk", "dv"), grads):
                tensors[name].copy_(torch.from_numpy(g))

    monkeypatch.setattr(api, "_launch", fake_launch)
    monkeypatch.setattr(api, "_check_activation", lambda *a: None)
    return calls


def inputs(requires_grad=True, dtype=torch.float64):
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(T, H, D, generator=gen, dtype=dtype).requires_grad_(requires_grad) for _ in range(3))
    return q, k, v, torch.tensor(CU, dtype=torch.int32)


def torch_reference(q, k, v, causal):
    """Dense float64 block attention in torch (one block per sequence here: every
    sequence is shorter than 64), with its log-sum-exp [H, T]."""
    outs, lses = [], []
    for b in range(len(CU) - 1):
        lo, hi = CU[b], CU[b + 1]
        s = SCALE * torch.einsum("ihd,jhd->hij", q[lo:hi], k[lo:hi])
        if causal:
            n = hi - lo
            s = s.masked_fill(~torch.tril(torch.ones(n, n, dtype=torch.bool)), -torch.inf)
        outs.append(torch.einsum("hij,jhd->ihd", torch.softmax(s, -1), v[lo:hi]))
        lses.append(torch.logsumexp(s, -1))
    return torch.cat(outs), torch.cat(lses, dim=1)


@pytest.mark.parametrize("causal", [False, True])
def test_lse_and_its_gradient_match_torch_autograd(launches, causal):
    q, k, v, cu = inputs()
    o, lse = blockattn.block_attention(q, k, v, cu, causal=causal, return_lse=True)
    assert lse.shape == (H, T) and lse.dtype == torch.float32
    qr, kr, vr = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    o_ref, lse_ref = torch_reference(qr, kr, vr, causal)
    torch.testing.assert_close(o, o_ref)
    torch.testing.assert_close(lse.double(), lse_ref, rtol=1e-6, atol=1e-6)
    gen = torch.Generator().manual_seed(1)
    do, dlse = torch.randn(T, H, D, generator=gen, dtype=torch.float64), torch.randn(H, T, generator=gen)
    torch.autograd.backward((o, lse), (do, dlse))
    torch.autograd.backward((o_ref, lse_ref), (do, dlse.double()))
    for got, want in ((q, qr), (k, kr), (v, vr)):
        torch.testing.assert_close(got.grad, want.grad, rtol=1e-5, atol=1e-6)
    fwd, bwd = launches
    assert fwd["causal"] == causal and fwd["lse"] and fwd["tensors"]["lse"] is not None
    assert bwd["causal"] == causal and bwd["lse"]
    torch.testing.assert_close(bwd["tensors"]["dlse"], dlse)


def test_block_size_128_takes_causal_and_lse(launches):
    """Block size 128 has causal and log-sum-exp kernels, forward and backward (sm_90a;
    docs/block-sizes.md): nothing refuses them before the launch, and the launches get the
    block size, the flags and dlse."""
    q, k, v, cu = inputs()
    o, lse = blockattn.block_attention(q, k, v, cu, block_size=128, causal=True, return_lse=True)
    gen = torch.Generator().manual_seed(1)
    do, dlse = torch.randn(T, H, D, generator=gen, dtype=torch.float64), torch.randn(H, T, generator=gen)
    torch.autograd.backward((o, lse), (do, dlse))
    assert [(c["kind"], c["block_size"], c["causal"], c["lse"]) for c in launches] == [
        ("forward", 128, True, True), ("backward", 128, True, True)]
    torch.testing.assert_close(launches[1]["tensors"]["dlse"], dlse)


def test_no_lse_gradient_runs_the_plain_backward(launches):
    """lse returned but unused: the backward takes the kernel without the log-sum-exp."""
    q, k, v, cu = inputs()
    o, lse = blockattn.block_attention(q, k, v, cu, return_lse=True)
    o.sum().backward()
    fwd, bwd = launches
    assert fwd["lse"] and not bwd["lse"] and "dlse" not in bwd["tensors"]
    assert not bwd["causal"]


def test_only_the_lse_has_a_gradient(launches):
    q, k, v, cu = inputs()
    o, lse = blockattn.block_attention(q, k, v, cu, causal=True, return_lse=True)
    lse.sum().backward()
    _, bwd = launches
    assert bwd["lse"] and torch.count_nonzero(bwd["tensors"]["do"]) == 0
    qr, kr, vr = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    torch_reference(qr, kr, vr, True)[1].sum().backward()
    torch.testing.assert_close(q.grad, qr.grad, rtol=1e-5, atol=1e-6)
    # v does not reach the log-sum-exp
    assert torch.count_nonzero(v.grad) == 0


def test_causal_without_lse(launches):
    q, k, v, cu = inputs()
    o = blockattn.block_attention(q, k, v, cu, causal=True)
    assert isinstance(o, torch.Tensor)
    o.sum().backward()
    assert [(c["kind"], c["causal"], c["lse"]) for c in launches] == [
        ("forward", True, False), ("backward", True, False)]
    qr = q.detach().clone().requires_grad_(True)
    torch_reference(qr, k.detach(), v.detach(), True)[0].sum().backward()
    torch.testing.assert_close(q.grad, qr.grad)


def test_without_gradient_launches_directly(launches):
    q, k, v, cu = inputs(requires_grad=False)
    o, lse = blockattn.block_attention(q, k, v, cu, causal=True, return_lse=True)
    assert o.grad_fn is None and lse.grad_fn is None
    assert [(c["kind"], c["causal"], c["lse"]) for c in launches] == [("forward", True, True)]


def test_defaults_take_the_plain_kernels(launches):
    q, k, v, cu = inputs()
    o = blockattn.block_attention(q, k, v, cu, causal=False, return_lse=False)
    assert type(o.grad_fn).__name__ == "_AttentionFunctionBackward"


@pytest.mark.parametrize("name,value", [("causal", 1), ("causal", "yes"), ("return_lse", None),
                                        ("return_lse", np.bool_(True))])
def test_flags_must_be_bools(launches, name, value):
    q, k, v, cu = inputs()
    with pytest.raises(ValueError, match=rf"^{name}: expected True or False"):
        blockattn.block_attention(q, k, v, cu, **{name: value})
    assert launches == []


@pytest.mark.parametrize("return_lse", [False, True])
def test_compile_goes_through_the_custom_op(launches, return_lse):
    q, k, v, cu = inputs()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm

    def attn(q, k, v):
        return blockattn.block_attention(q, k, v, cu, causal=True, return_lse=return_lse)

    result = torch.compile(attn, fullgraph=True, backend=backend)(q, k, v)
    code = "\n".join(g.code for g in graphs)
    assert "blockattn.block_attention_features" in code and "_FeaturesFunction" not in code
    o, lse = result if return_lse else (result, None)
    qr, kr, vr = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    o_ref, lse_ref = torch_reference(qr, kr, vr, True)
    torch.testing.assert_close(o, o_ref)
    if return_lse:
        torch.testing.assert_close(lse.double(), lse_ref, rtol=1e-6, atol=1e-6)
        (o.sum() + lse.sum()).backward()
        (o_ref.sum() + lse_ref.sum()).backward()
    else:
        o.sum().backward()
        o_ref.sum().backward()
    for got, want in ((q, qr), (k, kr), (v, vr)):
        torch.testing.assert_close(got.grad, want.grad, rtol=1e-5, atol=1e-6)
    assert [(c["kind"], c["causal"], c["lse"]) for c in launches] == [
        ("forward", True, return_lse), ("backward", True, return_lse)]


def test_packed_entry_points(launches):
    """qkvpacked / kvpacked take causal= and return_lse= too (the gradient reaches the packed
    tensor through the views)."""
    q, k, v, cu = inputs()
    qkv = torch.stack([q.detach(), k.detach(), v.detach()], 1).requires_grad_(True)
    o, lse = blockattn.block_attention_qkvpacked(qkv, cu, causal=True, return_lse=True)
    (o.sum() + lse.sum()).backward()
    qr, kr, vr = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    o_ref, lse_ref = torch_reference(qr, kr, vr, True)
    (o_ref.sum() + lse_ref.sum()).backward()
    torch.testing.assert_close(o, o_ref)
    torch.testing.assert_close(qkv.grad, torch.stack([qr.grad, kr.grad, vr.grad], 1), rtol=1e-5, atol=1e-6)

    kv = torch.stack([k.detach(), v.detach()], 1).requires_grad_(True)
    q2 = q.detach().clone().requires_grad_(True)
    o2 = blockattn.block_attention_kvpacked(q2, kv, cu, causal=True)
    o2.sum().backward()
    torch.testing.assert_close(o2, o_ref)
    assert [(c["kind"], c["causal"], c["lse"]) for c in launches[2:]] == [
        ("forward", True, False), ("backward", True, False)]
    with pytest.raises(ValueError, match=r"^causal: expected True or False"):
        blockattn.block_attention_kvpacked(q2, kv, cu, causal="yes")
