"""The packed layouts (block_attention_qkvpacked / _kvpacked) and the
BlockAttention layer, on the GPU.

Forward outputs and gradients are compared with the float64 references
(reference_torch for plain attention, blockattn.reference with the same Rotary
for rotary), at the tolerances of the unpacked kernels (test_forward_gpu.TOL,
test_backward_gpu.TOL): the kernels are the same, reading and writing views of
the packed tensors. The packed backward must allocate the packed gradient and
nothing else (torch.cuda.memory_stats counts every allocation).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import blockattn
from blockattn import reference

from . import reference_torch
from .test_backward_gpu import check_grads, reference_grads
from .test_forward_gpu import check, cu_seqlens_of
from .test_gqa_gpu import check_grads as gqa_check_grads
from .test_rotary_gpu import random_tables, ref_backward, ref_forward

LENGTHS = [0, 1, 63, 64, 65, 130, 7, 300]
DTYPES = [pytest.param(torch.bfloat16, id="bf16"), pytest.param(torch.float16, id="f16")]


def packed(lengths, count, heads, head_dim, dtype, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    t = torch.randn((sum(lengths), count, heads, head_dim), generator=g, device="cuda").to(dtype)
    return t, cu_seqlens_of(lengths)


def grad_out(like, seed=1):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(like.shape, generator=g, device="cuda").to(like.dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("head_dim", [64, 128])
def test_qkvpacked_against_float64(head_dim, dtype):
    qkv, cu = packed(LENGTHS, 3, 4, head_dim, dtype)
    qkv.requires_grad_(True)
    o = blockattn.block_attention_qkvpacked(qkv, cu)
    q, k, v = qkv.detach().unbind(1)
    check(o, reference_torch.forward(q.double(), k.double(), v.double(), cu), dtype)
    do = grad_out(o)
    o.backward(do)
    assert qkv.grad.shape == qkv.shape and qkv.grad.is_contiguous()
    check_grads(qkv.grad.unbind(1), reference_grads(q, k, v, cu, do), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("head_dim", [64, 128])
def test_kvpacked_against_float64(head_dim, dtype):
    kv, cu = packed(LENGTHS, 2, 2, head_dim, dtype, seed=2)
    q = packed(LENGTHS, 1, 2, head_dim, dtype, seed=3)[0][:, 0].contiguous()
    q.requires_grad_(True)
    kv.requires_grad_(True)
    o = blockattn.block_attention_kvpacked(q, kv, cu, softmax_scale=0.2)
    k, v = kv.detach().unbind(1)
    check(o, reference_torch.forward(q.detach().double(), k.double(), v.double(), cu,
                                     softmax_scale=0.2), dtype)
    do = grad_out(o)
    o.backward(do)
    assert kv.grad.shape == kv.shape and kv.grad.is_contiguous()
    want = reference_grads(q.detach(), k, v, cu, do, scale=0.2)
    check_grads([q.grad, *kv.grad.unbind(1)], want, dtype)


@pytest.mark.parametrize("interleaved, positions, rotate_v",
                         [(False, False, False), (True, True, False), (False, True, True)])
def test_qkvpacked_rotary(interleaved, positions, rotate_v):
    qkv, cu = packed(LENGTHS, 3, 2, 128, torch.bfloat16, seed=5)
    cos, sin = random_tables(300, 128, seed=6)
    pos = None
    if positions:
        pos = torch.randint(0, 300, (qkv.shape[0],), device="cuda", dtype=torch.int32)
    rotary = blockattn.Rotary(cos, sin, interleaved=interleaved, positions=pos, rotate_v=rotate_v)
    leaf = qkv.clone().requires_grad_(True)
    o = blockattn.block_attention_qkvpacked(leaf, cu, rotary=rotary)
    q, k, v = qkv.unbind(1)
    check(o, ref_forward(q, k, v, cu, rotary), torch.bfloat16)
    do = grad_out(o, seed=7)
    o.backward(do)
    check_grads(leaf.grad.unbind(1), ref_backward(q, k, v, do, cu, rotary), torch.bfloat16)


def test_kvpacked_rotary():
    kv, cu = packed(LENGTHS, 2, 2, 64, torch.float16, seed=8)
    q = packed(LENGTHS, 1, 2, 64, torch.float16, seed=9)[0][:, 0].contiguous()
    cos, sin = random_tables(300, 64, seed=10)
    rotary = blockattn.Rotary(cos, sin, interleaved=True)
    ql, kvl = q.clone().requires_grad_(True), kv.clone().requires_grad_(True)
    o = blockattn.block_attention_kvpacked(ql, kvl, cu, rotary=rotary)
    k, v = kv.unbind(1)
    check(o, ref_forward(q, k, v, cu, rotary), torch.float16)
    do = grad_out(o, seed=11)
    o.backward(do)
    check_grads([ql.grad, *kvl.grad.unbind(1)], ref_backward(q, k, v, do, cu, rotary), torch.float16)


def allocations():
    """(allocations, bytes requested) so far. The bytes asked for, not the blocks' ("allocated_bytes"):
    the caching allocator hands out a cached block whole when less than 1 MiB of it would be left,
    so the blocks' bytes depend on what earlier tests freed."""
    torch.cuda.synchronize()
    stats = torch.cuda.memory_stats()
    return stats["allocation.all.allocated"], stats["requested_bytes.all.allocated"]


def assert_backward_allocates_only_its_gradients(o, inputs):
    """One backward of o into `inputs` allocates the gradients (one tensor an input) and
    nothing else, counted after a first backward (kernels loaded, allocator warm)."""
    do = grad_out(o)
    torch.autograd.grad(o, inputs, do, retain_graph=True)
    count, size = allocations()
    grads = torch.autograd.grad(o, inputs, do)
    count2, size2 = allocations()
    assert [g.shape for g in grads] == [t.shape for t in inputs]
    sizes = sum(g.numel() * g.element_size() for g in grads)
    assert (count2 - count, size2 - size) == (len(grads), sizes)


def test_qkvpacked_backward_allocates_only_the_packed_gradient():
    qkv, cu = packed([1000, 63, 0, 1500], 3, 4, 128, torch.bfloat16, seed=12)
    qkv.requires_grad_(True)
    o = blockattn.block_attention_qkvpacked(qkv, cu)
    assert_backward_allocates_only_its_gradients(o, (qkv,))


def test_kvpacked_backward_allocates_dq_and_the_packed_gradient():
    kv, cu = packed([1000, 63, 0, 1500], 2, 4, 128, torch.bfloat16, seed=13)
    q = torch.randn(kv[:, 0].shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    kv.requires_grad_(True)
    o = blockattn.block_attention_kvpacked(q, kv, cu)
    assert_backward_allocates_only_its_gradients(o, (q, kv))


def test_qkvpacked_out_torch_compile_and_cuda_graph():
    qkv, cu = packed([300, 64, 5], 3, 4, 128, torch.bfloat16, seed=14)
    want = blockattn.block_attention(*qkv.unbind(1), cu)

    out = torch.full_like(want, float("nan"))
    assert blockattn.block_attention_qkvpacked(qkv, cu, out=out) is out
    torch.testing.assert_close(out, want, rtol=0, atol=0)

    leaf = qkv.clone().requires_grad_(True)
    do = grad_out(want)

    @torch.compile(fullgraph=True)
    def step(x):
        return (blockattn.block_attention_qkvpacked(x, cu).float() * do.float()).sum()

    step(leaf).backward()
    eager = qkv.clone().requires_grad_(True)
    blockattn.block_attention_qkvpacked(eager, cu).backward(do)
    torch.testing.assert_close(leaf.grad, eager.grad, rtol=0, atol=0)

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = blockattn.block_attention_qkvpacked(qkv, cu)
    qkv.copy_(torch.randn_like(qkv))
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(captured, blockattn.block_attention(*qkv.unbind(1), cu), rtol=0, atol=0)


def test_opcheck_packed_ops():
    # ``import blockattn`` defers the runtime and its torch.library ops.
    import blockattn.api  # noqa: F401

    qkv, cu = packed([130, 1, 64], 3, 2, 64, torch.bfloat16, seed=15)
    qkv.requires_grad_(True)
    q = qkv.detach()[:, 0].contiguous().requires_grad_(True)
    kv = qkv.detach()[:, 1:].contiguous().requires_grad_(True)
    cos, sin = random_tables(130, 64)
    utils = ("test_schema", "test_faketensor", "test_autograd_registration", "test_aot_dispatch_dynamic")
    torch.library.opcheck(torch.ops.blockattn.block_attention_qkvpacked.default,
                          (qkv, cu, 64, 0.125, cos, sin, None, False, False), test_utils=utils)
    torch.library.opcheck(torch.ops.blockattn.block_attention_kvpacked.default,
                          (q, kv, cu, 64, 0.125, None, None, None, False, False), test_utils=utils)


def test_packed_argument_errors():
    qkv, cu = packed([70], 3, 2, 64, torch.bfloat16)
    with pytest.raises(ValueError, match=r"qkv: expected a torch.Tensor"):
        blockattn.block_attention_qkvpacked(None, cu)
    with pytest.raises(ValueError, match=r"qkv: expected a \[tokens, 3, heads, head_dim\] tensor"):
        blockattn.block_attention_qkvpacked(qkv[:, :2], cu)
    with pytest.raises(ValueError, match=r"qkv: head_dim 16 is not supported"):
        blockattn.block_attention_qkvpacked(qkv[..., :16], cu)
    with pytest.raises(ValueError, match=r"qkv: expected dtype"):
        blockattn.block_attention_qkvpacked(qkv.float(), cu)
    with pytest.raises(ValueError, match=r"cu_seqlens: the last offset"):
        blockattn.block_attention_qkvpacked(qkv, cu_seqlens_of([69]))
    q = qkv[:, 0]
    with pytest.raises(ValueError, match=r"kv: expected a \[tokens, 2, heads, head_dim\] tensor"):
        blockattn.block_attention_kvpacked(q, qkv, cu)
    # (a kv with fewer heads is grouped-query attention; fewer tokens is not)
    with pytest.raises(ValueError, match=r"kv: shape .* does not match q's"):
        blockattn.block_attention_kvpacked(q, qkv[:-1, 1:], cu)
    with pytest.raises(ValueError, match=r"kv: dtype"):
        blockattn.block_attention_kvpacked(q, qkv[:, 1:].half(), cu)
    with pytest.raises(ValueError, match=r"out: cannot write"):
        blockattn.block_attention_qkvpacked(qkv.clone().requires_grad_(True), cu, out=torch.empty_like(q))


# --------------------------------------------------------------------------------------------
# Causal blocks, the log-sum-exp and grouped-query attention through the packed entry points
# (qkv [T, Hq + 2 Hkv, D] with num_heads_q): the same kernels on views, the gradient written
# into one packed tensor.
# --------------------------------------------------------------------------------------------


def grouped_qkv(lengths, hq, hkv, head_dim, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    t = torch.randn((sum(lengths), hq + 2 * hkv, head_dim), generator=g, device="cuda").to(dtype)
    return t, cu_seqlens_of(lengths)


def packed_features_reference(q, k, v, cu, do, dlse, causal):
    """o, lse and (dq, dk, dv) of blockattn.reference (float64; dk, dv summed over each group)."""
    args = [reference_torch.to_numpy(t) for t in (q, k, v)]
    o, lse = reference.forward(*args, cu.cpu().numpy(), causal=causal, return_lse=True)
    grads = reference.backward(*args, reference_torch.to_numpy(do), cu.cpu().numpy(), causal=causal,
                               dlse=None if dlse is None else reference_torch.to_numpy(dlse))
    return (torch.from_numpy(o).cuda(), torch.from_numpy(lse).cuda(),
            [torch.from_numpy(np.ascontiguousarray(x)).cuda() for x in grads])


@pytest.mark.parametrize("causal,lse", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("hq,hkv", [(4, 4), (4, 2), (4, 1)])
def test_grouped_qkvpacked_features_against_float64(hq, hkv, causal, lse):
    qkv, cu = grouped_qkv(LENGTHS, hq, hkv, 128, torch.bfloat16, seed=hq * 10 + hkv)
    leaf = qkv.clone().requires_grad_(True)
    result = blockattn.block_attention_qkvpacked(leaf, cu, num_heads_q=hq, causal=causal,
                                                 return_lse=lse)
    o, l = result if lse else (result, None)
    q, k, v = qkv[:, :hq], qkv[:, hq:hq + hkv], qkv[:, hq + hkv:]
    g = torch.Generator(device="cuda").manual_seed(3)
    do = torch.randn(o.shape, generator=g, device="cuda").to(o.dtype)
    dlse = torch.randn((hq, o.shape[0]), generator=g, device="cuda") if lse else None
    o_ref, lse_ref, grads_ref = packed_features_reference(q, k, v, cu, do, dlse, causal)
    check(o, o_ref, torch.bfloat16)
    if lse:
        torch.testing.assert_close(l.double(), lse_ref, rtol=1e-4, atol=1e-4)
    torch.autograd.backward([o] + ([l] if lse else []), [do] + ([dlse] if lse else []))
    assert leaf.grad.shape == qkv.shape and leaf.grad.is_contiguous()
    got = [leaf.grad[:, :hq], leaf.grad[:, hq:hq + hkv], leaf.grad[:, hq + hkv:]]
    gqa_check_grads(got, grads_ref, torch.bfloat16)


@pytest.mark.parametrize("dtype", DTYPES)
def test_qkvpacked_and_kvpacked_causal_lse_against_float64(dtype):
    qkv, cu = packed(LENGTHS, 3, 2, 64, dtype, seed=21)
    leaf = qkv.clone().requires_grad_(True)
    o, l = blockattn.block_attention_qkvpacked(leaf, cu, causal=True, return_lse=True)
    g = torch.Generator(device="cuda").manual_seed(4)
    do = torch.randn(o.shape, generator=g, device="cuda").to(dtype)
    dlse = torch.randn(l.shape, generator=g, device="cuda")
    o_ref, _, grads_ref = packed_features_reference(*qkv.unbind(1), cu, do, dlse, True)
    check(o, o_ref, dtype)
    torch.autograd.backward([o, l], [do, dlse])
    check_grads(leaf.grad.unbind(1), grads_ref, dtype)

    q = qkv[:, 0].contiguous().requires_grad_(True)
    kv = qkv[:, 1:].clone().requires_grad_(True)
    o2 = blockattn.block_attention_kvpacked(q, kv, cu, causal=True)
    _, _, grads_ref = packed_features_reference(*qkv.unbind(1), cu, do, None, True)
    o2.backward(do)
    check_grads([q.grad, *kv.grad.unbind(1)], grads_ref, dtype)


@pytest.mark.parametrize("causal", [False, True])
def test_grouped_qkvpacked_backward_allocates_only_the_packed_gradient(causal):
    qkv, cu = grouped_qkv([1000, 63, 0, 1500], 8, 2, 128, torch.bfloat16, seed=22)
    qkv.requires_grad_(True)
    o = blockattn.block_attention_qkvpacked(qkv, cu, num_heads_q=8, causal=causal)
    assert_backward_allocates_only_its_gradients(o, (qkv,))


def test_grouped_qkvpacked_torch_compile_matches_eager():
    qkv, cu = grouped_qkv([300, 64, 5], 4, 2, 128, torch.bfloat16, seed=23)
    do = grad_out(qkv[:, :4])

    @torch.compile(fullgraph=True)
    def step(x):
        o, lse = blockattn.block_attention_qkvpacked(x, cu, num_heads_q=4, causal=True,
                                                     return_lse=True)
        return (o.float() * do.float()).sum() + lse.sum()

    leaf, eager = qkv.clone().requires_grad_(True), qkv.clone().requires_grad_(True)
    step(leaf).backward()
    o, lse = blockattn.block_attention_qkvpacked(eager, cu, num_heads_q=4, causal=True,
                                                 return_lse=True)
    ((o.float() * do.float()).sum() + lse.sum()).backward()
    torch.testing.assert_close(leaf.grad, eager.grad, rtol=0, atol=0)


# --------------------------------------------------------------------------------------------
# blockattn.nn.BlockAttention
# --------------------------------------------------------------------------------------------


def rel_error(x, ref):
    return (torch.linalg.vector_norm(x.double() - ref) / torch.linalg.vector_norm(ref)).item()


def layer_reference(layer, x, cu):
    """The layer in float64: the same weights, reference_torch attention, rotary in float64."""
    w = {n: p.detach().double().requires_grad_(True) for n, p in layer.named_parameters()}
    xd = x.detach().double()
    T, H, Hkv, D = x.shape[0], layer.num_heads, layer.num_kv_heads, layer.head_dim
    projected = torch.nn.functional.linear(xd, w["qkv.weight"], w.get("qkv.bias"))
    q = projected[:, :H * D].view(T, H, D)
    k, v = projected[:, H * D:].view(T, 2, Hkv, D).unbind(1)
    if layer.rotary_mode is not None:
        pos = reference_torch.sequence_positions(cu)
        cos, sin = layer.rotary_cos.double(), layer.rotary_sin.double()
        q, k = (reference_torch.rotate(t, cos, sin, pos, layer.interleaved) for t in (q, k))
    # Grouped-query attention: query head h reads k/v head h // (H / Hkv).
    k, v = (t.repeat_interleave(H // Hkv, dim=1) for t in (k, v))
    o = reference_torch.forward(q, k, v, cu, causal=layer.causal).reshape(T, H * D)
    return torch.nn.functional.linear(o, w["out_proj.weight"], w.get("out_proj.bias")), w


def check_layer(layer, seed):
    """The layer's output and parameter gradients on LENGTHS against layer_reference; returns
    (x, cu, y) for further checks."""
    x = torch.randn(sum(LENGTHS), 512, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    cu = cu_seqlens_of(LENGTHS)
    y = layer(x, cu)
    want, w = layer_reference(layer, x, cu)
    # Two bf16 projections around the attention: relative Frobenius errors.
    assert not torch.isnan(y).any()
    assert rel_error(y, want) < 2e-2, f"y: relative error {rel_error(y, want):.3e}"
    dy = grad_out(y, seed=seed + 1)
    y.backward(dy)
    want.backward(dy.double())
    for name, p in layer.named_parameters():
        rel = rel_error(p.grad, w[name].grad)
        assert rel < 2e-2, f"{name}.grad: relative error {rel:.3e}"
    return x, cu, y


@pytest.mark.parametrize("rotary", [None, "half_split", "interleaved"])
def test_block_attention_layer(rotary):
    torch.manual_seed(16)
    check_layer(blockattn.nn.BlockAttention(512, 4, rotary=rotary, device="cuda",
                                            dtype=torch.bfloat16), seed=16)


@pytest.mark.parametrize("rotary", [None, "half_split"])
def test_block_attention_layer_causal(rotary):
    torch.manual_seed(19)
    layer = blockattn.nn.BlockAttention(512, 4, rotary=rotary, causal=True, device="cuda",
                                        dtype=torch.bfloat16)
    x, cu, y = check_layer(layer, seed=19)
    # The mask matters: the non-causal layer's reference is far.
    layer.causal = False
    assert rel_error(y.detach(), layer_reference(layer, x, cu)[0].detach()) > 1e-1


@pytest.mark.parametrize("num_kv_heads, rotary, causal",
                         [(2, None, False), (2, "half_split", False), (1, "interleaved", True)])
def test_block_attention_layer_grouped(num_kv_heads, rotary, causal):
    torch.manual_seed(21)
    check_layer(blockattn.nn.BlockAttention(512, 4, num_kv_heads=num_kv_heads, rotary=rotary,
                                            causal=causal, device="cuda", dtype=torch.bfloat16),
                seed=21)


@pytest.mark.parametrize("causal,num_kv_heads", [(False, None), (True, 2), (False, 1)])
def test_block_attention_layer_compiles_fullgraph(causal, num_kv_heads):
    """Under torch.compile(fullgraph=True) the layer's output and its projections' gradients
    are the eager layer's (causal and grouped layers through the packed custom op)."""
    torch.manual_seed(18)
    layer = blockattn.nn.BlockAttention(256, 4, rotary="half_split", causal=causal,
                                        num_kv_heads=num_kv_heads, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(400, 256, device="cuda", dtype=torch.bfloat16)
    cu = cu_seqlens_of([100, 300])
    eager = layer(x, cu)
    eager.float().sum().backward()
    want = {n: p.grad.clone() for n, p in layer.named_parameters()}
    layer.zero_grad(set_to_none=True)
    compiled = torch.compile(layer, fullgraph=True)
    y = compiled(x, cu)
    torch.testing.assert_close(y, eager, rtol=1e-2, atol=1e-2)
    y.float().sum().backward()
    for name, p in layer.named_parameters():
        assert rel_error(p.grad, want[name].double()) < 1e-2, name


def test_block_attention_layer_argument_errors():
    with pytest.raises(ValueError, match=r"num_heads: 3 does not divide embed_dim 512"):
        blockattn.nn.BlockAttention(512, 3)
    with pytest.raises(ValueError, match=r"num_heads: embed_dim / num_heads = 16"):
        blockattn.nn.BlockAttention(512, 32)
    with pytest.raises(ValueError, match=r"rotary: expected None, a blockattn.Rotary"):
        blockattn.nn.BlockAttention(512, 4, rotary="neox")
    cos, sin = random_tables(16, 128)
    with pytest.raises(ValueError, match=r"rotary: the layer's Rotary must have positions=None"):
        blockattn.nn.BlockAttention(512, 4, rotary=blockattn.Rotary(
            cos, sin, positions=torch.zeros(4, dtype=torch.int32, device="cuda")))
    layer = blockattn.nn.BlockAttention(512, 4, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=r"x: expected a \[tokens, 512\] tensor"):
        layer(torch.zeros(4, 256, device="cuda", dtype=torch.bfloat16), cu_seqlens_of([4]))
    with pytest.raises(ValueError, match=r"x: expected a CUDA tensor"):
        layer(torch.zeros(4, 512, dtype=torch.bfloat16), cu_seqlens_of([4]))
    x = torch.zeros(100, 512, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=r"cu_seqlens: the last offset must equal the number of tokens 100"):
        layer(x, cu_seqlens_of([99]))
    short = blockattn.nn.BlockAttention(512, 4, rotary="interleaved", max_position=64, device="cuda",
                                        dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=r"rotary: the longest sequence has 100 tokens"):
        short(x, cu_seqlens_of([100]))
    short.check_inputs = False  # unchecked: the kernel clamps the positions into the table
    assert short(x, cu_seqlens_of([100])).shape == (100, 512)


@pytest.mark.parametrize("head_dim", [64, 128])
def test_qkvpacked_fast_path_matches_the_checks_path(head_dim):
    """The first call takes the checks' path (and registers the configuration); the second,
    with the same (checked) cu_seqlens, the fast path, which describes q, k, v and dq, dk, dv
    as slices of the packed tensors by address arithmetic: the same kernels, so the same
    bits, and the float64 reference."""
    qkv, cu = packed(LENGTHS, 3, 4, head_dim, torch.bfloat16, seed=21)
    do = grad_out(qkv[:, 0])
    results = []
    for _ in range(2):
        leaf = qkv.clone().requires_grad_(True)
        o = blockattn.block_attention_qkvpacked(leaf, cu)
        o.backward(do)
        results.append((type(o.grad_fn).__name__, o.detach(), leaf.grad))
    (first, o1, g1), (second, o2, g2) = results
    assert (first, second) == ("_QKVPackedFunctionBackward", "_FastQKVPackedFunctionBackward")
    assert torch.equal(o1, o2) and torch.equal(g1, g2)
    with torch.no_grad():
        assert torch.equal(blockattn.block_attention_qkvpacked(qkv, cu), o1)
    q, k, v = qkv.unbind(1)
    check(o2, reference_torch.forward(q.double(), k.double(), v.double(), cu), torch.bfloat16)
    check_grads(g2.unbind(1), reference_grads(q, k, v, cu, do), torch.bfloat16)
