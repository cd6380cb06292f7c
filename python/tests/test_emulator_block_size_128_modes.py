"""Block size 128 on sm_90a with causal blocks, the log-sum-exp and the rotary backward
(issue 20; docs/block-sizes.md), in block-attn-emulate against the float64 reference.

A 128-token block is one work item whose two 64-row query halves run one after the other:
the second half's causal mask is offset by 64 rows (`warpspec.softmax ... causal
row_offset(64)`), its log-sum-exp is stored and its dlse read at the half's rows, and the
rotary backward turns dQ back per query half and dK, dV per key half (each at its own rows and
positions). The lengths cover empty and one-token sequences, partial blocks around the block
and its half (63-65, 127-129, 191-193), a long sequence and tiny ones. Each feature matters:
the causal outputs miss the non-causal reference, the dlse gradients miss the reference
without dlse, and everything misses the block-64 reference. The sm_100a kernels at 128 are
test_emulator_block_size_128_sm100a_modes.py's, (rotary forward)
test_emulator_rotary_b128_sm100a.py's and (rotary backward)
test_emulator_rotary_backward_b128_sm100a.py's.
"""

from __future__ import annotations

import dataclasses
import pathlib
import subprocess

import numpy as np
import pytest

from blockattn import emulation as em
from blockattn import reference
from blockattn._kernels import find_compiler
from test_emulator_causal_lse import check_outputs

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

LENGTHS = (0, 1, 127, 128, 129, 300, 2, 0, 3, 5, 64, 65, 191, 193, 1, 63)

CASES = [
    # causal and the log-sum-exp, forward and backward, every head dim and both dtypes
    em.Case("forward", 128, "bf16", causal=True, lse=True, block_size=128),
    em.Case("forward", 64, "f16", causal=True, block_size=128),
    em.Case("forward", 32, "bf16", lse=True, block_size=128),
    em.Case("forward", 96, "f16", causal=True, lse=True, block_size=128),
    em.Case("backward", 128, "bf16", causal=True, block_size=128),
    em.Case("backward", 128, "f16", lse=True, block_size=128),
    em.Case("backward", 64, "bf16", causal=True, lse=True, block_size=128),
    em.Case("backward", 32, "f16", causal=True, lse=True, block_size=128),
    em.Case("backward", 96, "bf16", causal=True, lse=True, block_size=128),
    # the rotary backward: both table layouts, positions, rotate_v, every head dim
    em.Case("backward", 128, "bf16", "half_split", block_size=128),
    em.Case("backward", 128, "f16", "interleaved", positions=True, rotate_v=True, block_size=128),
    em.Case("backward", 64, "bf16", "interleaved", block_size=128),
    em.Case("backward", 64, "f16", "half_split", positions=True, block_size=128),
    em.Case("backward", 96, "bf16", "half_split", rotate_v=True, block_size=128),
    em.Case("backward", 32, "f16", "interleaved", positions=True, rotate_v=True, block_size=128),
    # all of it at once
    em.Case("backward", 128, "bf16", "half_split", positions=True, rotate_v=True, causal=True, lse=True,
            block_size=128),
    em.Case("forward", 64, "bf16", "interleaved", rotate_v=True, causal=True, lse=True, block_size=128),
]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    root = tmp_path_factory.mktemp("emulated-b128-modes")
    cache = {}

    def get(case: em.Case) -> pathlib.Path:
        if case not in cache:
            subprocess.run([find_compiler(), *case.compiler_flags("sm_90a"), "-o", str(root), "--quiet"],
                           check=True)
            cache[case] = root / f"k_{case.name}"
        return cache[case]

    return get


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_matches_reference(case, kernels):
    tensors = em.make_problem(case, lengths=LENGTHS)
    base = kernels(case)
    # Two SMs: the persistent backward takes several blocks a CTA.
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, num_sms=2)
    check_outputs(case, tensors, out)
    as64 = dataclasses.replace(case, block_size=64)
    assert em.check_close(case, out, em.reference_outputs(as64, tensors)) != []


def test_reference_dlse_at_128_is_torch_autograd():
    """The reference these tests use, at block size 128 with causal blocks and dlse, against
    torch autograd of a dense float64 torch reference (o and lse both receive gradients)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    lengths = (1, 129, 0, 300, 64)
    cu = reference.make_cu_seqlens(list(lengths))
    T, H, D, scale = int(cu[-1]), 2, 16, 0.3
    q, k, v, do = (rng.standard_normal((T, H, D)) for _ in range(4))
    dlse = rng.standard_normal((H, T))
    dq, dk, dv = reference.backward(q, k, v, do, cu, block_size=128, softmax_scale=scale, causal=True,
                                    dlse=dlse)
    tq, tk, tv = (torch.tensor(x, requires_grad=True) for x in (q, k, v))
    outs, lses = [], []
    for lo, hi in zip(cu[:-1], cu[1:]):
        for start in range(int(lo), int(hi), 128):
            end = min(start + 128, int(hi))
            s = scale * torch.einsum("ihd,jhd->hij", tq[start:end], tk[start:end])
            n = end - start
            s = s.masked_fill(~torch.tril(torch.ones(n, n, dtype=torch.bool)), -torch.inf)
            outs.append(torch.einsum("hij,jhd->ihd", torch.softmax(s, -1), tv[start:end]))
            lses.append(torch.logsumexp(s, -1))
    torch.autograd.backward((torch.cat(outs), torch.cat(lses, dim=1)),
                            (torch.tensor(do), torch.tensor(dlse)))
    for got, want in ((dq, tq), (dk, tk), (dv, tv)):
        np.testing.assert_allclose(got, want.grad.numpy(), rtol=1e-9, atol=1e-10)
