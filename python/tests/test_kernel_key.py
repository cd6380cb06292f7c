"""KernelKey: kernel names and block-attn-compile flags (no torch, no GPU)."""

import pytest

from blockattn._kernels import KernelKey


def key(**kw):
    base = dict(kind="forward", head_dim=128, block_size=64, dtype="bf16", chip="sm_90a")
    base.update(kw)
    return KernelKey(**base)


def test_plain_kernel_name_and_flags_unchanged():
    k = key()
    assert k.name == "blockattn_forward_d128_b64_bf16"
    assert k.compiler_flags() == [
        "--kind=forward", "--head-dim=128", "--block-size=64", "--dtype=bf16", "--rotary=none",
        "--chip=sm_90a", "--name=blockattn_forward_d128_b64_bf16",
    ]
    assert key(kind="backward", head_dim=64, dtype="f16").name == "blockattn_backward_d64_b64_f16"


@pytest.mark.parametrize(
    "rotary, positions, rotate_v, suffix, extra",
    [
        ("half_split", False, False, "_half_split", []),
        ("interleaved", False, False, "_interleaved", []),
        ("half_split", True, False, "_half_split_pos", ["--positions"]),
        ("interleaved", False, True, "_interleaved_rv", ["--rotate-v"]),
        ("interleaved", True, True, "_interleaved_pos_rv", ["--positions", "--rotate-v"]),
    ],
)
def test_rotary_kernel_names_and_flags(rotary, positions, rotate_v, suffix, extra):
    k = key(kind="backward", rotary=rotary, positions=positions, rotate_v=rotate_v)
    name = "blockattn_backward_d128_b64_bf16" + suffix
    assert k.name == name
    assert k.compiler_flags() == [
        "--kind=backward", "--head-dim=128", "--block-size=64", "--dtype=bf16", f"--rotary={rotary}",
        *extra, "--chip=sm_90a", f"--name={name}",
    ]


def test_rotary_keys_differ():
    names = {
        key(rotary=r, positions=p, rotate_v=v).name
        for r in ("half_split", "interleaved") for p in (False, True) for v in (False, True)
    }
    assert len(names) == 8 and key().name not in names


@pytest.mark.parametrize(
    "kw, msg",
    [
        (dict(rotary="neox"), r"rotary: expected one of none, half_split, interleaved"),
        (dict(positions=True), r"positions and rotate_v need a rotary mode"),
        (dict(rotate_v=True), r"positions and rotate_v need a rotary mode"),
    ],
)
def test_invalid_keys(kw, msg):
    with pytest.raises(ValueError, match=msg):
        key(**kw)


def test_prebuild_script_kernel_sets(capsys):
    """scripts/prebuild_kernels.py --dry-run: the default set (each kernel with its small-grid
    variant); rotary variants; the wheel's set."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "prebuild_kernels.py"
    spec = importlib.util.spec_from_file_location("prebuild_kernels", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)

    script.main(["unused", "--dry-run"])
    assert capsys.readouterr().out.split() == [
        f"sm_90a/blockattn_forward_d{d}_b64_{t}{s}" for d in (64, 128) for t in ("bf16", "f16")
        for s in ("", "_t1")]
    script.main(["unused", "--dry-run", "--no-small-grid"])
    assert capsys.readouterr().out.split() == [
        f"sm_90a/blockattn_forward_d{d}_b64_{t}" for d in (64, 128) for t in ("bf16", "f16")]

    script.main(["unused", "--dry-run", "--kinds", "backward", "--head-dims", "128", "--dtypes", "bf16",
                 "--rotary", "none,interleaved", "--rotary-variants", "plain,pos,rv,pos_rv"])
    base = "sm_90a/blockattn_backward_d128_b64_bf16"
    rotary = [base + "_interleaved" + v for v in ("", "_pos", "_rv", "_pos_rv")]
    assert capsys.readouterr().out.split() == [
        base, base + "_t1", *rotary]

    # The forward and backward at block size 128, plain and rotary, on both chips, the
    # backward launched persistent on sm_90a (no small-grid variant).
    script.main(["unused", "--dry-run", "--chips", "sm_90a,sm_100a", "--kinds", "forward,backward",
                 "--block-sizes", "128", "--head-dims", "64", "--dtypes", "bf16",
                 "--rotary", "none,half_split"])
    assert capsys.readouterr().out.split() == [
        "sm_90a/blockattn_forward_d64_b128_bf16",
        "sm_90a/blockattn_forward_d64_b128_bf16_half_split", "sm_90a/blockattn_backward_d64_b128_bf16",
        "sm_90a/blockattn_backward_d64_b128_bf16_half_split",
        "sm_100a/blockattn_forward_d64_b128_bf16", "sm_100a/blockattn_forward_d64_b128_bf16_half_split",
        "sm_100a/blockattn_backward_d64_b128_bf16", "sm_100a/blockattn_backward_d64_b128_bf16_half_split"]

    # Causal and the log-sum-exp at block size 128: both chips (sm_100a offsets each softmax
    # replica's query half, docs/block-sizes.md).
    script.main(["unused", "--dry-run", "--chips", "sm_90a,sm_100a", "--kinds", "forward,backward",
                 "--block-sizes", "128", "--head-dims", "64", "--dtypes", "bf16", "--causal", "--lse"])
    assert capsys.readouterr().out.split() == [
        "sm_90a/blockattn_forward_d64_b128_bf16_causal_lse", "sm_90a/blockattn_backward_d64_b128_bf16_causal_lse",
        "sm_100a/blockattn_forward_d64_b128_bf16_causal_lse", "sm_100a/blockattn_backward_d64_b128_bf16_causal_lse"]

    # Head dims 192 and 256 at block size 128: the forward on both chips, with rotary embeddings
    # too (session 17), the backward on both chips (the sm_100a one since session 17); with
    # half-split rotary embeddings too (session 20's pair-complete chunks, refused in session 22,
    # two 64-byte-swizzled pieces since session 23: docs/head-dims.md).
    script.main(["unused", "--dry-run", "--chips", "sm_90a,sm_100a", "--kinds", "forward,backward",
                 "--block-sizes", "128", "--head-dims", "192", "--dtypes", "bf16", "--rotary", "none,half_split"])
    assert capsys.readouterr().out.split() == [
        "sm_90a/blockattn_forward_d192_b128_bf16", "sm_90a/blockattn_forward_d192_b128_bf16_half_split",
        "sm_90a/blockattn_backward_d192_b128_bf16", "sm_90a/blockattn_backward_d192_b128_bf16_half_split",
        "sm_100a/blockattn_forward_d192_b128_bf16", "sm_100a/blockattn_forward_d192_b128_bf16_half_split",
        "sm_100a/blockattn_backward_d192_b128_bf16", "sm_100a/blockattn_backward_d192_b128_bf16_half_split"]
    # Its rotary backward with tables: interleaved on both chips (sm_90a session 18, sm_100a
    # session 19); half-split too (refused in session 22, two 64-byte-swizzled pieces since 23).
    script.main(["unused", "--dry-run", "--chips", "sm_90a,sm_100a", "--kinds", "backward",
                 "--block-sizes", "128", "--head-dims", "192", "--dtypes", "bf16", "--rotary",
                 "half_split,interleaved"])
    assert capsys.readouterr().out.split() == [
        "sm_90a/blockattn_backward_d192_b128_bf16_half_split",
        "sm_90a/blockattn_backward_d192_b128_bf16_interleaved",
        "sm_100a/blockattn_backward_d192_b128_bf16_half_split",
        "sm_100a/blockattn_backward_d192_b128_bf16_interleaved"]
    # And with angles from rotary_theta: interleaved on both chips (session 20; half-split, session
    # 21, refused in session 22, again since session 23).
    script.main(["unused", "--dry-run", "--chips", "sm_90a,sm_100a", "--kinds", "backward",
                 "--block-sizes", "128", "--head-dims", "256", "--dtypes", "bf16", "--rotary",
                 "half_split,interleaved", "--rotary-theta"])
    assert capsys.readouterr().out.split() == [
        "sm_90a/blockattn_backward_d256_b128_bf16_half_split_theta",
        "sm_90a/blockattn_backward_d256_b128_bf16_interleaved_theta",
        "sm_100a/blockattn_backward_d256_b128_bf16_half_split_theta",
        "sm_100a/blockattn_backward_d256_b128_bf16_interleaved_theta"]
    # The grouped rotary backward above head dim 128 at blocks of up to 64: both layouts on both
    # chips (interleaved session 18; half-split in pair-complete chunks of two 64-byte-swizzled
    # pieces since session 23, session 21's one-box chunks refused in session 22).
    script.main(["unused", "--dry-run", "--chips", "sm_90a,sm_100a", "--kinds", "backward",
                 "--block-sizes", "32", "--head-dims", "256", "--dtypes", "bf16", "--groups", "2",
                 "--rotary", "half_split,interleaved"])
    assert capsys.readouterr().out.split() == [
        "sm_90a/blockattn_backward_d256_b32_bf16_g2_half_split",
        "sm_90a/blockattn_backward_d256_b32_bf16_g2_interleaved",
        "sm_100a/blockattn_backward_d256_b32_bf16_g2_half_split",
        "sm_100a/blockattn_backward_d256_b32_bf16_g2_interleaved"]

    # The grouped rotary backward at block size 128, head dim 96: interleaved on both chips and
    # every group (sm_90a session 19, sm_100a session 20); half-split too (session 24: pair-complete
    # 32-column chunks of two 32-byte-swizzled 16-column pieces).
    script.main(["unused", "--dry-run", "--chips", "sm_90a,sm_100a", "--kinds", "backward",
                 "--block-sizes", "128", "--head-dims", "96", "--dtypes", "bf16", "--groups", "2,3",
                 "--rotary", "half_split,interleaved"])
    assert capsys.readouterr().out.split() == [
        "sm_90a/blockattn_backward_d96_b128_bf16_g2_half_split",
        "sm_90a/blockattn_backward_d96_b128_bf16_g3_half_split",
        "sm_90a/blockattn_backward_d96_b128_bf16_g2_interleaved",
        "sm_90a/blockattn_backward_d96_b128_bf16_g3_interleaved",
        "sm_100a/blockattn_backward_d96_b128_bf16_g2_half_split",
        "sm_100a/blockattn_backward_d96_b128_bf16_g3_half_split",
        "sm_100a/blockattn_backward_d96_b128_bf16_g2_interleaved",
        "sm_100a/blockattn_backward_d96_b128_bf16_g3_interleaved"]
    # At head dim 128 both layouts (half-split in pair-complete chunks of two 64-byte-swizzled
    # pieces since session 23; session 21's one-box chunks were refused in session 22).
    script.main(["unused", "--dry-run", "--chips", "sm_90a,sm_100a", "--kinds", "backward",
                 "--block-sizes", "128", "--head-dims", "128", "--dtypes", "bf16", "--groups", "3",
                 "--rotary", "half_split,interleaved"])
    assert capsys.readouterr().out.split() == [
        "sm_90a/blockattn_backward_d128_b128_bf16_g3_half_split",
        "sm_90a/blockattn_backward_d128_b128_bf16_g3_interleaved",
        "sm_100a/blockattn_backward_d128_b128_bf16_g3_half_split",
        "sm_100a/blockattn_backward_d128_b128_bf16_g3_interleaved"]
    # Above head dim 128 on both chips without rotary embeddings (sm_100a since session 22) and
    # with them (the streamed chunks rotated as they land: sm_90a session 22, sm_100a session 24;
    # half-split ones in pair-complete chunks of 64-byte-swizzled pieces since session 23).
    script.main(["unused", "--dry-run", "--chips", "sm_90a,sm_100a", "--kinds", "backward",
                 "--block-sizes", "128", "--head-dims", "192,256", "--dtypes", "bf16", "--groups", "2",
                 "--rotary", "none,half_split,interleaved"])
    assert capsys.readouterr().out.split() == [
        "sm_90a/blockattn_backward_d192_b128_bf16_g2",
        "sm_90a/blockattn_backward_d192_b128_bf16_g2_half_split",
        "sm_90a/blockattn_backward_d192_b128_bf16_g2_interleaved",
        "sm_90a/blockattn_backward_d256_b128_bf16_g2",
        "sm_90a/blockattn_backward_d256_b128_bf16_g2_half_split",
        "sm_90a/blockattn_backward_d256_b128_bf16_g2_interleaved",
        "sm_100a/blockattn_backward_d192_b128_bf16_g2",
        "sm_100a/blockattn_backward_d192_b128_bf16_g2_half_split",
        "sm_100a/blockattn_backward_d192_b128_bf16_g2_interleaved",
        "sm_100a/blockattn_backward_d256_b128_bf16_g2",
        "sm_100a/blockattn_backward_d256_b128_bf16_g2_half_split",
        "sm_100a/blockattn_backward_d256_b128_bf16_g2_interleaved"]

    # The wheel's set (python/CMakeLists.txt; scripts/check_wheel.sh counts it): 144 kernels and
    # the 8 small-grid variants (sm_90a, no rotary, both kinds, both head dims and dtypes).
    script.main(["unused", "--dry-run", "--chips", "sm_90a,sm_100a", "--kinds", "forward,backward",
                 "--rotary", "none,half_split,interleaved", "--rotary-variants", "plain,pos,rv,pos_rv"])
    names = capsys.readouterr().out.split()
    assert len(names) == 152 and len([n for n in names if n.endswith("_t1")]) == 8
    assert "sm_90a/blockattn_forward_d128_b64_f16_interleaved_pos_rv" in names
    script.main(["unused", "--dry-run", "--chips", "sm_90a", "--kinds", "forward,backward",
                 "--rotary", "none,half_split", "--no-small-grid"])
    assert not [n for n in capsys.readouterr().out.split() if "_t" in n]

    with pytest.raises(SystemExit):
        script.main(["unused", "--dry-run", "--rotary-variants", "both"])


def test_launch_grid_persistent():
    from blockattn._kernels import launch_grid

    assert launch_grid({"grid": "persistent"}, 132, (1000, 4, 128), 3) == 132
    assert launch_grid({"grid": "persistent", "ctas_per_sm": 2}, 132, (1000, 4, 128), 3) == 264


def test_launch_grid_chunked():
    from blockattn._kernels import launch_grid

    manifest = {"grid": "chunked", "ctas_per_sm": 2, "tiles_per_cta": 4, "block_size": 64}
    # seed: T = 1,627,232 tokens, 1152 sequences, 4 heads: (25425 + 1152) x 4 = 106,308 items.
    assert launch_grid(manifest, 132, (1_627_232, 4, 128), 1153) == 26_577
    # Rounds up: 2 sequences of 1 token, 1 head: (0 + 2) x 1 = 2 items -> one CTA.
    assert launch_grid(manifest, 132, (2, 1, 128), 3) == 1
    # No tokens and no sequences still launches one CTA (it finds no work).
    assert launch_grid(manifest, 132, (0, 4, 128), 1) == 1


def test_small_grid_variant_key():
    from blockattn._kernels import small_grid_key

    small = small_grid_key(key())
    assert small == key(tiles_per_cta=1)
    assert small.name == "blockattn_forward_d128_b64_bf16_t1"
    assert small.compiler_flags() == [
        "--kind=forward", "--head-dim=128", "--block-size=64", "--dtype=bf16", "--rotary=none",
        "--tiles-per-cta=1", "--chip=sm_90a", "--name=blockattn_forward_d128_b64_bf16_t1",
    ]
    assert small_grid_key(key(kind="backward", head_dim=64, dtype="f16")).name == "blockattn_backward_d64_b64_f16_t1"
    # Only the sm_90a kernels without rotary (chunked, the fast path's) have one.
    assert small_grid_key(key(chip="sm_100a")) is None
    assert small_grid_key(key(rotary="half_split")) is None
    assert small_grid_key(small) is None
    with pytest.raises(ValueError, match="tiles_per_cta"):
        key(tiles_per_cta=-1)


def test_small_grid_limit():
    """The variant launches while its grid (a CTA per item) fits on the GPU at once."""
    import json
    import pathlib

    from blockattn._kernels import grid_inputs, launch_grid, small_grid_limit, work_items

    manifests = pathlib.Path(__file__).parent / "data" / "manifests"
    forward = json.loads((manifests / "blockattn_forward_d128_b64_bf16.json").read_text())
    backward = json.loads((manifests / "blockattn_backward_d128_b64_bf16.json").read_text())
    small = {**forward, "tiles_per_cta": 1}  # the --tiles-per-cta=1 build's launch
    # Chunked, 2 CTAs per SM (4 tiles per CTA forward, 3 backward): 264 items on 132 SMs.
    assert small_grid_limit(grid_inputs(forward), 132) == 264
    assert small_grid_limit(grid_inputs(backward), 132) == 264
    assert small_grid_limit(grid_inputs(small), 132) == -1
    assert small_grid_limit(grid_inputs({"grid": "persistent"}), 132) == -1
    for items in range(1, 600):
        q_shape = (64 * (items - 1), 1, 128)  # one sequence: items - 1 blocks + 1
        assert work_items(64, q_shape, 2) == items
        one_wave = launch_grid(small, 132, q_shape, 2) <= 264
        assert (items <= small_grid_limit(grid_inputs(forward), 132)) == one_wave
    # 1 x 512 tokens, H=4: 36 items, 9 CTAs of the default kernel, 36 of the variant.
    assert work_items(64, (512, 4, 128), 2) == 36
    assert launch_grid(forward, 132, (512, 4, 128), 2) == 9
    assert launch_grid(small, 132, (512, 4, 128), 2) == 36


def test_supported_shapes_are_the_compilers():
    """api.py checks head dims and block sizes against _kernels.HEAD_DIMS and
    BLOCK_SIZES; they must be what the compiler's verifier accepts
    (Support in BlockAttnOps.h)."""
    import subprocess

    from blockattn import _kernels

    compiler = _kernels.find_compiler()
    if compiler is None:
        pytest.skip("no block-attn-compile")

    def accepts(flag):
        run = subprocess.run([compiler, "--kind=forward", flag, "--emit-blockattn"],
                             capture_output=True, text=True)
        assert run.returncode == 0 or "unsupported" in run.stderr, run.stderr
        return run.returncode == 0

    for d in (32, 64, 80, 96, 128, 192, 256):
        assert accepts(f"--head-dim={d}") == (d in _kernels.HEAD_DIMS), d
    # Fused rotary embeddings at every head dim (docs/head-dims.md).
    for d in _kernels.HEAD_DIMS:
        run = subprocess.run([compiler, "--kind=forward", f"--head-dim={d}", "--rotary=half_split",
                              "--emit-blockattn"], capture_output=True, text=True)
        assert run.returncode == 0, (d, run.stderr)
    assert set(_kernels.PREBUILT_HEAD_DIMS) <= set(_kernels.HEAD_DIMS)
    for b in (32, 64, 128):
        assert accepts(f"--block-size={b}") == (b in _kernels.BLOCK_SIZES), b


def test_block_sizes_share_64_row_tiles():
    """Blocks of 16 and 32 tokens share the 64-row tiles, packed across sequences: the
    chunked grid counts tiles of blocks_per_tile virtual blocks (the manifest's), not blocks;
    a kernel that keeps one sequence a tile (rotary) counts tiles of tile_rows; the 64-token
    kernels' manifests say nothing of either."""
    import json
    import pathlib
    import subprocess
    import tempfile

    from blockattn import _kernels

    assert [_kernels.tile_rows(b) for b in (16, 32, 64)] == [64, 64, 64]
    chunked = {"grid": "chunked", "block_size": 16, "tile_rows": 64, "tiles_per_cta": 1}
    assert _kernels.grid_inputs(chunked) == (True, 1, 64, 1, 1)
    # 1 x 640 tokens, H=2: 10 tiles of 64 rows + 1 per sequence = 22 items (not 82).
    assert _kernels.launch_grid(chunked, 132, (640, 2, 64), 2) == 22
    packed = {**chunked, "blocks_per_tile": 4}
    assert _kernels.grid_inputs(packed) == (True, 1, 16, 1, 4)
    # The same: ceil((640 / 16 + 1) / 4) = 11 tiles a head.
    assert _kernels.launch_grid(packed, 132, (640, 2, 64), 2) == 22
    # 200 sequences of 16 tokens, H=1: (200 + 200) virtual blocks, 100 tiles (not 200).
    assert _kernels.launch_grid(packed, 132, (3200, 1, 64), 201) == 100
    assert _kernels.launch_grid(chunked, 132, (3200, 1, 64), 201) == 250
    # 300 sequences of 1 token: 18 + 300 virtual blocks, 80 tiles (one sequence a tile: 304).
    assert _kernels.launch_grid(packed, 132, (300, 1, 64), 301) == 80
    assert _kernels.launch_grid(chunked, 132, (300, 1, 64), 301) == 304
    compiler = _kernels.find_compiler()
    if compiler is None:
        pytest.skip("no block-attn-compile")
    with tempfile.TemporaryDirectory() as out:
        for bs in (16, 32, 64):
            k = key(block_size=bs, head_dim=64)
            subprocess.run([compiler, *k.compiler_flags(), "-o", out, "--quiet"], check=True)
            manifest = json.loads((pathlib.Path(out) / f"{k.name}.json").read_text())
            assert manifest["kernel"] == f"blockattn_forward_d64_b{bs}_bf16"
            assert manifest["block_size"] == bs
            assert manifest.get("tile_rows", bs) == _kernels.tile_rows(bs)
            assert ("tile_rows" in manifest) == (bs != 64)
            assert manifest["grid"] == "chunked"  # the sm_90a forward's default
            assert manifest.get("blocks_per_tile", 1) == 64 // bs
            inputs = _kernels.grid_inputs(manifest)
            assert (inputs[2], inputs[4]) == (bs, 64 // bs)
        # Rotary kernels keep one sequence a tile (positions are per tile).
        k = key(block_size=16, head_dim=64, rotary="half_split")
        subprocess.run([compiler, *k.compiler_flags(), "-o", out, "--quiet"], check=True)
        manifest = json.loads((pathlib.Path(out) / f"{k.name}.json").read_text())
        assert "blocks_per_tile" not in manifest and manifest["tile_rows"] == 64


def test_rotary_theta_kernel_names_and_flags():
    """Angles from theta (the compiler's checks and the emulator tests; the API passes tables):
    block-attn-compile's _theta at the usual base, the base in the name at another, so that two
    bases never share a cache file."""
    k = key(head_dim=256, block_size=128, rotary="half_split", positions=True, rotary_theta=10000.0)
    assert k.name == "blockattn_forward_d256_b128_bf16_half_split_pos_theta"
    assert k.compiler_flags() == [
        "--kind=forward", "--head-dim=256", "--block-size=128", "--dtype=bf16", "--rotary=half_split",
        "--positions", "--rotary-theta=10000.0", "--chip=sm_90a", f"--name={k.name}",
    ]
    other = key(head_dim=256, block_size=128, rotary="half_split", positions=True, rotary_theta=500.0)
    assert other.name == "blockattn_forward_d256_b128_bf16_half_split_pos_theta500"
    assert "--rotary-theta=500.0" in other.compiler_flags()
    assert key(rotary="half_split").name == "blockattn_forward_d128_b64_bf16_half_split"
    with pytest.raises(ValueError, match="rotary_theta needs a rotary mode"):
        key(rotary_theta=10000.0)
