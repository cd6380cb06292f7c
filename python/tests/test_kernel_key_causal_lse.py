"""KernelKey with causal blocks and the log-sum-exp (issue 21): names, flags, the small-grid
rule, and scripts/prebuild_kernels.py's --causal and --lse (no torch, no GPU)."""

import importlib.util
import pathlib

import pytest

from blockattn._kernels import KernelKey, small_grid_key


def key(**kw):
    base = dict(kind="forward", head_dim=128, block_size=64, dtype="bf16", chip="sm_90a")
    base.update(kw)
    return KernelKey(**base)


@pytest.mark.parametrize(
    "kw, suffix, extra",
    [
        (dict(causal=True), "_causal", ["--causal"]),
        (dict(lse=True), "_lse", ["--lse"]),
        (dict(causal=True, lse=True), "_causal_lse", ["--causal", "--lse"]),
        # the order of the common rules: _causal, _lse, then the rotary suffixes
        (dict(causal=True, lse=True, rotary="interleaved", positions=True, rotate_v=True),
         "_causal_lse_interleaved_pos_rv", ["--positions", "--rotate-v", "--causal", "--lse"]),
    ],
)
def test_names_and_flags(kw, suffix, extra):
    k = key(kind="backward", **kw)
    name = "blockattn_backward_d128_b64_bf16" + suffix
    assert k.name == name
    rotary = kw.get("rotary", "none")
    assert k.compiler_flags() == [
        "--kind=backward", "--head-dim=128", "--block-size=64", "--dtype=bf16", f"--rotary={rotary}",
        *extra, "--chip=sm_90a", f"--name={name}",
    ]


def test_defaults_are_the_plain_kernels():
    assert key(causal=False, lse=False) == key()
    assert "--causal" not in key().compiler_flags() and "--lse" not in key().compiler_flags()


def test_no_small_grid_variant():
    """The small-grid variants are prebuilt for the fast path's kernels only."""
    assert small_grid_key(key()) is not None
    assert small_grid_key(key(causal=True)) is None
    assert small_grid_key(key(lse=True)) is None


def load_script():
    path = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "prebuild_kernels.py"
    spec = importlib.util.spec_from_file_location("prebuild_kernels", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_prebuild_script(capsys):
    script = load_script()
    script.main(["unused", "--dry-run", "--kinds", "forward,backward", "--head-dims", "64", "--dtypes", "f16",
                 "--rotary", "none,half_split", "--causal", "--lse"])
    assert capsys.readouterr().out.split() == [
        f"sm_90a/blockattn_{kind}_d64_b64_f16_causal_lse{r}" for kind in ("forward", "backward")
        for r in ("", "_half_split")]
    script.main(["unused", "--dry-run", "--head-dims", "128", "--dtypes", "bf16", "--causal"])
    assert capsys.readouterr().out.split() == ["sm_90a/blockattn_forward_d128_b64_bf16_causal"]
