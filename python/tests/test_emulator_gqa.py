"""Grouped-query attention's forward kernels in block-attn-emulate (issue 21).

The small jagged problem of test_emulator.py (lengths 0, 1, 63, 64, 65, 200)
with q of Hq heads and k, v of Hkv = Hq / G, through the compiled --group=G
kernels of both chips, against the float64 reference (which takes k and v
with fewer heads): G = 1 (the plain kernel on the same shapes), 2, 4, and
multi-query attention (Hkv = 1), with and without rotary. Each output element
is written, and the kernel's choice of k/v head matters: the same output misses
the reference of another head mapping (k/v head h % Hkv instead of h / G).

Runs with the repository's build (build/bin/block-attn-compile and
block-attn-emulate).
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)

# (chip, case, query heads): G = 1, 2, 4 and MQA (Hkv = 1) at G = 2 and 4.
CASES = [
    ("sm_90a", em.Case("forward", 64, "bf16"), 4),
    ("sm_90a", em.Case("forward", 64, "bf16", group=2), 4),
    ("sm_90a", em.Case("forward", 128, "bf16", group=4), 8),
    ("sm_90a", em.Case("forward", 64, "f16", group=2), 2),
    ("sm_90a", em.Case("forward", 128, "bf16", "half_split", group=4), 4),
    ("sm_100a", em.Case("forward", 64, "bf16", group=2), 4),
    ("sm_100a", em.Case("forward", 128, "bf16", group=4), 4),
    ("sm_100a", em.Case("forward", 64, "bf16", "interleaved", group=2), 2),
]


def case_id(x):
    return x if isinstance(x, str) else (x.name if isinstance(x, em.Case) else f"hq{x}")


def compile_case(case: em.Case, chip: str, directory) -> object:
    out = directory / chip
    subprocess.run([find_compiler(), *case.compiler_flags(chip), "-o", str(out), "--quiet"], check=True)
    return out / f"k_{case.name}"


@pytest.mark.parametrize("chip,case,heads", CASES, ids=case_id)
def test_grouped_forward_matches_reference(chip, case, heads, tmp_path):
    base = compile_case(case, chip, tmp_path)
    tensors = em.make_problem(case, heads=heads, seed=3)
    assert tensors["k"].shape[1] == heads // case.group and tensors["o"].shape[1] == heads
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5})
    want = em.reference_outputs(case, tensors)
    assert em.check_close(case, out, want) == []
    assert (out["o"] != em.POISON).all()
    kv_heads = heads // case.group
    if case.group > 1 and kv_heads > 1:
        # Another head mapping (query head h on k/v head h % Hkv) gives another output, which
        # the kernel's misses: the test sees which k/v head each query head reads.
        order = [h % kv_heads for h in range(heads)]
        wrong = dict(tensors)
        wrong["k"] = np.ascontiguousarray(tensors["k"][:, order])
        wrong["v"] = np.ascontiguousarray(tensors["v"][:, order])
        assert em.check_close(case, out, em.reference_outputs(case, wrong)) != []


def test_grouped_forward_one_sm_reuses_every_slot(tmp_path):
    """One SM runs every tile of the problem in one CTA (each ring slot reused many times),
    the grid a persistent launch on a small GPU gives."""
    case = em.Case("forward", 64, "bf16", group=4)
    base = compile_case(case, "sm_90a", tmp_path)
    tensors = em.make_problem(case, heads=4, seed=5)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": 0.125}, num_sms=1)
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []


def test_reference_of_repeated_heads():
    """The reference the tests compare with is attention on k and v repeated G times."""
    case = em.Case("forward", 64, "bf16", group=2)
    tensors = em.make_problem(case, heads=4, seed=3)
    grouped = em.reference_outputs(case, tensors)["o"]
    repeated = dict(tensors, k=np.repeat(tensors["k"], 2, axis=1), v=np.repeat(tensors["v"], 2, axis=1))
    plain = em.Case("forward", 64, "bf16")
    np.testing.assert_array_equal(grouped, em.reference_outputs(plain, repeated)["o"])


def test_make_problem_group_must_divide_heads():
    with pytest.raises(ValueError, match="heads: 3 is not a multiple of the case's group 2"):
        em.make_problem(em.Case("forward", 64, "bf16", group=2), heads=3)


# The grouped backward (dk and dv summed over the group inside one CTA): both chips, head dims
# 64 and 128, bf16 and f16, G = 2, 3, 4, 8 and MQA (Hkv = 1).
BACKWARD_CASES = [
    ("sm_90a", em.Case("backward", 64, "bf16", group=2), 4),
    ("sm_90a", em.Case("backward", 128, "bf16", group=4), 8),
    ("sm_90a", em.Case("backward", 64, "f16", group=8), 8),
    ("sm_90a", em.Case("backward", 128, "f16", group=2), 2),
    ("sm_100a", em.Case("backward", 64, "bf16", group=2), 4),
    ("sm_100a", em.Case("backward", 128, "bf16", group=4), 8),
    ("sm_100a", em.Case("backward", 64, "f16", group=8), 8),
    ("sm_100a", em.Case("backward", 128, "f16", group=2), 2),
    # MQA at G = 8 with head dim 128 (its PTX has neg.s32) and G = 3 (no shift).
    ("sm_90a", em.Case("backward", 128, "f16", group=8), 8),
    ("sm_100a", em.Case("backward", 128, "bf16", group=8), 8),
    ("sm_90a", em.Case("backward", 64, "bf16", group=3), 3),
    ("sm_100a", em.Case("backward", 64, "bf16", group=3), 6),
]


@pytest.mark.parametrize("chip,case,heads", BACKWARD_CASES, ids=case_id)
def test_grouped_backward_matches_reference(chip, case, heads, tmp_path):
    base = compile_case(case, chip, tmp_path)
    tensors = em.make_problem(case, heads=heads, seed=3)
    kv_heads = heads // case.group
    assert tensors["dk"].shape[1] == kv_heads and tensors["dq"].shape[1] == heads
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5})
    want = em.reference_outputs(case, tensors)
    assert em.check_close(case, out, want) == []
    for name in case.outputs:
        assert (out[name] != em.POISON).all(), name


def test_grouped_backward_one_sm_reuses_every_slot(tmp_path):
    """One CTA runs every item (the "kv" and "qdo" rings wrap many times)."""
    case = em.Case("backward", 64, "bf16", group=4)
    for chip in ("sm_90a", "sm_100a"):
        base = compile_case(case, chip, tmp_path)
        tensors = em.make_problem(case, heads=8, seed=5)
        out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                         {"softmax_scale": 0.125}, num_sms=1)
        assert em.check_close(case, out, em.reference_outputs(case, tensors)) == [], chip


@pytest.mark.parametrize("chip", ["sm_90a", "sm_100a"])
def test_grouped_backward_small_blocks_and_causal(chip, tmp_path):
    """Blocks of 32 tokens (two to a tile, masked) and the causal mask, grouped."""
    for case in (em.Case("backward", 64, "bf16", group=2, block_size=32),
                 em.Case("backward", 64, "bf16", group=2, causal=True)):
        base = compile_case(case, chip, tmp_path)
        tensors = em.make_problem(case, heads=4, seed=7)
        out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                         {"softmax_scale": 0.125})
        assert em.check_close(case, out, em.reference_outputs(case, tensors)) == [], case.name


def test_grouped_backward_column_parts(tmp_path):
    """The sm_90a grouped backward at head dim 128 splits dV, dK and dQ by columns over two
    consumer warpgroups that each take every slot of both rings: one SM (the rings wrap many
    times, both consumers release every slot), causal with dlse (each recomputes S and dS),
    fp16 at G = 8; and head dim 32, two CTAs per SM."""
    cases = [(em.Case("backward", 128, "bf16", group=4), 8, 1),
             (em.Case("backward", 128, "f16", group=8, causal=True, lse=True), 8, None),
             (em.Case("backward", 32, "bf16", group=2), 4, None)]
    for case, heads, num_sms in cases:
        base = compile_case(case, "sm_90a", tmp_path)
        tensors = em.make_problem(case, heads=heads, seed=11)
        kwargs = {"num_sms": num_sms} if num_sms else {}
        out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                         {"softmax_scale": case.head_dim ** -0.5}, **kwargs)
        assert em.check_close(case, out, em.reference_outputs(case, tensors)) == [], case.name
        for name in case.outputs:
            assert (out[name] != em.POISON).all(), (case.name, name)


def test_grouped_backward_one_column_part_still_runs(tmp_path):
    """num-consumers=1 keeps the one-consumer kernel at head dim 128."""
    case = em.Case("backward", 128, "bf16", group=2)
    out_dir = tmp_path / "one"
    subprocess.run([find_compiler(), *case.compiler_flags("sm_90a"), "--num-consumers=1",
                    "-o", str(out_dir), "--quiet"], check=True)
    base = out_dir / f"k_{case.name}"
    tensors = em.make_problem(case, heads=4, seed=13)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5})
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
