"""Grouped-query attention in the Python package, without a GPU (issue 21).

Kernel keys and names (``_g<G>``), the prebuild script's --groups, the
group the API reads off the shapes (and its ValueError naming k), the launch
it asks for, the grouped backward's launch (dk, dv with k's heads) and what it
still refuses, and the native record launch's rule for
k and v (a G-th of q's heads).
"""

import json
import pathlib
import subprocess
import sys

import pytest

from blockattn import _kernels, _launch
from blockattn._kernels import KernelKey

REPO = pathlib.Path(__file__).resolve().parents[2]


def key(**kw):
    base = dict(kind="forward", head_dim=128, block_size=64, dtype="bf16", chip="sm_90a")
    base.update(kw)
    return KernelKey(**base)


def test_group_name_and_flags():
    k = key(group=4)
    assert k.name == "blockattn_forward_d128_b64_bf16_g4"
    assert k.compiler_flags()[-3:] == ["--group=4", "--chip=sm_90a", "--name=blockattn_forward_d128_b64_bf16_g4"]
    # the suffix order of the common rules: _g<G> before the rotary suffixes, _t<N> last
    k = key(group=2, rotary="half_split", positions=True, tiles_per_cta=1)
    assert k.name == "blockattn_forward_d128_b64_bf16_g2_half_split_pos_t1"
    # group 1 is the plain kernel: the same name and flags as without it
    assert key(group=1) == key() and key(group=1).compiler_flags() == key().compiler_flags()


@pytest.mark.parametrize("group", [0, -2, 1.5, "2"])
def test_invalid_group(group):
    with pytest.raises(ValueError, match="group: expected an int >= 1"):
        key(group=group)


def test_grouped_kernels_have_no_small_grid_variant():
    assert _kernels.small_grid_key(key(group=2)) is None
    assert _kernels.small_grid_key(key()) is not None


def test_prebuild_groups(capsys):
    script = REPO / "scripts" / "prebuild_kernels.py"
    out = subprocess.run(
        [sys.executable, str(script), "/unused", "--dry-run", "--chips", "sm_90a,sm_100a", "--head-dims", "64",
         "--dtypes", "bf16", "--groups", "1,4"], capture_output=True, text=True, check=True).stdout.split()
    assert out == [
        "sm_90a/blockattn_forward_d64_b64_bf16", "sm_90a/blockattn_forward_d64_b64_bf16_t1",
        "sm_90a/blockattn_forward_d64_b64_bf16_g4",
        "sm_100a/blockattn_forward_d64_b64_bf16", "sm_100a/blockattn_forward_d64_b64_bf16_g4",
    ]
    bad = subprocess.run([sys.executable, str(script), "/unused", "--dry-run", "--groups", "0"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "--groups: every group must be at least 1" in bad.stderr


def test_compiled_manifest_and_refused_backward(tmp_path):
    compiler = _kernels.find_compiler()
    if compiler is None:
        pytest.skip("no block-attn-compile")
    files = _kernels.compile_kernel(key(head_dim=64, group=4), tmp_path)
    assert files.name == "blockattn_forward_d64_b64_bf16_g4"
    assert files.manifest["group"] == 4
    plain = _kernels.compile_kernel(key(head_dim=64), tmp_path)
    assert "group" not in plain.manifest
    grouped = _kernels.compile_kernel(key(kind="backward", head_dim=64, group=4), tmp_path)
    assert grouped.name == "blockattn_backward_d64_b64_bf16_g4"
    assert grouped.manifest["group"] == 4 and grouped.manifest["kind"] == "backward"
    # The grouped backward with rotary embeddings (issue 21): built, its manifest names both.
    rotary = _kernels.compile_kernel(key(kind="backward", head_dim=64, group=4, rotary="half_split"), tmp_path)
    assert rotary.name == "blockattn_backward_d64_b64_bf16_g4_half_split"
    assert rotary.manifest["group"] == 4 and rotary.manifest["rotary"] == "half_split"
    # At block size 128 up to head dim 128 (issue 20), with rotary embeddings up to head dim 64
    # (issues 20 and 21), refused above.
    large = _kernels.compile_kernel(key(kind="backward", head_dim=64, group=4, block_size=128), tmp_path)
    assert large.name == "blockattn_backward_d64_b128_bf16_g4" and large.manifest["group"] == 4
    large_rotary = _kernels.compile_kernel(
        key(kind="backward", head_dim=64, group=4, block_size=128, rotary="half_split"), tmp_path)
    assert large_rotary.name == "blockattn_backward_d64_b128_bf16_g4_half_split"
    assert large_rotary.manifest["group"] == 4 and large_rotary.manifest["rotary"] == "half_split"
    # Above head dim 128 on both chips (64-column chunks streamed; sm_100a since session 22), with
    # rotary embeddings too (sm_100a since session 24: a rotary warpgroup rotates the chunks).
    wide = _kernels.compile_kernel(key(kind="backward", head_dim=192, group=4, block_size=128), tmp_path)
    assert wide.name == "blockattn_backward_d192_b128_bf16_g4" and wide.manifest["group"] == 4
    wide_rotary = _kernels.compile_kernel(key(kind="backward", head_dim=192, group=4, block_size=128,
                                              chip="sm_100a", rotary="interleaved"), tmp_path)
    assert wide_rotary.name == "blockattn_backward_d192_b128_bf16_g4_interleaved"
    assert wide_rotary.manifest["group"] == 4 and wide_rotary.manifest["rotary"] == "interleaved"
    # Half-split rotary embeddings at head dim 96 (session 24: pair-complete 32-column chunks of two
    # 32-byte-swizzled 16-column pieces): built; its tensor maps take 16-column boxes, 32-byte swizzle.
    b96 = _kernels.compile_kernel(key(kind="backward", head_dim=96, group=4, block_size=128,
                                      rotary="half_split"), tmp_path)
    assert b96.name == "blockattn_backward_d96_b128_bf16_g4_half_split"
    maps = {p["tensor"]: p for p in b96.manifest["params"] if p["kind"] == "tensormap"}
    for name in ("q", "k", "v", "do"):
        assert maps[name]["box"][0] == 16 and maps[name]["swizzle"] == "32B", maps[name]


def test_grid_of_the_grouped_backward_counts_kv_heads():
    """A chunked grouped backward's work item is a block and a k/v head: its grid counts k's
    heads, the forward's q's."""
    assert _kernels.grid_tensor({"kind": "backward", "group": 4}) == "k"
    assert _kernels.grid_tensor({"kind": "forward", "group": 4}) == "q"
    assert _kernels.grid_tensor({"kind": "backward"}) == "q"


# --------------------------------------------------------------------------------------------
# blockattn.block_attention on the CPU, with the launch replaced
# --------------------------------------------------------------------------------------------

T, D = 10, 64
CU = [0, 3, 3, 10]


@pytest.fixture
def api_launches(monkeypatch):
    torch = pytest.importorskip("torch")
    pytest.importorskip("cuda.bindings")
    from blockattn import api

    calls = []

    def fake_launch(kind, like, block_size, tensors, softmax_scale, rotary="none", positions=False,
                    rotate_v=False, group=1):
        calls.append(dict(kind=kind, group=group, rotary=rotary,
                          shapes={n: tuple(t.shape) for n, t in tensors.items()}))
        for name in ("o", "dq", "dk", "dv"):
            if name in tensors:
                tensors[name].zero_()

    monkeypatch.setattr(api, "_launch", fake_launch)
    # the device checks need CUDA tensors: only the shape checks of the group run here
    monkeypatch.setattr(api, "_check_activation", lambda *a: None)
    return torch, api, calls


def tensors(torch, hq, hkv, requires_grad=False):
    q = torch.randn(T, hq, D).to(torch.bfloat16).requires_grad_(requires_grad)
    k, v = (torch.randn(T, hkv, D).to(torch.bfloat16) for _ in range(2))
    return q, k, v, torch.tensor(CU, dtype=torch.int32)


@pytest.mark.parametrize("hq,hkv", [(4, 2), (8, 1), (3, 1), (8, 2)])
def test_shapes_imply_the_group(api_launches, hq, hkv):
    torch, api, calls = api_launches
    import blockattn

    q, k, v, cu = tensors(torch, hq, hkv)
    o = blockattn.block_attention(q, k, v, cu)
    assert o.shape == q.shape
    (call,) = calls
    assert call["group"] == hq // hkv
    assert call["shapes"]["k"] == (T, hkv, D) and call["shapes"]["o"] == (T, hq, D)


def test_plain_call_launches_without_group(api_launches):
    torch, api, calls = api_launches
    import blockattn

    blockattn.block_attention(*tensors(torch, 4, 4))
    assert [c["group"] for c in calls] == [1]


@pytest.mark.parametrize("hq,hkv", [(6, 4), (4, 8), (3, 2)])
def test_heads_not_a_multiple_raise(api_launches, hq, hkv):
    torch, api, calls = api_launches
    import blockattn

    with pytest.raises(ValueError, match=rf"^k: {hkv} heads, but q has {hq}"):
        blockattn.block_attention(*tensors(torch, hq, hkv))
    assert calls == []


def test_grouped_backward_launches_with_kv_heads(api_launches):
    """The backward of a grouped call launches the _g<G> backward kernel with dk and dv of k's
    and v's shape (summed over each group in the kernel)."""
    torch, api, calls = api_launches

    q, k, v, cu = tensors(torch, 4, 2, requires_grad=True)
    dq, dk, dv = api.backward(torch.zeros_like(q), q, k, v, cu, 64, 0.125)
    assert dq.shape == q.shape and dk.shape == k.shape and dv.shape == v.shape
    (call,) = calls
    assert call["kind"] == "backward" and call["group"] == 2
    assert call["shapes"]["dk"] == (T, 2, D) and call["shapes"]["dq"] == (T, 4, D)


def test_grouped_autograd(api_launches):
    """block_attention's autograd on a grouped call: the forward, then the grouped backward,
    and gradients of k's and v's shapes."""
    torch, api, calls = api_launches
    import blockattn

    q, k, v, cu = tensors(torch, 8, 2, requires_grad=True)
    k.requires_grad_(True)
    v.requires_grad_(True)
    blockattn.block_attention(q, k, v, cu).sum().backward()
    assert [(c["kind"], c["group"]) for c in calls] == [("forward", 4), ("backward", 4)]
    assert q.grad.shape == q.shape and k.grad.shape == k.shape and v.grad.shape == v.shape


def test_grouped_backward_nothing_refused(api_launches):
    """Since session 24 the grouped backward is built for every block size, head dim, rotary
    layout and chip (half-split at block size 128 and head dim 96 on 32-byte-swizzled
    16-column pieces; at 192 and 256 on sm_100a with a rotary warpgroup), so the API refuses
    none of them before the launch (the guard it had, _refuse_grouped_backward, is gone): the
    grouped rotary backward launches the _g<G> kernel with the tables."""
    torch, api, calls = api_launches

    q, k, v, cu = tensors(torch, 4, 2, requires_grad=True)
    api.backward(torch.zeros_like(q), q, k, v, cu, 64, 0.125, cos=torch.ones(16, D // 2),
                 sin=torch.zeros(16, D // 2))
    api.backward(torch.zeros_like(q), q, k, v, cu, 128, 0.125, cos=torch.ones(16, D // 2),
                 sin=torch.zeros(16, D // 2))
    assert [(c["kind"], c["group"], c["rotary"]) for c in calls] == [("backward", 2, "half_split")] * 2


def test_grouped_half_split_rotary_backward_above_head_dim_128(api_launches):
    """Head dims 192 and 256 have a grouped backward at blocks of up to 64 with every rotary
    layout: half-split rows are loaded in pair-complete 64-column chunks, each two 32-column
    pieces under the 64-byte swizzle (session 23; session 21's one-box layout missed the float64
    reference on an H100 and was refused in session 22), so nothing refuses them, and the grouped
    backward launches the _g<G> half-split kernel with the tables; at block size 128 above head
    dim 128 both layouts are built on both chips (sm_90a since session 22, sm_100a since session
    24)."""
    torch, api, calls = api_launches

    assert calls == []
    d = 192
    q = torch.randn(T, 4, d).to(torch.bfloat16)
    k, v = (torch.randn(T, 2, d).to(torch.bfloat16) for _ in range(2))
    cu = torch.tensor(CU, dtype=torch.int32)
    api.backward(torch.zeros_like(q), q, k, v, cu, 64, 0.125, cos=torch.ones(16, d // 2),
                 sin=torch.zeros(16, d // 2))
    assert [(c["kind"], c["group"], c["rotary"]) for c in calls] == [("backward", 2, "half_split")]


def test_check_activation_group():
    """k's shape against q's with a G-th of its heads (on the meta device: the shape checks
    come before the device check only for the group, so call the helper directly)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("cuda.bindings")
    from blockattn import api

    q = torch.empty(T, 8, D, dtype=torch.bfloat16)
    assert api._query_group(q, torch.empty(T, 2, D)) == 4
    assert api._query_group(q, torch.empty(T, 8, D)) == 1
    assert api._query_group(q, torch.empty(T, D)) == 1  # k's own check reports the rank
    with pytest.raises(ValueError, match="k: 3 heads, but q has 8"):
        api._query_group(q, torch.empty(T, 3, D))


# --------------------------------------------------------------------------------------------
# The native record launch: k and v with a G-th of q's heads
# --------------------------------------------------------------------------------------------

MANIFESTS = pathlib.Path(__file__).parent / "data" / "manifests"


@pytest.mark.skipif(_launch.library() is None, reason="libblockattn_launch is not built")
def test_record_rules_group():
    pytest.importorskip("torch")
    pytest.importorskip("cuda.bindings")
    import ctypes

    from blockattn import _driver

    manifest = json.loads((MANIFESTS / "blockattn_forward_d128_b64_bf16.json").read_text())
    assert _driver.record_rules(manifest) is _driver.RECORD_RULES
    grouped = dict(manifest, group=4)
    rules = _driver.record_rules(grouped)
    assert rules["k"] == (3, "q", _launch.NONEMPTY, 4) and rules["v"] == rules["k"]
    assert rules["o"] == _driver.RECORD_RULES["o"]

    lib = _launch.library()
    launches = []
    table = _launch.Driver(
        _launch._ENCODE(lambda *a: 0),
        _launch._LAUNCH(lambda *a: launches.append(a) or 0),
        _launch._SET_CURRENT(lambda ctx: 0),
        _launch._ERROR_NAME(lambda e, n: 0))
    lib.blockattnLaunchSetDriver(ctypes.byref(table))
    try:
        plan = _launch.Plan(grouped, 0x1234, 0x5678)
        plan.set_record(grouped, rules, _kernels.grid_inputs(grouped), 132)

        def record(kv_heads, hq=8, tokens=512):
            values = [0xABC]
            for i, name in enumerate(plan.tensor_names):
                if name == "cu_seqlens":
                    values += [0x900000, 1, 9, 1]
                else:
                    h = kv_heads if name in ("k", "v") else hq
                    values += [0x100000 * (i + 1), 3, tokens, h, 128, h * 128, 128, 1]
            return values + [0.125]

        plan.launch_record(record(2))
        assert len(launches) == 1
        for bad in (8, 4, 1):
            with pytest.raises(_launch.LaunchError, match=rf"{bad} heads, but tensors\[0\] has 8 and the "
                                                         r"kernel's group is 4"):
                plan.launch_record(record(bad))
        assert len(launches) == 1
    finally:
        lib.blockattnLaunchSetDriver(None)


def test_kvpacked_grouped(api_launches, monkeypatch):
    """block_attention_kvpacked with kv [T, 2, Hkv, D]: the grouped forward and backward,
    and a kv whose heads do not divide q's named in the ValueError."""
    torch, api, calls = api_launches
    import blockattn

    monkeypatch.setattr(api, "_check_packed", lambda *a: None)
    q = torch.randn(T, 8, D).to(torch.bfloat16)
    cu = torch.tensor(CU, dtype=torch.int32)
    kv = torch.randn(T, 2, 2, D).to(torch.bfloat16)
    o = blockattn.block_attention_kvpacked(q, kv, cu)
    assert o.shape == q.shape
    assert [c["group"] for c in calls] == [4]
    assert calls[0]["shapes"]["k"] == (T, 2, D)
    with pytest.raises(ValueError, match=r"^kv: shape \(10, 2, 3, 64\) does not match q's"):
        blockattn.block_attention_kvpacked(q, torch.randn(T, 2, 3, D).to(torch.bfloat16), cu)
    # The grouped backward: one [T, 2, Hkv, D] gradient for kv.
    kv.requires_grad_(True)
    blockattn.block_attention_kvpacked(q, kv, cu).sum().backward()
    assert [(c["kind"], c["group"]) for c in calls[1:]] == [("forward", 4), ("backward", 4)]
    assert calls[2]["shapes"]["dk"] == (T, 2, D) and kv.grad.shape == kv.shape


@pytest.mark.parametrize("causal,return_lse", [(True, False), (False, True), (True, True)])
def test_grouped_causal_and_lse(api_launches, monkeypatch, causal, return_lse):
    """causal= and return_lse= compose with grouped k and v: the _g<G>_causal / _lse kernels
    forward and backward, with gradients of k's and v's shapes (the features path used to
    refuse k with fewer heads than q)."""
    torch, api, calls = api_launches
    import blockattn

    def fake_launch(kind, like, block_size, tensors, softmax_scale, rotary="none", positions=False,
                    rotate_v=False, group=1, causal=False, lse=False):
        calls.append(dict(kind=kind, group=group, causal=causal, lse=lse,
                          shapes={n: tuple(t.shape) for n, t in tensors.items()}))
        for name in ("o", "dq", "dk", "dv", "lse"):
            if name in tensors:
                tensors[name].zero_()

    monkeypatch.setattr(api, "_launch", fake_launch)
    q, k, v, cu = tensors(torch, 8, 2, requires_grad=True)
    k.requires_grad_(True)
    v.requires_grad_(True)
    result = blockattn.block_attention(q, k, v, cu, causal=causal, return_lse=return_lse)
    o, lse = result if return_lse else (result, None)
    assert o.shape == q.shape
    if return_lse:
        assert lse.shape == (8, T)
        (o.sum() + lse.sum()).backward()
    else:
        o.sum().backward()
    assert [(c["kind"], c["group"], c["causal"], c["lse"]) for c in calls] == [
        ("forward", 4, causal, return_lse), ("backward", 4, causal, return_lse)]
    assert calls[1]["shapes"]["dk"] == (T, 2, D) and calls[1]["shapes"]["dq"] == (T, 8, D)
    assert k.grad.shape == k.shape and v.grad.shape == v.shape


def test_grouped_causal_heads_not_a_multiple_raise(api_launches):
    torch, api, calls = api_launches
    import blockattn

    with pytest.raises(ValueError, match=r"^k: 4 heads, but q has 6"):
        blockattn.block_attention(*tensors(torch, 6, 4), causal=True)
    assert calls == []


def test_pair_halves_backward_built(api_launches):
    """The half-split rotary backwards that load pair-complete chunks (one TMA box of two 64-byte
    pieces under the 128-byte swizzle until session 22, which missed the float64 reference on an
    H100; two 64-byte-swizzled 32-column pieces since session 23) are not refused: grouped above
    128 at every block size, grouped at block size 128 and head dim 128, block size 128 above 128
    with and without a group; the grouped one launches its half-split kernel."""
    torch, api, calls = api_launches
    assert not calls
    d = 128
    q = torch.randn(T, 4, d).to(torch.bfloat16)
    k, v = (torch.randn(T, 2, d).to(torch.bfloat16) for _ in range(2))
    cu = torch.tensor(CU, dtype=torch.int32)
    api.backward(torch.zeros_like(q), q, k, v, cu, 128, 0.125, cos=torch.ones(16, d // 2),
                 sin=torch.zeros(16, d // 2))
    assert [(c["kind"], c["group"], c["rotary"]) for c in calls] == [("backward", 2, "half_split")]
