"""The sm_90a backward at block size 128 with its load slot split into the rings "qk" and
"vdo" (`--large-block-rings=2`, opt-in; docs/block-sizes.md, "Two rings") against the float64
reference on the GPU: plain, causal and dlse, head dims 64 and 128, both dtypes, the edge
lengths, a long sequence and tiny ones.

The option is a compiler flag, not an API one: the module compiles the backward kernels it
needs with it (the API's kernel names, `_kernels.KernelKey.compiler_flags()` plus the flag)
into a directory from which the tests' kernel lookup takes every block-128 backward (the
forward stays the default kernel), with the API's and the driver's kernel caches emptied
around each test. With a prebuilt directory of them (no compiler on the GPU
machine) set BLOCKATTN_RINGS_KERNEL_DIR:

    printf '#!/bin/sh\\nexec %s/build/bin/block-attn-compile "$@" --large-block-rings=2\\n' \\
        "$PWD" > /tmp/rings2.sh && chmod +x /tmp/rings2.sh
    python3 scripts/prebuild_kernels.py /tmp/k-rings2 --chips sm_90a --kinds backward \\
        --block-sizes 128 --head-dims 64,128 --dtypes bf16,f16 --compiler /tmp/rings2.sh
    (and the same with --causal, --lse, --causal --lse)
"""

from __future__ import annotations

import json
import os
import pathlib

import pytest
import torch

from blockattn import _kernels

from .kernel_dirs import kernels_from

from . import test_block_size_128_gpu as b128
from . import test_block_size_128_modes_gpu as modes

pytestmark = pytest.mark.skipif(torch.cuda.get_device_capability() != (9, 0),
                                reason="large-block-rings=2 is an sm_90a backward")

FLAG = "--large-block-rings=2"


class RingsCompiler:
    """block-attn-compile with the flag appended (a KernelKey's flags come first)."""

    def __init__(self, directory: pathlib.Path):
        compiler = _kernels.find_compiler()
        if compiler is None:
            pytest.skip("no block-attn-compile and no BLOCKATTN_RINGS_KERNEL_DIR")
        self.path = directory / "rings2.sh"
        self.path.write_text(f'#!/bin/sh\nexec "{compiler}" "$@" {FLAG}\n')
        self.path.chmod(0o755)


def _keys(head_dims, dtypes, modes_):
    for head_dim in head_dims:
        for dtype in dtypes:
            for causal, lse in modes_:
                yield _kernels.KernelKey(kind="backward", head_dim=head_dim, block_size=128,
                                         dtype=dtype, chip="sm_90a", causal=causal, lse=lse)


@pytest.fixture(scope="module")
def rings_kernels(tmp_path_factory):
    directory = os.environ.get("BLOCKATTN_RINGS_KERNEL_DIR")
    if directory is None:
        root = tmp_path_factory.mktemp("rings2")
        compiler = RingsCompiler(root)
        keys = list(_keys((64, 128), ("bf16", "f16"),
                          ((False, False), (True, False), (False, True), (True, True))))
        _kernels.prebuild(root, keys, cubin=True, jobs=4, compiler=str(compiler.path))
        directory = str(root)
    return directory


@pytest.fixture
def with_rings(rings_kernels, monkeypatch):
    """Every block-128 backward from the rings' directory (the other kernels as usual), with
    the API's and the driver's kernel caches empty before and restored after."""
    def takes(key):
        return key.kind == "backward" and key.block_size == 128

    yield from kernels_from(rings_kernels, takes, monkeypatch)


def test_rings_kernels_are_the_two_ring_ones(rings_kernels):
    """The directory holds the option's kernels: four rings' worth of barriers (qk, vdo, pds0,
    pds1), the same 80 m64n128k16 wgmmas at head dim 128."""
    manifest = pathlib.Path(rings_kernels) / "sm_90a" / "blockattn_backward_d128_b128_bf16.json"
    data = json.loads(manifest.read_text())
    ptx = (manifest.parent / data["ptx"]).read_text()
    assert ptx.count("mbarrier.init.shared.b64") == 8
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16") == 80


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("heads", [1, 4])
def test_rings_backward_jagged_edges(with_rings, head_dim, heads, dtype):
    b128.run_backward(b128.EDGE_LENGTHS, heads, head_dim, dtype=dtype)


def test_rings_backward_long_tiny_and_scaled(with_rings):
    b128.run_backward([20_011], 2, 128, seed=2)
    b128.run_backward(b128.TINY_LENGTHS, 3, 64, seed=3)
    b128.run_backward(b128.EDGE_LENGTHS, 2, 64, seed=4, scale=0.05)


@pytest.mark.parametrize("causal,lse", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_rings_causal_and_dlse(with_rings, head_dim, dtype, causal, lse):
    modes.run(modes.LENGTHS, 3, head_dim, dtype, causal=causal, lse=lse, seed=head_dim)
