"""The softmax's branch to a copy without masks for full tiles (`--softmax-full-tiles=on`,
warpspec.softmax {full_tile_path}; docs/performance-notes.md), in block-attn-emulate.

On a full tile (every key and query of the tile valid) the masks' selects keep every score
and every probability, so the copy without them computes the same values in the same order:
the outputs equal those of the kernel without the branch bit for bit, on lengths that give
full tiles, partial ones (a block's last tokens, a query half past the sequence's end) and
empty ones, on both chips; and they match the float64 reference.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler
from test_emulator_causal_lse import check_outputs

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

# Full and partial tiles at blocks of 64 and 128 (a partial block's later query half has no
# valid row at 1-64 tokens past a multiple of 128).
LENGTHS = (0, 1, 63, 64, 65, 128, 129, 191, 192, 256, 3)

CASES = [
    (em.Case("forward", 64, "bf16"), "sm_90a"),
    (em.Case("backward", 64, "f16"), "sm_90a"),
    (em.Case("backward", 32, "bf16", block_size=128), "sm_90a"),
    (em.Case("backward", 64, "f16", lse=True, block_size=128), "sm_90a"),
    (em.Case("forward", 128, "bf16", "half_split", block_size=128), "sm_90a"),
    (em.Case("backward", 64, "bf16", group=2), "sm_90a"),
    (em.Case("forward", 64, "f16", lse=True), "sm_100a"),
    (em.Case("backward", 64, "bf16", block_size=128), "sm_100a"),
]


def compile_with(case, chip, flags, out):
    """`case` compiled for `chip` with `flags` (compiler options) into `out`: its files' stem."""
    subprocess.run([find_compiler(), *case.compiler_flags(chip), *flags, "-o", str(out),
                    "--quiet"], check=True)
    return out / f"k_{case.name}"


def check_flags_keep_outputs(case, chip, flags, lengths, tmp_path, seed):
    """With `flags` the kernel matches the float64 reference, and its outputs equal those of
    the kernel without them bit for bit (the same tensors, the same emulator schedule)."""
    tensors = em.make_problem(case, lengths=lengths)
    outs = []
    for name, options in (("with", flags), ("without", [])):
        base = compile_with(case, chip, options, tmp_path / name)
        outs.append(em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                               {"softmax_scale": case.head_dim ** -0.5}, num_sms=2, seed=seed))
    check_outputs(case, tensors, outs[0])
    for name in case.outputs:
        np.testing.assert_array_equal(outs[0][name], outs[1][name], err_msg=name)


def ptx_with_and_without(case, flags, tmp_path):
    """The sm_90a PTX of `case` with `flags` and without."""
    return tuple(compile_with(case, "sm_90a", options, tmp_path / name).with_suffix(".ptx")
                 .read_text() for name, options in (("with", flags), ("without", [])))


@pytest.mark.parametrize("case,chip", CASES, ids=lambda x: x if isinstance(x, str) else x.name)
def test_full_tile_path_equals_masked_softmax(case, chip, tmp_path):
    check_flags_keep_outputs(case, chip, ["--softmax-full-tiles=on"], LENGTHS, tmp_path, seed=3)


def test_full_tile_path_is_in_the_ptx(tmp_path):
    """The option reaches the kernel: twice the softmax's exponentials, and the PTX differs
    from the default's."""
    case = em.Case("backward", 64, "bf16", block_size=128)
    full, masked = ptx_with_and_without(case, ["--softmax-full-tiles=on"], tmp_path)
    assert full.count("ex2.approx.ftz.f32") == 2 * masked.count("ex2.approx.ftz.f32")
