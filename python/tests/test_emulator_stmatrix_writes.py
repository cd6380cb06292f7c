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

import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler
from test_emulator_softmax_full_tiles import check_flags_keep_outputs, ptx_with_and_without

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


@pytest.mark.parametrize("case,chip", CASES, ids=lambda x: x if isinstance(x, str) else x.name)
def test_stmatrix_writes_equal_st_shared(case, chip, tmp_path):
    check_flags_keep_outputs(case, chip, ["--stmatrix-writes=on"], LENGTHS, tmp_path, seed=5)


def test_stmatrix_writes_replace_st_shared(tmp_path):
    """The option reaches the kernel: the block-128 backward's P, dS and staged gradients
    leave by stmatrix, with no 4-byte st.shared left."""
    case = em.Case("backward", 64, "bf16", block_size=128)
    on, off = ptx_with_and_without(case, ["--stmatrix-writes=on"], tmp_path)
    assert "stmatrix.sync.aligned.m8n8.x4.shared.b16" not in off
    assert on.count("stmatrix.sync.aligned.m8n8.x4.shared.b16") * 4 == off.count("st.shared.b32")
    assert "st.shared.b32" not in on
