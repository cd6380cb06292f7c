"""Fused rotary embeddings (RoPE) in the forward and backward kernels, on the GPU.

Every case compares ``blockattn.block_attention(q, k, v, cu, rotary=R)`` with the
float64 NumPy reference (``blockattn.reference.forward/backward`` with the same
``Rotary`` object: the rotation is done in float64 on the bf16/fp16 inputs, and
the gradients are with respect to the un-rotated q, k, v).

Tolerances are those of the plain kernels (test_forward_gpu.TOL and
test_backward_gpu.TOL). The kernels rotate q and k in fp32 and round the rotated
values once to the input type before the tensor-core products, which adds one
rounding of the operands to the plain kernels' errors; the backward applies the
transposed rotation to dq, dk (and dv) in fp32 before their single rounding.

Tables are random unit rotations (every pair of every position turns by an
arbitrary angle, which catches a wrong pairing or a wrong position), or the
standard ``reference.rope_tables``. The jagged batch has an empty sequence, a
one-token sequence, partial, full and multi-block sequences; the default
tables have exactly as many rows as the longest sequence needs.

Kernels needed: forward and backward, half_split and interleaved, head dims 64
and 128, bf16 and f16, each plain, with positions (_pos), with rotate_v (_rv)
and with both (_pos_rv): ``scripts/prebuild_kernels.py DIR --kinds
forward,backward --rotary none,half_split,interleaved --rotary-variants
plain,pos,rv,pos_rv``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import blockattn
from blockattn import reference

from . import reference_torch
from .test_backward_gpu import check_grads
from .test_forward_gpu import GUARD_ROWS, check, make_inputs, packed_qkv, poisoned_output, saved_for_backward

LENGTHS = [0, 1, 63, 64, 65, 130, 300]
LAYOUTS = [pytest.param(False, id="half_split"), pytest.param(True, id="interleaved")]
DTYPES = [pytest.param(torch.bfloat16, id="bf16"), pytest.param(torch.float16, id="f16")]


def random_tables(max_position: int, head_dim: int, seed: int = 0):
    """fp32 cos/sin [max_position, head_dim/2] of uniformly random angles, on the GPU."""
    angles = np.random.default_rng(seed).uniform(-np.pi, np.pi, size=(max_position, head_dim // 2))
    return (torch.tensor(f(angles), dtype=torch.float32, device="cuda") for f in (np.cos, np.sin))


def standard_tables(max_position: int, head_dim: int, base: float = 10000.0):
    cos, sin = reference.rope_tables(max_position, head_dim, base)
    return (torch.tensor(t, dtype=torch.float32, device="cuda") for t in (cos, sin))


def cuda64(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(a).cuda()


def ref_forward(q, k, v, cu, rotary, scale=None):
    return cuda64(reference.forward(q, k, v, cu.cpu().numpy(), softmax_scale=scale, rotary=rotary))


def ref_backward(q, k, v, do, cu, rotary, scale=None):
    grads = reference.backward(q, k, v, do, cu.cpu().numpy(), softmax_scale=scale, rotary=rotary)
    return [cuda64(g) for g in grads]


def run_forward(q, k, v, cu, rotary, dtype, scale=None):
    buffer, o = poisoned_output(q)
    result = blockattn.block_attention(q, k, v, cu, softmax_scale=scale, out=o, rotary=rotary)
    torch.cuda.synchronize()
    assert result.data_ptr() == o.data_ptr()
    guards = torch.cat([buffer[:GUARD_ROWS], buffer[-GUARD_ROWS:]])
    assert torch.isnan(guards).all(), "the kernel wrote outside the output tensor"
    check(o, ref_forward(q, k, v, cu, rotary, scale), dtype)


def run_backward(q, k, v, cu, rotary, dtype, seed=0, scale=None):
    do = torch.randn(q.shape, generator=torch.Generator(device="cuda").manual_seed(seed + 1000),
                     device="cuda").to(dtype)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    o = blockattn.block_attention(*leaves, cu, softmax_scale=scale, rotary=rotary)
    o.backward(do)
    check_grads([t.grad for t in leaves], ref_backward(q, k, v, do, cu, rotary, scale), dtype)


# --------------------------------------------------------------------------------------------
# Forward and backward against float64, both layouts, the jagged batch
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("interleaved", LAYOUTS)
def test_forward_jagged(interleaved, head_dim, dtype):
    q, k, v, cu = make_inputs(LENGTHS, 4, head_dim, dtype, seed=1)
    cos, sin = random_tables(max(LENGTHS), head_dim, seed=2)  # exactly the rows needed
    run_forward(q, k, v, cu, blockattn.Rotary(cos, sin, interleaved=interleaved), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("interleaved", LAYOUTS)
def test_backward_jagged(interleaved, head_dim, dtype):
    q, k, v, cu = make_inputs(LENGTHS, 4, head_dim, dtype, seed=3)
    cos, sin = random_tables(max(LENGTHS), head_dim, seed=4)
    run_backward(q, k, v, cu, blockattn.Rotary(cos, sin, interleaved=interleaved), dtype, seed=3)


@pytest.mark.parametrize("interleaved", LAYOUTS)
def test_standard_tables_long_batch(interleaved):
    """The usual tables (base 10000), longer than needed, a random jagged batch."""
    lengths = np.random.default_rng(5).integers(0, 2500, size=40)
    q, k, v, cu = make_inputs(lengths, 2, 128, torch.bfloat16, seed=5)
    cos, sin = standard_tables(4096, 128)
    rotary = blockattn.Rotary(cos, sin, interleaved=interleaved)
    run_forward(q, k, v, cu, rotary, torch.bfloat16)
    run_backward(q, k, v, cu, rotary, torch.bfloat16, seed=5)


@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("interleaved", LAYOUTS)
def test_explicit_positions(interleaved, head_dim):
    """positions[token] instead of the index in the sequence: arbitrary rows of a longer table,
    including the first and the last."""
    q, k, v, cu = make_inputs(LENGTHS, 4, head_dim, torch.bfloat16, seed=6)
    T, P = q.shape[0], 777
    g = torch.Generator(device="cuda").manual_seed(6)
    positions = torch.randint(0, P, (T,), generator=g, device="cuda", dtype=torch.int32)
    positions[0], positions[-1] = 0, P - 1
    cos, sin = random_tables(P, head_dim, seed=7)
    rotary = blockattn.Rotary(cos, sin, interleaved=interleaved, positions=positions)
    run_forward(q, k, v, cu, rotary, torch.bfloat16)
    run_backward(q, k, v, cu, rotary, torch.bfloat16, seed=6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("interleaved", LAYOUTS)
def test_rotate_v(interleaved, dtype):
    """v rotated too: o = P R(v) (not rotated back); dv gets the transposed rotation."""
    q, k, v, cu = make_inputs(LENGTHS, 4, 128, dtype, seed=8)
    cos, sin = random_tables(max(LENGTHS), 128, seed=9)
    rotary = blockattn.Rotary(cos, sin, interleaved=interleaved, rotate_v=True)
    run_forward(q, k, v, cu, rotary, dtype)
    run_backward(q, k, v, cu, rotary, dtype, seed=8)


@pytest.mark.parametrize("interleaved", LAYOUTS)
def test_rotate_v_with_positions(interleaved):
    q, k, v, cu = make_inputs(LENGTHS, 2, 64, torch.bfloat16, seed=10)
    T, P = q.shape[0], 1000
    positions = torch.arange(T, device="cuda", dtype=torch.int32).flip(0) % P
    cos, sin = random_tables(P, 64, seed=11)
    rotary = blockattn.Rotary(cos, sin, interleaved=interleaved, positions=positions, rotate_v=True)
    run_forward(q, k, v, cu, rotary, torch.bfloat16)
    run_backward(q, k, v, cu, rotary, torch.bfloat16, seed=10)


VARIANTS = [pytest.param(False, False, id="plain"), pytest.param(True, False, id="pos"),
            pytest.param(False, True, id="rv"), pytest.param(True, True, id="pos_rv")]


@pytest.mark.parametrize("positions, rotate_v", VARIANTS)
@pytest.mark.parametrize("interleaved", LAYOUTS)
def test_head_dim_128_claims_its_tiles(interleaved, positions, rotate_v):
    """The kernels at head dim 128, whose CTAs claim their tiles from the `schedule` counters
    (schedule=dynamic, the default there): a jagged batch of 3 x 51 work items against
    float64, and the counters left zeroed for the next launch."""
    from blockattn import _driver, api

    lengths = [0, 1, 63, 64, 65, 130, 300, 1000, 1100]
    q, k, v, cu = make_inputs(lengths, 3, 128, torch.bfloat16, seed=12)
    P = max(lengths) + 50
    pos = None
    if positions:
        g = torch.Generator(device="cuda").manual_seed(12)
        pos = torch.randint(0, P, (q.shape[0],), generator=g, device="cuda", dtype=torch.int32)
    cos, sin = random_tables(P, 128, seed=13)
    rotary = blockattn.Rotary(cos, sin, interleaved=interleaved, positions=pos, rotate_v=rotate_v)
    run_forward(q, k, v, cu, rotary, torch.bfloat16)
    run_backward(q, k, v, cu, rotary, torch.bfloat16, seed=12)
    layout = "interleaved" if interleaved else "half_split"
    launched = [kernel.manifest for key, (kernel, _) in api._KERNELS.items()
                if key[1:7] == (128, 64, torch.bfloat16, layout, positions, rotate_v)]
    assert len(launched) == 2 and all("schedule" in m for m in launched)
    torch.cuda.synchronize()
    assert _driver._SCHEDULES and all(not c.any() for c in _driver._SCHEDULES.values())


def test_custom_scale_and_many_heads():
    q, k, v, cu = make_inputs(LENGTHS, 16, 128, torch.bfloat16, seed=12)
    cos, sin = random_tables(max(LENGTHS), 128, seed=13)
    rotary = blockattn.Rotary(cos, sin)
    run_forward(q, k, v, cu, rotary, torch.bfloat16, scale=0.05)
    run_backward(q, k, v, cu, rotary, torch.bfloat16, seed=12, scale=0.05)


def test_strided_inputs_and_tables():
    """q, k, v views of a packed qkv tensor; tables sliced from wider ones (copied by the API)."""
    _, q, k, v, cu = packed_qkv([130, 64, 1, 0, 500], 4, 128)
    D = q.shape[-1]
    cos, sin = random_tables(500, 2 * D, seed=14)
    rotary = blockattn.Rotary(cos[:, ::2], sin[:, ::2], interleaved=True)
    run_forward(q, k, v, cu, rotary, torch.bfloat16)
    run_backward(q, k, v, cu, rotary, torch.bfloat16)


def test_identity_tables_match_plain_kernels():
    """cos = 1, sin = 0: the rotary kernels must agree with the plain ones."""
    q, k, v, cu = make_inputs(LENGTHS, 4, 128, torch.bfloat16, seed=15)
    cos = torch.ones((300, 64), device="cuda")
    rotary = blockattn.Rotary(cos, torch.zeros_like(cos))
    do = torch.randn_like(q)
    outs = []
    for r in (None, rotary):
        leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
        o = blockattn.block_attention(*leaves, cu, rotary=r)
        o.backward(do)
        outs.append([o.detach()] + [t.grad for t in leaves])
    for name, a, b in zip(("o", "dq", "dk", "dv"), *outs):
        torch.testing.assert_close(b, a, rtol=2e-2, atol=2e-2 * a.abs().max().item(), msg=name)


def test_empty_batches():
    cos, sin = random_tables(4, 64)
    for lengths in ([], [0], [0, 0, 0]):
        q, k, v, cu = make_inputs(lengths, 2, 64, torch.bfloat16)
        leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
        o = blockattn.block_attention(*leaves, cu, rotary=blockattn.Rotary(cos, sin))
        o.sum().backward()
        assert o.shape == q.shape and leaves[0].grad.shape == q.shape


def test_deterministic():
    q, k, v, cu = make_inputs([1000, 77, 2000, 0, 64], 4, 128, torch.bfloat16, seed=16)
    cos, sin = random_tables(2000, 128, seed=17)
    rotary = blockattn.Rotary(cos, sin, interleaved=True)
    do = torch.randn_like(q)
    results = []
    for _ in range(2):
        leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
        o = blockattn.block_attention(*leaves, cu, rotary=rotary)
        o.backward(do)
        results.append([o] + [t.grad for t in leaves])
    for a, b in zip(*results):
        assert torch.equal(a, b)


# --------------------------------------------------------------------------------------------
# Autograd, torch.compile, CUDA graphs, opcheck
# --------------------------------------------------------------------------------------------


def test_only_inputs_and_tables_saved():
    q, k, v, cu = make_inputs([300, 64], 4, 64, torch.bfloat16)
    cos, sin = random_tables(300, 64)
    positions = torch.arange(q.shape[0], device="cuda", dtype=torch.int32) % 300
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    rotary = blockattn.Rotary(cos, sin, positions=positions)
    o, saved = saved_for_backward(lambda: blockattn.block_attention(*leaves, cu, rotary=rotary))
    assert len(saved) == 7
    assert all(any(s is t for t in (*leaves, cu, cos, sin, positions)) for s in saved)
    o.sum().backward()


@pytest.mark.parametrize("interleaved", LAYOUTS)
def test_torch_compile_no_graph_break(interleaved):
    q, k, v, cu = make_inputs(LENGTHS, 4, 128, torch.bfloat16, seed=18)
    cos, sin = random_tables(max(LENGTHS), 128, seed=19)
    rotary = blockattn.Rotary(cos, sin, interleaved=interleaved)
    do = torch.randn_like(q)

    def loss(q, k, v):
        return (blockattn.block_attention(q, k, v, cu, check_inputs=False, rotary=rotary) * do).sum()

    compiled = torch.compile(loss, fullgraph=True)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    compiled(*leaves).backward()
    check_grads([t.grad for t in leaves], ref_backward(q, k, v, do, cu, rotary), torch.bfloat16)


def test_torch_compile_rotary_built_inside():
    """Tables and positions built inside the compiled function, Rotary constructed there too."""
    q, k, v, cu = make_inputs(LENGTHS, 2, 64, torch.bfloat16, seed=20)
    positions = reference_torch.sequence_positions(cu).to(torch.int32)
    inv_freq = 10000.0 ** (-torch.arange(0, 64, 2, device="cuda", dtype=torch.float32) / 64)

    def attn(q, k, v, positions):
        angles = torch.arange(512, device="cuda", dtype=torch.float32)[:, None] * inv_freq[None, :]
        rotary = blockattn.Rotary(angles.cos(), angles.sin(), positions=positions, rotate_v=True)
        return blockattn.block_attention(q, k, v, cu, check_inputs=False, rotary=rotary)

    o = torch.compile(attn, fullgraph=True)(q, k, v, positions)
    cos, sin = standard_tables(512, 64)
    ref = ref_forward(q, k, v, cu, blockattn.Rotary(cos, sin, positions=positions, rotate_v=True))
    check(o, ref, torch.bfloat16)


def test_cuda_graph_capture():
    q, k, v, cu = make_inputs([300, 64, 5], 4, 128, torch.bfloat16, seed=21)
    cos, sin = random_tables(300, 128, seed=22)
    positions = torch.zeros(q.shape[0], device="cuda", dtype=torch.int32)
    rotary = blockattn.Rotary(cos, sin, positions=positions)
    blockattn.block_attention(q, k, v, cu, rotary=rotary)  # load the kernel outside capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        o = blockattn.block_attention(q, k, v, cu, rotary=rotary)
    q.copy_(torch.randn_like(q))
    positions.copy_(torch.randint(0, 300, positions.shape, device="cuda", dtype=torch.int32))
    graph.replay()
    torch.cuda.synchronize()
    check(o, ref_forward(q, k, v, cu, rotary), torch.bfloat16)


def test_opcheck():
    # ``import blockattn`` defers the runtime and its torch.library ops.
    import blockattn.api  # noqa: F401

    q, k, v, cu = make_inputs([130, 1, 64], 2, 64, torch.bfloat16, seed=23)
    q, k, v = (t.requires_grad_(True) for t in (q, k, v))
    cos, sin = random_tables(130, 64)
    positions = torch.arange(q.shape[0], device="cuda", dtype=torch.int32) % 130
    for args in ((q, k, v, cu, 64, 0.125, cos, sin, None, False, False),
                 (q, k, v, cu, 64, 0.125, cos, sin, positions, True, True)):
        torch.library.opcheck(
            torch.ops.blockattn.block_attention.default, args,
            test_utils=("test_schema", "test_faketensor", "test_autograd_registration",
                        "test_aot_dispatch_dynamic"),
        )


# --------------------------------------------------------------------------------------------
# Argument checks that need the GPU (the others are in python/tests/test_api_rotary.py)
# --------------------------------------------------------------------------------------------


def test_argument_errors():
    q, k, v, cu = make_inputs([70, 10], 2, 64, torch.bfloat16)
    cos, sin = random_tables(70, 64)
    R = blockattn.Rotary
    with pytest.raises(ValueError, match=r"^rotary: expected a blockattn.Rotary"):
        blockattn.block_attention(q, k, v, cu, rotary=(cos, sin))
    with pytest.raises(ValueError, match=r"^rotary.cos: on cpu, but q is on cuda"):
        blockattn.block_attention(q, k, v, cu, rotary=R(cos.cpu(), sin))
    with pytest.raises(ValueError, match=r"^rotary.sin: expected dtype torch.float32"):
        blockattn.block_attention(q, k, v, cu, rotary=R(cos, sin.bfloat16()))
    with pytest.raises(ValueError, match=r"^rotary.cos: expected a \[max_position, head_dim/2\] = \[P, 32\]"):
        blockattn.block_attention(q, k, v, cu, rotary=R(cos[:, :16], sin[:, :16]))
    with pytest.raises(ValueError, match=r"^rotary: the longest sequence has 70 tokens"):
        blockattn.block_attention(q, k, v, cu, rotary=R(cos[:69], sin[:69]))
    pos = torch.zeros(q.shape[0], device="cuda", dtype=torch.int32)
    with pytest.raises(ValueError, match=r"^rotary.positions: expected dtype torch.int32"):
        blockattn.block_attention(q, k, v, cu, rotary=R(cos, sin, positions=pos.long()))
    with pytest.raises(ValueError, match=r"^rotary.positions: on cpu"):
        blockattn.block_attention(q, k, v, cu, rotary=R(cos, sin, positions=pos.cpu()))
    with pytest.raises(ValueError, match=r"^rotary.positions: expected a 1-D tensor of one position per token"):
        blockattn.block_attention(q, k, v, cu, rotary=R(cos, sin, positions=pos[:-1]))
    bad = pos.clone()
    bad[17] = 70
    with pytest.raises(ValueError, match=r"^rotary.positions: must lie in \[0, 70\) .* from 0 to 70"):
        blockattn.block_attention(q, k, v, cu, rotary=R(cos, sin, positions=bad))
    bad[17] = -3
    with pytest.raises(ValueError, match=r"^rotary.positions: must lie in \[0, 70\) .* from -3 to 0"):
        blockattn.block_attention(q, k, v, cu, rotary=R(cos, sin, positions=bad))
    with pytest.raises(ValueError, match=r"^rotary.cos: requires grad"):
        blockattn.block_attention(q, k, v, cu, rotary=R(cos.clone().requires_grad_(True), sin))


def test_unchecked_out_of_range_positions_are_clamped():
    """check_inputs=False: out-of-range positions are not rejected; the kernel clamps them
    into the table (memory safety), which equals clamping the positions beforehand."""
    q, k, v, cu = make_inputs([70, 10], 2, 64, torch.bfloat16, seed=24)
    cos, sin = random_tables(50, 64, seed=25)
    positions = torch.arange(q.shape[0], device="cuda", dtype=torch.int32) * 7 - 100
    o = blockattn.block_attention(q, k, v, cu, check_inputs=False,
                                  rotary=blockattn.Rotary(cos, sin, positions=positions))
    clamped = blockattn.Rotary(cos, sin, positions=positions.clamp(0, 49))
    check(o, ref_forward(q, k, v, cu, clamped), torch.bfloat16)
    # Default positions beyond the table: clamped to its last row.
    o = blockattn.block_attention(q, k, v, cu, check_inputs=False, rotary=blockattn.Rotary(cos, sin))
    seq = reference_torch.sequence_positions(cu).clamp(0, 49).to(torch.int32)
    check(o, ref_forward(q, k, v, cu, blockattn.Rotary(cos, sin, positions=seq)), torch.bfloat16)


# --------------------------------------------------------------------------------------------
# Numerics: fused fp32 rotation against a separate bf16 rotary pass
# --------------------------------------------------------------------------------------------


def rel_error(x: torch.Tensor, ref: torch.Tensor) -> float:
    return (torch.linalg.vector_norm(x.double() - ref) / torch.linalg.vector_norm(ref)).item()


@pytest.mark.parametrize("tables", ["standard", "random"])
def test_fused_rotary_lowers_gradient_error(tables):
    """dq (and dk) error against float64 for (a) the fused kernels, (b) rotating q, k in bf16
    in a separate PyTorch pass (tables cast to bf16, as usual unfused code does) and then
    the plain kernels, and, for information, (c) a separate pass computing in fp32 and
    rounding once. Fused must not be worse than (b): it rounds dq once, in fp32 after the
    inverse rotation, where (b) rounds dq before its inverse rotation and again after."""
    rng = np.random.default_rng(2024)
    lengths = rng.integers(48, 81, size=64)  # about one block per sequence
    q, k, v, cu = make_inputs(lengths, 4, 128, torch.bfloat16, seed=26)
    P = int(lengths.max())
    cos, sin = standard_tables(P, 128) if tables == "standard" else random_tables(P, 128, seed=27)
    rotary = blockattn.Rotary(cos, sin)
    do = torch.randn_like(q)
    ref_dq, ref_dk, _ = ref_backward(q, k, v, do, cu, rotary)
    positions = reference_torch.sequence_positions(cu)

    def fused():
        leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
        blockattn.block_attention(*leaves, cu, rotary=rotary).backward(do)
        return leaves[0].grad, leaves[1].grad

    def separate(dtype):
        leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
        qr, kr = (reference_torch.rotate(t, cos, sin, positions, dtype=dtype).to(q.dtype) for t in leaves[:2])
        blockattn.block_attention(qr, kr, leaves[2], cu).backward(do)
        return leaves[0].grad, leaves[1].grad

    errors = {}
    for name, (dq, dk) in (("fused", fused()), ("separate bf16", separate(torch.bfloat16)),
                           ("separate fp32", separate(torch.float32))):
        errors[name] = (rel_error(dq, ref_dq), rel_error(dk, ref_dk))
    print(f"\nrelative Frobenius error vs float64 ({tables} tables, T={q.shape[0]}, H=4, D=128, bf16):")
    for name, (eq, ek) in errors.items():
        print(f"  {name:14s} dq {eq:.4e}   dk {ek:.4e}")
    fused_dq, fused_dk = errors["fused"]
    sep_dq, sep_dk = errors["separate bf16"]
    assert fused_dq <= 1.05 * sep_dq, errors
    assert fused_dk <= 1.05 * sep_dk, errors
