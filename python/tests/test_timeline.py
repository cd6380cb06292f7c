"""bench/timeline.py's decoding and drawing, on synthetic trace buffers laid
out as a traced kernel's manifest says (and on a real manifest when the
compiler is built)."""

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import timeline  # noqa: E402

EVENTS = ["none", "tile_begin", "tile_end", "wait_begin", "wait_end", "arrive", "copy", "mma_begin", "mma_end",
          "softmax_begin", "softmax_end", "store_begin", "store_end", "rotate_begin", "rotate_end", "tmem_begin",
          "tmem_end"]
CODE = {name: i for i, name in enumerate(EVENTS)}
RECORDS = 8


def trace_manifest(lanes=(("load", "load", 0), ("compute", "compute", 0))):
    return {
        "param": "trace",
        "cta_bytes": (1 + len(lanes)) * RECORDS * 16,
        "header_bytes": RECORDS * 16,
        "header": ["start_globaltimer", "start_clock", "end_globaltimer", "end_clock", "smid"],
        "record_bytes": 16,
        "record": ["clock:u64", "event:u8", "detail:u8", "pad:u16", "value:i32"],
        "records_per_lane": RECORDS,
        "lanes": [{"partition": p, "role": r, "replica": i} for p, r, i in lanes],
        "events": EVENTS,
        "channels": ["qkv"],
    }


class Buffer:
    """A trace buffer written the way the kernel writes it."""

    def __init__(self, trace, ctas):
        self.trace = trace
        self.words = np.zeros(ctas * trace["cta_bytes"] // 8, dtype=np.uint64)

    def anchor(self, cta, sm, start, end):
        base = cta * self.trace["cta_bytes"] // 8
        self.words[base: base + 5] = [start[1], start[0], end[1], end[0], sm]

    def lane(self, cta, lane, events):
        base = (cta * self.trace["cta_bytes"] + self.trace["header_bytes"] + lane * RECORDS * 16) // 8
        for i, (clock, name, *rest) in enumerate(events[:RECORDS]):
            detail = rest[0] if rest else 0
            value = rest[1] if len(rest) > 1 else 0
            self.words[base + 2 * i] = clock
            self.words[base + 2 * i + 1] = CODE[name] | (detail << 8) | ((value & 0xFFFFFFFF) << 32)

    def bytes(self):
        return self.words.tobytes()


# 2 cycles per ns on SM 0: clock c is at ns 1000 + c / 2.
def ns0(clock):
    return 1000 + clock // 2


def two_ctas_on_sm0():
    trace = trace_manifest()
    buf = Buffer(trace, ctas=3)  # CTA 2 never ran
    for cta, t in ((0, 0), (1, 4000)):
        buf.anchor(cta, sm=0, start=(t + 100, ns0(t + 100)), end=(t + 3000, ns0(t + 3000)))
        buf.lane(cta, 0, [(t + 200, "tile_begin", 0, 64 * cta), (t + 210, "wait_begin"), (t + 300, "wait_end"),
                          (t + 320, "copy"), (t + 330, "arrive"), (t + 340, "tile_end")])
        buf.lane(cta, 1, [(t + 400, "wait_begin"), (t + 600, "wait_end"), (t + 610, "tile_begin", 0, 64 * cta),
                          (t + 620, "mma_begin"), (t + 820, "mma_end"), (t + 830, "softmax_begin"),
                          (t + 930, "softmax_end"), (t + 1000, "tile_end")])
    return trace, buf


def test_decode_reads_the_manifest_layout_and_drops_ctas_that_did_not_run():
    trace, buf = two_ctas_on_sm0()
    ctas = timeline.decode(buf.bytes(), trace, 3)
    assert [c.index for c in ctas] == [0, 1]
    assert ctas[1].header["start_clock"] == 4100 and ctas[1].smid == 0
    assert len(ctas[0].lanes[0]) == 6 and len(ctas[0].lanes[1]) == 8
    assert ctas[0].lanes[0]["value"][0] == 0 and ctas[1].lanes[0]["value"][0] == 64
    with pytest.raises(ValueError, match="bytes for"):
        timeline.decode(buf.bytes()[:-1], trace, 3)


def test_record_layout_must_match_its_size():
    trace = trace_manifest()
    trace["record"] = ["clock:u64", "event:u8"]
    with pytest.raises(ValueError, match="records of 9 bytes"):
        timeline.record_dtype(trace)


def test_clock_fit_maps_cycles_to_ns_per_sm():
    trace, buf = two_ctas_on_sm0()
    buf2 = Buffer(trace, 4)
    buf2.words[: buf.words.size] = buf.words
    # CTA 3 on SM 1, alone and short: the median rate of the others, through its anchors.
    buf2.anchor(3, sm=1, start=(50_000, 7000), end=(50_010, 7005))
    fits = timeline.clock_fits(timeline.decode(buf2.bytes(), trace, 4))
    assert fits[0].cycles_per_ns == pytest.approx(2.0)
    assert fits[0].ns(4100) == pytest.approx(ns0(4100))
    assert fits[1].cycles_per_ns == pytest.approx(2.0)
    assert fits[1].ns(50_000) == pytest.approx(7000 - 2.5, abs=3)


def test_lane_events_pair_begins_and_ends():
    trace, buf = two_ctas_on_sm0()
    cta = timeline.decode(buf.bytes(), trace, 3)[1]
    ev = timeline.lane_events(cta.lanes[1], EVENTS)
    assert ev.spans == [("wait", 4400, 4600, 0), ("mma", 4620, 4820, 0), ("softmax", 4830, 4930, 0)]
    assert ev.tiles == [(4610, 5000, 64)]
    assert timeline.lane_events(cta.lanes[0], EVENTS).points == [("copy", 4320, 0), ("arrive", 4330, 0)]


def test_summary_per_role_and_tile():
    trace, buf = two_ctas_on_sm0()
    ctas = timeline.decode(buf.bytes(), trace, 3)
    summary = timeline.summarize(ctas, trace, timeline.clock_fits(ctas))
    compute = summary["compute"]
    assert compute["tiles"] == 2 and compute["lanes"] == 2 and compute["lanes_full"] == 2
    # 200 cycles at 2 per ns.
    assert compute["per_tile_ns"]["mma"] == pytest.approx(100.0)
    assert compute["per_tile_ns"]["wait"] == pytest.approx(100.0)
    assert compute["ns_per_tile"] == pytest.approx(300.0)  # 600 cycles from first to last record
    assert summary["load"]["per_tile_ns"]["wait"] == pytest.approx(45.0)


def test_rows_deal_overlapping_ctas_to_slots(tmp_path):
    trace, buf = two_ctas_on_sm0()
    # A third CTA on SM 0 that overlaps CTA 1: a second slot.
    buf3 = Buffer(trace, 3)
    buf3.words[:] = buf.words
    buf3.anchor(2, sm=0, start=(4200, ns0(4200)), end=(6000, ns0(6000)))
    buf3.lane(2, 1, [(4300, "mma_begin"), (4500, "mma_end")])
    ctas = timeline.decode(buf3.bytes(), trace, 3)
    rows, origin = timeline.sm_rows(ctas, trace, timeline.clock_fits(ctas), sm=0)
    assert origin == pytest.approx(ns0(100))
    assert [r["label"] for r in rows] == ["CTA slot 0: load", "CTA slot 0: compute", "CTA slot 1: load",
                                          "CTA slot 1: compute"]
    assert rows[0]["ctas"] == [0, 1] and rows[3]["ctas"] == [2]
    kind, begin, end, _ = rows[1]["spans"][1]
    assert kind == "mma" and begin == pytest.approx((ns0(620) - ns0(100)) / 1000)
    with pytest.raises(ValueError, match="no CTA ran on SM 5"):
        timeline.sm_rows(ctas, trace, timeline.clock_fits(ctas), sm=5)
    window = timeline.busy_window(rows, 1.0)
    assert window[1] - window[0] == pytest.approx(1.0)
    path = tmp_path / "gantt.png"
    timeline.draw([("plain", rows, window), ("rotary", rows[:2], (0.0, 3.0))], path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_traced_kernel_manifest_decodes(tmp_path):
    compiler = REPO / "build" / "bin" / "block-attn-compile"
    if not compiler.is_file():
        pytest.skip("no build/bin/block-attn-compile (make build)")
    subprocess.run([str(compiler), "--kind=forward", "--head-dim=128", "--chip=sm_90a", "--trace",
                    "--trace-records=16", "--quiet", "-o", str(tmp_path)], check=True)
    manifest = json.loads((tmp_path / "blockattn_forward_d128_b64_bf16_trace.json").read_text())
    trace = manifest["trace"]
    assert any(p["name"] == trace["param"] for p in manifest["params"])
    assert timeline.record_dtype(trace).itemsize == trace["record_bytes"]
    assert trace["events"] == EVENTS
    assert [lane["partition"] for lane in trace["lanes"]] == ["load", "compute"]
    # A buffer of two CTAs, the second with one record: it decodes.
    words = np.zeros(2 * trace["cta_bytes"] // 8, dtype=np.uint64)
    second = trace["cta_bytes"] // 8
    words[second + 1] = 123
    words[second + trace["header_bytes"] // 8] = 500
    words[second + trace["header_bytes"] // 8 + 1] = CODE["arrive"]
    ctas = timeline.decode(words.tobytes(), trace, 2)
    assert [c.index for c in ctas] == [1]
    assert timeline.lane_events(ctas[0].lanes[0], trace["events"]).points == [("arrive", 500, 0)]


def test_a_traced_kernel_runs_in_the_emulator_and_its_trace_decodes(tmp_path):
    """The traced seed-like forward (head dim 64) in block-attn-emulate: the
    same output as the untraced kernel, bit for bit, and a trace with every
    tile once on the load lanes and once on the compute lanes, in clock
    order. (The emulator's clocks count instructions: two "cycles" per
    "ns".)"""
    from blockattn import emulation as em
    from blockattn._kernels import launch_grid

    compiler = REPO / "build" / "bin" / "block-attn-compile"
    if not compiler.is_file() or em.find_emulator() is None:
        pytest.skip("needs build/bin/block-attn-compile and block-attn-emulate (make build)")
    case = em.Case("forward", 64, "bf16")
    for extra in ([], ["--trace", "--trace-records=256"]):
        subprocess.run([str(compiler), *case.compiler_flags("sm_90a"), "-o", str(tmp_path), "--quiet", *extra],
                       check=True)
    plain, traced = tmp_path / f"k_{case.name}", tmp_path / f"k_{case.name}_trace"
    tensors = em.make_problem(case)
    scalars = {"softmax_scale": 0.125}
    want = em.emulate(plain.with_suffix(".ptx"), plain.with_suffix(".json"), tensors, scalars)
    manifest = json.loads(traced.with_suffix(".json").read_text())
    trace = manifest["trace"]
    grid = launch_grid(manifest, 2, tensors["q"].shape, tensors["cu_seqlens"].size)
    buffer = np.zeros(grid * trace["cta_bytes"] // 8, dtype=np.int64)
    got = em.emulate(traced.with_suffix(".ptx"), traced.with_suffix(".json"), dict(tensors, trace=buffer), scalars)
    assert (got["o"] == want["o"]).all()

    ctas = timeline.decode(got["trace"].tobytes(), trace, grid)
    assert [c.index for c in ctas] == list(range(grid))
    cu = tensors["cu_seqlens"]
    heads = tensors["q"].shape[1]
    rows = sorted(int(r) for b in range(len(cu) - 1) for r in range(cu[b], cu[b + 1], 64)) * heads
    tiles = {"load": [], "compute": []}
    for cta in ctas:
        for lane, records in zip(trace["lanes"], cta.lanes):
            assert 0 < len(records) < trace["records_per_lane"]
            assert (np.diff(records["clock"].astype(np.int64)) > 0).all()
            assert records["clock"][0] > cta.header["start_clock"]
            tiles[lane["partition"]] += [row for _, _, row in timeline.lane_events(records, trace["events"]).tiles]
    assert sorted(tiles["load"]) == sorted(rows) and sorted(tiles["compute"]) == sorted(rows)
    fits = timeline.clock_fits(ctas)
    assert all(fit.cycles_per_ns == pytest.approx(2.0) for fit in fits.values())
    summary = timeline.summarize(ctas, trace, fits)
    assert summary["compute"]["tiles"] == len(rows)
    assert {"wait", "mma", "softmax", "store", "in_tile"} <= set(summary["compute"]["per_tile_ns"])


def test_the_tool_end_to_end_in_the_emulator(tmp_path):
    """bench/timeline.py --build-only, then --emulate (the kernels in
    block-attn-emulate instead of a GPU): a chart per kind and the JSON
    summary, plain and rotary."""
    from blockattn import emulation as em

    compiler = REPO / "build" / "bin" / "block-attn-compile"
    if not compiler.is_file() or em.find_emulator() is None:
        pytest.skip("needs build/bin/block-attn-compile and block-attn-emulate (make build)")
    kernels = tmp_path / "kernels"
    common = ["--kernel-dir", str(kernels), "--head-dim", "64", "--kinds", "forward"]
    # The rotary forward claims its tiles (schedule=dynamic, session 37), and the emulator runs
    # the CTAs one after another, so CTA 0 takes nearly every tile: its records must hold them.
    timeline.main(["--build-only", "--compiler", str(compiler), "--records", "256", "--persistent-records", "1024",
                   *common])
    assert (kernels / "blockattn_forward_d64_b64_bf16_half_split_trace.json").is_file()
    assert (kernels / "blockattn_forward_d64_b64_bf16.json").is_file()  # untraced, beside it
    timeline.main(["--emulate", "--out", str(tmp_path / "timeline"), "--window-us", "100", *common])
    assert (tmp_path / "timeline-forward.png").read_bytes()[:4] == b"\x89PNG"
    report = json.loads((tmp_path / "timeline.json").read_text())
    plain, rotary = report["kernels"]["forward/plain"], report["kernels"]["forward/rotary"]
    assert plain["kernel"] == "blockattn_forward_d64_b64_bf16_trace" and plain["ptxas"]["spill_stores"] == 0
    # The sm_90a half-split rotary forward rotates in its two rotary warpgroups (the default at
    # head dims 64 and 128), not in its consumer.
    assert rotary["roles"]["rotary"]["per_tile_ns"]["rotate"] > 0
    assert rotary["roles"]["rotary"]["tiles"] == 18
    assert "rotate" not in rotary["roles"]["compute"]["per_tile_ns"]
    assert "rotate" not in plain["roles"]["compute"]["per_tile_ns"]
    # Every tile of the problem (2 heads x 9 blocks), once.
    assert plain["roles"]["compute"]["tiles"] == rotary["roles"]["compute"]["tiles"] == 18


def test_compare_subtracts_per_role_and_kind():
    plain = {"compute": {"ns_per_tile": 300.0, "per_tile_ns": {"mma": 100.0, "wait": 50.0}}, "load": {
        "ns_per_tile": 10.0, "per_tile_ns": {}}}
    rotary = {"compute": {"ns_per_tile": 420.0, "per_tile_ns": {"mma": 100.0, "rotate": 90.0, "wait": 20.0}}}
    assert timeline.compare(plain, rotary) == {
        "compute": {"ns_per_tile": 120.0, "per_tile_ns": {"mma": 0.0, "rotate": 90.0, "wait": -30.0}}}


def test_parse_rotary_reads_the_variant():
    assert timeline.parse_rotary("half_split") == {"rotary": "half_split", "positions": False, "rotate_v": False}
    assert timeline.parse_rotary("interleaved+pos+rv") == {"rotary": "interleaved", "positions": True,
                                                           "rotate_v": True}
    assert timeline.parse_rotary("none") is None  # the plain kernel alone


@pytest.mark.parametrize("text", ["none+pos", "interleaved+theta", "half-split"])
def test_parse_rotary_refuses_what_it_does_not_know(text):
    with pytest.raises(ValueError, match="--rotary"):
        timeline.parse_rotary(text)


def test_kernel_key_takes_the_block_size():
    key = timeline.kernel_key("backward", timeline.PLAIN, 32, 128)
    assert key.name == "blockattn_backward_d32_b128_bf16"
    assert timeline.traced_name(key) == "blockattn_backward_d32_b128_bf16_trace"
    assert timeline.kernel_key("forward", timeline.PLAIN, 128).block_size == 64
