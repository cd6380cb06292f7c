"""bench/ncu_stalls.py (the profile reader of docs/rotary.md) and bench/profile_rotary.py's variants."""

import gzip
import pathlib
import sys

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import ncu_stalls  # noqa: E402


def _bench_module(name: str):
    """A bench module that needs PyTorch (workloads, peers): skipped without it."""
    pytest.importorskip("torch")
    return __import__(name)

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
    workloads = _bench_module("workloads")

    for name, head_dim, block_size in (("seed-d32", 32, 64), ("seed-d96", 96, 64), ("seed-b16", 128, 16),
                                       ("seed-b32", 128, 32), ("seed-b128", 128, 128), ("seed-d192", 192, 64),
                                       ("seed-d256", 256, 64), ("seed-b128-d192", 192, 128),
                                       ("seed-b128-d256", 256, 128), ("seed-b128-d32", 32, 128),
                                       ("seed-b128-d64", 64, 128), ("seed-b128-d96", 96, 128)):
        w = workloads.get(name)
        assert (w.head_dim, w.block_size) == (head_dim, block_size)
        assert w.tokens == workloads.get("seed").tokens  # the seed lengths, as the issue asks
    assert set(workloads.NAMES) >= {"seed", "seed-d64", "rope", "seed-b128"}
    with pytest.raises(ValueError, match="unknown workload"):
        workloads.get("seed-b48")


@pytest.mark.parametrize("block_size", [16, 32, 64, 128])
def test_check_lengths_cover_each_block_size_edges(block_size):
    peers = _bench_module("peers")

    ragged = peers.check_lengths(block_size, aligned=False)
    assert {0, 1, block_size - 1, block_size, block_size + 1} <= set(ragged)
    aligned = peers.check_lengths(block_size, aligned=True)
    assert all(n % block_size == 0 and n > 0 for n in aligned)


def test_issue21_workloads_carry_their_shape():
    workloads = _bench_module("workloads")

    gqa = workloads.get("seed-gqa")
    assert (gqa.heads, gqa.kv_head_count, gqa.head_dim, gqa.causal) == (8, 2, 128, False)
    assert gqa.bytes_per_kv_tensor() * 4 == gqa.bytes_per_tensor()
    causal = workloads.get("seed-d64-causal")
    assert (causal.heads, causal.kv_head_count, causal.head_dim, causal.causal) == (4, 4, 64, True)
    assert causal.tokens == workloads.get("seed").tokens
    assert workloads.get("seed").kv_head_count == 4


def test_grouped_floor_counts_kv_once_per_group():
    peers = _bench_module("peers")

    # Forward: q and o at Hq, k and v at Hkv; backward: q, dO, dq at Hq, k, v, dk, dv at Hkv.
    assert peers.KINDS["forward"].floor_bytes(100, 25) == 2 * 100 + 2 * 25
    assert peers.KINDS["backward"].floor_bytes(100, 25) == 3 * 100 + 4 * 25
    assert [peers.KINDS[k].floor_tensors for k in ("forward", "backward", "fwd+bwd")] == [4, 7, 11]


@pytest.mark.parametrize("causal,kv_heads", [(True, 4), (False, 2), (True, 1)])
def test_bench_reference_matches_the_package_reference(causal, kv_heads):
    """The benchmark's batched float64 reference (what every peer is checked against) agrees with
    blockattn.reference on causal blocks and grouped k/v, forward and backward."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    np = pytest.importorskip("numpy")
    peers = _bench_module("peers")
    from blockattn import reference as ref

    lengths = np.array([1, 63, 64, 65, 0, 130], dtype=np.int64)
    T, H, D = int(lengths.sum()), 4, 32
    g = torch.Generator().manual_seed(3)
    q, do = (torch.randn(T, H, D, generator=g, dtype=torch.float64) for _ in range(2))
    k, v = (torch.randn(T, kv_heads, D, generator=g, dtype=torch.float64) for _ in range(2))
    cu = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), dtype=torch.int32)
    p = peers.Problem(q, k, v, do, cu, lengths, causal=causal)
    (o,) = peers.reference(p, "forward")
    want = ref.forward(q.numpy(), k.numpy(), v.numpy(), cu.numpy(), causal=causal)
    np.testing.assert_allclose(o.numpy(), want, atol=1e-10)
    grads = peers.reference(p, "backward")
    want = ref.backward(q.numpy(), k.numpy(), v.numpy(), do.numpy(), cu.numpy(), causal=causal)
    for got, w in zip(grads, want):
        assert got.shape == w.shape
        np.testing.assert_allclose(got.numpy(), w, atol=1e-10)


TRITON_PEER_CHECK = r"""
import sys
import numpy as np, torch
import triton_block_attn as tba
from blockattn import reference as ref
lengths = np.array([1, 63, 64, 65, 0, 130]); T = int(lengths.sum()); H, D = 4, 32
cu = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), dtype=torch.int32)
table = tba.block_table(cu, T, 64)
for causal, hkv in ((True, 4), (False, 2), (True, 1)):
    g = torch.Generator().manual_seed(0)
    q, do = (torch.randn(T, H, D, generator=g).to(torch.float16) for _ in range(2))
    k, v = (torch.randn(T, hkv, D, generator=g).to(torch.float16) for _ in range(2))
    args = [t.float().numpy() for t in (q, k, v)]
    got = [tba.forward(q, k, v, table, causal=causal)] + list(tba.backward(do, q, k, v, table, causal=causal))
    want = [ref.forward(*args, cu.numpy(), causal=causal)] + list(
        ref.backward(*args, do.float().numpy(), cu.numpy(), causal=causal))
    for x, w in zip(got, want):
        assert x.shape == w.shape, (x.shape, w.shape)
        err = float(np.abs(x.float().numpy() - w).max() / np.abs(w).max())
        assert err < 1e-2, (causal, hkv, err)
print("ok")
"""


def test_triton_peer_causal_and_grouped_in_the_interpreter():
    """The Triton peer's causal mask and grouped k/v (dk, dv summed over the group in one
    program) against blockattn.reference, run by Triton's CPU interpreter (no GPU)."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    import os
    import subprocess

    root = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ, TRITON_INTERPRET="1",  # read when the kernels are decorated: a fresh process
               PYTHONPATH=os.pathsep.join([str(root / "bench"), str(root / "python")]))
    r = subprocess.run([sys.executable, "-c", TRITON_PEER_CHECK], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]


@pytest.mark.parametrize("causal,kv_heads", [(False, 4), (True, 4), (False, 2), (True, 1)])
def test_flex_peer_block_mask(causal, kv_heads):
    """The FlexAttention peer's block mask (128 x 128 tiles from the block table, same-block and
    causal mask_mod) gives the block-diagonal attention: eager flex_attention on the CPU against
    the benchmark's float64 reference, on partial blocks, an empty sequence and tiles that
    straddle sequences."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    np = pytest.importorskip("numpy")
    flex = pytest.importorskip("torch.nn.attention.flex_attention")
    peers = _bench_module("peers")

    lengths = np.array([1, 63, 64, 65, 0, 130, 300, 7], dtype=np.int64)
    T, H, D = int(lengths.sum()), 4, 32
    g = torch.Generator().manual_seed(0)
    q = torch.randn(T, H, D, generator=g, dtype=torch.float64)
    k, v = (torch.randn(T, kv_heads, D, generator=g, dtype=torch.float64) for _ in range(2))
    cu = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), dtype=torch.int32)
    p = peers.Problem(q, k, v, None, cu, lengths, causal=causal)
    views = tuple(t.transpose(0, 1).unsqueeze(0) for t in (q, k, v))
    o = flex.flex_attention(*views, block_mask=peers.flex_block_mask(p, causal), scale=p.scale,
                            enable_gqa=kv_heads != H)
    (want,) = peers.reference(p, "forward")
    np.testing.assert_allclose(o[0].transpose(0, 1).numpy(), want.numpy(), atol=1e-12)
