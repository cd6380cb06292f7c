"""Session 40's two opt-in candidates for the block-128 softmax (issue 20;
docs/performance-notes.md) against the float64 reference on the GPU: the softmax's copy
without masks for full tiles (`--softmax-full-tiles=on`) and the register tiles written to
shared memory with stmatrix (`--stmatrix-writes=on`), both on. Emulated only so far (the
emulator's tests show their outputs equal the defaults' bit for bit): this is their hardware
check, forward and backward, block sizes 64 and 128, head dims 32, 64 and 128, both dtypes
at 64, on the jagged edge lengths (full tiles next to partial and empty ones).

The options are compiler flags: the module compiles the kernels it needs with them (the
API's kernel names, `_kernels.KernelKey.compiler_flags()` plus the flags) into a directory
from which the tests' kernel lookup takes them (the small-grid variants stay the defaults:
the inputs are large enough not to take them). With a prebuilt directory of them (no
compiler on the GPU machine) set BLOCKATTN_SOFTMAX_WRITES_KERNEL_DIR:

    printf '#!/bin/sh\\nexec %s/build/bin/block-attn-compile "$@" %s\\n' "$PWD" \\
        "--softmax-full-tiles=on --stmatrix-writes=on" > /tmp/sw.sh && chmod +x /tmp/sw.sh
    python3 scripts/prebuild_kernels.py /tmp/k-sw --kinds forward,backward \\
        --block-sizes 64,128 --head-dims 32,64,128 --no-small-grid --compiler /tmp/sw.sh
"""

from __future__ import annotations

import pathlib

import pytest
import torch

from blockattn import _kernels

from .kernel_dirs import kernels_from, kernels_with_flag
from .test_forward_gpu import make_inputs
from .test_rotary_gpu import run_backward, run_forward
from . import test_block_size_128_gpu as b128

pytestmark = pytest.mark.skipif(torch.cuda.get_device_capability() != (9, 0),
                                reason="the sm_90a kernels (no sm_100a GPU here)")

FLAGS = "--softmax-full-tiles=on --stmatrix-writes=on"
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}
# Full tiles of both block sizes next to partial and empty ones, and enough tiles to fill
# the SMs (no small-grid variant).
LENGTHS = [0, 1, 63, 64, 65, 127, 128, 129, 300, 0, 191, 192, 193, 7, 5000]


def _keys():
    for kind in ("forward", "backward"):
        for block_size in (64, 128):
            for head_dim in (32, 64, 128):
                for dtype in (("bf16", "f16") if head_dim == 64 else ("bf16",)):
                    yield _kernels.KernelKey(kind=kind, head_dim=head_dim, block_size=block_size,
                                             dtype=dtype, chip="sm_90a")


@pytest.fixture(scope="module")
def flagged_kernels(tmp_path_factory):
    return kernels_with_flag(tmp_path_factory, "BLOCKATTN_SOFTMAX_WRITES_KERNEL_DIR", FLAGS,
                             _keys())


@pytest.fixture
def flagged(flagged_kernels, monkeypatch):
    keys = set(_keys())
    yield from kernels_from(flagged_kernels, lambda key: key in keys, monkeypatch)


def test_kernels_have_both(flagged_kernels):
    """The directory's kernels are the options': stmatrix and no 4-byte st.shared of a pair
    (the staged output, and P and dS in the backward)."""
    for key in _keys():
        files = _kernels._load(pathlib.Path(flagged_kernels) / "sm_90a", key)
        ptx = (files.directory / files.manifest["ptx"]).read_text()
        assert "stmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx, key.name
        assert "st.shared.b32" not in ptx, key.name


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
@pytest.mark.parametrize("head_dim", [32, 64, 128])
def test_block_128(flagged, head_dim, dtype):
    if dtype == "f16" and head_dim != 64:
        pytest.skip("f16 at head dim 64 only")
    b128.run_case(LENGTHS, 4, head_dim, dtype=DTYPES[dtype], seed=head_dim)
    b128.run_backward(LENGTHS, 2, head_dim, dtype=DTYPES[dtype], seed=head_dim)


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
@pytest.mark.parametrize("head_dim", [32, 64, 128])
def test_block_64(flagged, head_dim, dtype):
    if dtype == "f16" and head_dim != 64:
        pytest.skip("f16 at head dim 64 only")
    q, k, v, cu = make_inputs(LENGTHS, 4, head_dim, DTYPES[dtype], seed=head_dim)
    run_forward(q, k, v, cu, None, DTYPES[dtype])
    run_backward(q, k, v, cu, None, DTYPES[dtype], seed=head_dim)
