"""The grouped-query backward above head dim 128 (issue 21) in block-attn-emulate.

dK and dV summed over a group of the whole head dim fit neither the sm_90a
consumer's registers nor the sm_100a tensor memory next to S and dP, so an
item (a block and a k/v head) is made in D / 64 passes over 64-column chunks
of the head dim (KernelPlan::groupPasses; docs/pipeline.md, "Grouped-query
attention"): each pass recomputes every query head's S, P, dP and dS and sums
that chunk of dV and dK over the group; dQ's chunk is stored per head and
pass. Checked against the float64 reference (dk, dv summed over the group) on
the jagged lengths 0, 1, 63, 64, 65, 200 (empty sequences, a one-token block,
partial tiles), on 1 and 3 SMs (one SM: every ring wraps many times), both
chips, head dims 192 and 256, bf16 and f16, G = 2, 4 and MQA (Hkv = 1), blocks
of 16, 32 and 64, causal and dlse. Every output element is written.

A small sample for `make check`; the whole matrix is behind
    python3 scripts/emulate_kernels.py --kinds backward --head-dims 192,256 \
        --block-sizes 16,32,64 --rotary none --groups 2,4 --modes plain,causal_lse
"""

from __future__ import annotations

import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

# (chip, case, query heads, SMs): query heads / G k/v heads (MQA where it is 1).
CASES = [
    ("sm_90a", em.Case("backward", 192, "bf16", group=2), 4, 3),
    ("sm_90a", em.Case("backward", 256, "f16", group=4), 4, 1),  # MQA
    ("sm_90a", em.Case("backward", 256, "bf16", group=2, causal=True, lse=True), 4, 1),
    ("sm_90a", em.Case("backward", 192, "f16", group=4, block_size=16), 8, 3),
    ("sm_90a", em.Case("backward", 256, "bf16", group=2, block_size=32, causal=True), 2, 3),  # MQA
    ("sm_100a", em.Case("backward", 192, "f16", group=2), 4, 1),
    ("sm_100a", em.Case("backward", 256, "bf16", group=4), 4, 3),  # MQA
    ("sm_100a", em.Case("backward", 192, "bf16", group=4, causal=True, lse=True), 8, 3),
    ("sm_100a", em.Case("backward", 256, "f16", group=2, block_size=32), 4, 1),
    ("sm_100a", em.Case("backward", 192, "bf16", group=2, block_size=16, lse=True), 2, 3),  # MQA
]


def case_id(x):
    if isinstance(x, em.Case):
        return x.name
    return str(x)


def emulate(chip, case, heads, sms, emulated_kernel, seed=23):
    base = emulated_kernel(case, chip)
    tensors = em.make_problem(case, heads=heads, seed=seed)
    assert tensors["dk"].shape[1] == heads // case.group and tensors["dq"].shape[1] == heads
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, num_sms=sms)
    return tensors, out


@pytest.mark.parametrize("chip,case,heads,sms", CASES, ids=case_id)
def test_grouped_large_head_dim_backward_matches_reference(chip, case, heads, sms, emulated_kernel):
    tensors, out = emulate(chip, case, heads, sms, emulated_kernel)
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (out[name] != em.POISON).all(), name
