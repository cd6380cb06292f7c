"""Register tiles written to shared memory with stmatrix (`--stmatrix-writes=on`,
warpspec.write / warpspec.store {stmatrix}; docs/performance-notes.md), in block-attn-emulate.

stmatrix.x4 writes four 8x8 matrices of 16-bit pairs a warp: the same bytes in the same
places as a 4-byte st.shared a pair. So P and dS for the products that read them from shared
memory, and the outputs staged for their stores, are the same, and the outputs equal those of
the kernel without it bit for bit, on both chips, at head dims whose tiles are 16, 32 and 64
columns wide (the 32- and 64-byte swizzles' narrower chunks); they match the float64
reference. The emulator checks each row address's alignment and bounds, and the async proxy's
fence before the tensor cores or a bulk store read what stmatrix wrote.
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

LENGTHS = (0, 1, 63, 64, 65, 128, 129, 191, 256, 3)

CASES = [
    (em.Case("forward", 64, "bf16"), "sm_90a"),
    (em.Case("backward", 128, "f16"), "sm_90a"),
    (em.Case("backward", 64, "bf16", block_size=128), "sm_90a"),
    (em.Case("backward", 32, "f16", block_size=128), "sm_90a"),
    (em.Case("backward", 96, "bf16"), "sm_90a"),
    (em.Case("forward", 64, "bf16", "interleaved", block_size=128), "sm_90a"),
    (em.Case("backward", 64, "bf16", group=2, causal=True), "sm_90a"),
    (em.Case("forward", 128, "f16", lse=True), "sm_100a"),
    (em.Case("backward", 64, "bf16", block_size=128), "sm_100a"),
]


def _emulate(case, chip, flags, tensors, tmp_path):
    out = tmp_path / ("stmatrix" if flags else "st_shared")
    subprocess.run([find_compiler(), *case.compiler_flags(chip), *flags, "-o", str(out),
                    "--quiet"], check=True)
    base = out / f"k_{case.name}"
    return em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                      {"softmax_scale": case.head_dim ** -0.5}, num_sms=2, seed=5)


@pytest.mark.parametrize("case,chip", CASES, ids=lambda x: x if isinstance(x, str) else x.name)
def test_stmatrix_writes_equal_st_shared(case, chip, tmp_path):
    tensors = em.make_problem(case, lengths=LENGTHS)
    written = _emulate(case, chip, ["--stmatrix-writes=on"], tensors, tmp_path)
    check_outputs(case, tensors, written)
    plain = _emulate(case, chip, [], tensors, tmp_path)
    for name in case.outputs:
        np.testing.assert_array_equal(written[name], plain[name], err_msg=name)


def test_stmatrix_writes_replace_st_shared(tmp_path):
    """The option reaches the kernel: the block-128 backward's P, dS and staged gradients
    leave by stmatrix, with no 4-byte st.shared left."""
    case = em.Case("backward", 64, "bf16", block_size=128)
    ptx = {}
    for name, flags in (("on", ["--stmatrix-writes=on"]), ("off", [])):
        subprocess.run([find_compiler(), *case.compiler_flags("sm_90a"), *flags, "-o",
                        str(tmp_path / name), "--quiet"], check=True)
        ptx[name] = (tmp_path / name / f"k_{case.name}.ptx").read_text()
    assert "stmatrix.sync.aligned.m8n8.x4.shared.b16" not in ptx["off"]
    assert ptx["on"].count("stmatrix.sync.aligned.m8n8.x4.shared.b16") * 4 == \
        ptx["off"].count("st.shared.b32")
    assert "st.shared.b32" not in ptx["on"]
