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

import dataclasses
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


def compile_with(case: em.Case, directory, *flags, chip: str = "sm_90a") -> object:
    out = directory / "_".join(f.strip("-").replace("=", "") for f in (chip, *flags))
    subprocess.run([find_compiler(), *case.compiler_flags(chip), *flags, "-o", str(out), "--quiet"],
                   check=True)
    return out / f"k_{case.name}"


@pytest.mark.parametrize("flags", [(), ("--num-consumers=2",)], ids=["one_consumer", "column_parts"])
def test_grouped_backward_launches(flags, tmp_path):
    """The sm_90a grouped backward's launches: persistent and strided, one CTA per SM at head
    dim 128 and two at 64 and 32 (the default), and with num-consumers=2 dV, dK and dQ split
    by columns over two consumer warpgroups that each take every slot of both rings. One SM
    (the rings wrap many times; every consumer releases every slot), causal with dlse (S and
    dS recomputed per part), fp16 at G = 8, and head dim 32."""
    cases = [(em.Case("backward", 128, "bf16", group=4), 8, 1),
             (em.Case("backward", 128, "f16", group=8, causal=True, lse=True), 8, None)]
    if not flags:
        cases += [(em.Case("backward", 64, "bf16", group=2), 4, 1),
                  (em.Case("backward", 32, "bf16", group=2, causal=True), 4, None)]
    for case, heads, num_sms in cases:
        emulate_and_check(case, heads, num_sms, tmp_path, flags, seed=11)


def emulate_and_check(case, heads, num_sms, tmp_path, flags, seed, chip="sm_90a"):
    """Compiles `case` for `chip` with `flags`, runs it in the emulator on `num_sms` SMs (None:
    the default) and checks every output against the float64 reference, each element written."""
    base = compile_with(case, tmp_path / case.name, *flags, chip=chip)
    tensors = em.make_problem(case, heads=heads, seed=seed)
    kwargs = {"num_sms": num_sms} if num_sms else {}
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, **kwargs)
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == [], case.name
    for name in case.outputs:
        assert (out[name] != em.POISON).all(), (case.name, name)


# group-roles=pipelined: a scores warpgroup (S, P, dP, dS, dQ) hands each query head's P and dS
# through the two-slot ring "pds" to an accumulate warpgroup (dV, dK over the group); both take
# every slot of "kv" and "qdo". (case, query heads, SMs): G = 2, 4, 8 and MQA, head dims 64 and
# 128, bf16 and f16, causal with dlse, blocks of 32, and one SM (every ring wraps many times).
PIPELINED_CASES = [
    (em.Case("backward", 64, "bf16", group=2), 4, None),
    (em.Case("backward", 128, "bf16", group=4), 8, 1),
    (em.Case("backward", 64, "f16", group=4), 8, 1),
    (em.Case("backward", 128, "f16", group=8, causal=True, lse=True), 8, None),
    (em.Case("backward", 64, "bf16", group=8, causal=True, lse=True), 8, 1),
    (em.Case("backward", 128, "bf16", group=2, block_size=32), 4, None),
    # G = 2 at head dim 128, block 64 (the accumulate warpgroup's loop of one trip hidden from
    # LLVM since session 20: it had spilled 28 bytes under pipelined-dq), causal with dlse.
    (em.Case("backward", 128, "f16", group=2, causal=True, lse=True), 4, 1),
]


@pytest.mark.parametrize("roles", ["pipelined", "pipelined-dq"])
@pytest.mark.parametrize("case,heads,num_sms", PIPELINED_CASES,
                         ids=lambda x: x.name if isinstance(x, em.Case) else str(x))
def test_grouped_backward_pipelined_roles(case, heads, num_sms, roles, tmp_path):
    """pipelined-dq: the same, with dQ = dS K made and stored by the accumulate warpgroup."""
    emulate_and_check(case, heads, num_sms, tmp_path, [f"--group-roles={roles}"], seed=13)


# The grouped backward with rotary embeddings (issue 21): K (and V with rotate_v) rotated once
# an item and each query head's Q in place, dQ turned back per query head and the group's dK
# (and dV) once. (chip, case, query heads, SMs, flags): both chips, head dims 64 and 128, bf16
# and f16, half-split and interleaved, a positions tensor, rotate_v, G = 2, 4, 8 and MQA, one SM
# (every ring wraps many times), blocks of 32, causal with dlse, and on sm_90a each group role (auto picks serial at head dim
# 64, pipelined or pipelined-dq at 128). The problem's lengths 0, 1, 63, 64, 65 and 200 give
# empty sequences, a one-token block and partial blocks.
ROTARY_BACKWARD_CASES = [
    ("sm_90a", em.Case("backward", 64, "bf16", "half_split", group=2), 4, None, []),
    ("sm_90a", em.Case("backward", 64, "bf16", "interleaved", positions=True, rotate_v=True, group=8), 8, 1, []),
    ("sm_90a", em.Case("backward", 128, "bf16", "interleaved", group=4), 8, None, []),
    ("sm_90a", em.Case("backward", 128, "f16", "half_split", positions=True, rotate_v=True, group=2), 2, None,
     []),
    ("sm_90a", em.Case("backward", 128, "bf16", "half_split", rotate_v=True, group=4), 4, 1, []),
    ("sm_90a", em.Case("backward", 128, "bf16", "interleaved", rotate_v=True, group=2), 4, None,
     ["--group-roles=serial"]),
    ("sm_90a", em.Case("backward", 64, "bf16", "half_split", positions=True, group=4), 8, None,
     ["--group-roles=pipelined-dq"]),
    ("sm_100a", em.Case("backward", 64, "bf16", "interleaved", group=2), 4, None, []),
    ("sm_100a", em.Case("backward", 64, "f16", "half_split", rotate_v=True, group=8), 8, 1, []),
    ("sm_100a", em.Case("backward", 128, "bf16", "half_split", group=4), 8, None, []),
    ("sm_100a", em.Case("backward", 128, "f16", "interleaved", positions=True, rotate_v=True, group=2), 2,
     None, []),
    ("sm_100a", em.Case("backward", 128, "bf16", "half_split", positions=True, group=4), 4, 1, []),
    # Blocks of 32 (two to a tile, masked) and causal with dlse.
    ("sm_90a", em.Case("backward", 64, "bf16", "interleaved", group=2, block_size=32), 4, None, []),
    ("sm_100a", em.Case("backward", 128, "f16", "interleaved", rotate_v=True, group=4, causal=True, lse=True),
     8, None, []),
]


@pytest.mark.parametrize("chip,case,heads,num_sms,flags", ROTARY_BACKWARD_CASES,
                         ids=lambda x: x.name if isinstance(x, em.Case) else str(x))
def test_grouped_rotary_backward_matches_reference(chip, case, heads, num_sms, flags, tmp_path):
    emulate_and_check(case, heads, num_sms, tmp_path, flags, seed=17, chip=chip)


@pytest.mark.parametrize("chip", ["sm_90a", "sm_100a"])
def test_grouped_rotary_backward_turns_the_gradients_back(chip, tmp_path):
    """The gradients are those of the rotated attention, turned back: they miss the reference
    without rotary embeddings, and the reference of the other layout."""
    case = em.Case("backward", 64, "bf16", "half_split", rotate_v=True, group=2)
    base = compile_with(case, tmp_path, chip=chip)
    tensors = em.make_problem(case, heads=4, seed=19)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5})
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
    plain = dataclasses.replace(case, rotary="none", rotate_v=False)
    other = dataclasses.replace(case, rotary="interleaved")
    for wrong in (plain, other):
        misses = em.check_close(case, out, em.reference_outputs(wrong, tensors))
        assert {m.split(":")[0] for m in misses} == {"dq", "dk", "dv"}, wrong.name
