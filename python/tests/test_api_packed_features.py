"""The packed entry points with causal blocks, the log-sum-exp and a grouped qkv (issue 21), on
the CPU with the kernel launch replaced by the float64 reference.

block_attention_qkvpacked (with ``num_heads_q``: q's heads, then k's, then v's in one
``[T, Hq + 2 Hkv, D]`` tensor) and block_attention_kvpacked: the backward launch writes
straight into views of the one packed gradient that autograd receives (no zero fill, no copy
per view, as the plain packed functions), eagerly and under torch.compile; the gradients are
those of torch autograd over a float64 torch reference; and the argument errors. The kernels'
numerics are checked by python/tests/gpu/test_packed_gpu.py.
"""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("cuda.bindings")

import blockattn  # noqa: E402
from blockattn import api  # noqa: E402
from test_api_causal_lse import CU, D, SCALE, T, launches  # noqa: E402,F401 (launches: a fixture)
from test_api_causal_lse import torch_reference as dense_reference  # noqa: E402


def packed_qkv(hq, hkv):
    """A float64 ``[T, hq + 2 hkv, D]`` leaf (the grouped layout)."""
    gen = torch.Generator().manual_seed(hq * 10 + hkv)
    return torch.randn(T, hq + 2 * hkv, D, generator=gen, dtype=torch.float64).requires_grad_(True)


def torch_reference(q, k, v, causal):
    """test_api_causal_lse's dense float64 reference with k and v repeated over each group of
    query heads; (o, lse [Hq, T])."""
    group = q.shape[1] // k.shape[1]
    return dense_reference(q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1), causal)


def reference_step(qkv, hq, causal, return_lse):
    """o (and lse) of the torch reference on a detached copy of qkv, and its gradient for
    loss = o.sum() (+ lse.sum() * 0.5)."""
    ref = qkv.detach().clone().requires_grad_(True)
    hkv = (ref.shape[1] - hq) // 2
    o, lse = torch_reference(ref[:, :hq], ref[:, hq:hq + hkv], ref[:, hq + hkv:], causal)
    loss = o.sum() + (0.5 * lse.sum() if return_lse else 0)
    loss.backward()
    return o, lse, ref.grad


def gradient_storage(tensor):
    """Records the data pointer of the gradient autograd hands to `tensor` (before any
    accumulation)."""
    seen = []
    tensor.register_hook(lambda g: seen.append(g.untyped_storage().data_ptr()))
    return seen


def written_into(call, names, storage):
    """Whether the launch wrote every gradient in `names` into the one `storage`."""
    return all(call["tensors"][n].untyped_storage().data_ptr() == storage for n in names)


@pytest.mark.parametrize("hq,hkv", [(2, 2), (4, 2), (4, 1)])
@pytest.mark.parametrize("causal,return_lse", [
    (False, False), (True, False), (False, True), (True, True)])
def test_grouped_qkvpacked_writes_one_packed_gradient(launches, hq, hkv, causal, return_lse):
    qkv = packed_qkv(hq, hkv)
    seen = gradient_storage(qkv)
    result = blockattn.block_attention_qkvpacked(qkv, torch.tensor(CU, dtype=torch.int32),
                                                 num_heads_q=hq, causal=causal,
                                                 return_lse=return_lse)
    o, lse = result if return_lse else (result, None)
    assert type(o.grad_fn).__name__ == "_PackedFeaturesFunctionBackward"
    (o.sum() + (0.5 * lse.sum() if return_lse else 0)).backward()
    o_ref, lse_ref, grad_ref = reference_step(qkv, hq, causal, return_lse)
    torch.testing.assert_close(o, o_ref)
    if return_lse:
        torch.testing.assert_close(lse.double(), lse_ref, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(qkv.grad, grad_ref, rtol=1e-5, atol=1e-6)
    forward_call, backward_call = launches
    assert (backward_call["kind"], backward_call["causal"], backward_call["lse"],
            backward_call["group"]) == ("backward", causal, return_lse, hq // hkv)
    assert written_into(backward_call, ("dq", "dk", "dv"), seen[0])


@pytest.mark.parametrize("return_lse", [False, True])
def test_qkvpacked_causal_and_lse_write_one_packed_gradient(launches, return_lse):
    qkv = packed_qkv(2, 2).detach().view(T, 3, 2, D).requires_grad_(True)
    seen = gradient_storage(qkv)
    result = blockattn.block_attention_qkvpacked(qkv, torch.tensor(CU, dtype=torch.int32),
                                                 causal=True, return_lse=return_lse)
    o = result[0] if return_lse else result
    o.sum().backward()
    _, _, grad_ref = reference_step(qkv.view(T, 6, D), 2, True, False)
    torch.testing.assert_close(qkv.grad, grad_ref.view(T, 3, 2, D), rtol=1e-5, atol=1e-6)
    assert written_into(launches[1], ("dq", "dk", "dv"), seen[0])


def test_kvpacked_causal_writes_dq_and_one_packed_gradient(launches):
    qkv = packed_qkv(4, 2)
    q = qkv.detach()[:, :4].clone().requires_grad_(True)
    kv = qkv.detach()[:, 4:].reshape(T, 2, 2, D).clone().requires_grad_(True)
    seen = gradient_storage(kv)
    o, lse = blockattn.block_attention_kvpacked(q, kv, torch.tensor(CU, dtype=torch.int32),
                                                causal=True, return_lse=True)
    (o.sum() + 0.5 * lse.sum()).backward()
    _, _, grad_ref = reference_step(qkv, 4, True, True)
    torch.testing.assert_close(q.grad, grad_ref[:, :4], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(kv.grad, grad_ref[:, 4:].reshape(T, 2, 2, D), rtol=1e-5, atol=1e-6)
    assert written_into(launches[1], ("dk", "dv"), seen[0])


def test_only_the_lse_has_a_gradient(launches):
    """o gets no gradient: the backward runs on a zero dO with the lse's gradient."""
    qkv = packed_qkv(4, 2)
    o, lse = blockattn.block_attention_qkvpacked(qkv, torch.tensor(CU, dtype=torch.int32),
                                                 num_heads_q=4, return_lse=True)
    lse.sum().backward()
    ref = qkv.detach().clone().requires_grad_(True)
    torch_reference(ref[:, :4], ref[:, 4:6], ref[:, 6:], False)[1].sum().backward()
    torch.testing.assert_close(qkv.grad, ref.grad, rtol=1e-5, atol=1e-6)
    assert launches[1]["lse"] and launches[1]["tensors"]["do"].abs().sum() == 0


@pytest.mark.parametrize("causal", [False, True])
def test_compile_goes_through_the_packed_custom_op(launches, causal):
    qkv = packed_qkv(4, 2)
    cu = torch.tensor(CU, dtype=torch.int32)
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm

    def attn(qkv):
        return blockattn.block_attention_qkvpacked(qkv, cu, num_heads_q=4, causal=causal,
                                                   return_lse=True)

    o, lse = torch.compile(attn, fullgraph=True, backend=backend)(qkv)
    code = "\n".join(g.code for g in graphs)
    assert ("blockattn.block_attention_packed_features" in code
            and "_PackedFeaturesFunction" not in code)
    (o.sum() + 0.5 * lse.sum()).backward()
    o_ref, lse_ref, grad_ref = reference_step(qkv, 4, causal, True)
    torch.testing.assert_close(o, o_ref)
    torch.testing.assert_close(qkv.grad, grad_ref, rtol=1e-5, atol=1e-6)
    assert [(c["kind"], c["causal"], c["lse"], c["group"]) for c in launches] == [
        ("forward", causal, True, 2), ("backward", causal, True, 2)]


def test_opcheck_packed_features_ops(launches):
    utils = ("test_schema", "test_faketensor", "test_autograd_registration",
             "test_aot_dispatch_dynamic")
    qkv = packed_qkv(4, 2).detach().requires_grad_(True)
    cu = torch.tensor(CU, dtype=torch.int32)
    torch.library.opcheck(api._packed_features_op, (None, qkv, 4, cu, 64, SCALE, True, True),
                          test_utils=utils)
    q = qkv.detach()[:, :4].contiguous().requires_grad_(True)
    kv = qkv.detach()[:, 4:].reshape(T, 2, 2, D).contiguous().requires_grad_(True)
    torch.library.opcheck(api._packed_features_op, (q, kv, 0, cu, 64, SCALE, False, True),
                          test_utils=utils)


@pytest.mark.parametrize("num_heads_q,shape,message", [
    (True, (T, 8, D), r"^num_heads_q: expected a positive int, got True"),
    (0, (T, 8, D), r"^num_heads_q: expected a positive int, got 0"),
    (2.0, (T, 8, D), r"^num_heads_q: expected a positive int, got 2.0"),
    (4, (T, 3, 4, D),
     r"^qkv: with num_heads_q, expected a \[tokens, num_heads_q \+ 2 \* kv_heads, head_dim\]"),
    (4, (T, 7, D), r"^num_heads_q: 4 query heads leave 3 of qkv's 7 heads to k and v"),
    (8, (T, 8, D), r"^num_heads_q: 8 query heads leave 0 of qkv's 8 heads"),
    (4, (T, 10, D),
     r"^num_heads_q: 4 query heads leave 6 of qkv's 10 heads to k and v; expected 2 \* Hkv"),
])
def test_num_heads_q_errors(launches, num_heads_q, shape, message):
    qkv = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
    with pytest.raises(ValueError, match=message):
        blockattn.block_attention_qkvpacked(qkv, torch.tensor(CU, dtype=torch.int32),
                                            num_heads_q=num_heads_q)
    assert launches == []


def test_qkv_must_be_a_tensor_with_num_heads_q(launches):
    with pytest.raises(ValueError, match=r"^qkv: expected a torch.Tensor, got list"):
        blockattn.block_attention_qkvpacked([], torch.tensor(CU, dtype=torch.int32), num_heads_q=2)
