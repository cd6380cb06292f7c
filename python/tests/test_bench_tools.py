"""bench/ncu_stalls.py (the profile reader of docs/rotary.md) and bench/profile_rotary.py's variants."""

import gzip
import pathlib
import sys

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import ncu_stalls  # noqa: E402

HEADER = '"Address","Source","# Samples","Instructions Executed","stall_long_sb","stall_short_sb"\n'


def _page(tmp_path, body: str, compress: bool = False) -> str:
    text = '"Kernel Name","blockattn_forward_d128_b64_bf16",\n' + HEADER + body
    path = tmp_path / ("page.csv.gz" if compress else "page.csv")
    if compress:
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    return str(path)


BODY = (
    '"0x0","      @!P0  BRA 0x10","50","100","50","0"\n'
    '"0x10","      LDG.E.128 R40, desc[UR36][R86.64]","0","8","0","0"\n'
    '"0x20","      FMUL R49, R56, -R53","30","8","30","0"\n'
    '"0x30","      PRMT R105, R52, 0x7632, R105","10","8","0","10"\n'
    '"0x40","      HGMMA.64x64x16.F32.BF16 R24, gdesc[UR24], RZ, !UPT","10","8","0","0"\n'
)


@pytest.mark.parametrize("compress", [False, True])
def test_samples_split_by_instruction(tmp_path, compress):
    (kernel,) = ncu_stalls.read_kernels(_page(tmp_path, BODY, compress))
    s = ncu_stalls.summarize(kernel)
    assert s["samples"] == 100
    assert (s["wait"], s["long_sb_at_math"], s["short_sb"], s["mma"]) == (50.0, 30.0, 10.0, 10.0)
    assert s["ldg_executed"] == 8 and s["executed"] == 132


def test_not_a_source_page_is_refused(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text('"ID","Kernel Name"\n"0","k"\n')
    with pytest.raises(ValueError, match="not an ncu source page"):
        ncu_stalls.read_kernels(str(path))


def test_missing_column_is_named(tmp_path):
    path = tmp_path / "page.csv"
    path.write_text('"Kernel Name","k",\n"Address","Source","# Samples"\n"0x0","BRA 0x0","1"\n')
    (kernel,) = ncu_stalls.read_kernels(str(path))
    with pytest.raises(ValueError, match="Instructions Executed"):
        ncu_stalls.summarize(kernel)


def test_profile_variants():
    pytest.importorskip("torch")
    pytest.importorskip("triton")  # bench/peers.py, whose rotary tables profile_rotary uses
    import profile_rotary

    assert profile_rotary.parse_variant("plain") is None
    assert profile_rotary.parse_variant("interleaved+pos+rv") == {
        "interleaved": True, "positions": True, "rotate_v": True}
    for bad, match in [("plain+rv", "takes no flags"), ("neox", "unknown rotary mode"),
                       ("half_split+v", "unknown flag")]:
        with pytest.raises(ValueError, match=match):
            profile_rotary.parse_variant(bad)


def test_issue20_workloads_carry_their_shape():
    import workloads

    for name, head_dim, block_size in (("seed-d32", 32, 64), ("seed-d96", 96, 64), ("seed-b16", 128, 16),
                                       ("seed-b32", 128, 32), ("seed-b128", 128, 128), ("seed-d192", 192, 64),
                                       ("seed-d256", 256, 64)):
        w = workloads.get(name)
        assert (w.head_dim, w.block_size) == (head_dim, block_size)
        assert w.tokens == workloads.get("seed").tokens  # the seed lengths, as the issue asks
    assert set(workloads.NAMES) >= {"seed", "seed-d64", "rope", "seed-b128"}
    with pytest.raises(ValueError, match="unknown workload"):
        workloads.get("seed-b48")


@pytest.mark.parametrize("block_size", [16, 32, 64, 128])
def test_check_lengths_cover_each_block_size_edges(block_size):
    import peers

    ragged = peers.check_lengths(block_size, aligned=False)
    assert {0, 1, block_size - 1, block_size, block_size + 1} <= set(ragged)
    aligned = peers.check_lengths(block_size, aligned=True)
    assert all(n % block_size == 0 and n > 0 for n in aligned)
