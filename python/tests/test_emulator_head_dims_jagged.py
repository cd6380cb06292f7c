"""The sm_90a backward above head dim 128 (half-depth slots: two rings, the
producer at 48 registers; docs/head-dims.md) on a longer jagged problem in
block-attn-emulate: lengths 0, 1, 63, 64, 65, 200, 130, 500, 7, so that CTAs of
8 tiles cross sequences and partial tiles fall inside a CTA, on 1 and 3 SMs,
against the float64 reference; plain and causal with dlse, whole slots, the
strided launch, the other output store paths and two staging buffers."""

from __future__ import annotations

import pathlib
import subprocess

import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

LENGTHS = (0, 1, 63, 64, 65, 200, 130, 500, 7)

CASES = [
    (em.Case("backward", 192, "bf16"), ()),
    (em.Case("backward", 256, "f16"), ()),
    (em.Case("backward", 192, "f16", causal=True, lse=True), ()),
    (em.Case("backward", 256, "bf16", causal=True, lse=True), ()),
    (em.Case("backward", 192, "bf16"), ("--slot-parts=1",)),
    (em.Case("backward", 256, "bf16"), ("--schedule=strided",)),
    (em.Case("backward", 192, "bf16"), ("--o-store=smem",)),
    (em.Case("backward", 256, "bf16"), ("--o-store=registers",)),
    # Two staging buffers: a tile's chunks alternate, and full and partial
    # tiles follow each other inside a CTA.
    (em.Case("backward", 192, "bf16"), ("--staging-buffers=2",)),
    (em.Case("backward", 256, "f16", causal=True, lse=True), ("--staging-buffers=2",)),
]


@pytest.mark.parametrize("sms", [1, 3])
@pytest.mark.parametrize("case,flags", CASES, ids=lambda x: x.name if isinstance(x, em.Case) else "".join(x))
def test_large_head_dim_backward_on_long_jagged_lengths(case, flags, sms, tmp_path):
    out = tmp_path / "k"
    subprocess.run([find_compiler(), "--chip=sm_90a", *case.compiler_flags("sm_90a"), *flags, "--quiet",
                    "-o", str(out)], check=True)
    base = out / f"k_{case.name}"
    tensors = em.make_problem(case, lengths=LENGTHS, seed=5)
    got = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, num_sms=sms)
    assert em.check_close(case, got, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (got[name] != em.POISON).all()
