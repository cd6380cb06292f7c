"""The sm_90a grouped-query backward at block size 128 with `--group-roles=query-halves`
(opt-in; docs/pipeline.md, "Grouped-query attention", "Query halves") against the float64
reference on the GPU: two consumer warpgroups, one per 64-row query half, handing each other P
and dS through the rings "pds0" and "pds1" and each summing one key half's dV and dK over the
group. G = 2, 4 and MQA, head dims 32, 64, 96 and 128, both dtypes, causal and dlse, and two runs
giving the same bits.

The option is a compiler flag, not an API one: the module compiles the grouped block-128
backward kernels it needs with it (the API's kernel names plus the flag) into a directory from
which the tests' kernel lookup takes every grouped block-128 backward (the forward stays the
default kernel), with the API's and the driver's kernel caches emptied around each test. With
a prebuilt directory of them (no compiler on the GPU machine) set
BLOCKATTN_QUERY_HALVES_KERNEL_DIR:

    printf '#!/bin/sh\\nexec %s/build/bin/block-attn-compile "$@" --group-roles=query-halves\\n' \\
        "$PWD" > /tmp/qhalves.sh && chmod +x /tmp/qhalves.sh
    python3 scripts/prebuild_kernels.py /tmp/k-qhalves --chips sm_90a --kinds backward \\
        --block-sizes 128 --head-dims 32,64,96,128 --dtypes bf16,f16 --groups 2,4,8 \\
        --compiler /tmp/qhalves.sh
    (and the same with --causal, --lse, --causal --lse)
"""

from __future__ import annotations

import json
import pathlib

import pytest
import torch

from blockattn import _kernels

from .kernel_dirs import kernels_from, kernels_with_flag

from . import test_gqa_gpu as gqa

pytestmark = pytest.mark.skipif(torch.cuda.get_device_capability() != (9, 0),
                                reason="group-roles=query-halves is an sm_90a backward")

FLAG = "--group-roles=query-halves"
HEAD_DIMS = (32, 64, 96, 128)
# (hq, hkv): G = 2, 4 and 8 (MQA with hkv = 1).
GROUPS = [(4, 2), (8, 2), (8, 1), (4, 1)]
MODES = ((False, False), (True, False), (False, True), (True, True))


def _keys():
    for head_dim in HEAD_DIMS:
        for dtype in ("bf16", "f16"):
            for group in sorted({hq // hkv for hq, hkv in GROUPS}):
                for causal, lse in MODES:
                    yield _kernels.KernelKey(kind="backward", head_dim=head_dim, block_size=128,
                                             dtype=dtype, chip="sm_90a", group=group,
                                             causal=causal, lse=lse)


@pytest.fixture(scope="module")
def halves_kernels(tmp_path_factory):
    return kernels_with_flag(tmp_path_factory, "BLOCKATTN_QUERY_HALVES_KERNEL_DIR", FLAG, _keys(), jobs=8)


@pytest.fixture
def with_halves(halves_kernels, monkeypatch):
    """Every grouped block-128 backward from the option's directory (the other kernels as
    usual), with the API's and the driver's kernel caches empty before and restored after."""
    def takes(key):
        return key.kind == "backward" and key.block_size == 128 and key.group > 1

    yield from kernels_from(halves_kernels, takes, monkeypatch)


def test_halves_kernels_are_the_query_halves_ones(halves_kernels):
    """The directory holds the option's kernels: a load and two consumer partitions (three
    setmaxnreg), the rings kv, qdo, pds0 and pds1 (four full and four empty barriers)."""
    manifest = pathlib.Path(halves_kernels) / "sm_90a" / "blockattn_backward_d128_b128_bf16_g4.json"
    data = json.loads(manifest.read_text())
    ptx = (manifest.parent / data["ptx"]).read_text()
    assert ptx.count("setmaxnreg") == 3
    assert ptx.count("mbarrier.init.shared.b64") == 8


@pytest.mark.parametrize("hq,hkv", GROUPS, ids=lambda x: str(x))
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_query_halves_backward(with_halves, hq, hkv, head_dim, dtype):
    gqa.run_b128_backward(hq, hkv, head_dim, dtype, seed=hq + head_dim)


@pytest.mark.parametrize("causal,lse", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
def test_query_halves_causal_and_lse(with_halves, head_dim, causal, lse):
    gqa.run_b128_backward(8, 2, head_dim, causal=causal, lse=lse, seed=head_dim + 3)


@pytest.mark.parametrize("head_dim", [64, 128])
def test_query_halves_random_batch_and_deterministic(with_halves, head_dim):
    """Many items (every CTA runs several; the one-slot rings wrap), two runs giving the same
    bits."""
    gqa.assert_b128_backward_deterministic(23, 8, 2, head_dim, seed=23)
