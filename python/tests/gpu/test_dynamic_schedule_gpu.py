"""The dynamic tile schedule (`--schedule=dynamic`; docs/pipeline.md, "Dynamic schedule") on
the GPU: the persistent kernels whose CTAs claim their next tile from the counters of a
`schedule` argument, which the last CTA to finish resets.

Every case compares with the float64 reference, several launches in a row (a kernel that
left its counters other than zeroed would make the next launch skip tiles, and the check
sees the unwritten rows), on two streams at once (each has its counters), and replayed from
a CUDA graph. Forward and backward, plain and fused rotary, head dims 64 and 128, bf16.

The option is a compiler flag: the module compiles the kernels it needs with it (the API's
kernel names, `_kernels.KernelKey.compiler_flags()` plus the flag) into a directory from
which the tests' kernel lookup takes them (the small-grid variants stay the
defaults). With a prebuilt directory of them (no compiler on the GPU machine) set
BLOCKATTN_DYNAMIC_KERNEL_DIR.
"""

from __future__ import annotations

import pathlib

import pytest
import torch

import blockattn
from blockattn import _driver, _kernels

from .kernel_dirs import kernels_from, kernels_with_flag
from .test_forward_gpu import make_inputs
from .test_rotary_gpu import random_tables, run_backward, run_forward

pytestmark = pytest.mark.skipif(torch.cuda.get_device_capability() != (9, 0),
                                reason="the sm_90a kernels (no sm_100a GPU here)")

FLAG = "--schedule=dynamic"
LENGTHS = [0, 1, 63, 64, 65, 130, 300, 2000] + [5, 17, 64] * 40
ROTARY = [("none", False, False), ("half_split", False, False), ("interleaved", True, True)]


def _keys():
    for kind in ("forward", "backward"):
        for head_dim in (64, 128):
            for rotary, positions, rotate_v in ROTARY:
                yield _kernels.KernelKey(kind=kind, head_dim=head_dim, block_size=64, dtype="bf16",
                                         chip="sm_90a", rotary=rotary, positions=positions,
                                         rotate_v=rotate_v)


@pytest.fixture(scope="module")
def dynamic_kernels(tmp_path_factory):
    return kernels_with_flag(tmp_path_factory, "BLOCKATTN_DYNAMIC_KERNEL_DIR", FLAG, _keys())


@pytest.fixture
def dynamic(dynamic_kernels, monkeypatch):
    keys = set(_keys())
    yield from kernels_from(dynamic_kernels, lambda key: key in keys, monkeypatch)


def rotary_of(rotary: str, positions: bool, rotate_v: bool, q: torch.Tensor, seed: int):
    if rotary == "none":
        return None
    cos, sin = random_tables(4096, q.shape[2], seed=seed)
    pos = None
    if positions:
        pos = torch.randint(0, 4096, (q.shape[0],), generator=torch.Generator().manual_seed(seed),
                            dtype=torch.int32).cuda()
    return blockattn.Rotary(cos, sin, interleaved=rotary == "interleaved", positions=pos, rotate_v=rotate_v)


def test_kernels_are_dynamic(dynamic_kernels):
    """The directory's kernels take the counters: the manifest says so."""
    for key in _keys():
        files = _kernels._load(pathlib.Path(dynamic_kernels) / "sm_90a", key)
        assert files.manifest["schedule"] == {"tensor": "schedule", "words": 2, "dtype": "i32"}
        assert files.manifest["grid"] == "persistent"


@pytest.mark.parametrize("rotary,positions,rotate_v", ROTARY, ids=[r[0] for r in ROTARY])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_forward_and_backward_launches_in_a_row(dynamic, head_dim, rotary, positions, rotate_v):
    for launch in range(3):
        q, k, v, cu = make_inputs(LENGTHS, 3, head_dim, torch.bfloat16, seed=launch)
        r = rotary_of(rotary, positions, rotate_v, q, seed=launch)
        run_forward(q, k, v, cu, r, torch.bfloat16)
        run_backward(q, k, v, cu, r, torch.bfloat16, seed=launch)
    torch.cuda.synchronize()
    assert all(not c.any() for c in _driver._SCHEDULES.values()), "counters left other than zeroed"


def test_two_streams_at_once(dynamic):
    """Kernels on two streams run at the same time; each stream's launches claim from their
    own counters."""
    q, k, v, cu = make_inputs(LENGTHS * 4, 4, 128, torch.bfloat16, seed=7)
    r = rotary_of("half_split", False, False, q, seed=7)
    want = blockattn.block_attention(q, k, v, cu, rotary=r)
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    torch.cuda.synchronize()
    outs = []
    for _ in range(4):
        for stream in streams:
            with torch.cuda.stream(stream):
                outs.append(blockattn.block_attention(q, k, v, cu, rotary=r))
    torch.cuda.synchronize()
    for o in outs:
        assert torch.equal(o, want)
    assert all(not c.any() for c in _driver._SCHEDULES.values())


def test_cuda_graph_replays(dynamic):
    q, k, v, cu = make_inputs(LENGTHS, 4, 128, torch.bfloat16, seed=9)
    r = rotary_of("interleaved", True, True, q, seed=9)
    blockattn.block_attention(q, k, v, cu, rotary=r)  # load the kernel outside capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        o = blockattn.block_attention(q, k, v, cu, rotary=r)
    for seed in range(3):
        q.copy_(torch.randn(q.shape, generator=torch.Generator(device="cuda").manual_seed(seed),
                            device="cuda").to(q.dtype))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(o, blockattn.block_attention(q, k, v, cu, rotary=r))
