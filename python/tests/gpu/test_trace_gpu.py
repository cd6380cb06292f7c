"""Traced kernels on the GPU (block-attn-compile --trace, docs/timeline.md).

A traced kernel computes what the untraced one does, bit for bit, and its
trace buffer decodes (bench/timeline.py) to every tile of the batch, once on
the load lanes and once on the consumer lanes, in clock order, after the
start anchor, with anchors whose %globaltimer and %clock64 both move
forward.

Kernels needed, traced and untraced, in BLOCKATTN_KERNEL_DIR (or its sm_90a/):
``python3 bench/timeline.py --build-only --kernel-dir DIR --kinds forward,backward``
(D = 128, bf16, plain and half-split rotary). Skipped when they are not there.
"""

from __future__ import annotations

import math
import os
import pathlib
import sys

import numpy as np
import pytest
import torch

from blockattn import _driver, api, reference
from blockattn._kernels import KernelFiles

REPO = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "bench"))

import timeline  # noqa: E402

LENGTHS = [0, 1, 63, 64, 65, 130, 300, 1000]
HEADS = 3
D = 128


def traced_files(kind: str, rotary: str) -> KernelFiles:
    root = os.environ.get("BLOCKATTN_KERNEL_DIR")
    # timeline.kernel_key takes the kernel options (session 27: any rotary variant).
    options = timeline.PLAIN if rotary == "none" else timeline.parse_rotary(rotary)
    key = timeline.kernel_key(kind, options, D)
    for directory in ([pathlib.Path(root) / "sm_90a", pathlib.Path(root)] if root else []):
        if (directory / f"{timeline.traced_name(key)}.json").is_file():
            return timeline.load_files(directory, key)
    pytest.skip(f"no {timeline.traced_name(key)} in BLOCKATTN_KERNEL_DIR (bench/timeline.py --build-only)")


@pytest.mark.parametrize("kind", ["forward", "backward"])
@pytest.mark.parametrize("rotary", ["none", "half_split"])
def test_traced_kernel_matches_and_its_trace_decodes(kind, rotary):
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the traced kernels are built for sm_90a")
    files = traced_files(kind, rotary)
    g = torch.Generator(device="cuda").manual_seed(0)
    cu = torch.tensor(np.concatenate([[0], np.cumsum(LENGTHS)]), dtype=torch.int32, device="cuda")
    T = int(cu[-1])
    q, k, v, do = (torch.randn((T, HEADS, D), generator=g, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    scale = 1.0 / math.sqrt(D)
    cos = sin = None
    if kind == "forward":
        tensors = {"q": q, "k": k, "v": v, "o": torch.zeros_like(q), "cu_seqlens": cu}
        outputs = ("o",)
    else:
        tensors = {"q": q, "k": k, "v": v, "do": do, "dq": torch.zeros_like(q), "dk": torch.zeros_like(k),
                   "dv": torch.zeros_like(v), "cu_seqlens": cu}
        outputs = ("dq", "dk", "dv")
    if rotary != "none":
        cos, sin = (torch.tensor(t, dtype=torch.float32, device="cuda")
                    for t in reference.rope_tables(max(LENGTHS), D))
        api._rotary_launch_args(tensors, cos, sin, None, False, False)
    if kind == "forward":
        want = {"o": api.forward(q, k, v, cu, 64, scale, None, cos, sin)}
    else:
        want = dict(zip(outputs, api.backward(do, q, k, v, cu, 64, scale, cos, sin)))

    kernel = _driver.load_kernel(files, q.device)
    grid = kernel.grid(kernel.num_sms, tensors)
    trace = files.manifest["trace"]
    buffer = torch.zeros(grid * trace["cta_bytes"] // 8, dtype=torch.int64, device="cuda")
    kernel.launch(grid, dict(tensors, trace=buffer), {"softmax_scale": scale})
    torch.cuda.synchronize()
    for name in outputs:
        assert torch.equal(tensors[name], want[name]), f"{name}: the traced kernel differs"

    ctas = timeline.decode(buffer.cpu().numpy().tobytes(), trace, grid)
    assert ctas, "no CTA wrote its anchors"
    rows = sorted(r for b in range(len(LENGTHS)) for r in range(int(cu[b]), int(cu[b + 1]), 64)) * HEADS
    tiles: dict[str, list] = {}
    for cta in ctas:
        for lane, records in zip(trace["lanes"], cta.lanes):
            assert len(records) < trace["records_per_lane"], "a lane filled: more records per lane needed"
            assert (np.diff(records["clock"].astype(np.int64)) >= 0).all()
            # The start anchor is read before the barrier that releases the roles.
            if len(records):
                assert records["clock"][0] >= cta.header["start_clock"], f"{lane['role']} recorded before its CTA's start"
            ev = timeline.lane_events(records, trace["events"])
            tiles.setdefault(lane["role"], []).extend(row for _, _, row in ev.tiles)
    assert sorted(tiles["load"]) == sorted(rows)
    assert sorted(tiles["compute"]) == sorted(rows)
    for cta in ctas:
        h = cta.header
        assert h["start_globaltimer"] and h["end_clock"] > h["start_clock"]
        assert h["end_globaltimer"] >= h["start_globaltimer"]
