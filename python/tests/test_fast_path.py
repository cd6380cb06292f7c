"""block_attention's fast eager path (issue 22), on the CPU.

libblockattn_launch runs for real, over the fake libcuda of test/Launch
(build/lib/libblockattn-fake-cuda.so, opened through $BLOCKATTN_LIBCUDA), with
plans made from the kernels' manifests in data/manifests; the fast path is
given to CPU tensors (device index -1, which the checks' path never
registers). A call the fast path takes must launch once through the record
without running a Python check; a call it does not take (whatever the library
or the fast path refuses) must launch nothing and reach the checks' path,
which raises the ValueError that names the argument.
"""

import ctypes
import json
import math
import os
import pathlib

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("cuda.bindings")

import blockattn  # noqa: E402
from blockattn import _driver, _kernels, _launch, api  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
FAKE_CUDA = pathlib.Path(os.environ.get("BLOCKATTN_FAKE_CUDA", REPO / "build" / "lib" / "libblockattn-fake-cuda.so"))
MANIFESTS = pathlib.Path(__file__).parent / "data" / "manifests"
T, H, D = 200, 4, 128
CU = [0, 70, 70, 200]

lib = _launch.library()
pytestmark = pytest.mark.skipif(lib is None or not FAKE_CUDA.exists(),
                                reason="libblockattn_launch or the fake libcuda is not built")


class SlowPath(Exception):
    """Raised by the checks' path (its first check, replaced)."""


@pytest.fixture
def fake(monkeypatch):
    """The fake libcuda in libcuda's place, the fast path for CPU bf16 D=128 tensors; the
    checks' path replaced by one that raises SlowPath. Yields the fake libcuda."""
    monkeypatch.setenv("BLOCKATTN_LIBCUDA", str(FAKE_CUDA))
    lib.blockattnLaunchSetDriver(None)  # the driver is opened again, from $BLOCKATTN_LIBCUDA
    cuda = ctypes.CDLL(str(FAKE_CUDA))
    for name in ("fakeCudaLaunches", "fakeCudaLastStream"):
        getattr(cuda, name).restype = ctypes.c_uint64
    cuda.fakeCudaLastGrid.restype = ctypes.c_uint32
    cuda.fakeCudaLastParam.restype = ctypes.c_uint64
    launchers, manifests = {}, {}
    for kind, names in (("forward", api._FORWARD_TENSORS), ("backward", api._BACKWARD_TENSORS)):
        manifest = json.loads((MANIFESTS / f"blockattn_{kind}_d128_b64_bf16.json").read_text())
        plan = _launch.Plan(manifest, 0x1234, 0x5678)
        plan.set_record(manifest, _driver.RECORD_RULES, _kernels.grid_inputs(manifest), 132)

        class Kernel:
            record = plan

        launchers[kind] = api._record_launcher(Kernel, names)
        manifests[kind] = manifest
    fast = api._FastPath(launchers["forward"], -1, D, 64, stream=lambda device: 0xABC)
    fast.backward = launchers["backward"]
    monkeypatch.setitem(api._FAST, (torch.bfloat16, D, -1, 64), fast)

    def slow(*args, **kwargs):
        raise SlowPath

    monkeypatch.setattr(api, "_check_activation", slow)
    cuda.manifests = manifests
    yield cuda
    monkeypatch.delenv("BLOCKATTN_LIBCUDA")
    lib.blockattnLaunchSetDriver(None)


def inputs(requires_grad=False, dtype=torch.bfloat16):
    q, k, v = (torch.randn(T, H, D).to(dtype).requires_grad_(requires_grad) for _ in range(3))
    return q, k, v, torch.tensor(CU, dtype=torch.int32)


def test_block_size_16_launch_counts_64_row_tiles(fake, monkeypatch):
    """Blocks of 16 tokens share 64-row tiles: the record launch's grid (the C library's)
    counts tiles of the manifest's tile_rows, as _kernels.launch_grid does, not blocks."""
    manifest = {**fake.manifests["forward"], "block_size": 16, "tile_rows": 64}
    plan = _launch.Plan(manifest, 0x1234, 0x5678)
    plan.set_record(manifest, _driver.RECORD_RULES, _kernels.grid_inputs(manifest), 132)

    class Kernel:
        record = plan

    fast = api._FastPath(api._record_launcher(Kernel, api._FORWARD_TENSORS), -1, D, 16,
                         stream=lambda device: 0xABC)
    monkeypatch.setitem(api._FAST, (torch.bfloat16, D, -1, 16), fast)
    q, k, v, cu = inputs()
    before = fake.fakeCudaLaunches()
    blockattn.block_attention(q, k, v, cu, block_size=16, check_inputs=False)
    assert fake.fakeCudaLaunches() == before + 1
    # (200 // 64 + 3) x 4 = 24 work items, 4 per CTA: 6 CTAs (blocks of 16 would make 15).
    assert fake.fakeCudaLastGrid() == _kernels.launch_grid(manifest, 132, q.shape, len(CU)) == 6
    assert fast.tile_rows == 64


def test_block_size_16_packed_launch_counts_packed_tiles(fake, monkeypatch):
    """Blocks of 16 tokens of several sequences share a tile (the manifest's
    blocks_per_tile): the C library's record launch counts packed tiles of 4 virtual
    blocks, as _kernels.launch_grid does."""
    manifest = {**fake.manifests["forward"], "block_size": 16, "tile_rows": 64, "blocks_per_tile": 4}
    plan = _launch.Plan(manifest, 0x1234, 0x5678)
    plan.set_record(manifest, _driver.RECORD_RULES, _kernels.grid_inputs(manifest), 132)

    class Kernel:
        record = plan

    fast = api._FastPath(api._record_launcher(Kernel, api._FORWARD_TENSORS), -1, D, 16,
                         stream=lambda device: 0xABC)
    monkeypatch.setitem(api._FAST, (torch.bfloat16, D, -1, 16), fast)
    q, k, v, cu = inputs()
    before = fake.fakeCudaLaunches()
    blockattn.block_attention(q, k, v, cu, block_size=16, check_inputs=False)
    assert fake.fakeCudaLaunches() == before + 1
    # ceil((200 // 16 + 3) / 4) x 4 = 16 work items, 4 per CTA: 4 CTAs (unpacked: 6).
    assert fake.fakeCudaLastGrid() == _kernels.launch_grid(manifest, 132, q.shape, len(CU)) == 4


def test_fast_forward_launches_once_through_the_record(fake):
    q, k, v, cu = inputs()
    before = fake.fakeCudaLaunches()
    o = blockattn.block_attention(q, k, v, cu, check_inputs=False)
    assert fake.fakeCudaLaunches() == before + 1
    assert o.shape == q.shape and o.dtype == q.dtype and o.is_contiguous() and o.grad_fn is None
    assert fake.fakeCudaLastStream() == 0xABC
    assert fake.fakeCudaLastGrid() == _kernels.launch_grid(fake.manifests["forward"], 132, q.shape, len(CU))
    # Views with other strides (q, k, v of one packed [T, 3, H, D] buffer) are taken too.
    qkv = torch.randn(T, 3, H, D).to(torch.bfloat16)
    blockattn.block_attention(*qkv.unbind(1), cu, check_inputs=False, softmax_scale=0.5)
    assert fake.fakeCudaLaunches() == before + 2


def test_fast_forward_with_the_value_check_memo(fake):
    """check_inputs=True: taken once cu_seqlens' values were checked (and not changed since)."""
    q, k, v, cu = inputs()
    with pytest.raises(SlowPath):  # not checked yet: the checks' path
        blockattn.block_attention(q, k, v, cu)
    api._cu_values(cu, T)
    before = fake.fakeCudaLaunches()
    blockattn.block_attention(q, k, v, cu)
    assert fake.fakeCudaLaunches() == before + 1
    cu[1] = 60  # a new version: checked again, by the checks' path
    with pytest.raises(SlowPath):
        blockattn.block_attention(q, k, v, cu)
    assert fake.fakeCudaLaunches() == before + 1


def test_fast_autograd_forward_and_backward(fake):
    q, k, v, cu = inputs(requires_grad=True)
    before = fake.fakeCudaLaunches()
    o = blockattn.block_attention(q, k, v, cu, check_inputs=False)
    assert type(o.grad_fn).__name__ == "_FastAttentionFunctionBackward"
    do = torch.randn_like(o)
    dq, dk, dv = torch.autograd.grad(o, (q, k, v), do)
    assert fake.fakeCudaLaunches() == before + 2
    assert fake.fakeCudaLastGrid() == _kernels.launch_grid(fake.manifests["backward"], 132, q.shape, len(CU))
    for g, t in ((dq, q), (dk, k), (dv, v)):
        assert g.shape == t.shape and g.dtype == t.dtype and g.is_contiguous()
    # The backward's record: dq (parameter 5 of the backward manifest's, its pointer) is dq.
    names = [p["name"] for p in fake.manifests["backward"]["params"]]
    o = blockattn.block_attention(q, k, v, cu, check_inputs=False)
    fake.fakeCudaSetParams(len(names))  # (the fake copies this many: the backward's)
    try:
        (dq,) = torch.autograd.grad(o, q, do)
    finally:
        fake.fakeCudaSetParams(0)
    assert fake.fakeCudaLastParam(names.index("dq")) == dq.data_ptr()


def test_fast_backward_is_once_differentiable(fake):
    q, k, v, cu = inputs(requires_grad=True)
    o = blockattn.block_attention(q, k, v, cu, check_inputs=False)
    do = torch.randn_like(o, requires_grad=True)
    (dq,) = torch.autograd.grad(o, q, do, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        dq.float().sum().backward()


def test_fast_backward_of_a_grad_the_library_refuses(fake, monkeypatch):
    """An expanded grad_o (stride 0: o.sum().backward()) is not TMA-ready: the library refuses
    it and the backward takes api.backward, which copies it."""
    calls = []

    def recorded_backward(grad_o, q, k, v, cu_seqlens, block_size, scale, *rest):
        calls.append(grad_o.stride())
        return torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)

    monkeypatch.setattr(api, "backward", recorded_backward)
    q, k, v, cu = inputs(requires_grad=True)
    o = blockattn.block_attention(q, k, v, cu, check_inputs=False)
    before = fake.fakeCudaLaunches()
    o.sum().backward()
    assert calls == [(0, 0, 0)] and fake.fakeCudaLaunches() == before
    assert q.grad is not None


def misaligned(t):
    """t's values at an address 2 bytes past a 16-byte boundary."""
    buffer = torch.empty(t.numel() + 1, dtype=t.dtype)
    view = buffer[1:].view(t.shape)
    view.copy_(t)
    return view


REFUSED = {
    "k of other heads": lambda q, k, v, cu: (q, k[:, :2], v, cu, {}),
    "v of other tokens": lambda q, k, v, cu: (q, k, v[:-1], cu, {}),
    "misaligned v": lambda q, k, v, cu: (q, k, misaligned(v), cu, {}),
    "k with a strided head dim": lambda q, k, v, cu: (q, torch.cat([k, k], 2)[..., ::2], v, cu, {}),
    "k of another dtype": lambda q, k, v, cu: (q, k.half(), v, cu, {}),
    "4-D q": lambda q, k, v, cu: (q[None], k, v, cu, {}),
    "2-D k": lambda q, k, v, cu: (q, k.flatten(1), v, cu, {}),
    "int64 cu_seqlens": lambda q, k, v, cu: (q, k, v, cu.long(), {}),
    "strided cu_seqlens": lambda q, k, v, cu: (q, k, v, torch.stack([cu, cu], 1)[:, 0], {}),
    "2-D cu_seqlens": lambda q, k, v, cu: (q, k, v, cu[None], {}),
    "empty cu_seqlens": lambda q, k, v, cu: (q, k, v, cu[:0], {}),
    "no tokens": lambda q, k, v, cu: (q[:0], k[:0], v[:0], cu, {}),
    "head dim 64": lambda q, k, v, cu: (q[..., :64], k[..., :64], v[..., :64], cu, {}),
    "block size 48": lambda q, k, v, cu: (q, k, v, cu, {"block_size": 48}),
    "an int scale": lambda q, k, v, cu: (q, k, v, cu, {"softmax_scale": 1}),
    "a NaN scale": lambda q, k, v, cu: (q, k, v, cu, {"softmax_scale": math.nan}),
    "a negative scale": lambda q, k, v, cu: (q, k, v, cu, {"softmax_scale": -1.0}),
    "an unhashable block size": lambda q, k, v, cu: (q, k, v, cu, {"block_size": [64]}),
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_calls_launch_nothing_and_take_the_checks_path(fake, case, requires_grad):
    q, k, v, cu, kwargs = REFUSED[case](*inputs(requires_grad))
    before = fake.fakeCudaLaunches()
    with pytest.raises(SlowPath):
        blockattn.block_attention(q, k, v, cu, check_inputs=False, **kwargs)
    assert fake.fakeCudaLaunches() == before


def test_compiling_and_out_and_rotary_take_the_checks_path(fake, monkeypatch):
    q, k, v, cu = inputs()
    before = fake.fakeCudaLaunches()
    with pytest.raises(SlowPath):
        blockattn.block_attention(q, k, v, cu, check_inputs=False, out=torch.empty_like(q))
    tables = torch.ones(256, D // 2)
    with pytest.raises(SlowPath):
        blockattn.block_attention(q, k, v, cu, check_inputs=False, rotary=blockattn.Rotary(tables, tables))
    monkeypatch.setattr(api, "_is_compiling", lambda: True)
    with pytest.raises(SlowPath):
        blockattn.block_attention(q, k, v, cu, check_inputs=False)
    assert fake.fakeCudaLaunches() == before


# The small-grid variant (issue 22): a grid with no more work items than the GPU holds CTAs
# (132 SMs x 2 here) launches the same kernel with one tile per CTA instead, in one wave; the
# fast path and the checks' path pick it by one rule (api._small_grid), from shapes only.


def small_grid_manifest(manifest: dict) -> dict:
    """The manifest block-attn-compile writes for the `--tiles-per-cta=1` build of `manifest`'s
    kernel: the same parameters and launch, one tile per CTA, and the `_t1` names."""
    name = manifest["kernel"] + "_t1"
    return {**manifest, "kernel": name, "ptx": name + ".ptx", "cubin": name + ".cubin", "tiles_per_cta": 1}


@pytest.fixture
def small(fake):
    """`fake`'s fast path with the small-grid variants' launchers (small_grid_manifest) and the
    default kernels' limits. Yields the fake libcuda."""
    fast = api._FAST[torch.bfloat16, D, -1, 64]
    for kind, names in (("forward", api._FORWARD_TENSORS), ("backward", api._BACKWARD_TENSORS)):
        manifest = small_grid_manifest(fake.manifests[kind])
        plan = _launch.Plan(manifest, 0x4321, 0x5678)
        plan.set_record(manifest, _driver.RECORD_RULES, _kernels.grid_inputs(manifest), 132)

        class Kernel:
            record = plan

        setattr(fast, kind + "_small", api._record_launcher(Kernel, names))
        setattr(fast, kind + "_limit", _kernels.small_grid_limit(_kernels.grid_inputs(fake.manifests[kind]), 132))
        fake.manifests[kind + "_small"] = manifest
    yield fake


# (T, B, H): tiny; either side of the limit (264 items: 4032 tokens of 3 sequences at H=4, then
# 268); 8 x ~1k (512 items, two waves: the default kernels); a big batch.
SHAPES = [(200, 3, 4), (512, 1, 4), (64, 1, 4), (4032, 3, 4), (4096, 3, 4), (7741, 8, 4),
          (20000, 8, 8)]


def shape_inputs(t, b, h, requires_grad=False):
    q, k, v = (torch.randn(t, h, D).to(torch.bfloat16).requires_grad_(requires_grad) for _ in range(3))
    cu = torch.tensor([t * i // b for i in range(b + 1)], dtype=torch.int32)
    return q, k, v, cu


def expected_kind(kind, manifests, q, cu):
    """The rule, written out: the variant when its grid (a CTA per item) fits in 264."""
    small = _kernels.launch_grid(manifests[kind + "_small"], 132, q.shape, len(cu)) <= 264
    return kind + "_small" if small else kind


def launched(fake, manifests, kind, q, cu):
    """Which of `kind` and its variant the last launch was, from its grid."""
    grids = {name: _kernels.launch_grid(manifests[name], 132, q.shape, len(cu)) for name in (kind, kind + "_small")}
    assert grids[kind] != grids[kind + "_small"]
    return next(name for name, grid in grids.items() if grid == fake.fakeCudaLastGrid())


class Recorder:
    """A loaded kernel of the checks' path that records its calls."""

    def __init__(self, name, calls):
        self.name, self.calls = name, calls

    def call(self, tensors, scalars):
        self.calls.append(self.name)


@pytest.mark.parametrize("t, b, h", SHAPES)
def test_small_grid_choice_follows_the_shapes_in_both_paths(small, monkeypatch, t, b, h):
    q, k, v, cu = shape_inputs(t, b, h, requires_grad=True)
    manifests = small.manifests
    fast_path = {}
    o = blockattn.block_attention(q, k, v, cu, check_inputs=False)
    fast_path["forward"] = launched(small, manifests, "forward", q, cu)
    torch.autograd.grad(o, (q, k, v), torch.randn_like(o))
    fast_path["backward"] = launched(small, manifests, "backward", q, cu)

    # The checks' path (api.forward / api.backward, what every other call takes), its kernels
    # recorders with the same limits.
    calls = []
    for kind in ("forward", "backward"):
        key = (kind, D, 64, torch.bfloat16, "none", False, False, -1)
        monkeypatch.setitem(api._KERNELS, key, (Recorder(kind, calls), 132))
        limit = _kernels.small_grid_limit(_kernels.grid_inputs(manifests[kind]), 132)
        monkeypatch.setitem(api._SMALL, key, [limit, Recorder(kind + "_small", calls)])
    with torch.no_grad():
        api.forward(q, k, v, cu, 64, 0.5)
        api.backward(torch.randn_like(q), q, k, v, cu, 64, 0.5)
    assert calls == [fast_path["forward"], fast_path["backward"]]
    assert fast_path == {kind: expected_kind(kind, manifests, q, cu) for kind in ("forward", "backward")}


def test_small_grid_variant_loaded_by_its_first_use(small, monkeypatch):
    """The fast path loads a variant's launcher the first time its rule picks it."""
    fast = api._FAST[torch.bfloat16, D, -1, 64]
    loaded = []
    launcher, fast.forward_small = fast.forward_small, None

    def load_small(self, kind, q):
        loaded.append(kind)
        fast.forward_small = launcher
        return launcher

    monkeypatch.setattr(api._FastPath, "load_small", load_small)
    q, k, v, cu = shape_inputs(4096, 3, 4)  # the default kernel
    blockattn.block_attention(q, k, v, cu, check_inputs=False)
    assert loaded == []
    q, k, v, cu = shape_inputs(512, 1, 4)
    for _ in range(2):
        blockattn.block_attention(q, k, v, cu, check_inputs=False)
    assert loaded == ["forward"] and launched(small, small.manifests, "forward", q, cu) == "forward_small"


def test_small_grid_variant_falls_back_to_the_default_kernel(monkeypatch):
    """A kernel directory without the variant and no compiler: the default kernel launches."""
    calls = []
    key = ("forward", D, 64, torch.bfloat16, "none", False, False, -1)
    monkeypatch.setitem(api._KERNELS, key, (Recorder("forward", calls), 132))
    monkeypatch.setitem(api._SMALL, key, [264, None])
    monkeypatch.setattr(_driver, "chip_of", lambda device: "sm_90a")

    def missing(kernel_key):
        assert kernel_key.name == "blockattn_forward_d128_b64_bf16_t1"
        raise RuntimeError("blockattn: no compiled kernel")

    monkeypatch.setattr(_kernels, "find_kernel", missing)
    q, k, v, cu = shape_inputs(512, 1, 4)
    with torch.no_grad():
        api.forward(q, k, v, cu, 64, 0.5)
    assert calls == ["forward"] and api._SMALL[key][1] is api._KERNELS[key][0]


@pytest.mark.parametrize("kind", ["forward", "backward"])
def test_rotary_launch_takes_the_default_kernel_at_every_size(monkeypatch, kind):
    """A rotary launch takes its one kernel from a few work items to many waves: the sm_90a
    rotary kernels at head dim 128 claim their tiles (schedule=dynamic), which beat the
    chunked large-grid variant they replace (performance-notes.md, run 32), and no variant is
    looked up."""
    calls, looked_up = [], []
    key = (kind, D, 64, torch.bfloat16, "half_split", True, False, -1)
    monkeypatch.setitem(api._KERNELS, key, (Recorder(kind, calls), 132))
    monkeypatch.setattr(_driver, "chip_of", lambda device: "sm_90a")
    monkeypatch.setattr(_kernels, "find_kernel", lambda kernel_key: looked_up.append(kernel_key.name))
    for tokens in (64, 64 * 100_000):
        q = torch.empty(tokens, 4, D, dtype=torch.bfloat16)
        api._launch(kind, q, 64, {"cu_seqlens": torch.zeros(2, dtype=torch.int32)}, 0.5,
                    rotary="half_split", positions=True, rotate_v=False)
    assert calls == [kind, kind] and looked_up == []


# block_attention_qkvpacked's fast path: the same kernels, q, k, v (and dq, dk, dv) described as
# the slices of one packed tensor by address arithmetic.


def packed_inputs(requires_grad=False):
    qkv = torch.randn(T, 3, H, D).to(torch.bfloat16).requires_grad_(requires_grad)
    return qkv, torch.tensor(CU, dtype=torch.int32)


@pytest.fixture
def records(fake, monkeypatch):
    """The words of each record the fast path packs, by kind."""
    fast = api._FAST[torch.bfloat16, D, -1, 64]
    seen = {"forward": [], "backward": []}
    for kind in seen:
        pack, call, handle, plan = getattr(fast, kind)

        def recording(*words, pack=pack, kind=kind):
            seen[kind].append(words)
            return pack(*words)

        monkeypatch.setattr(fast, kind, (recording, call, handle, plan))
    monkeypatch.setattr(fast, "forward_limit", -1)  # the default kernels only
    monkeypatch.setattr(fast, "backward_limit", -1)
    return seen


def without(words, *indices):
    return [w for i, w in enumerate(words) if i not in indices]


def test_qkvpacked_fast_forward_describes_the_slices(fake, records):
    """The packed forward's record is the one block_attention packs for qkv.unbind(1), but for
    o's address (word 25: the stream, then 8 words per [T, H, D] tensor)."""
    qkv, cu = packed_inputs()
    before = fake.fakeCudaLaunches()
    o = blockattn.block_attention_qkvpacked(qkv, cu, check_inputs=False)
    assert fake.fakeCudaLaunches() == before + 1
    assert o.shape == (T, H, D) and o.is_contiguous() and o.grad_fn is None
    blockattn.block_attention(*qkv.unbind(1), cu, check_inputs=False)
    packed, views = records["forward"]
    assert without(packed, 25) == without(views, 25)
    assert packed[25] == o.data_ptr()


def test_qkvpacked_fast_backward_writes_one_packed_gradient(fake, records):
    qkv, cu = packed_inputs(requires_grad=True)
    o = blockattn.block_attention_qkvpacked(qkv, cu, check_inputs=False)
    assert type(o.grad_fn).__name__ == "_FastQKVPackedFunctionBackward"
    do = torch.randn_like(o)
    before = fake.fakeCudaLaunches()
    (dqkv,) = torch.autograd.grad(o, qkv, do)
    assert fake.fakeCudaLaunches() == before + 1
    assert dqkv.shape == qkv.shape and dqkv.is_contiguous()
    (words,) = records["backward"]
    # The record of the unpacked call: q, k, v, do, then dq, dk, dv as the slices of dqkv.
    expected = [0xABC]
    for t in (*qkv.detach().unbind(1), do, *dqkv.unbind(1)):
        expected += [t.data_ptr(), t.dim(), *t.shape, *t.stride()]
    expected += [cu.data_ptr(), 1, len(CU), 1, 1.0 / math.sqrt(D)]
    assert list(words) == expected


def test_qkvpacked_fast_path_with_the_value_check_memo(fake):
    qkv, cu = packed_inputs()
    with pytest.raises(SlowPath):  # not checked yet
        blockattn.block_attention_qkvpacked(qkv, cu)
    api._cu_values(cu, T)
    before = fake.fakeCudaLaunches()
    blockattn.block_attention_qkvpacked(qkv, cu)
    assert fake.fakeCudaLaunches() == before + 1


def slices_off_alignment(qkv):
    """qkv's values in a buffer whose slices are H * D + 1 elements apart: q is aligned, k and v
    are not (the library refuses k's tensor map)."""
    buffer = torch.zeros(T * (3 * H * D + 8), dtype=qkv.dtype)
    view = buffer.as_strided((T, 3, H, D), (3 * H * D + 8, H * D + 1, D, 1))
    view.copy_(qkv.detach())
    return view.requires_grad_(qkv.requires_grad)


PACKED_REFUSED = {
    "kv-packed shape": lambda qkv, cu: (qkv[:, :2], cu, {}),
    "3-D qkv": lambda qkv, cu: (qkv.flatten(2), cu, {}),
    "misaligned qkv": lambda qkv, cu: (misaligned(qkv), cu, {}),
    "k and v off 16 bytes": lambda qkv, cu: (slices_off_alignment(qkv), cu, {}),
    "int64 cu_seqlens": lambda qkv, cu: (qkv, cu.long(), {}),
    "block size 48": lambda qkv, cu: (qkv, cu, {"block_size": 48}),
    "a negative scale": lambda qkv, cu: (qkv, cu, {"softmax_scale": -1.0}),
    "out": lambda qkv, cu: (qkv, cu, {"out": torch.empty(T, H, D, dtype=torch.bfloat16)}),
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("case", sorted(PACKED_REFUSED))
def test_qkvpacked_refused_calls_launch_nothing(fake, monkeypatch, case, requires_grad):
    """What the packed fast path does not take reaches the checks (_check_packed's first step,
    replaced here) and launches nothing."""
    qkv, cu, kwargs = PACKED_REFUSED[case](*packed_inputs(requires_grad))

    def slow(*args, **kw):
        raise SlowPath

    monkeypatch.setattr(api, "_check_packed", slow)
    before = fake.fakeCudaLaunches()
    with pytest.raises(SlowPath):
        blockattn.block_attention_qkvpacked(qkv, cu, check_inputs=False, **kwargs)
    assert fake.fakeCudaLaunches() == before


@pytest.mark.parametrize("kind", ["forward", "backward"])
def test_dynamic_schedule_launches_with_the_streams_counters(fake, monkeypatch, kind):
    """A kernel with a dynamic schedule (--schedule=dynamic: its manifest's "schedule",
    the counters after cu_seqlens and the scale) stays on the fast path: its record gets
    the counters _driver.schedule_counters keeps for the launch's device and stream, the
    ones the checks' path passes."""
    manifests = {k: json.loads((MANIFESTS / f"blockattn_{k}_d128_b64_bf16_dynamic.json").read_text())
                 for k in ("forward", "backward")}
    counters = torch.zeros(2, dtype=torch.int32)
    asked = []

    def schedule_counters(device, stream, words):
        asked.append((device, stream, words))
        return counters

    monkeypatch.setattr(_driver, "schedule_counters", schedule_counters)
    launchers = {}
    for k, names in (("forward", api._FORWARD_TENSORS), ("backward", api._BACKWARD_TENSORS)):
        plan = _launch.Plan(manifests[k], 0x1234, 0x5678)
        plan.set_record(manifests[k], _driver.RECORD_RULES, _kernels.grid_inputs(manifests[k]), 132)
        assert plan.tensor_names == (*names, "schedule")
        schedule = manifests[k]["schedule"]  # as LoadedKernel reads it
        kernel = type("Kernel", (), {"record": plan, "_schedule": (schedule["tensor"], schedule["words"]),
                                     "device_index": -1})
        launchers[k] = api._record_launcher(kernel, names)
        assert launchers[k] is not None
        # Without a schedule the record's last tensor is not taken.
        assert api._record_launcher(type("Kernel", (), {"record": plan}), names) is None
    fast = api._FastPath(launchers["forward"], -1, D, 64, stream=lambda device: 0xABC)
    fast.backward = launchers["backward"]
    monkeypatch.setitem(api._FAST, (torch.bfloat16, D, -1, 64), fast)
    q, k, v, cu = inputs(requires_grad=kind == "backward")
    names = [p["name"] for p in manifests[kind]["params"]]
    o = blockattn.block_attention(q, k, v, cu, check_inputs=False) if kind == "backward" else None
    before = fake.fakeCudaLaunches()
    fake.fakeCudaSetParams(len(names))  # (the fake copies this many: the launch's own)
    try:
        if kind == "backward":
            torch.autograd.grad(o, (q, k, v), torch.randn_like(o))
        else:
            blockattn.block_attention(q, k, v, cu, check_inputs=False)
    finally:
        fake.fakeCudaSetParams(0)
    assert fake.fakeCudaLaunches() == before + 1
    assert asked[-1] == (-1, 0xABC, 2)
    assert fake.fakeCudaLastParam(names.index("schedule")) == counters.data_ptr()
    # The persistent grid (one CTA per SM), as _kernels.launch_grid computes it.
    assert fake.fakeCudaLastGrid() == _kernels.launch_grid(manifests[kind], 132, q.shape, len(CU))
