"""Which path a call takes (issue 22), on the CPU with the kernel launch replaced.

Eagerly, on plain tensors, block_attention (and the packed entry points) runs
an autograd.Function when a gradient is needed and launches directly when not;
under torch.compile it goes through the torch.library custom ops. The value
checks of cu_seqlens and of the rotary positions (check_inputs=True) copy a
tensor to the host once per tensor and version, and again after an in-place
change.
"""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("cuda.bindings")

import blockattn  # noqa: E402
from blockattn import api, reference  # noqa: E402

T, H, D = 10, 2, 64
CU = [0, 3, 3, 10]


@pytest.fixture
def launches(monkeypatch):
    """The kernel launch replaced by a recorder (o = v; dq = dk = dv = dO); q, k, v may
    live on the CPU (the activation checks, which need CUDA tensors, are skipped)."""
    calls = []

    def fake_launch(kind, like, block_size, tensors, softmax_scale, rotary="none", positions=False,
                    rotate_v=False):
        calls.append(dict(kind=kind, rotary=rotary, positions=positions, tensors=dict(tensors),
                          block_size=block_size))
        if kind == "forward":
            tensors["o"].copy_(tensors["v"])
        else:
            for name in ("dq", "dk", "dv"):
                tensors[name].copy_(tensors["do"])

    monkeypatch.setattr(api, "_launch", fake_launch)
    monkeypatch.setattr(api, "_check_activation", lambda *a: None)
    return calls


def inputs(requires_grad=True):
    q, k, v = (torch.randn(T, H, D).to(torch.bfloat16).requires_grad_(requires_grad) for _ in range(3))
    return q, k, v, torch.tensor(CU, dtype=torch.int32)


def test_eager_gradient_runs_the_autograd_function(launches):
    q, k, v, cu = inputs()
    o = blockattn.block_attention(q, k, v, cu)
    assert type(o.grad_fn).__name__ == "_AttentionFunctionBackward"
    do = torch.randn_like(o)
    o.backward(do)
    assert [c["kind"] for c in launches] == ["forward", "backward"]
    for t in (q, k, v):
        torch.testing.assert_close(t.grad, do)


def test_eager_without_gradient_launches_directly(launches):
    q, k, v, cu = inputs()
    with torch.no_grad():
        o = blockattn.block_attention(q, k, v, cu)
    assert o.grad_fn is None
    q, k, v, cu = inputs(requires_grad=False)
    o = blockattn.block_attention(q, k, v, cu)
    assert o.grad_fn is None and not o.requires_grad
    assert [c["kind"] for c in launches] == ["forward", "forward"]


def test_eager_backward_is_once_differentiable(launches):
    q, k, v, cu = inputs()
    o = blockattn.block_attention(q, k, v, cu)
    do = torch.randn_like(o, requires_grad=True)
    (dq,) = torch.autograd.grad(o, q, do, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        dq.float().sum().backward()


def test_eager_saves_only_the_inputs(launches):
    q, k, v, cu = inputs()
    saved = []

    def pack(t):
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        o = blockattn.block_attention(q, k, v, cu)
    assert len(saved) == 4 and all(any(s is t for t in (q, k, v, cu)) for s in saved)
    o.sum().backward()


def test_eager_rotary_reaches_both_launches(launches):
    q, k, v, cu = inputs()
    cos, sin = (torch.tensor(t, dtype=torch.float32) for t in reference.rope_tables(16, D))
    pos = torch.arange(T, dtype=torch.int32) % 5
    o = blockattn.block_attention(q, k, v, cu, rotary=blockattn.Rotary(cos, sin, positions=pos))
    o.sum().backward()
    fwd, bwd = launches
    for c in (fwd, bwd):
        assert c["rotary"] == "half_split" and c["positions"]
        assert c["tensors"]["cos"] is cos and c["tensors"]["positions"] is pos


def test_eager_packed_functions(launches):
    qkv = torch.randn(T, 3, H, D).to(torch.bfloat16).requires_grad_(True)
    cu = torch.tensor(CU, dtype=torch.int32)
    o = blockattn.block_attention_qkvpacked(qkv, cu)
    assert type(o.grad_fn).__name__ == "_QKVPackedFunctionBackward"
    do = torch.randn_like(o)
    o.backward(do)
    torch.testing.assert_close(qkv.grad, torch.stack([do] * 3, 1))

    q = torch.randn(T, H, D).to(torch.bfloat16).requires_grad_(True)
    kv = torch.randn(T, 2, H, D).to(torch.bfloat16).requires_grad_(True)
    o = blockattn.block_attention_kvpacked(q, kv, cu)
    assert type(o.grad_fn).__name__ == "_KVPackedFunctionBackward"
    o.backward(do)
    torch.testing.assert_close(q.grad, do)
    torch.testing.assert_close(kv.grad, torch.stack([do] * 2, 1))
    with torch.no_grad():
        assert blockattn.block_attention_qkvpacked(qkv, cu).grad_fn is None
        assert blockattn.block_attention_kvpacked(q, kv, cu).grad_fn is None


def test_compile_goes_through_the_custom_op(launches):
    q, k, v, cu = inputs()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm

    def attn(q, k, v):
        return blockattn.block_attention(q, k, v, cu)

    torch.compile(attn, fullgraph=True, backend=backend)(q, k, v)
    code = "\n".join(g.code for g in graphs)
    assert "blockattn.block_attention" in code and "_AttentionFunction" not in code


@pytest.fixture
def copies(monkeypatch):
    """Counts the host copies the value checks make."""
    counts = {"cu": 0, "positions": 0}
    cu_values, positions_range = api._cu_values, api._positions_range

    def counted_cu(*a):
        counts["cu"] += 1
        return cu_values(*a)

    def counted_positions(t):
        # _positions_range copies only on a miss: count the misses.
        if api._recalled(api._CHECKED_POSITIONS, t) is None:
            counts["positions"] += 1
        return positions_range(t)

    monkeypatch.setattr(api, "_cu_values", counted_cu)
    monkeypatch.setattr(api, "_positions_range", counted_positions)
    return counts


def test_cu_seqlens_values_checked_once_per_tensor_and_version(launches, copies):
    q, k, v, cu = inputs(requires_grad=False)
    for _ in range(3):
        blockattn.block_attention(q, k, v, cu)
    assert copies["cu"] == 1
    blockattn.block_attention(q, k, v, cu.clone())  # another tensor with the same values
    assert copies["cu"] == 2
    cu[1] = 2  # an in-place change: checked again, still valid
    blockattn.block_attention(q, k, v, cu)
    assert copies["cu"] == 3
    cu[1] = 4  # now decreasing (4 > 3): caught
    with pytest.raises(ValueError, match="^cu_seqlens: must be non-decreasing"):
        blockattn.block_attention(q, k, v, cu)
    view = cu[:]
    cu[1] = 3
    blockattn.block_attention(q, k, v, cu)
    view[3] = 9  # through a view: the version counter is shared
    with pytest.raises(ValueError, match="^cu_seqlens: the last offset must equal the number of tokens 10"):
        blockattn.block_attention(q, k, v, cu)
    view[3] = 10
    blockattn.block_attention(q, k, v, cu)
    assert copies["cu"] == 7
    with pytest.raises(ValueError, match="^cu_seqlens: the last offset must equal the number of tokens 9"):
        blockattn.block_attention(q[:9], k[:9], v[:9], cu)  # same tensor, other T: checked again
    blockattn.block_attention(q, k, v, cu, check_inputs=False)
    assert copies["cu"] == 8


def test_checked_cu_seqlens_still_bounds_the_rotary_tables(launches, copies):
    q, k, v, cu = inputs(requires_grad=False)
    cos, sin = (torch.tensor(t, dtype=torch.float32) for t in reference.rope_tables(8, D))
    blockattn.block_attention(q, k, v, cu, rotary=blockattn.Rotary(cos, sin))
    with pytest.raises(ValueError, match="^rotary: the longest sequence has 7 tokens"):
        blockattn.block_attention(q, k, v, cu, rotary=blockattn.Rotary(cos[:6], sin[:6]))
    assert copies["cu"] == 1


def test_positions_checked_once_per_tensor_and_version(launches, copies):
    q, k, v, cu = inputs(requires_grad=False)
    cos, sin = (torch.tensor(t, dtype=torch.float32) for t in reference.rope_tables(8, D))
    pos = torch.arange(T, dtype=torch.int32) % 8
    for _ in range(3):
        blockattn.block_attention(q, k, v, cu, rotary=blockattn.Rotary(cos, sin, positions=pos))
    assert copies["positions"] == 1
    with pytest.raises(ValueError, match=r"^rotary.positions: must lie in \[0, 6\)"):
        blockattn.block_attention(q, k, v, cu, rotary=blockattn.Rotary(cos[:6], sin[:6], positions=pos))
    pos[4] = 8
    with pytest.raises(ValueError, match=r"^rotary.positions: must lie in \[0, 8\) .* from 0 to 8"):
        blockattn.block_attention(q, k, v, cu, rotary=blockattn.Rotary(cos, sin, positions=pos))
    assert copies["positions"] == 2


def test_checked_cache_holds_no_tensor_alive():
    import gc
    import weakref

    cu = torch.tensor(CU, dtype=torch.int32)
    api._cu_values(cu, 10)
    ref = weakref.ref(cu)
    del cu
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("name", blockattn._API)
def test_entry_points_are_module_attributes_after_first_use(name):
    """`blockattn.block_attention` resolves through the module's __getattr__ (the lazy import)
    once; afterwards it is a plain attribute, so that a call does not pay for an import
    statement each time (issue 22's host time)."""
    function = getattr(blockattn, name)
    assert function is getattr(api, name)
    assert vars(blockattn)[name] is function


def test_block_size_128_runs_forward_and_backward(launches):
    """Block size 128 has a backward, plain and with rotary embeddings (docs/block-sizes.md):
    a call that needs gradients runs the autograd function, and the rotary one launches the
    rotary backward at 128 (no refusal before the launch)."""
    q, k, v, cu = inputs()
    o = blockattn.block_attention(q, k, v, cu, block_size=128)
    o.backward(torch.ones_like(o))
    assert [c["kind"] for c in launches] == ["forward", "backward"]
    cos, sin = (torch.tensor(t, dtype=torch.float32) for t in reference.rope_tables(16, D))
    launches.clear()
    o = blockattn.block_attention(q, k, v, cu, block_size=128, rotary=blockattn.Rotary(cos, sin))
    o.backward(torch.ones_like(o))
    assert [(c["kind"], c["block_size"], c["rotary"]) for c in launches] == [
        ("forward", 128, "half_split"), ("backward", 128, "half_split")]
    launches.clear()
    api.backward(v, q, k, v, cu, 128, 0.125, cos, sin)
    assert [(c["kind"], c["block_size"], c["rotary"]) for c in launches] == [("backward", 128, "half_split")]


@pytest.mark.parametrize("block_size", [64.0, True, "64"])
def test_block_size_must_be_an_int(launches, block_size):
    """A float equal to a supported size (64.0 == 64) is refused by name, not launched as a
    kernel named `_b64.0`; numpy integers are ints."""
    q, k, v, cu = inputs(requires_grad=False)
    with pytest.raises(ValueError, match="^block_size: expected an int"):
        blockattn.block_attention(q, k, v, cu, block_size=block_size)
    assert launches == []
    import numpy as np

    blockattn.block_attention(q, k, v, cu, block_size=np.int64(64))
    assert [c["kind"] for c in launches] == ["forward"]


@pytest.mark.parametrize("head_dim", [192, 256])
def test_large_head_dims_take_every_block_size(launches, head_dim):
    """Head dims 192 and 256 are built at every block size, forward and backward, with and
    without rotary embeddings (docs/head-dims.md); the rotary backward at block size 128 with
    half-split pairs (session 20's pair-complete chunks) was refused in session 22 and is built
    again since session 23 (two 64-byte-swizzled pieces a chunk); interleaved pairs have one."""
    q, k, v = (torch.randn(T, H, head_dim).to(torch.bfloat16) for _ in range(3))
    cu = torch.tensor(CU, dtype=torch.int32)
    tables = torch.ones(16, head_dim // 2)
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    blockattn.block_attention(qg, kg, vg, cu, block_size=128,
                              rotary=blockattn.Rotary(tables, tables)).sum().backward()
    assert [(c["kind"], c["block_size"], c["rotary"]) for c in launches] == [
        ("forward", 128, "half_split"), ("backward", 128, "half_split")]
    launches.clear()
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    blockattn.block_attention(qg, kg, vg, cu, block_size=128,
                              rotary=blockattn.Rotary(tables, tables, interleaved=True)).sum().backward()
    assert [(c["kind"], c["block_size"], c["rotary"]) for c in launches] == [
        ("forward", 128, "interleaved"), ("backward", 128, "interleaved")]
    launches.clear()
    blockattn.block_attention(q, k, v, cu, block_size=128, rotary=blockattn.Rotary(tables, tables))
    with torch.no_grad():
        blockattn.block_attention(qg, kg, vg, cu, block_size=128, rotary=blockattn.Rotary(tables, tables))
    blockattn.block_attention(q, k, v, cu, rotary=blockattn.Rotary(tables, tables))
    assert [(c["kind"], c["block_size"], c["rotary"]) for c in launches] == [
        ("forward", 128, "half_split"), ("forward", 128, "half_split"), ("forward", 64, "half_split")]
    launches.clear()
    blockattn.block_attention(q, k, v, cu)
    blockattn.block_attention(q, k, v, cu, block_size=32)
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    blockattn.block_attention(qg, kg, vg, cu, block_size=128).sum().backward()
    assert [(c["kind"], c["block_size"]) for c in launches] == [("forward", 64), ("forward", 32),
                                                               ("forward", 128), ("backward", 128)]
    # Both layouts have a backward at block size 128 (both chips; docs/head-dims.md).
    launches.clear()
    blockattn.api.backward(q, q, k, v, cu, 128, head_dim ** -0.5, cos=tables, sin=tables, interleaved=True)
    blockattn.api.backward(q, q, k, v, cu, 128, head_dim ** -0.5, cos=tables, sin=tables)
    assert [(c["kind"], c["block_size"], c["rotary"]) for c in launches] == [("backward", 128, "interleaved"),
                                                                             ("backward", 128, "half_split")]

