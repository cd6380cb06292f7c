#!/usr/bin/env python3
"""The attention layer end to end: forward + backward, against FA2 varlen and against its bound.

    python3 bench/layer.py [--workloads seed,seed-d64] [--rotary half_split] [--bias] [--causal]
                           [--num-kv-heads N] [--out DIR]

(with the wheel installed; from a source checkout add PYTHONPATH=python and, on a machine
without the compiler, BLOCKATTN_KERNEL_DIR). The layer is the self-attention of a ranking
model, x [T, E] -> Linear(E, (H + 2 Hkv) D) -> [T, H + 2 Hkv, D] (q heads, then k, then v)
-> attention -> Linear(E, E), E = H * D, timed as one training step (y = layer(x);
y.backward(dy)), with triton.testing.do_bench (median) in one process. Hkv = H (that is
[T, 3, H, D]) unless --num-kv-heads N gives grouped-query attention (query head h uses k/v
head h // (H / N)); with --causal, token i of a block attends to tokens 0..i of its block.
Every row below honours both:

  ours-packed     blockattn.nn.BlockAttention(causal=, num_kv_heads=): block_attention_qkvpacked,
                  whose backward writes one packed [T, H + 2 Hkv, D] gradient;
  ours-packed-unchecked  the same with check_inputs=False (no cu_seqlens check, which copies
                  cu_seqlens to the host and so synchronizes once per step);
  ours-views      the same layer calling block_attention on q, k, v = qkv.unbind(1) (grouped:
                  q, k, v = the [H, Hkv, Hkv] head split of [T, H + 2 Hkv, D]); autograd
                  copies the views' gradients into the packed one (a stack; grouped, a cat);
  fa2-packed      the same layer on FA2 varlen, every 64-token block its own sequence, so
                  that FA2's causal flag masks exactly the block's upper triangle
                  (flash_attn.flash_attn_varlen_qkvpacked_func when flash_attn is installed,
                  flash_attn_varlen_func on the views when grouped, else torch's bundled FA2
                  through aten on the views; k and v may have fewer heads than q);
  bound           the layer's GEMMs alone (both projections: the forward product and the two
                  backward products each, on the layer's shapes) plus our attention forward
                  and backward kernels alone on the layer's q, k, v views, writing into a
                  packed gradient; two timings, summed. Everything else a layer launches
                  (bias reductions, casts, copies, allocations) counts against it.

Prints ms and the ratios (layer / bound, FA2 layer / ours) and writes layer.json and
layer.png to --out (default bench/out). docs/benchmarks.md has the numbers.
"""

from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import platform
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import workloads  # noqa: E402


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="seed,seed-d64", help="comma-separated (default: seed,seed-d64)")
    ap.add_argument("--rotary", choices=("half_split", "interleaved"), default=None,
                    help="fused rotary in our layer; the FA2 layer then runs a torch.compile'd rotary pass")
    ap.add_argument("--bias", action="store_true", help="projections with biases (default: none)")
    ap.add_argument("--causal", action="store_true",
                    help="causal attention inside each block (token i attends to tokens 0..i of "
                         "its block)")
    ap.add_argument("--num-kv-heads", type=int, default=None, metavar="N",
                    help="grouped-query attention with N k/v heads, N dividing every workload's "
                         "heads (default: the workload's heads, no grouping)")
    ap.add_argument("--rep", type=int, default=200, help="do_bench rep in ms (default: 200)")
    ap.add_argument("--out", default=str(HERE / "out"), help="directory for layer.json and layer.png")
    ap.add_argument("--profile", action="store_true",
                    help="also profile a few steps of each layer (torch.profiler): GPU time per kernel, "
                         "and GPU busy time against the step's time")
    args = ap.parse_args(argv)
    # Refused here rather than by the layer, after the workloads before it have been timed.
    if args.num_kv_heads is not None:
        for name in filter(None, args.workloads.split(",")):
            heads = workloads.get(name).heads
            if args.num_kv_heads < 1 or heads % args.num_kv_heads:
                ap.error(f"--num-kv-heads {args.num_kv_heads}: not a positive divisor of "
                         f"{name}'s {heads} heads")
    return args


def bench(fn, rep):
    import triton.testing

    fn()
    torch.cuda.synchronize()
    return float(triton.testing.do_bench(fn, warmup=25, rep=rep, return_mode="median"))


def block_cu_seqlens(lengths: np.ndarray, block: int = 64) -> torch.Tensor:
    """Every 64-token block of every sequence as its own sequence (for FA2 varlen)."""
    starts = []
    offset = 0
    for n in lengths:
        starts.append(offset + np.arange(0, int(n), block))
        offset += int(n)
    starts = np.concatenate(starts + [[offset]]).astype(np.int32)
    return torch.tensor(starts, device="cuda")


def qkv_views(projected, num_heads, num_kv_heads, head_dim):
    """q [T, H, D] and k, v [T, Hkv, D]: views of the projection [T, (H + 2 Hkv) D] (q heads, then
    k, then v).

    Without grouping, unbind of its [T, 3, H, D] view, as before --num-kv-heads; with it,
    torch.split, whose backward (one cat) assembles the packed gradient once as unbind's (one
    stack) does, where slicing would make one zero-filled [T, H + 2 Hkv, D] gradient per view and
    sum them."""
    T = projected.shape[0]
    if num_kv_heads == num_heads:
        return projected.view(T, 3, num_heads, head_dim).unbind(1)
    heads = (num_heads, num_kv_heads, num_kv_heads)
    return projected.view(T, sum(heads), head_dim).split(heads, 1)


class ViewsLayer(torch.nn.Module):
    """The layer with block_attention on views of the packed qkv (what users write today)."""

    def __init__(self, ref):
        super().__init__()
        self.ref = ref

    def forward(self, x, cu):
        import blockattn

        r = self.ref
        T = x.shape[0]
        q, k, v = qkv_views(r.qkv(x), r.num_heads, r.num_kv_heads, r.head_dim)
        rotary = None
        if r.rotary_mode is not None:
            rotary = blockattn.Rotary(r.rotary_cos, r.rotary_sin, interleaved=r.interleaved)
        o = blockattn.block_attention(q, k, v, cu, rotary=rotary, causal=r.causal)
        return r.out_proj(o.reshape(T, r.embed_dim))


class Fa2Layer(torch.nn.Module):
    """The same layer on FA2 varlen (each block its own sequence; FA2's causal flag then masks the
    block's upper triangle, and FA2 groups the query heads itself when k and v have fewer)."""

    def __init__(self, ref, block_cu, rotary_pass):
        super().__init__()
        self.ref, self.block_cu, self.rotary_pass = ref, block_cu, rotary_pass
        H, Hkv, D, causal = ref.num_heads, ref.num_kv_heads, ref.head_dim, ref.causal

        def views(projected):
            return qkv_views(projected, H, Hkv, D)

        try:
            from flash_attn import flash_attn_varlen_func, flash_attn_varlen_qkvpacked_func

            if Hkv == H:
                self.backend = "flash_attn.flash_attn_varlen_qkvpacked_func"
                self.attn = lambda projected: flash_attn_varlen_qkvpacked_func(
                    projected.view(-1, 3, H, D), self.block_cu, 64, 0.0, causal=causal)
            else:  # the packed entry takes no grouped layout
                self.backend = "flash_attn.flash_attn_varlen_func on views"
                self.attn = lambda projected: flash_attn_varlen_func(
                    *views(projected), self.block_cu, self.block_cu, 64, 64, 0.0, causal=causal)
        except ImportError:
            import peers

            self.backend = "aten._flash_attention_forward/_backward (torch's FA2) on views"
            scale = ref.head_dim ** -0.5
            self.attn = lambda projected: peers._Fa2VarlenAten.apply(
                *views(projected), self.block_cu, 64, scale, causal)

    def forward(self, x, cu):
        r = self.ref
        T = x.shape[0]
        projected = r.qkv(x)  # [T, (H + 2 Hkv) D]
        if self.rotary_pass is not None:
            projected = self.rotary_pass(projected)
        o = self.attn(projected)
        return r.out_proj(o.reshape(T, r.embed_dim))


def rotary_pass_for(layer, cu):
    """A torch.compile'd rotary pass on the q and k heads of the projection [T, (H + 2 Hkv) D] (for
    the FA2 layer); returns the projection's shape."""
    from blockattn import reference

    pos = torch.from_numpy(reference.sequence_positions(cu.cpu().numpy())).to("cuda")
    cos, sin = layer.rotary_cos, layer.rotary_sin
    interleaved = layer.interleaved
    H, Hkv, D = layer.num_heads, layer.num_kv_heads, layer.head_dim

    @torch.compile
    def rotate(projected):
        def rot(x):
            c = cos[pos][:, None, :]
            s = sin[pos][:, None, :]
            xf = x.float()
            if interleaved:
                x1, x2 = xf[..., 0::2], xf[..., 1::2]
                return torch.stack([x1 * c - x2 * s, x2 * c + x1 * s], -1).flatten(-2).to(x.dtype)
            x1, x2 = xf.chunk(2, -1)
            return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1).to(x.dtype)

        q, k, v = qkv_views(projected, H, Hkv, D)
        return torch.cat([rot(q), rot(k), v], 1).flatten(1)

    return rotate


def profile_step(label, fn, steps=5):
    """Prints the GPU time per kernel of `steps` steps and the busy fraction of the step."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        start.record()
        for _ in range(steps):
            fn()
        end.record()
        torch.cuda.synchronize()
    wall = start.elapsed_time(end) / steps
    kernels = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            k = kernels.setdefault(e.name, [0, 0.0])
            k[0] += 1
            k[1] += e.device_time_total / 1000.0
    busy = sum(t for _, t in kernels.values()) / steps
    print(f"== profile {label}: {wall:.3f} ms per step, GPU busy {busy:.3f} ms ({busy / wall:.1%})")
    for name, (count, total) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[:14]:
        print(f"   {total / steps:8.3f} ms  {count // steps:3d}x  {name[:110]}")


def run_workload(name, args):
    import blockattn
    from blockattn import api

    w = workloads.get(name)
    H, D = w.heads, w.head_dim
    Hkv = H if args.num_kv_heads is None else args.num_kv_heads
    E = H * D
    T = w.tokens
    cu = w.cu_seqlens()
    torch.manual_seed(0)
    layer = blockattn.nn.BlockAttention(E, H, num_kv_heads=Hkv, rotary=args.rotary, bias=args.bias,
                                        causal=args.causal, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(T, E, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(T, E, device="cuda", dtype=torch.bfloat16)
    views = ViewsLayer(layer)
    block_cu = block_cu_seqlens(w.lengths)
    fa2 = Fa2Layer(layer, block_cu, rotary_pass_for(layer, cu) if args.rotary else None)

    def step(module):
        def fn():
            x.grad = None
            for p in layer.parameters():
                p.grad = None
            module(x, cu).backward(dy)
        return fn

    # Correctness before timing: the three layers agree (same weights).
    with torch.no_grad():
        ys = [m(x, cu).float() for m in (layer, views, fa2)]
    for label, y in zip(("ours-views", "fa2-packed"), ys[1:]):
        rel = (torch.linalg.vector_norm(y - ys[0]) / torch.linalg.vector_norm(ys[0])).item()
        assert rel < 2e-2, f"{name}: {label} differs from ours-packed by {rel:.3e}"
    del ys

    if args.profile:
        for label, module in (("ours-packed", layer), ("ours-views", views)):
            profile_step(f"{name} {label}", step(module))

    results = {"workload": name, "tokens": T, "heads": H, "head_dim": D, "embed_dim": E,
               "rotary": args.rotary, "bias": args.bias, "causal": args.causal, "num_kv_heads": Hkv,
               "fa2_backend": fa2.backend}
    results["ours-packed"] = bench(step(layer), args.rep)
    layer.check_inputs = False  # no cu_seqlens device-to-host copy per step
    results["ours-packed-unchecked"] = bench(step(layer), args.rep)
    layer.check_inputs = True
    results["ours-views"] = bench(step(views), args.rep)
    results["fa2-packed"] = bench(step(fa2), args.rep)

    # The bound, part 1: the six GEMMs of the two projections (no bias, no casts). The qkv
    # projection is (H + 2 Hkv) D wide: 3E without grouping.
    wq, wo = layer.qkv.weight.detach(), layer.out_proj.weight.detach()
    P = wq.shape[0]
    xd = x.detach()
    qkv_buf = torch.empty(T, P, device="cuda", dtype=torch.bfloat16)
    dqkv_buf = torch.randn(T, P, device="cuda", dtype=torch.bfloat16)
    o_buf = torch.randn(T, E, device="cuda", dtype=torch.bfloat16)
    y_buf = torch.empty(T, E, device="cuda", dtype=torch.bfloat16)
    do_buf = torch.empty(T, E, device="cuda", dtype=torch.bfloat16)
    dx_buf = torch.empty(T, E, device="cuda", dtype=torch.bfloat16)
    dwq, dwo = torch.empty_like(wq), torch.empty_like(wo)

    def gemms():
        torch.mm(xd, wq.t(), out=qkv_buf)        # qkv = x Wqkv^T
        torch.mm(o_buf, wo.t(), out=y_buf)       # y = o Wo^T
        torch.mm(dy, wo, out=do_buf)             # do = dy Wo
        torch.mm(dy.t(), o_buf, out=dwo)         # dWo = dy^T o
        torch.mm(dqkv_buf, wq, out=dx_buf)       # dx = dqkv Wqkv
        torch.mm(dqkv_buf.t(), xd, out=dwq)      # dWqkv = dqkv^T x

    results["gemms"] = bench(gemms, args.rep)

    # The bound, part 2: our attention kernels alone on the layer's q, k, v views (q [T, H, D],
    # k and v [T, Hkv, D] of one [T, H + 2 Hkv, D] buffer), writing views of one packed gradient.
    qkv = torch.randn(T, P, device="cuda", dtype=torch.bfloat16)
    q, k, v = qkv_views(qkv, H, Hkv, D)
    o = torch.empty(T, H, D, device="cuda", dtype=torch.bfloat16)
    go = torch.randn(T, H, D, device="cuda", dtype=torch.bfloat16)
    dqkv = torch.empty_like(qkv)
    grads = qkv_views(dqkv, H, Hkv, D)
    scale = D ** -0.5
    rope = {}
    if args.rotary:
        rope = dict(cos=layer.rotary_cos, sin=layer.rotary_sin, interleaved=layer.interleaved)

    def attention():
        api.forward(q, k, v, cu, 64, scale, out=o, causal=args.causal, **rope)
        api.backward(go, q, k, v, cu, 64, scale, grads=grads, causal=args.causal, **rope)

    results["attention"] = bench(attention, args.rep)
    results["bound"] = results["gemms"] + results["attention"]
    results["ours-packed/bound"] = results["ours-packed"] / results["bound"]
    results["fa2-packed/ours-packed"] = results["fa2-packed"] / results["ours-packed"]
    results["ours-views/ours-packed"] = results["ours-views"] / results["ours-packed"]
    del layer, views, fa2, x, dy, qkv, dqkv, grads
    torch.cuda.empty_cache()
    return results


def row_label(r):
    """The workload, and the attention's options where not the default (causal, Hkv)."""
    label = r["workload"]
    if r["causal"]:
        label += " causal"
    if r["num_kv_heads"] != r["heads"]:
        label += f" Hkv={r['num_kv_heads']}"
    return label


def options_label(args):
    """The options shared by every row (rotary, causal, --num-kv-heads) for the plot's title; empty
    if none."""
    parts = [f"rotary {args.rotary}"] if args.rotary else []
    if args.causal:
        parts.append("causal")
    if args.num_kv_heads is not None:
        parts.append(f"Hkv={args.num_kv_heads}")
    return "".join(f", {p}" for p in parts)


def plot(rows, path, options=""):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot")
        return
    labels = ["bound", "ours-packed", "ours-views", "fa2-packed"]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    width = 0.8 / len(rows)
    for i, r in enumerate(rows):
        xs = np.arange(len(labels)) + i * width
        ax.bar(xs, [r[l] for l in labels], width, label=row_label(r))
        for xv, l in zip(xs, labels):
            ax.text(xv, r[l], f"{r[l]:.1f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(np.arange(len(labels)) + width * (len(rows) - 1) / 2, labels)
    ax.set_ylabel("ms (forward + backward)")
    ax.set_title(f"The attention layer, one training step ({torch.cuda.get_device_name()}, "
                 f"bf16{options})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None):
    args = parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = [run_workload(name, args) for name in args.workloads.split(",") if name]
    width = max([10] + [len(row_label(r)) for r in rows])  # 10 as before the causal and Hkv labels
    print(f"{'workload':{width}} {'T':>9} {'E':>4} {'bound':>8} {'(gemms':>8} {'+ attn)':>8} "
          f"{'packed':>8} {'views':>8} {'fa2':>8} {'packed/bound':>13} {'fa2/packed':>11}")
    for r in rows:
        print(f"{row_label(r):{width}} {r['tokens']:9d} {r['embed_dim']:4d} "
              f"{r['bound']:8.3f} {r['gemms']:8.3f} "
              f"{r['attention']:8.3f} {r['ours-packed']:8.3f} {r['ours-views']:8.3f} {r['fa2-packed']:8.3f} "
              f"{r['ours-packed/bound']:13.3f} {r['fa2-packed/ours-packed']:11.2f}")
    for r in rows:
        print(f"{row_label(r)}: check_inputs=False {r['ours-packed-unchecked']:.3f} ms "
              f"({r['ours-packed-unchecked'] / r['bound']:.3f} of the bound); fa2 backend: {r['fa2_backend']}")
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "python": platform.python_version(),
        "rotary": args.rotary, "bias": args.bias, "causal": args.causal,
        "num_kv_heads": args.num_kv_heads,
        "rows": rows,
    }
    (out / "layer.json").write_text(json.dumps(meta, indent=1))
    plot(rows, out / "layer.png", options_label(args))
    print(f"wrote {out / 'layer.json'}")


if __name__ == "__main__":
    main()
