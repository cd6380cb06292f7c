"""Rotary embeddings at head dims 192 and 256 (issue 20; docs/head-dims.md,
docs/rotary.md) in block-attn-emulate against the float64 reference: the
forward and the backward on sm_90a and sm_100a, half-split and interleaved
tables, a positions tensor, rotate_v, both dtypes, on the jagged lengths.

Above head dim 128 the outputs are made in 64-column chunks of the head dim,
and the backward turns each gradient back a rotation group at a time: chunk j
with chunk j + 2 at 256 half-split (a half-split pair's columns are 128
apart), all three chunks at 192 (96 apart, across chunk boundaries), each
chunk alone interleaved (warpspec.concat_columns / extract_columns and
warpspec.rotate_tile's head_dim and pair_offset). The sm_100a rotary
warpgroup rotates the load ring's slot in place there. A sample covering
every class, not the full matrix (that is `scripts/emulate_kernels.py
--head-dims 192,256 --rotary half_split,interleaved`)."""

from __future__ import annotations

import re
import subprocess

import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

# Lengths crossing every kind of tile edge (empty, one token, one short of a
# block, a block, one past it, several blocks with a partial last one).
LENGTHS = (0, 1, 63, 64, 65, 200, 130, 7)

CASES = [
    ("sm_90a", em.Case("forward", 192, "bf16", "half_split")),
    ("sm_90a", em.Case("forward", 256, "f16", "interleaved", positions=True, rotate_v=True)),
    ("sm_90a", em.Case("backward", 192, "f16", "half_split", rotate_v=True)),
    ("sm_90a", em.Case("backward", 256, "bf16", "half_split", positions=True)),
    ("sm_90a", em.Case("backward", 192, "bf16", "interleaved", positions=True)),
    ("sm_90a", em.Case("backward", 256, "f16", "interleaved", rotate_v=True)),
    ("sm_100a", em.Case("forward", 256, "bf16", "half_split", positions=True, rotate_v=True)),
    ("sm_100a", em.Case("forward", 192, "f16", "interleaved")),
    ("sm_100a", em.Case("backward", 256, "bf16", "half_split", rotate_v=True)),
    ("sm_100a", em.Case("backward", 192, "bf16", "half_split", positions=True)),
    ("sm_100a", em.Case("backward", 256, "f16", "interleaved", positions=True)),
    ("sm_100a", em.Case("backward", 192, "f16", "interleaved", rotate_v=True)),
]


@pytest.mark.parametrize("chip,case", CASES, ids=lambda x: x if isinstance(x, str) else x.name)
def test_rotary_large_head_dims_match_reference(chip, case, tmp_path):
    out = tmp_path / "k"
    subprocess.run([find_compiler(), *case.compiler_flags(chip), "--quiet", "-o", str(out)], check=True)
    base = out / f"k_{case.name}"
    tensors = em.make_problem(case, lengths=LENGTHS, seed=3)
    got = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, num_sms=3)
    assert em.check_close(case, got, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (got[name] != em.POISON).all()
    # The rotation matters: the outputs miss the reference without it, and
    # without the variant's positions tensor or rotated v.
    plain = em.Case(case.kind, case.head_dim, case.dtype)
    assert em.check_close(case, got, em.reference_outputs(plain, tensors)) != []
    if case.positions:
        no_positions = {name: value for name, value in tensors.items() if name != "positions"}
        assert em.check_close(case, got, em.reference_outputs(case, no_positions)) != []
    if case.rotate_v:
        unrotated_v = em.Case(case.kind, case.head_dim, case.dtype, case.rotary, positions=case.positions)
        assert em.check_close(case, got, em.reference_outputs(unrotated_v, tensors)) != []


def test_planted_second_group_reads_the_first_groups_angles(tmp_path):
    """A planted bug: the second rotation group of the half-split backward at 256 (chunks 1 and
    3, pairs 64-127) reads the angles of pair 0 on instead of pair 64 on (its table reads lose
    their 256-byte offset into the row). The emulator sees dq and dk wrong."""
    case = em.Case("backward", 256, "bf16", "half_split")
    out = tmp_path / "k"
    subprocess.run([find_compiler(), *case.compiler_flags("sm_90a"), "--quiet", "-o", str(out)], check=True)
    base = out / f"k_{case.name}"
    text = base.with_suffix(".ptx").read_text()
    planted, count = re.subn(r"(ld\.global\.b32\s+%r\d+, \[%rd\d+)\+256\]", r"\1]", text)
    assert count > 0
    ptx = tmp_path / "planted.ptx"
    ptx.write_text(planted)
    tensors = em.make_problem(case, lengths=LENGTHS, seed=3)
    got = em.emulate(ptx, base.with_suffix(".json"), tensors, {"softmax_scale": case.head_dim ** -0.5}, num_sms=3)
    failures = em.check_close(case, got, em.reference_outputs(case, tensors))
    assert any(f.startswith("dq") for f in failures) and any(f.startswith("dk") for f in failures), failures
    assert not any(f.startswith("dv") for f in failures), failures
