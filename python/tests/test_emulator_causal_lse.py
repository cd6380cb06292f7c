"""Causal blocks and the log-sum-exp (issue 21) in block-attn-emulate, both chips.

The kernels compiled with --causal and/or --lse run on the emulator's small jagged problem
(lengths 0, 1, 63, 64, 65, 200; two heads) and must match the float64 reference within the
GPU tests' tolerances: o, the log-sum-exp (f32 [H, T], natural log) and the gradients with a
random dlse. Each feature matters: the causal kernels' outputs miss the non-causal reference,
and the dlse kernels' gradients miss the reference without dlse (and the lse's gradient
checked here is the reference's, itself checked against finite differences and torch
autograd in test_reference_gqa_causal_lse.py).
"""

from __future__ import annotations

import dataclasses
import pathlib
import subprocess

import numpy as np
import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

CASES = [
    (chip, case)
    for chip in ("sm_90a", "sm_100a")
    for case in (
        em.Case("forward", 64, "bf16", causal=True),
        em.Case("forward", 128, "bf16", causal=True, lse=True),
        em.Case("forward", 64, "f16", lse=True),
        em.Case("backward", 64, "bf16", causal=True),
        em.Case("backward", 128, "bf16", causal=True, lse=True),
        em.Case("backward", 64, "f16", lse=True),
        em.Case("forward", 64, "bf16", "half_split", causal=True, lse=True),
        em.Case("backward", 64, "bf16", "interleaved", positions=True, causal=True),
        # head dims 32 and 96 (32-column chunks, 64-byte swizzle)
        em.Case("forward", 32, "bf16", causal=True, lse=True),
        em.Case("backward", 96, "f16", causal=True, lse=True),
    )
]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    root = tmp_path_factory.mktemp("emulated-causal-lse")
    cache = {}

    def get(case: em.Case, chip: str) -> pathlib.Path:
        if (case, chip) not in cache:
            out = root / chip
            subprocess.run([find_compiler(), *case.compiler_flags(chip), "-o", str(out), "--quiet"],
                           check=True)
            cache[case, chip] = out / f"k_{case.name}"
        return cache[case, chip]

    return get


def run(base: pathlib.Path, case: em.Case):
    tensors = em.make_problem(case)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5})
    return tensors, out


@pytest.mark.parametrize("chip,case", CASES, ids=lambda x: x if isinstance(x, str) else x.name)
def test_matches_reference(chip, case, kernels):
    tensors, out = run(kernels(case, chip), case)
    check_outputs(case, tensors, out)


def check_outputs(case: em.Case, tensors, out):
    """The emulated outputs match the float64 reference, every element is written, and each
    mode (causal, dlse) changes the result."""
    want = em.reference_outputs(case, tensors)
    assert em.check_close(case, out, want) == []
    for name in case.outputs:
        if name == "lse":
            assert not np.isnan(out[name]).any()
        else:
            assert (out[name] != em.POISON).all(), name
    # Each feature changes the result: without it, the same outputs miss the reference.
    if case.causal:
        plain = dataclasses.replace(case, causal=False)
        assert em.check_close(case, out, em.reference_outputs(plain, tensors)) != []
    if case.lse and case.kind == "backward":
        no_dlse = dataclasses.replace(case, lse=False)
        assert em.check_close(no_dlse, out, em.reference_outputs(no_dlse, tensors)) != []
