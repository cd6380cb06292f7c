"""libblockattn_launch through its ctypes binding (blockattn._launch), without a GPU.

A recording driver stands in for libcuda (blockattnLaunchSetDriver): the plan
of a real forward kernel's manifest must pass the tensor maps and scalars
that the manifest asks for, keep its tensor maps while address, shape and
strides repeat, and turn the library's errors into LaunchError with its
message. Skipped where the library is not built (no cuda.h).
"""

import ctypes
import json
import pathlib

import pytest

from blockattn import _kernels, _launch

lib = _launch.library()
pytestmark = pytest.mark.skipif(lib is None, reason="libblockattn_launch is not built")

T, H, D = 512, 4, 128


@pytest.fixture(scope="module")
def manifest(tmp_path_factory):
    if _kernels.find_compiler() is None:
        pytest.skip("no block-attn-compile")
    key = _kernels.KernelKey(kind="forward", head_dim=D, block_size=64, dtype="bf16", chip="sm_90a")
    return _kernels.compile_kernel(key, tmp_path_factory.mktemp("kernels")).manifest


class Recorder:
    """The driver table: records every encode and launch."""

    def __init__(self, fail_encode=False):
        self.encodes, self.launches, self.fail_encode = [], [], fail_encode
        self.calls = []  # the driver calls in order
        self.current = None  # the calling thread's context: none, as on a thread torch started
        self.param_count = 12  # the kernel parameters a launch records (the forward's)
        self.table = _launch.Driver(
            _launch._ENCODE(self.encode), _launch._LAUNCH(self.launch),
            _launch._SET_CURRENT(self.set_current), _launch._ERROR_NAME(self.error_name))

    def set_current(self, ctx):
        self.calls.append("ctxSetCurrent")
        if not ctx:
            return 201
        self.current = ctx
        return 0

    def encode(self, tmap, dtype, rank, address, dims, strides, box, elem, interleave, swizzle, l2, oob):
        self.calls.append("tensorMapEncodeTiled")
        if self.current is None:
            return 201  # CUDA_ERROR_INVALID_CONTEXT: the driver encodes in the current context
        if self.fail_encode:
            return 1
        self.encodes.append(dict(dtype=dtype, address=address, dims=dims[:rank], strides=strides[:rank - 1],
                                 box=box[:rank], swizzle=swizzle, l2=l2, oob=oob, interleave=interleave))
        ctypes.memset(tmap, 0, 128)
        ctypes.c_uint64.from_address(tmap).value = len(self.encodes)
        return 0

    def launch(self, function, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        self.calls.append("launchKernel")
        self.launches.append(dict(function=function, grid=gx, threads=bx, smem=smem, stream=stream,
                                  params=params))
        self.last = [params[i] for i in range(self.param_count)]
        return 0

    @staticmethod
    def error_name(error, name):
        name[0] = b"CUDA_ERROR_INVALID_VALUE"
        return 0


@pytest.fixture
def recorder():
    rec = Recorder()
    lib.blockattnLaunchSetDriver(ctypes.byref(rec.table))
    yield rec
    lib.blockattnLaunchSetDriver(None)


def activation(address, head_stride=D):
    return _launch.Plan.tensor_values(address, (T, H, D), (H * head_stride, head_stride, 1), 2)


def call_values(plan, base=0x100000, head_stride=D):
    addresses = {"q": base, "k": base + 0x100000, "v": base + 0x200000, "o": base + 0x300000}
    values = []
    for name in plan.tensor_names:
        if name == "cu_seqlens":
            values += plan.tensor_values(0x900000, (9,), (1,), 4)
        else:
            values += activation(addresses[name], head_stride)
    return values, addresses


def test_plan_passes_what_the_manifest_asks_for(manifest, recorder):
    plan = _launch.Plan(manifest, 0x1234, 0x5678)
    assert plan.tensor_names == ("q", "k", "v", "o", "cu_seqlens")
    assert plan.scalar_names == ("softmax_scale",)
    values, addresses = call_values(plan)
    plan.launch(132, 0xABC, values, [0.125])
    assert [e["address"] for e in recorder.encodes] == [addresses[n] for n in ("q", "k", "v", "o")]
    for e in recorder.encodes:
        assert e["dims"] == [D, H, T] and e["strides"] == [D * 2, H * D * 2] and e["box"] == [64, 1, 64]
        assert (e["dtype"], e["swizzle"], e["l2"], e["oob"], e["interleave"]) == (9, 3, 2, 0, 0)
    (launch,) = recorder.launches
    assert (launch["function"], launch["grid"], launch["threads"], launch["smem"], launch["stream"]) == (
        0x1234, 132, manifest["threads"], manifest["smem_bytes"], 0xABC)
    p = recorder.last
    names = [spec["name"] for spec in manifest["params"]]
    arg = dict(zip(names, p))
    assert [ctypes.c_uint64.from_address(arg[f"{n}_tmap"]).value for n in "qkvo"] == [1, 2, 3, 4]
    assert ctypes.c_int32.from_address(arg["q_size0"]).value == T
    assert ctypes.c_int32.from_address(arg["q_size1"]).value == H
    assert ctypes.c_uint64.from_address(arg["o"]).value == addresses["o"]
    assert ctypes.c_int64.from_address(arg["o_stride0"]).value == H * D
    assert ctypes.c_int64.from_address(arg["o_stride1"]).value == D
    assert ctypes.c_uint64.from_address(arg["cu_seqlens"]).value == 0x900000
    assert ctypes.c_int32.from_address(arg["cu_seqlens_size0"]).value == 9
    assert ctypes.c_float.from_address(arg["softmax_scale"]).value == 0.125


def test_a_map_of_another_rank_than_its_tensor_is_refused(manifest, recorder):
    """A tensormap's box has its tensor's rank (the half-split rotary backward's pair-complete
    chunks are boxes of the ordinary map since session 23: no map splits the head dim in
    halves any more): a rank-4 box over a [T, H, D] tensor is refused, nothing encoded or
    launched."""
    import copy

    split = copy.deepcopy(manifest)
    for spec in split["params"]:
        if spec["name"] == "q_tmap":
            spec["box"] = [32, 2, 1, 64]
    plan = _launch.Plan(split, 0x1234, 0x5678)
    values, _ = call_values(plan)
    with pytest.raises(_launch.LaunchError, match=r"a rank-4 tensor map of a rank-3 tensor"):
        plan.launch(132, 0, values, [0.125])
    assert recorder.encodes == [] and recorder.launches == []


def test_context_is_made_current_before_the_tensor_maps_are_encoded(manifest, recorder):
    """On a thread with no current context (the autograd engine's, before torch binds one),
    the encode would fail with CUDA_ERROR_INVALID_CONTEXT: the plan's context comes first."""
    plan = _launch.Plan(manifest, 0x1234, 0x5678)
    plan.launch(132, 0, call_values(plan)[0], [0.125])
    assert recorder.calls == ["ctxSetCurrent"] + ["tensorMapEncodeTiled"] * 4 + ["launchKernel"]


def test_tensor_maps_are_kept_while_address_shape_and_strides_repeat(manifest, recorder):
    plan = _launch.Plan(manifest, 0x1234, 0x5678)
    values, _ = call_values(plan)
    for _ in range(3):
        plan.launch(132, 0, values, [0.125])
    assert plan.encode_count() == 4 and len(recorder.launches) == 3
    plan.launch(132, 0, call_values(plan, base=0x4000000)[0], [0.125])
    assert plan.encode_count() == 8
    plan.launch(132, 0, call_values(plan, head_stride=2 * D)[0], [0.125])
    assert plan.encode_count() == 12
    plan.launch(132, 0, values, [0.125])  # the first tensors' maps are still kept
    assert plan.encode_count() == 12


def test_errors_carry_the_library_message(manifest, recorder):
    plan = _launch.Plan(manifest, 0x1234, 0x5678)
    values, _ = call_values(plan, base=0x100008)
    with pytest.raises(_launch.LaunchError, match=r"params\[0\]: address 0x100008 is not 16-byte aligned"):
        plan.launch(132, 0, values, [0.125])
    with pytest.raises(_launch.LaunchError, match="grid: 0 CTAs"):
        plan.launch(0, 0, call_values(plan)[0], [0.125])
    recorder.fail_encode = True
    with pytest.raises(_launch.LaunchError, match="CUDA_ERROR_INVALID_VALUE .* in cuTensorMapEncodeTiled"):
        plan.launch(132, 0, call_values(plan, base=0x8000000)[0], [0.125])
    with pytest.raises(_launch.LaunchError, match="function: NULL"):
        _launch.Plan(manifest, 0, 0x5678)
    with pytest.raises(_launch.LaunchError, match="unknown manifest parameter"):
        _launch.Plan({**manifest, "params": [{"kind": "i32", "tensor": "q", "value": "bogus"}]}, 1, 1)


def test_without_libcuda_a_launch_is_an_error(manifest, monkeypatch):
    monkeypatch.setenv("BLOCKATTN_LIBCUDA", "/nonexistent/libcuda.so.1")
    lib.blockattnLaunchSetDriver(None)  # forget the driver: it is opened again
    try:
        plan = _launch.Plan(manifest, 0x1234, 0x5678)
        with pytest.raises(_launch.LaunchError, match="cannot open /nonexistent/libcuda.so.1"):
            plan.launch(132, 0, call_values(plan)[0], [0.125])
    finally:
        monkeypatch.delenv("BLOCKATTN_LIBCUDA")
        lib.blockattnLaunchSetDriver(None)


# Record launches (blockattnLaunchRecord): the manifests of
# tests/data/manifests (as block-attn-compile wrote them), so that these run
# without a compiler.

MANIFESTS = pathlib.Path(__file__).parent / "data" / "manifests"


def stored_manifest(kind):
    return json.loads((MANIFESTS / f"blockattn_{kind}_d128_b64_bf16.json").read_text())


def record_plan(kind="forward", num_sms=132):
    manifest = stored_manifest(kind)
    plan = _launch.Plan(manifest, 0x1234, 0x5678)
    plan.set_record(manifest, _driver_rules(), _kernels.grid_inputs(manifest), num_sms)
    return plan, manifest


def _driver_rules():
    from blockattn import _driver  # needs torch and cuda.bindings, as blockattn.api does

    return _driver.RECORD_RULES


def record_values(plan, tokens=T, heads=H, cu=9, base=0x100000, head_stride=D, stream=0xABC, scale=0.125):
    values = [stream]
    addresses = {}
    for i, name in enumerate(plan.tensor_names):
        if name == "cu_seqlens":
            addresses[name] = 0x900000
            values += [0x900000, 1, cu, 1]
        else:
            addresses[name] = base + 0x100000 * i
            values += [addresses[name], 3, tokens, heads, D, heads * head_stride, head_stride, 1]
    return values + [scale], addresses


@pytest.mark.parametrize("kind", ["forward", "backward"])
def test_record_launch_passes_what_the_manifest_asks_for(kind, recorder):
    pytest.importorskip("torch")
    plan, manifest = record_plan(kind)
    recorder.param_count = len(manifest["params"])
    values, addresses = record_values(plan)
    assert len(values) == lib.blockattnPlanRecordWords(plan.handle) == len(plan.record.format) - 1
    plan.launch_record(values)
    maps = [n for n in plan.tensor_names if n != "cu_seqlens"]
    assert [e["address"] for e in recorder.encodes] == [addresses[n] for n in maps]
    for e in recorder.encodes:
        assert e["dims"] == [D, H, T] and e["strides"] == [D * 2, H * D * 2]
    (launch,) = recorder.launches
    grid = _kernels.launch_grid(manifest, 132, (T, H, D), 9)
    assert (launch["grid"], launch["threads"], launch["stream"]) == (grid, manifest["threads"], 0xABC)
    assert plan.last_grid() == grid
    arg = dict(zip([spec["name"] for spec in manifest["params"]], recorder.last))
    assert ctypes.c_int32.from_address(arg["q_size0"]).value == T
    assert ctypes.c_int32.from_address(arg["q_size1"]).value == H
    assert ctypes.c_uint64.from_address(arg["cu_seqlens"]).value == 0x900000
    if kind == "forward":
        assert ctypes.c_uint64.from_address(arg["o"]).value == addresses["o"]
        assert ctypes.c_int64.from_address(arg["o_stride0"]).value == H * D
        assert ctypes.c_int32.from_address(arg["cu_seqlens_size0"]).value == 9
        assert ctypes.c_float.from_address(arg["softmax_scale"]).value == 0.125


@pytest.mark.parametrize("tokens,heads,cu", [(512, 4, 2), (7741, 4, 9), (64, 4, 2), (231620, 4, 1153), (100, 16, 1)])
def test_record_grid_is_launch_grid(tokens, heads, cu, recorder):
    """The grid the library computes is blockattn._kernels.launch_grid's, for both kernels."""
    pytest.importorskip("torch")
    for kind in ("forward", "backward"):
        plan, manifest = record_plan(kind, num_sms=132)
        plan.launch_record(record_values(plan, tokens=tokens, heads=heads, cu=cu)[0])
        assert plan.last_grid() == _kernels.launch_grid(manifest, 132, (tokens, heads, D), cu)


@pytest.mark.parametrize("change,message", [
    (lambda v: v.__setitem__(2, 2), r"tensors\[0\]: rank 2, expected 3"),
    (lambda v: v.__setitem__(1 + 8 + 3, H + 1), r"tensors\[1\]: size 5 in dimension 1, but tensors\[0\] has 4"),
    (lambda v: v.__setitem__(1 + 8 + 8, 0x300008), r"params\[4\]: address 0x300008 is not 16-byte aligned"),
    (lambda v: v.__setitem__(1 + 32 + 3, 2), r"tensors\[4\]: not contiguous"),
    (lambda v: v.__setitem__(1 + 32 + 2, 0), r"tensors\[4\]: dimension 0 has size 0"),
])
def test_record_refused_launches_nothing(change, message, recorder):
    pytest.importorskip("torch")
    plan, _ = record_plan("forward")
    values, _ = record_values(plan)
    change(values)
    with pytest.raises(_launch.LaunchError, match=message):
        plan.launch_record(values)
    assert recorder.launches == []


def test_record_of_other_ranks_is_refused_not_misread(recorder):
    """A record whose ranks differ from the rules' keeps its length only by chance: the first
    rank that differs refuses it before anything after it is read."""
    pytest.importorskip("torch")
    plan, _ = record_plan("forward")
    values, _ = record_values(plan)
    k = values[9:17]
    values[9:17] = [k[0], 2, T, H * D, H * D, 1, 0, 0]  # k as [T, H*D], padded to the same length
    with pytest.raises(_launch.LaunchError, match=r"tensors\[1\]: rank 2, expected 3"):
        plan.launch_record(values)
    assert recorder.launches == []


ROTARY = "blockattn_forward_d64_b64_f16_half_split_pos_rv"


def rotary_record(plan, cos=0xA00000, cos_stride=32, positions_stride=1, tokens=T):
    """A record of the rotary forward's plan: [T, H, 64] activations, [256, 32] fp32 tables."""
    values = [0xABC]
    for i, name in enumerate(plan.tensor_names):
        if name in ("q", "k", "v", "o"):
            values += [0x100000 * (i + 1), 3, tokens, H, 64, H * 64, 64, 1]
        elif name == "cu_seqlens":
            values += [0x900000, 1, 9, 1]
        elif name in ("cos", "sin"):
            values += [cos if name == "cos" else 0xB00000, 2, 256, 32, cos_stride, 1]
        else:
            values += [0xC00000, 1, tokens, positions_stride]
    return values + [0.125]


def test_rotary_record_rules(recorder):
    """The rotary tables and positions of a record launch: passed as the manifest asks, and a
    table that is not contiguous and 16-byte aligned (what blockattn.api makes of it), or
    positions that are not contiguous, are refused before anything is launched."""
    pytest.importorskip("torch")
    manifest = json.loads((MANIFESTS / f"{ROTARY}.json").read_text())
    plan = _launch.Plan(manifest, 0x1234, 0x5678)
    plan.set_record(manifest, _driver_rules(), _kernels.grid_inputs(manifest), 132)
    assert plan.tensor_names == ("q", "k", "v", "o", "cu_seqlens", "cos", "sin", "positions")
    recorder.param_count = len(manifest["params"])
    plan.launch_record(rotary_record(plan))
    arg = dict(zip([spec["name"] for spec in manifest["params"]], recorder.last))
    assert ctypes.c_uint64.from_address(arg["cos"]).value == 0xA00000
    assert ctypes.c_int64.from_address(arg["cos_stride0"]).value == 32
    assert ctypes.c_int32.from_address(arg["sin_size0"]).value == 256
    assert ctypes.c_uint64.from_address(arg["positions"]).value == 0xC00000
    assert ctypes.c_int32.from_address(arg["positions_size0"]).value == T
    assert recorder.launches[-1]["grid"] == _kernels.launch_grid(manifest, 132, (T, H, 64), 9)
    launched = len(recorder.launches)
    for values, message in (
            (rotary_record(plan, cos=0xA00008), r"tensors\[5\]: address 0xa00008 is not 16-byte aligned"),
            (rotary_record(plan, cos_stride=64), r"tensors\[5\]: not contiguous"),
            (rotary_record(plan, positions_stride=2), r"tensors\[7\]: not contiguous")):
        with pytest.raises(_launch.LaunchError, match=message):
            plan.launch_record(values)
    assert len(recorder.launches) == launched
