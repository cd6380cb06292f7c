"""The compiled kernels in block-attn-emulate, the CPU emulator of the PTX we emit.

sm_90a: every forward, backward and rotary kernel of the fixture's cases runs
on the small jagged problem (lengths 0, 1, 63, 64, 65, 200; two heads) and must
match the float64 reference within the GPU tests' tolerances, and the H200's
outputs on the same inputs (python/tests/data/emulator_fixture_h200.npz,
recorded with scripts/record_emulator_fixture.py): the same elements written,
the values within the same tolerances.

sm_100a: the same problem through the tcgen05 kernels, against the reference
(no Blackwell GPU has run them; docs/emulator.md says what this rests on).

Planted bugs: each edit of a correct kernel's PTX that a GPU would suffer
from must be caught, by a report or by wrong numerics.

Runs with the repository's build (build/bin/block-attn-compile and
block-attn-emulate); about a minute on two cores.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import re
import subprocess

import numpy as np
import pytest

from blockattn import emulation as em
from blockattn._kernels import find_compiler

FIXTURE = pathlib.Path(__file__).parent / "data" / "emulator_fixture_h200.npz"

SM90_CASES = list(em.FIXTURE_CASES)
SM100_CASES = [
    em.Case("forward", 64, "bf16"),
    em.Case("forward", 128, "bf16"),
    em.Case("forward", 64, "f16"),
    em.Case("backward", 64, "bf16"),
    em.Case("backward", 128, "bf16"),
    em.Case("forward", 128, "bf16", "half_split"),
    em.Case("forward", 64, "bf16", "interleaved"),
    em.Case("backward", 64, "bf16", "half_split"),
    em.Case("backward", 128, "bf16", "interleaved"),
]

pytestmark = pytest.mark.skipif(
    find_compiler() is None or em.find_emulator() is None,
    reason="needs build/bin/block-attn-compile and block-attn-emulate (make build)",
)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    root = tmp_path_factory.mktemp("emulated-kernels")
    cache = {}

    def get(case: em.Case, chip: str) -> pathlib.Path:
        key = (case, chip)
        if key not in cache:
            out = root / chip
            subprocess.run([find_compiler(), *case.compiler_flags(chip), "-o", str(out), "--quiet"],
                           check=True)
            cache[key] = out / f"k_{case.name}"
        return cache[key]

    return get


def run(base: pathlib.Path, case: em.Case, ptx: pathlib.Path | None = None, **kw):
    tensors = em.make_problem(case)
    out = em.emulate(ptx or base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, **kw)
    return tensors, out


@pytest.fixture(scope="module")
def fixture():
    return np.load(FIXTURE)


@pytest.mark.parametrize("case", SM90_CASES, ids=lambda c: c.name)
def test_sm90a_matches_reference_and_h200(case, kernels, fixture):
    tensors, out = run(kernels(case, "sm_90a"), case)
    assert em.inputs_digest(tensors) == str(fixture[f"{case.name}/digest"])
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        shape = tuple(fixture[f"{case.name}/{name}_shape"])
        gpu_written = np.unpackbits(fixture[f"{case.name}/{name}_written"])[: int(np.prod(shape))]
        emu_written = (out[name] != em.POISON).ravel()
        assert (gpu_written.astype(bool) == emu_written).all(), f"{name}: written elements differ"
        assert bool(fixture[f"{case.name}/{name}_guards_untouched"])
        if f"{case.name}/{name}" in fixture.files:
            gpu = {name: em.bits_to_float(fixture[f"{case.name}/{name}"], case.dtype)}
            single = em.Case(case.kind, case.head_dim, case.dtype, case.rotary)
            got = {n: out[n] for n in single.outputs}
            want = {n: (gpu[n] if n == name else em.reference_outputs(case, tensors)[n])
                    for n in single.outputs}
            assert em.check_close(single, got, want) == [], f"{name}: emulator vs H200"


@pytest.mark.parametrize("case", SM100_CASES, ids=lambda c: c.name)
def test_sm100a_matches_reference(case, kernels):
    tensors, out = run(kernels(case, "sm_100a"), case)
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (out[name] != em.POISON).all()


# The rotary variants of the prebuilt set (a positions tensor, rotate_v, both): a sample per
# chip; scripts/emulate_kernels.py runs all 144 kernels.
VARIANT_CASES = [
    ("sm_90a", em.Case("forward", 64, "bf16", "half_split", positions=True)),
    ("sm_90a", em.Case("backward", 64, "f16", "interleaved", positions=True, rotate_v=True)),
    # Positions read as the tile arrives, the angles after the softmax (rotary-angles
    # after-softmax, the default at head dim 64 with positions and without rotate_v).
    ("sm_90a", em.Case("backward", 64, "bf16", "half_split", positions=True)),
    ("sm_100a", em.Case("forward", 128, "bf16", "interleaved", rotate_v=True)),
    ("sm_100a", em.Case("backward", 64, "bf16", "half_split", positions=True, rotate_v=True)),
    ("sm_100a", em.Case("backward", 128, "f16", "interleaved", positions=True)),
    # Head dims 32 and 96 (64-byte-swizzled tiles; at 96 the half-split pairs cross chunks
    # and 96 of the 128 threads rotate).
    ("sm_90a", em.Case("forward", 96, "bf16", "half_split", positions=True)),
    ("sm_90a", em.Case("backward", 32, "f16", "interleaved", rotate_v=True)),
    ("sm_90a", em.Case("backward", 96, "bf16", "half_split", rotate_v=True)),
    ("sm_100a", em.Case("forward", 32, "bf16", "half_split", rotate_v=True)),
    ("sm_100a", em.Case("backward", 96, "f16", "interleaved", positions=True, rotate_v=True)),
]


@pytest.mark.parametrize("chip,case", VARIANT_CASES, ids=lambda x: x if isinstance(x, str) else x.name)
def test_rotary_variants_match_reference(chip, case, kernels):
    tensors, out = run(kernels(case, chip), case)
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
    # The variant matters: the same outputs miss the reference without it.
    if case.positions:
        plain = {name: value for name, value in tensors.items() if name != "positions"}
        assert em.check_close(case, out, em.reference_outputs(case, plain)) != []
    if case.rotate_v:
        unrotated_v = em.Case(case.kind, case.head_dim, case.dtype, case.rotary, positions=case.positions)
        assert em.check_close(case, out, em.reference_outputs(unrotated_v, tensors)) != []


# The sm_90a rotary warpgroup (--rotary-warpgroup=on; by default in the forward at head dim 128,
# with two replicas and one consumer, and in the backward): rotary warpgroups rotate each slot in place and signal the
# consumers through a ring without buffers. One SM puts all 18 tiles of the problem in one CTA,
# so every slot of the ring is reused: the first version's consumers of the load ring (one rotary
# replica, two compute replicas) took the wrong entries and deadlocked there, and only there
# (docs/rotary.md, the optimization log, run 7). With two rotary replicas each takes every second
# entry of both rings.
# The backward at head dim 128 has one rotary warpgroup of 208 registers (two of 104 with
# --rotary-warpgroups=2, the interleaved positions default until session 27) and one consumer
# of 256 registers that reads its tile's angles once and stores through smem; the
# half-split forward at head dim 64 without positions or rotate_v launches chunked when
# tiles-per-cta is given (by default from session 28 to 36), two CTAs an SM, each with a rotary
# warpgroup of 72 registers next to a consumer of 128 (16 tiles a CTA: on one SM the 18 tiles
# take two CTAs), and so do the others when asked, with rotate_v 64 and 136 (32 tiles); by
# default the forwards at 64 launch persistent (session 28; the half-split one since session 37,
# claiming its tiles): interleaved one rotary warpgroup and two consumers, half-split or with
# positions or rotate_v two and one. The backward at head dim
# 64 has one rotary warpgroup of 208 registers and one consumer of 256 since session 28, two
# consumers of 184 next to one of 104 with a positions tensor.
ONE_RWG = [("load", 40), ("rotary", 104), ("compute", 184)]
TWO_RWG = [("load", 40), ("rotary", 104), ("compute", 256)]
# One rotary warpgroup and one consumer (three warpgroups, a pool of 504): the rotary
# warpgroup takes what the consumer's 256 leave.
ONE_RWG_ONE_CONSUMER = [("load", 40), ("rotary", 208), ("compute", 256)]
CHUNKED_RWG = [("load", 40), ("rotary", 72), ("compute", 128)]
CHUNKED_RWG_V = [("load", 40), ("rotary", 64), ("compute", 136)]
RWG_CASES = [
    (em.Case("forward", 128, "bf16", "half_split"), (), TWO_RWG),
    (em.Case("forward", 128, "bf16", "half_split"), ("--rotary-warpgroups=1",), ONE_RWG),
    (em.Case("forward", 128, "f16", "interleaved", positions=True, rotate_v=True), (), TWO_RWG),
    (em.Case("forward", 64, "f16", "interleaved", positions=True, rotate_v=True), (), TWO_RWG),
    (em.Case("forward", 64, "f16", "interleaved", positions=True, rotate_v=True),
     ("--schedule=chunked",), CHUNKED_RWG_V),
    (em.Case("forward", 64, "bf16", "interleaved"), (), ONE_RWG),
    (em.Case("forward", 64, "bf16", "half_split"), (), TWO_RWG),
    (em.Case("forward", 64, "bf16", "half_split"), ("--tiles-per-cta=16",), CHUNKED_RWG),
    (em.Case("forward", 64, "bf16", "interleaved"), ("--schedule=chunked",), CHUNKED_RWG),
    (em.Case("forward", 64, "bf16", "half_split", positions=True), ("--schedule=strided",), TWO_RWG),
    (em.Case("backward", 64, "bf16", "interleaved", rotate_v=True), (), ONE_RWG_ONE_CONSUMER),
    (em.Case("backward", 64, "bf16", "interleaved", rotate_v=True), ("--num-consumers=2",), ONE_RWG),
    (em.Case("backward", 64, "f16", "half_split", positions=True), (), ONE_RWG),
    (em.Case("backward", 64, "bf16", "half_split"), ("--rotary-warpgroups=2",), TWO_RWG),
    (em.Case("backward", 128, "bf16", "half_split", rotate_v=True), (), ONE_RWG_ONE_CONSUMER),
    (em.Case("backward", 128, "f16", "interleaved", positions=True), (), ONE_RWG_ONE_CONSUMER),
    (em.Case("backward", 128, "bf16", "interleaved", positions=True, rotate_v=True),
     ("--rotary-warpgroups=2",), TWO_RWG),
    # positions-load=producer (session 29): the producer copies each tile's positions into
    # its slot (cp.async, completing on the slot's full barrier), where the rotary
    # warpgroups and the backward's consumers read them.
    (em.Case("backward", 128, "bf16", "interleaved", positions=True),
     ("--positions-load=producer",), ONE_RWG_ONE_CONSUMER),
    (em.Case("backward", 64, "f16", "half_split", positions=True, rotate_v=True),
     ("--positions-load=producer",), ONE_RWG),
    (em.Case("backward", 64, "bf16", "interleaved", positions=True),
     ("--positions-load=producer",), ONE_RWG),
    (em.Case("forward", 128, "f16", "half_split", positions=True, rotate_v=True),
     ("--positions-load=producer",), TWO_RWG),
]


@pytest.mark.parametrize("case,flags,registers", RWG_CASES,
                         ids=[c.name + "".join(f[1:] for f in flags) for c, flags, _ in RWG_CASES])
@pytest.mark.parametrize("sms", [1, 2])
def test_sm90a_rotary_warpgroup(case, flags, registers, sms, tmp_path):
    out = tmp_path / "k"
    subprocess.run([find_compiler(), *case.compiler_flags("sm_90a"), "--rotary-warpgroup=on",
                    *flags, "-o", str(out), "--quiet"], check=True)
    base = out / f"k_{case.name}"
    manifest = json.loads(base.with_suffix(".json").read_text())
    assert [(p["role"], p["registers"]) for p in manifest["partitions"]] == registers
    tensors, result = run(base, case, num_sms=sms, seed=7)
    assert em.check_close(case, result, em.reference_outputs(case, tensors)) == []


# The sm_90a rotary kernels at head dim 128 launched chunked, one CTA an SM, 16 tiles a CTA
# (--tiles-per-cta=16; the launch took them for grids of many waves in sessions 33-36, before the
# dynamic schedule beat them). The small problem's 24 work items make two CTAs, the second partial.
LARGE_GRID_CASES = [
    em.Case("forward", 128, "bf16", "half_split"),
    em.Case("forward", 128, "f16", "interleaved", positions=True, rotate_v=True),
    em.Case("backward", 128, "bf16", "half_split", rotate_v=True),
    em.Case("backward", 128, "bf16", "interleaved", positions=True),
]


@pytest.mark.parametrize("case", LARGE_GRID_CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("seed", [3, 11])
def test_sm90a_large_grid_variants(case, seed, tmp_path):
    out = tmp_path / "k"
    subprocess.run([find_compiler(), *case.compiler_flags("sm_90a"), "--tiles-per-cta=16", "-o", str(out),
                    "--quiet"], check=True)
    base = out / f"k_{case.name}"
    manifest = json.loads(base.with_suffix(".json").read_text())
    assert (manifest["grid"], manifest["tiles_per_cta"], manifest.get("ctas_per_sm", 1)) == ("chunked", 16, 1)
    tensors, result = run(base, case, seed=seed)
    assert em.check_close(case, result, em.reference_outputs(case, tensors)) == []


# Head dims 32 and 96: 32-column chunks with the 64-byte swizzle in the tensor maps, the
# wgmma / tcgen05 descriptors and the staging buffers (not in the H200 fixture: no GPU has
# run them yet).
HEAD_DIM_CASES = [
    (chip, em.Case(kind, d, dtype))
    for chip in ("sm_90a", "sm_100a")
    for kind, d, dtype in (("forward", 32, "bf16"), ("forward", 96, "f16"),
                           ("backward", 32, "f16"), ("backward", 96, "bf16"))
]


@pytest.mark.parametrize("chip,case", HEAD_DIM_CASES, ids=lambda x: x if isinstance(x, str) else x.name)
def test_head_dims_32_96_match_reference(chip, case, kernels):
    tensors, out = run(kernels(case, chip), case)
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (out[name] != em.POISON).all()


# Head dims 192 and 256: the outputs in 64-column chunks of the head dim (warpspec.subview of
# V, dO, Q, K; stores at a column offset), S and dP at full depth (docs/head-dims.md). The
# sm_100a backward's gradients go through chunk-wide tensor-memory rings.
LARGE_HEAD_DIM_CASES = [
    (chip, em.Case(kind, d, dtype))
    for chip in ("sm_90a", "sm_100a")
    for kind, d, dtype in (("forward", 192, "bf16"), ("forward", 256, "f16"),
                           ("backward", 192, "f16"), ("backward", 256, "bf16"))
] + [
    # The head-dim-independent options ride along: causal, the log-sum-exp, grouped queries.
    ("sm_90a", em.Case("forward", 256, "bf16", causal=True, lse=True)),
    ("sm_100a", em.Case("forward", 192, "bf16", group=2, lse=True)),
    ("sm_90a", em.Case("backward", 192, "bf16", causal=True, lse=True)),
]


@pytest.mark.parametrize("chip,case", LARGE_HEAD_DIM_CASES, ids=lambda x: x if isinstance(x, str) else x.name)
def test_head_dims_192_256_match_reference(chip, case, kernels):
    tensors, out = run(kernels(case, chip), case)
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (out[name] != em.POISON).all()


# Head dims 192 and 256 at blocks of 16 and 32: the outputs' column chunks of a packed 64-row
# tile, its rows masked to their own blocks (the same mask as at head dim 128). The jagged edge
# lengths, and tiny sequences packed several to a tile.
LARGE_HEAD_DIM_BLOCK_CASES = [
    (chip, em.Case(kind, d, dtype, block_size=bs))
    for chip in ("sm_90a", "sm_100a")
    for kind, d, dtype, bs in (("forward", 192, "bf16", 16), ("forward", 256, "f16", 32),
                               ("backward", 192, "f16", 32), ("backward", 256, "bf16", 16))
]


@pytest.mark.parametrize("chip,case", LARGE_HEAD_DIM_BLOCK_CASES, ids=lambda x: x if isinstance(x, str) else x.name)
@pytest.mark.parametrize("lengths", ["edges", "tiny"])
def test_large_head_dims_at_small_blocks_match_reference(chip, case, lengths, kernels):
    tensors = em.make_problem(case, lengths=em.tiny_batch_lengths(case.block_size, count=60)
                              if lengths == "tiny" else None)
    base = kernels(case, chip)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5})
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (out[name] != em.POISON).all()
    coarser = dataclasses.replace(case, block_size=2 * case.block_size)
    assert em.check_close(case, out, em.reference_outputs(coarser, tensors)) != []


@pytest.mark.parametrize("chip", ["sm_90a", "sm_100a"])
def test_planted_chunk_stored_at_the_wrong_column(chip, kernels, tmp_path):
    """The column offset of a chunk's store matters: the head dim 256 forward whose first
    64-column chunk of O leaves with the second chunk's column coordinate misses the
    reference."""
    case = em.Case("forward", 256, "bf16")
    base = kernels(case, chip)
    columns = re.findall(r"cp\.async\.bulk\.tensor\.3d\.global\.shared::cta\.tile\.bulk_group "
                         r"\[%rd\d+, \{(%r\d+),", base.with_suffix(".ptx").read_text())
    assert len(columns) == 4  # one bulk store per chunk

    def edit(text):
        return text.replace("{" + columns[0] + ",", "{" + columns[1] + ",", 1)

    assert_caught(base, case, planted(base, tmp_path, edit))


# Block sizes 16 and 32: 64 / B blocks of one sequence per 64-row tile, each query row masked
# to its own block's keys in the softmax (docs/block-sizes.md; not in the H200 fixture). The
# lengths (em.edge_lengths): 0, 1, B - 1, B, B + 1, a tile's 63, 64, 65, a long one, and tiny
# sequences (several per 64 rows, each in a tile of its own).
BLOCK_SIZE_CASES = [
    (chip, em.Case(kind, d, dtype, block_size=bs))
    for chip in ("sm_90a", "sm_100a")
    for kind, d, dtype, bs in (("forward", 64, "bf16", 16), ("forward", 128, "f16", 32),
                               ("backward", 128, "bf16", 16), ("backward", 64, "f16", 32))
] + [
    # Fused rotary: a row's position is its index in its sequence, whatever its block.
    ("sm_90a", em.Case("forward", 64, "bf16", "half_split", positions=True, block_size=16)),
    ("sm_90a", em.Case("backward", 64, "f16", "interleaved", rotate_v=True, block_size=32)),
    ("sm_100a", em.Case("forward", 128, "bf16", "interleaved", block_size=32)),
    ("sm_100a", em.Case("backward", 128, "bf16", "half_split", positions=True, rotate_v=True,
                        block_size=16)),
]


@pytest.mark.parametrize("chip,case", BLOCK_SIZE_CASES, ids=lambda x: x if isinstance(x, str) else x.name)
def test_block_sizes_match_reference(chip, case, kernels):
    tensors, out = run(kernels(case, chip), case)
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (out[name] != em.POISON).all()
    # The mask matters: the same outputs miss the reference of twice the block size.
    coarser = dataclasses.replace(case, block_size=2 * case.block_size)
    assert em.check_close(case, out, em.reference_outputs(coarser, tensors)) != []


# Tiny sequences packed (docs/block-sizes.md): at block sizes 16 and 32 a tile holds the blocks
# of 64 / B consecutive virtual numbers, of one or several sequences, masked per row pair to
# the same block. The batch: the edge lengths and 200 tiny sequences (0 to B + 4 tokens).
PACKED_CASES = [
    (chip, em.Case(kind, d, dtype, block_size=bs))
    for chip in ("sm_90a", "sm_100a")
    for kind, d, dtype, bs in (("forward", 32, "bf16", 16), ("forward", 96, "f16", 32),
                               ("forward", 128, "bf16", 32), ("backward", 64, "bf16", 16),
                               ("backward", 128, "f16", 16), ("backward", 96, "bf16", 32),
                               ("backward", 32, "f16", 32))
] + [
    # Causal, log-sum-exp (and its gradient) and grouped-query attention, packed too (the
    # grouped backward keeps one sequence a tile).
    (chip, em.Case(kind, 64, "bf16", block_size=bs, **extra))
    for chip in ("sm_90a", "sm_100a")
    for kind, bs, extra in (("forward", 16, dict(causal=True, lse=True)),
                            ("backward", 32, dict(causal=True, lse=True)),
                            ("forward", 32, dict(group=2)),
                            ("backward", 16, dict(group=2)))
]


@pytest.mark.parametrize("chip,case", PACKED_CASES, ids=lambda x: x if isinstance(x, str) else x.name)
def test_packed_tiny_sequences_match_reference(chip, case, kernels):
    tensors = em.make_problem(case, lengths=em.tiny_batch_lengths(case.block_size))
    out = em.emulate(kernels(case, chip).with_suffix(".ptx"), kernels(case, chip).with_suffix(".json"),
                     tensors, {"softmax_scale": case.head_dim ** -0.5})
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (out[name] != em.POISON).all()
    coarser = dataclasses.replace(case, block_size=2 * case.block_size)
    assert em.check_close(case, out, em.reference_outputs(coarser, tensors)) != []


@pytest.mark.parametrize("chip", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("kind,bs", [("forward", 16), ("backward", 32)])
def test_packed_one_cta_reuses_every_slot(chip, kind, bs, kernels):
    """One CTA walks every packed tile of the batch (its contiguous or strided share is all
    of them), through every slot of its rings many times."""
    case = em.Case(kind, 64, "bf16", block_size=bs)
    tensors = em.make_problem(case, lengths=em.tiny_batch_lengths(bs, count=120, seed=3))
    base = kernels(case, chip)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, grid=1, num_sms=1)
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (out[name] != em.POISON).all()


@pytest.mark.parametrize("chip", ["sm_90a", "sm_100a"])
def test_planted_packed_block_end_misread(chip, kernels, tmp_path):
    """The block ends matter: the b16 forward whose mask reads block 1's end from byte 2 (the
    end of block 2) lets rows of a packed tile see another block's keys and misses the
    reference."""
    case = em.Case("forward", 64, "bf16", block_size=16)
    base = kernels(case, chip)

    def edit(text):
        return re.sub(r"(bfe\.u32\s+%r\d+, %r\d+, )8, 8;", r"\g<1>16, 8;", text, count=1)

    assert_caught(base, case, planted(base, tmp_path, edit))


@pytest.mark.parametrize("chip", ["sm_90a", "sm_100a"])
def test_planted_swizzle_64b_read_as_128b(chip, kernels, tmp_path):
    """The 64-byte swizzle matters: the same kernel whose tensor maps write with the
    64-byte swizzle, but whose MMA descriptors read with the 128-byte one (the wgmma
    field 2 -> 1 at bits 62-63, tcgen05 4 -> 2 at bits 61-63: bit 63 -> bit 62), misses
    the reference."""
    case = em.Case("forward", 96, "bf16")
    base = kernels(case, chip)

    def edit(text):
        # The descriptors' fixed bits are one 64-bit immediate OR-ed into the start address.
        return re.sub(r"or\.b64(\s+)(%rd\d+), (%rd\d+), -9223(\d+);",
                      lambda m: f"or.b64{m.group(1)}{m.group(2)}, {m.group(3)}, "
                                f"{(-9223 * 10 ** len(m.group(4)) - int(m.group(4))) + (1 << 63) + (1 << 62)};",
                      text)

    assert_caught(base, case, planted(base, tmp_path, edit))


@pytest.mark.parametrize("kind", ["forward", "backward"])
@pytest.mark.parametrize("chip", ["sm_90a", "sm_100a"])
def test_many_sequences_each_cta_finds_its_first(kind, chip, kernels):
    """A batch of 160 sequences (0 to 133 tokens), so that the search for a CTA's first
    sequence (Schedule.cpp, searchSequence) takes several four-way rounds, and a grid of
    three SMs' CTAs, each of which starts the search at another work item."""
    case = em.Case(kind, 64, "bf16")
    lengths = [int(n) for n in np.random.default_rng(5).integers(0, 134, 160)]
    tensors = em.make_problem(case, lengths=lengths)
    base = kernels(case, chip)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, num_sms=3)
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
    for name in case.outputs:
        assert (out[name] != em.POISON).all()


@pytest.mark.parametrize("kind", ["forward", "backward"])
@pytest.mark.parametrize("chip", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("seed,shared_base,sms", [(2, 1024, 2), (7, 16, 1), (123, 1024, 3)])
def test_other_schedules(kind, chip, seed, shared_base, sms, kernels):
    """Other warp orders and completion points, a CTA window not 1024-aligned, other grids.
    (Seed 2 on the sm_100a backward is the schedule where a second tcgen05.commit in a row
    once arrived before the MMAs it tracks had completed, an emulator bug now fixed.)"""
    case = em.Case(kind, 64, "bf16")
    tensors, out = run(kernels(case, chip), case, seed=seed, num_sms=sms,
                       extra_args=[f"--shared-base={shared_base}"])
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []


# --------------------------------------------------------------------------------------------
# Planted bugs
# --------------------------------------------------------------------------------------------


def planted(base: pathlib.Path, tmp_path: pathlib.Path, edit) -> pathlib.Path:
    text = base.with_suffix(".ptx").read_text()
    changed = edit(text)
    assert changed != text, "the planted bug did not change the PTX"
    path = tmp_path / "planted.ptx"
    path.write_text(changed)
    return path


def assert_caught(base, case, ptx, expect: str | None = None):
    try:
        tensors, out = run(base, case, ptx=ptx)
    except em.EmulationError as e:
        if expect is not None:
            assert re.search(expect, str(e)), str(e)
        return str(e)
    failures = em.check_close(case, out, em.reference_outputs(case, tensors))
    assert failures, "the planted bug went unnoticed"
    assert expect is None, f"expected a report matching {expect!r}, got wrong numerics: {failures}"
    return failures


def nth_wait(text: str, n: int, replace) -> str:
    waits = list(re.finditer(r"mbarrier\.try_wait\.parity\.shared\.b64 P1, \[(%r\d+)\], (\S+), 10000000;", text))
    m = waits[n]
    return text[: m.start()] + replace(m) + text[m.end():]


FWD = em.Case("forward", 64, "bf16")


def test_planted_consumer_wait_removed(kernels, tmp_path):
    # The compute warpgroup's wait for the loaded tile (the third wait in the PTX) always
    # succeeds: it reads the ring slot while the TMA copy may still be writing it.
    base = kernels(FWD, "sm_90a")
    ptx = planted(base, tmp_path, lambda t: nth_wait(t, 2, lambda m: "mov.pred P1, -1;"))
    assert_caught(base, FWD, ptx, expect="TMA load .* is still writing|never|no completed")


def test_planted_wrong_phase(kernels, tmp_path):
    # The consumer waits for parity 0 every lap: from the second lap on it runs ahead.
    base = kernels(FWD, "sm_90a")
    ptx = planted(base, tmp_path, lambda t: nth_wait(t, 2, lambda m: m.group(0).replace(m.group(2) + ",", "0,")))
    assert_caught(base, FWD, ptx)


def test_planted_producer_wait_removed(kernels, tmp_path):
    # The load warp no longer waits for the slot's release: it overwrites a ring slot
    # that the compute warpgroup's MMAs may still read.
    base = kernels(FWD, "sm_90a")
    ptx = planted(base, tmp_path, lambda t: nth_wait(t, 0, lambda m: "mov.pred P1, -1;"))
    assert_caught(base, FWD, ptx)


def test_planted_wrong_descriptor_stride(kernels, tmp_path):
    # The K-major descriptors' stride byte offset (bits 32-45) 1024 B -> 512 B.
    base = kernels(FWD, "sm_90a")
    good = 4611686293305360384  # 0x4000004000010000: 128B swizzle, SBO 1024, LBO 16
    bad = good - (32 << 32)
    ptx = planted(base, tmp_path, lambda t: t.replace(str(good), str(bad)))
    assert_caught(base, FWD, ptx, expect=None)


def test_planted_missing_proxy_fence(kernels, tmp_path):
    # The o tile is staged with st.shared and stored by TMA: without the proxy fence the
    # async proxy may not see the generic-proxy writes.
    base = kernels(em.Case("forward", 64, "bf16"), "sm_90a")
    ptx = planted(base, tmp_path, lambda t: t.replace("fence.proxy.async.shared::cta;", ""))
    assert_caught(base, FWD, ptx, expect="missing fence")


def test_planted_wgmma_wait_removed(kernels, tmp_path):
    # Reading the S accumulators before the MMAs completed.
    base = kernels(FWD, "sm_90a")
    ptx = planted(base, tmp_path, lambda t: t.replace("wgmma.wait_group.sync.aligned 	0;", "", 1))
    assert_caught(base, FWD, ptx)


def test_planted_tmem_lane_offset(kernels, tmp_path):
    # sm_100a: the S ring's slot 1 (lane alignment 16, tcgen05 M = 64 layout F) moved to
    # lane 0, onto slot 0: the next tile's S = Q K^T overwrites the accumulators the
    # softmax is still reading.
    base = kernels(FWD, "sm_100a")
    ptx = planted(base, tmp_path, lambda t: re.sub(r"shl\.b32 	(%r\d+), (%r\d+), 20;",
                                                   r"and.b32 	\1, \2, 0;", t, count=1))
    assert_caught(base, FWD, ptx)


def test_planted_tcgen05_commit_removed(kernels, tmp_path):
    # sm_100a: the S = Q K^T MMAs are never committed to the barrier the softmax waits on.
    base = kernels(FWD, "sm_100a")

    def edit(t):
        return re.sub(r"tcgen05\.commit\.cta_group::1\.mbarrier::arrive::one\.shared::cluster\.b64 \t\[%rd\d+\+128\];",
                      "", t, count=1)

    ptx = planted(base, tmp_path, edit)
    assert_caught(base, FWD, ptx, expect="deadlock")


def test_deadlock_report_names_wait_points(kernels, tmp_path):
    base = kernels(FWD, "sm_90a")
    # The first ring slot's barrier expects two arrivals; the load warp gives one.
    ptx = planted(base, tmp_path, lambda t: t.replace("mbarrier.init.shared.b64 	[%rd6], %r39;",
                                                      "mbarrier.init.shared.b64 	[%rd6], 2;", 1))
    report = assert_caught(base, FWD, ptx, expect="deadlock: every live warp waits")
    assert "waits for parity" in report and "line " in report


def test_unknown_instruction_is_named(kernels, tmp_path):
    base = kernels(FWD, "sm_90a")
    ptx = planted(base, tmp_path, lambda t: t.replace("neg.f32", "brev.b32", 1))
    with pytest.raises(em.EmulationError, match="unknown instruction 'brev.b32'"):
        run(base, FWD, ptx=ptx)


SEED = pathlib.Path(__file__).resolve().parents[2] / "examples" / "seed.mlir"


@pytest.mark.parametrize("chip", ["sm_90a", "sm_100a"])
def test_seed_kernels(chip, tmp_path):
    """Every kernel of examples/seed.mlir (head dim 128, bf16, four heads), emulated."""
    subprocess.run([find_compiler(), str(SEED), f"--chip={chip}", "-o", str(tmp_path), "--quiet"],
                   check=True)
    manifests = sorted(tmp_path.glob("*.json"))
    assert len(manifests) == 4
    for manifest in manifests:
        m = json.loads(manifest.read_text())
        case = em.Case(m["kind"], m["head_dim"], m["element_type"], m["rotary"])
        tensors = em.make_problem(case, heads=4)
        out = em.emulate(manifest.with_suffix(".ptx"), manifest, tensors,
                         {"softmax_scale": case.head_dim ** -0.5})
        assert em.check_close(case, out, em.reference_outputs(case, tensors)) == [], m["kernel"]


# Block size 128 (the forward; docs/block-sizes.md): two 64-row query halves against the
# block's 128 keys, on lengths around the block and its half (0, 1, 63-65, 127-129, 191-193,
# 300) and tiny ones, with and without rotary embeddings (the key tile starts at the block's
# first row, the second query half 64 rows later), and the rotary warpgroup variant.
BS128_LENGTHS = (0, 1, 127, 128, 129, 300, 2, 0, 3, 5, 64, 65, 191, 193, 1, 63)
BS128_CASES = [
    em.Case("forward", 64, "bf16", block_size=128),
    em.Case("forward", 128, "bf16", block_size=128),
    em.Case("forward", 128, "f16", block_size=128),
    em.Case("forward", 32, "f16", block_size=128),
    em.Case("forward", 96, "bf16", block_size=128),
    em.Case("forward", 128, "bf16", "half_split", block_size=128),
    em.Case("forward", 64, "f16", "interleaved", positions=True, rotate_v=True, block_size=128),
]


# sm_100a: the plain forwards (its rotary forwards at 128 are test_emulator_rotary_b128_sm100a.py's).
BS128_CHIP_CASES = [("sm_90a", case) for case in BS128_CASES] + [
    ("sm_100a", em.Case("forward", d, dtype, block_size=128))
    for d, dtype in ((128, "bf16"), (64, "f16"), (96, "bf16"), (32, "f16"))
]


@pytest.mark.parametrize("chip,case", BS128_CHIP_CASES, ids=lambda x: x if isinstance(x, str) else x.name)
def test_block_size_128_matches_reference(chip, case, kernels):
    tensors = em.make_problem(case, lengths=BS128_LENGTHS)
    base = kernels(case, chip)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5})
    want = em.reference_outputs(case, tensors)
    assert em.check_close(case, out, want) == []
    assert (out["o"] != em.POISON).all()
    # The block size matters: 64-token blocks give other outputs on these lengths.
    as64 = em.Case(case.kind, case.head_dim, case.dtype, case.rotary, case.positions, case.rotate_v)
    assert em.check_close(case, out, em.reference_outputs(as64, tensors)) != []


# The backward at block size 128 (sm_90a, plain; docs/block-sizes.md): dQ per query half,
# dV and dK per key half summed over both query halves (two products, the second
# accumulating), on the same lengths; every gradient element written, and the gradients
# miss the block-64 reference. On one and two SMs (a persistent launch: two tiles a CTA).
BS128_BACKWARD_CASES = [
    em.Case("backward", 128, "bf16", block_size=128),
    em.Case("backward", 64, "f16", block_size=128),
    em.Case("backward", 96, "bf16", block_size=128),
    em.Case("backward", 32, "f16", block_size=128),
]


@pytest.mark.parametrize("case", BS128_BACKWARD_CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("sms", [1, 2])
def test_block_size_128_backward_matches_reference(case, sms, kernels):
    check_block_size_128_backward(case, "sm_90a", sms, kernels)


def check_block_size_128_backward(case, chip, sms, kernels):
    """The emulated backward at block size 128 matches its reference, writes every gradient
    element, and does not match the block-64 reference."""
    tensors = em.make_problem(case, lengths=BS128_LENGTHS)
    base = kernels(case, chip)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, num_sms=sms)
    want = em.reference_outputs(case, tensors)
    assert em.check_close(case, out, want) == []
    for name in ("dq", "dk", "dv"):
        assert (out[name] != em.POISON).all(), name
    as64 = em.Case(case.kind, case.head_dim, case.dtype)
    assert em.check_close(case, out, em.reference_outputs(as64, tensors)) != []


# The same on sm_100a (tcgen05; docs/block-sizes.md, "The backward at 128 on sm_100a"):
# softmax replica r takes query half r and key half r, dV and dK of a key half summed over
# both query halves in tensor memory (the second product with enable-input-d), dV and dK
# sharing one tensor-memory ring. Every head dim and dtype; on one SM (one CTA takes every
# block, reusing every ring slot) and on two. No Blackwell GPU has run these kernels.
BS128_SM100_BACKWARD_CASES = [
    em.Case("backward", d, dtype, block_size=128) for d in (128, 64, 96, 32) for dtype in ("bf16", "f16")
]


@pytest.mark.parametrize("case", BS128_SM100_BACKWARD_CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("sms", [1, 2])
def test_block_size_128_sm100a_backward_matches_reference(case, sms, kernels):
    check_block_size_128_backward(case, "sm_100a", sms, kernels)


@pytest.mark.parametrize("sms", [1, 2])
def test_block_size_128_rotary_warpgroup(sms, tmp_path):
    """The rotary warpgroup rotates the two query halves and the 128-row key tile of a slot."""
    case = em.Case("forward", 128, "bf16", "interleaved", positions=True, block_size=128)
    out = tmp_path / "k"
    subprocess.run([find_compiler(), *case.compiler_flags("sm_90a"), "--rotary-warpgroup=on",
                    "-o", str(out), "--quiet"], check=True)
    base = out / f"k_{case.name}"
    tensors = em.make_problem(case, lengths=BS128_LENGTHS)
    result = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                        {"softmax_scale": case.head_dim ** -0.5}, num_sms=sms, seed=7)
    assert em.check_close(case, result, em.reference_outputs(case, tensors)) == []


# Head dim 32's launch (docs/head-dims.md#launch): the plain forward chunked with two
# consumers per CTA, the plain backward three CTAs per SM; both, and the forward's
# small-grid variant (one tile per CTA, so the second consumer gets none), against float64.
@pytest.mark.parametrize("kind,extra,ctas,consumers", [
    ("forward", [], 2, 2), ("forward", ["--tiles-per-cta=1"], 2, 2), ("backward", [], 3, 1)])
def test_head_dim_32_launch(kind, extra, ctas, consumers, tmp_path):
    case = em.Case(kind, 32, "bf16")
    out = tmp_path / "k"
    subprocess.run([find_compiler(), *case.compiler_flags("sm_90a"), *extra, "-o", str(out), "--quiet"],
                   check=True)
    base = out / f"k_{case.name}"
    manifest = json.loads(base.with_suffix(".json").read_text())
    assert manifest["ctas_per_sm"] == ctas
    assert [p["role"] for p in manifest["partitions"]] == ["load", "compute"]
    assert manifest["partitions"][1]["replicas"] == consumers
    tensors, result = run(base, case, seed=3)
    assert em.check_close(case, result, em.reference_outputs(case, tensors)) == []


# o-store=slot (docs/hopper.md, "Stores staged in the slot"): the sm_90a backward stages dV and dK
# in its tile's ring slot and stores them in bulk; the slot's release waits for their reads. With
# --hold-bulk-stores a bulk store reads shared memory until its thread waits for it, so one CTA
# walking every tile through every slot (grid 1) sees the producer's next copy into a slot whose
# stores have not read it, where the release does not wait.
SLOT_STORE_CASES = [
    em.Case("backward", 128, "bf16", "half_split"),
    em.Case("backward", 64, "f16", "interleaved", positions=True, rotate_v=True),
    em.Case("backward", 128, "bf16", "none"),
    em.Case("backward", 64, "bf16", "none", block_size=32),
]


def compile_slot_case(case: em.Case, tmp_path: pathlib.Path) -> pathlib.Path:
    out = tmp_path / "k"
    subprocess.run([find_compiler(), *case.compiler_flags("sm_90a"), "--o-store=slot", "-o", str(out),
                    "--quiet"], check=True)
    return out / f"k_{case.name}"


@pytest.mark.parametrize("case", SLOT_STORE_CASES, ids=lambda c: c.name)
def test_sm90a_stores_staged_in_the_slot(case, tmp_path):
    base = compile_slot_case(case, tmp_path)
    tensors, result = run(base, case, grid=1, seed=5, extra_args=["--hold-bulk-stores"])
    assert em.check_close(case, result, em.reference_outputs(case, tensors)) == []


def test_sm90a_slot_release_without_its_wait_is_caught(tmp_path):
    """The planted bug: the wait before the slot's arrival removed from the PTX."""
    case = SLOT_STORE_CASES[0]
    base = compile_slot_case(case, tmp_path)
    lines = base.with_suffix(".ptx").read_text().splitlines(keepends=True)
    waits = [i for i, line in enumerate(lines[:-1])
             if "cp.async.bulk.wait_group.read \t0;" in line and "mbarrier.arrive" in lines[i + 1]]
    assert len(waits) == 1
    planted = tmp_path / "planted.ptx"
    planted.write_text("".join(lines[:waits[0]] + lines[waits[0] + 1:]))
    with pytest.raises(em.EmulationError, match="has not finished reading"):
        run(base, case, ptx=planted, grid=1, seed=5, extra_args=["--hold-bulk-stores"])


# schedule=dynamic (Schedule.cpp, DynamicSchedule): CTA c takes item c, then claims its next items
# from the counters of the kernel's `schedule` argument, which the last CTA to finish resets.
# check_close also fails when the kernel leaves the counters other than zeroed. Packed tiles
# (blocks of 16 and 32) claim through the other tile loop lowering.
DYNAMIC_CASES = [
    ("sm_90a", em.Case("forward", 128, "bf16", "half_split")),
    ("sm_90a", em.Case("backward", 64, "bf16")),
    ("sm_90a", em.Case("forward", 64, "bf16", block_size=16)),
    ("sm_100a", em.Case("forward", 64, "bf16")),
    ("sm_100a", em.Case("backward", 128, "bf16", "interleaved", positions=True)),
    ("sm_100a", em.Case("backward", 64, "bf16", block_size=32)),
]


def compile_dynamic_case(chip: str, case: em.Case, tmp_path: pathlib.Path) -> pathlib.Path:
    out = tmp_path / "k"
    subprocess.run([find_compiler(), *case.compiler_flags(chip), "--schedule=dynamic", "-o", str(out),
                    "--quiet"], check=True)
    return out / f"k_{case.name}"


@pytest.mark.parametrize("chip,case", DYNAMIC_CASES, ids=lambda x: x if isinstance(x, str) else x.name)
@pytest.mark.parametrize("sms,seed", [(1, 3), (3, 7)])
def test_dynamic_schedule_matches_reference(chip, case, sms, seed, tmp_path):
    base = compile_dynamic_case(chip, case, tmp_path)
    manifest = json.loads(base.with_suffix(".json").read_text())
    assert manifest["schedule"] == {"tensor": "schedule", "words": 2, "dtype": "i32"}
    lengths = [int(n) for n in np.random.default_rng(seed).integers(0, 134, 40)]
    tensors = em.make_problem(case, lengths=lengths)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, num_sms=sms, seed=seed)
    assert em.check_close(case, out, em.reference_outputs(case, tensors)) == []
    assert out["schedule"].tolist() == [0, 0]


def test_dynamic_schedule_claims_from_its_counters(tmp_path):
    """Counters that do not start at zero (a launch that shares them with a running one):
    every claim lands past the last item, so only each CTA's first item is computed. The
    last CTA to finish still leaves them zeroed."""
    chip, case = DYNAMIC_CASES[1]
    base = compile_dynamic_case(chip, case, tmp_path)
    tensors = em.make_problem(case)
    tensors["schedule"] = np.array([1 << 20, 0], np.int32)
    out = em.emulate(base.with_suffix(".ptx"), base.with_suffix(".json"), tensors,
                     {"softmax_scale": case.head_dim ** -0.5}, num_sms=2)
    failures = em.check_close(case, out, em.reference_outputs(case, tensors))
    assert any("never written" in f for f in failures), failures
    assert out["schedule"].tolist() == [0, 0]
