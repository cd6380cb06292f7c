"""What the benchmark times: our kernels and the peers of shared/BENCHMARK.md.

Every implementation is an ``Impl`` with one factory per kernel kind (see ``KINDS``). A factory
takes a ``Problem`` (the tensors, on the GPU) and a list of launch configurations, and returns a
``Runner``: the zero-argument callable that is timed, plus how to read its result as ``[T, H, D]``
tensors for the correctness check. Adding a row (say, our backward once it exists, or a
forward+backward row for a peer) is adding a factory; adding a peer is adding an ``Impl`` to
``IMPLS``.

Before anything is timed, ``check`` runs every (implementation, kind) on a small jagged problem
(lengths 0, 1, 63, 64, 65, ...) and compares with a float64 reference, so a broken peer never
yields a number.

With rotary embeddings (``RotaryConfig``, ``bench.py --rotary``) the problem also holds fp32
cos/sin tables (and positions), the float64 reference rotates q and k (and v) before the
attention, and ``ROTARY_IMPLS`` are timed instead of ``IMPLS``: our fused kernels, our plain
kernels after a torch.compile'd rotary pass, and FA2 varlen after the same rotary pass.

Importing this module needs torch and triton but no GPU (flash_attn is optional).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F

import triton_block_attn
import workloads


# --------------------------------------------------------------------------------------------
# Kernel kinds and their HBM floors
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Kind:
    name: str
    q_tensors: int  # [T, Hq, D] tensors that must cross HBM (shared/BENCHMARK.md, "The limit")
    kv_tensors: int  # [T, Hkv, D] tensors (k, v and their gradients: once per group with grouped kv)
    outputs: tuple[str, ...]  # what the check compares
    floor_doc: str

    @property
    def floor_tensors(self) -> int:
        """[T, H, D] tensors of the floor when k and v have q's heads."""
        return self.q_tensors + self.kv_tensors

    def floor_bytes(self, bytes_per_q_tensor: int, bytes_per_kv_tensor: int) -> int:
        return self.q_tensors * bytes_per_q_tensor + self.kv_tensors * bytes_per_kv_tensor


KINDS = {
    "forward": Kind("forward", 2, 2, ("o",), "read q, k, v; write o"),
    "backward": Kind("backward", 3, 4, ("dq", "dk", "dv"),
                     "read q, k, v, dO; write dq, dk, dv (O is not needed)"),
    # Not in the default set: a training step's attention, the two floors added.
    "fwd+bwd": Kind("fwd+bwd", 5, 6, ("dq", "dk", "dv"), "forward (4 tensors) then backward (7 tensors)"),
}


class Unavailable(Exception):
    """This implementation cannot run this problem; the message says why."""


# --------------------------------------------------------------------------------------------
# Problems
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class RotaryConfig:
    """Rotary embeddings of a benchmark run: layout, explicit positions tensor, rotate v."""

    interleaved: bool = False
    positions: bool = False  # pass the positions as a tensor (the _pos kernels); same values
    rotate_v: bool = False
    base: float = 10000.0

    @property
    def mode(self) -> str:
        return "interleaved" if self.interleaved else "half_split"

    def describe(self) -> str:
        return self.mode + (" +positions" if self.positions else "") + (" +rotate_v" if self.rotate_v else "")


@dataclasses.dataclass
class RotaryTensors:
    """The rotary inputs of a problem, on the GPU."""

    config: RotaryConfig
    cos: torch.Tensor  # fp32 [max_position, D/2]
    sin: torch.Tensor
    positions: Optional[torch.Tensor]  # int32 [T] for the fused kernels, if config.positions
    index: torch.Tensor  # int64 [T]: each token's table row, for the unfused rotary pass

    @classmethod
    def make(cls, config: RotaryConfig, lengths: np.ndarray, head_dim: int, device="cuda") -> "RotaryTensors":
        import blockattn.reference as ref

        max_position = max(1, int(lengths.max()) if len(lengths) else 1)
        cos, sin = (torch.tensor(t, dtype=torch.float32, device=device)
                    for t in ref.rope_tables(max_position, head_dim, config.base))
        cu = np.concatenate([[0], np.cumsum(lengths)])
        index = torch.tensor(ref.sequence_positions(cu), dtype=torch.int64, device=device)
        positions = index.to(torch.int32) if config.positions else None
        return cls(config, cos, sin, positions, index)

    def blockattn(self):
        import blockattn

        c = self.config
        return blockattn.Rotary(self.cos, self.sin, interleaved=c.interleaved, positions=self.positions,
                                rotate_v=c.rotate_v)

    def table_bytes(self) -> int:
        """Bytes of the inputs a fused kernel reads besides q, k, v (, dO): tables and positions."""
        n = 2 * self.cos.numel() * self.cos.element_size()
        return n + (self.positions.numel() * 4 if self.positions is not None else 0)


@dataclasses.dataclass
class Problem:
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    do: Optional[torch.Tensor]  # the gradient of o, for backward kinds
    cu_seqlens: torch.Tensor
    lengths: np.ndarray  # host copy of the sequence lengths
    block_size: int = 64
    softmax_scale: Optional[float] = None
    rotary: Optional[RotaryTensors] = None
    causal: bool = False
    _cache: dict = dataclasses.field(default_factory=dict, repr=False)

    @classmethod
    def from_workload(cls, w: workloads.Workload, with_grad: bool, seed: int = 0,
                      rotary: Optional[RotaryConfig] = None) -> "Problem":
        ts = w.attention_tensors(with_grad, seed=seed)  # randn: never zero
        lengths = np.asarray(w.lengths)
        rot = RotaryTensors.make(rotary, lengths, w.head_dim) if rotary is not None else None
        return cls(*ts[:3], ts[3] if with_grad else None, w.cu_seqlens(), lengths, block_size=w.block_size,
                   rotary=rot, causal=w.causal)

    @property
    def T(self) -> int:
        return self.q.shape[0]

    @property
    def H(self) -> int:
        return self.q.shape[1]

    @property
    def D(self) -> int:
        return self.q.shape[2]

    @property
    def group(self) -> int:
        """Query heads per k/v head (grouped-query attention; 1 without)."""
        return self.q.shape[1] // self.k.shape[1]

    @property
    def scale(self) -> float:
        return self.D ** -0.5 if self.softmax_scale is None else self.softmax_scale

    @property
    def aligned(self) -> bool:
        """Every sequence a whole number of blocks (the reshape trick needs it)."""
        return bool(np.all(self.lengths % self.block_size == 0))

    def table(self):
        """(starts, counts) of every block, int32 on the GPU; built once, outside timed regions."""
        if "table" not in self._cache:
            self._cache["table"] = triton_block_attn.block_table(self.cu_seqlens, self.T, self.block_size)
        return self._cache["table"]

    def block_cu_seqlens(self) -> torch.Tensor:
        """cu_seqlens in which every block is its own sequence (blocks tile [0, T) in order)."""
        if "block_cu" not in self._cache:
            starts = self.table()[0]
            self._cache["block_cu"] = torch.cat([starts, starts.new_tensor([self.T])]).contiguous()
        return self._cache["block_cu"]

    def blocks(self, t: torch.Tensor) -> torch.Tensor:
        """The [nblocks, H, bs, D] view of a [T, H, D] tensor (aligned problems only; no copy)."""
        bs = self.block_size
        return t.view(t.shape[0] // bs, bs, t.shape[1], t.shape[2]).transpose(1, 2)

    def unblocks(self, t: torch.Tensor) -> torch.Tensor:
        """Inverse of blocks(): [nblocks, H, bs, D] -> [T, H, D] (copies only if t's layout needs it)."""
        return t.transpose(1, 2).reshape(-1, t.shape[1], t.shape[3])


# --------------------------------------------------------------------------------------------
# Runners and implementations
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Runner:
    fn: Callable[[], Any]  # what is timed
    outputs: Callable[[Any], tuple]  # fn()'s result -> [T, H, D] tensors, in KINDS[kind].outputs order
    config: dict = dataclasses.field(default_factory=dict)  # launch configuration, reported


Factory = Callable[[Problem, Sequence[Any]], Runner]


@dataclasses.dataclass
class Impl:
    name: str
    description: str
    factories: dict  # kind -> Factory
    aligned_only: bool = False
    ours: bool = False
    configs: tuple = (None,)  # launch configurations; each is checked, the passing ones tuned over

    def unavailable(self, p: Problem) -> Optional[str]:
        if self.aligned_only and not p.aligned:
            return f"needs every sequence length to be a multiple of {p.block_size}"
        return None


def _autograd_runner(kind: str, attn: Callable, tensors: Sequence[torch.Tensor], do: Optional[torch.Tensor],
                     to_thd: Callable[[torch.Tensor], torch.Tensor], config: Optional[dict] = None) -> Runner:
    """Runner for a differentiable attn(q, k, v) -> o; tensors and do in attn's layout.

    backward: the forward runs once here, outside the timed region; the timed call is the
    autograd backward alone (retain_graph so it can be repeated), gradients with respect to the
    tensors exactly as given (no layout copy is added after the backward kernel).
    """
    config = config or {}
    if kind == "forward":
        q, k, v = tensors

        def fwd():
            with torch.no_grad():
                return attn(q, k, v)

        return Runner(fwd, lambda o: (to_thd(o),), config)
    leaves = tuple(t.detach().requires_grad_() for t in tensors)
    with torch.enable_grad():
        if kind == "backward":
            o = attn(*leaves)

            def fn():
                return torch.autograd.grad(o, leaves, do, retain_graph=True)
        elif kind == "fwd+bwd":

            def fn():
                return torch.autograd.grad(attn(*leaves), leaves, do)
        else:
            raise Unavailable(f"no {kind} runner")
    return Runner(fn, lambda gs: tuple(to_thd(g) for g in gs), config)


# ---- ours ----------------------------------------------------------------------------------


def _ours(kind: str) -> Factory:
    def make(p: Problem, configs) -> Runner:
        import blockattn

        if kind == "forward":
            o = torch.empty_like(p.q)
            # Validate the arguments once (reads cu_seqlens back to the host), then time without.
            blockattn.block_attention(p.q, p.k, p.v, p.cu_seqlens, block_size=p.block_size,
                                      softmax_scale=p.scale, out=o, check_inputs=True, causal=p.causal)

            def fn():
                return blockattn.block_attention(p.q, p.k, p.v, p.cu_seqlens, block_size=p.block_size,
                                                 softmax_scale=p.scale, out=o, check_inputs=False,
                                                 causal=p.causal)

            return Runner(fn, lambda out: (out,))

        def attn(q, k, v):  # the backward goes through torch.autograd (NotImplementedError until it exists)
            return blockattn.block_attention(q, k, v, p.cu_seqlens, block_size=p.block_size,
                                             softmax_scale=p.scale, check_inputs=False, causal=p.causal)

        return _autograd_runner(kind, attn, (p.q, p.k, p.v), p.do, lambda t: t)

    return make


# ---- the straightforward Triton kernel ----------------------------------------------------


def _triton_fns(kind: str, p: Problem):
    """config -> the zero-argument callable for that (num_warps, num_stages)."""
    table = p.table()
    tba = triton_block_attn
    mode = {"block_size": p.block_size, "causal": p.causal}
    if kind == "forward":
        o = torch.empty_like(p.q)
        return lambda c: (lambda: tba.forward(p.q, p.k, p.v, table, p.scale, out=o, num_warps=c[0],
                                              num_stages=c[1], **mode)), lambda out: (out,)
    if kind == "backward":
        return lambda c: (lambda: tba.backward(p.do, p.q, p.k, p.v, table, p.scale, num_warps=c[0],
                                               num_stages=c[1], **mode)), lambda g: g
    if kind == "fwd+bwd":
        def make(c):
            def fn():
                tba.forward(p.q, p.k, p.v, table, p.scale, num_warps=c[0], num_stages=c[1], **mode)
                return tba.backward(p.do, p.q, p.k, p.v, table, p.scale, num_warps=c[0], num_stages=c[1],
                                    **mode)
            return fn
        return make, lambda g: g
    raise Unavailable(f"no {kind} runner")


def _triton(kind: str) -> Factory:
    def make(p: Problem, configs) -> Runner:
        make_fn, outputs = _triton_fns(kind, p)
        configs = list(configs)
        if len(configs) == 1:
            c = configs[0]
            return Runner(make_fn(c), outputs, {"num_warps": c[0], "num_stages": c[1]})
        best, timings = tune(make_fn, configs)
        print(f"    triton {kind} D={p.D}: best num_warps={best[0]} num_stages={best[1]}  ("
              + ", ".join(f"{c[0]}w{c[1]}s {t}" for c, t in timings.items()) + ")", flush=True)
        return Runner(make_fn(best), outputs,
                      {"num_warps": best[0], "num_stages": best[1], "tuning_ms": {f"{c[0]}w{c[1]}s": t
                                                                                   for c, t in timings.items()}})

    return make


def tune(make_fn: Callable, configs: Sequence[Any], warmup: int = 10, rep: int = 40):
    """Times every configuration once on the actual problem; returns (best, {config: ms or error})."""
    import triton.testing

    timings: dict = {}
    for c in configs:
        try:
            fn = make_fn(c)
            fn()
            timings[c] = round(triton.testing.do_bench(fn, warmup=warmup, rep=rep, return_mode="median"), 4)
        except Exception as e:  # noqa: BLE001 - a configuration that does not compile is just left out
            timings[c] = f"failed: {type(e).__name__}"
        finally:
            torch.cuda.empty_cache()
    ok = {c: t for c, t in timings.items() if isinstance(t, float)}
    if not ok:
        raise RuntimeError(f"no configuration ran: {timings}")
    return min(ok, key=ok.get), timings


# ---- FA2 varlen through aten, every block its own sequence ---------------------------------


def _fa2(kind: str) -> Factory:
    # aten::_flash_attention_forward(Tensor query, Tensor key, Tensor value, Tensor? cum_seq_q,
    #   Tensor? cum_seq_k, SymInt max_q, SymInt max_k, float dropout_p, bool is_causal,
    #   bool return_debug_mask, *, float? scale=None, ...)
    #   -> (Tensor output, Tensor softmax_logsumexp, Tensor rng_state, Tensor unused, Tensor debug_attn_mask)
    # aten::_flash_attention_backward(Tensor grad_out, Tensor query, Tensor key, Tensor value, Tensor out,
    #   Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt max_k, float dropout_p,
    #   bool is_causal, Tensor rng_state, Tensor unused, *, float? scale=None, ...) -> (Tensor, Tensor, Tensor)
    def make(p: Problem, configs) -> Runner:
        if not torch.backends.cuda.is_flash_attention_available():
            raise Unavailable("this torch build has no flash attention")
        cu, bs = p.block_cu_seqlens(), p.block_size

        def fwd():
            # Every block its own sequence: is_causal masks each block's upper triangle. k and v
            # may have fewer heads than q (FA2 groups the query heads itself).
            res = torch.ops.aten._flash_attention_forward(p.q, p.k, p.v, cu, cu, bs, bs, 0.0, p.causal, False,
                                                          scale=p.scale)
            return res[0], res[1], res[2], res[3]  # output, logsumexp, rng_state, unused

        def bwd(out, lse, rng_state, unused):
            return torch.ops.aten._flash_attention_backward(p.do, p.q, p.k, p.v, out, lse, cu, cu, bs, bs, 0.0,
                                                            p.causal, rng_state, unused, scale=p.scale)

        if kind == "forward":
            return Runner(lambda: fwd()[0], lambda o: (o,))
        if kind == "backward":
            saved = fwd()  # outside the timed region
            return Runner(lambda: bwd(*saved), lambda g: tuple(g))
        if kind == "fwd+bwd":
            return Runner(lambda: bwd(*fwd()), lambda g: tuple(g))
        raise Unavailable(f"no {kind} runner")

    return make


# ---- SDPA on [nblocks, H, 64, D] views -------------------------------------------------------


def _sdpa(kind: str, backend: str) -> Factory:
    def make(p: Problem, configs) -> Runner:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        be = getattr(SDPBackend, backend)

        gqa = {"enable_gqa": True} if p.group > 1 else {}  # k, v with fewer heads

        def attn(q, k, v):
            with sdpa_kernel(be):  # only this backend: raises if it cannot run, never falls back
                return F.scaled_dot_product_attention(q, k, v, scale=p.scale, is_causal=p.causal, **gqa)

        views = tuple(p.blocks(t) for t in (p.q, p.k, p.v))
        do = p.blocks(p.do) if p.do is not None else None
        return _autograd_runner(kind, attn, views, do, p.unblocks)

    return make


def _eager(kind: str) -> Factory:
    def make(p: Problem, configs) -> Runner:
        def attn(q, k, v):
            if p.group > 1:  # views are [nblocks, H, bs, D]: repeat k/v heads (autograd sums dk, dv)
                k, v = k.repeat_interleave(p.group, dim=1), v.repeat_interleave(p.group, dim=1)
            s = torch.matmul(q, k.transpose(-2, -1)).float() * p.scale
            if p.causal:
                n = s.shape[-1]
                s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
            return torch.matmul(torch.softmax(s, dim=-1).to(q.dtype), v)

        views = tuple(p.blocks(t) for t in (p.q, p.k, p.v))
        do = p.blocks(p.do) if p.do is not None else None
        return _autograd_runner(kind, attn, views, do, p.unblocks)

    return make


# ---- FlexAttention on the packed tokens, a block mask built from the block table ------------


FLEX_TILE = 128  # FlexAttention's default (and smallest well-tuned) mask granularity


def flex_block_mask(p: Problem, causal: bool, device=None):
    """A FlexAttention BlockMask of p's block-diagonal attention over the packed [1, H, T, D]
    tokens (no padding, no copy): for every 128-row query tile, the 128-column key tiles its
    blocks touch (at most three for blocks of up to 128 tokens), every one partial (the
    mask_mod keeps a pair when both tokens are in one block, and with causal the key is not
    after the query). Built with torch ops from the block table; one host sync for the widest
    row of tiles. Building it is setup, outside any timed region (it takes a dense
    tiles x tiles index, as BlockMask requires)."""
    from torch.nn.attention.flex_attention import BlockMask

    starts, counts = p.table()
    device = device or starts.device
    starts, counts = starts.to(device).long(), counts.to(device).long()
    T = p.T
    block_of = torch.repeat_interleave(torch.arange(starts.numel(), device=device), counts)  # [T]
    tiles = (T + FLEX_TILE - 1) // FLEX_TILE
    first = torch.arange(tiles, device=device) * FLEX_TILE
    last = torch.clamp(first + FLEX_TILE, max=T) - 1
    lo = starts[block_of[first]] // FLEX_TILE
    hi = (starts[block_of[last]] + counts[block_of[last]] - 1) // FLEX_TILE
    n = (hi - lo + 1).to(torch.int32)
    width = int(n.max())
    idx = lo[:, None] + torch.arange(width, device=device)[None, :]
    idx = torch.where(torch.arange(width, device=device)[None, :] < n[:, None], idx, 0).to(torch.int32)
    # BlockMask wants a row as wide as the key tiles (it transposes the mask through a dense one for
    # the backward): tiles^2 int32, 0.65 GB on the seed lengths.
    idx = torch.nn.functional.pad(idx, (0, tiles - width))

    def same_block(b, h, q_idx, kv_idx):
        keep = block_of[q_idx] == block_of[kv_idx]
        return keep & (kv_idx <= q_idx) if causal else keep

    return BlockMask.from_kv_blocks(n[None, None], idx[None, None].contiguous(), BLOCK_SIZE=FLEX_TILE,
                                    mask_mod=same_block, seq_lengths=(T, T))


def _flex(kind: str) -> Factory:
    def make(p: Problem, configs) -> Runner:
        try:
            from torch.nn.attention.flex_attention import flex_attention
        except ImportError as e:
            raise Unavailable(f"this torch has no FlexAttention: {e}")
        mask = flex_block_mask(p, p.causal)
        compiled = torch.compile(flex_attention, dynamic=False)
        gqa = p.group > 1

        def attn(q, k, v):  # [1, H, T, D] views of the [T, H, D] tensors
            return compiled(q, k, v, block_mask=mask, scale=p.scale, enable_gqa=gqa)

        views = tuple(t.transpose(0, 1).unsqueeze(0) for t in (p.q, p.k, p.v))
        do = p.do.transpose(0, 1).unsqueeze(0) if p.do is not None else None
        return _autograd_runner(kind, attn, views, do, lambda t: t[0].transpose(0, 1),
                                {"mask_tile": FLEX_TILE, "compiled": "torch.compile(flex_attention)"})

    return make


# ---- rotary: fused (ours), and a compiled rotary pass + attention (ours plain, FA2) -----------


def rotary_pass(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, index: torch.Tensor,
                interleaved: bool) -> torch.Tensor:
    """RoPE of x [T, H, D] as its own pass: gather the table rows, rotate in fp32, round once."""
    c = cos[index][:, None, :]
    s = sin[index][:, None, :]
    xf = x.float()
    if interleaved:
        x1, x2 = xf[..., 0::2], xf[..., 1::2]
    else:
        x1, x2 = xf.chunk(2, dim=-1)
    r1, r2 = x1 * c - x2 * s, x2 * c + x1 * s
    out = torch.stack([r1, r2], dim=-1).flatten(-2) if interleaved else torch.cat([r1, r2], dim=-1)
    return out.to(x.dtype)


_COMPILED_ROTARY: dict = {}


def compiled_rotary(interleaved: bool, rotate_v: bool) -> Callable:
    """torch.compile'd (q, k, v) -> rotated (q, k, v): one pass over q and k (and v) forward, and
    its compiled (AOTAutograd) backward. What a user without fused rotary runs."""
    key = (interleaved, rotate_v)
    if key not in _COMPILED_ROTARY:
        def rotate(q, k, v, cos, sin, index):
            q = rotary_pass(q, cos, sin, index, interleaved)
            k = rotary_pass(k, cos, sin, index, interleaved)
            if rotate_v:
                v = rotary_pass(v, cos, sin, index, interleaved)
            return q, k, v

        _COMPILED_ROTARY[key] = torch.compile(rotate, dynamic=False)
    return _COMPILED_ROTARY[key]


def _rotated(p: Problem, attn: Callable) -> Callable:
    """attn(q, k, v) preceded by the compiled rotary pass."""
    r = p.rotary
    rotate = compiled_rotary(r.config.interleaved, r.config.rotate_v)

    def fn(q, k, v):
        return attn(*rotate(q, k, v, r.cos, r.sin, r.index))

    return fn


def _need_rotary(p: Problem) -> None:
    if p.rotary is None:
        raise Unavailable("a rotary implementation needs a problem with rotary tables (bench.py --rotary)")


def _ours_fused(kind: str) -> Factory:
    def make(p: Problem, configs) -> Runner:
        import blockattn

        _need_rotary(p)
        rotary = p.rotary.blockattn()
        if kind == "forward":
            o = torch.empty_like(p.q)
            blockattn.block_attention(p.q, p.k, p.v, p.cu_seqlens, block_size=p.block_size,
                                      softmax_scale=p.scale, out=o, check_inputs=True, rotary=rotary)

            def fn():
                return blockattn.block_attention(p.q, p.k, p.v, p.cu_seqlens, block_size=p.block_size,
                                                 softmax_scale=p.scale, out=o, check_inputs=False, rotary=rotary)

            return Runner(fn, lambda out: (out,))

        def attn(q, k, v):
            return blockattn.block_attention(q, k, v, p.cu_seqlens, block_size=p.block_size,
                                             softmax_scale=p.scale, check_inputs=False, rotary=rotary)

        return _autograd_runner(kind, attn, (p.q, p.k, p.v), p.do, lambda t: t)

    return make


def _ours_unfused(kind: str) -> Factory:
    def make(p: Problem, configs) -> Runner:
        import blockattn

        _need_rotary(p)

        def attn(q, k, v):
            return blockattn.block_attention(q, k, v, p.cu_seqlens, block_size=p.block_size,
                                             softmax_scale=p.scale, check_inputs=False)

        return _autograd_runner(kind, _rotated(p, attn), (p.q, p.k, p.v), p.do, lambda t: t,
                                {"rotary": "torch.compile"})

    return make


class _Fa2VarlenAten(torch.autograd.Function):
    """FA2 varlen through aten (torch's bundled FlashAttention-2), differentiable. With
    `causal` (every block its own sequence of equal q and k lengths) FA2's causal mask is the
    block's."""

    @staticmethod
    def forward(ctx, q, k, v, cu, max_len, scale, causal):
        out, lse, rng_state, unused, _ = torch.ops.aten._flash_attention_forward(
            q, k, v, cu, cu, max_len, max_len, 0.0, causal, False, scale=scale)
        ctx.save_for_backward(q, k, v, out, lse, cu)
        ctx.extra = (rng_state, unused, max_len, scale, causal)
        return out

    @staticmethod
    def backward(ctx, do):
        q, k, v, out, lse, cu = ctx.saved_tensors
        rng_state, unused, max_len, scale, causal = ctx.extra
        dq, dk, dv = torch.ops.aten._flash_attention_backward(
            do.contiguous(), q, k, v, out, lse, cu, cu, max_len, max_len, 0.0, causal, rng_state,
            unused, scale=scale)
        return dq, dk, dv, None, None, None, None


def _fa2_varlen_fn(p: Problem):
    """(attn(q, k, v) with every block its own FA2 varlen sequence, backend name)."""
    cu, bs = p.block_cu_seqlens(), p.block_size
    try:
        from flash_attn import flash_attn_varlen_func
    except ImportError:
        flash_attn_varlen_func = None
    if flash_attn_varlen_func is not None:
        return (lambda q, k, v: flash_attn_varlen_func(q, k, v, cu, cu, bs, bs, 0.0,
                                                       softmax_scale=p.scale, causal=p.causal),
                "flash_attn.flash_attn_varlen_func")
    if not torch.backends.cuda.is_flash_attention_available():
        raise Unavailable("neither flash_attn nor torch's flash attention is available")
    return (lambda q, k, v: _Fa2VarlenAten.apply(q, k, v, cu, bs, p.scale, p.causal),
            "aten._flash_attention_forward/_backward")


def _fa2_rotary(kind: str) -> Factory:
    def make(p: Problem, configs) -> Runner:
        _need_rotary(p)
        attn, backend = _fa2_varlen_fn(p)
        return _autograd_runner(kind, _rotated(p, attn), (p.q, p.k, p.v), p.do, lambda t: t,
                                {"rotary": "torch.compile", "fa2": backend})

    return make


def _all_kinds(factory: Callable[..., Factory], *args) -> dict:
    return {kind: factory(kind, *args) for kind in KINDS}


IMPLS = [
    Impl("ours", "block-attn: blockattn.block_attention (compiled kernels; backward through torch.autograd)",
         _all_kinds(_ours), ours=True),
    Impl("triton", "a straightforward Triton kernel (bench/triton_block_attn.py), best of num_warps/num_stages",
         _all_kinds(_triton), configs=triton_block_attn.CONFIGS),
    Impl("fa2-varlen", "FA2 varlen (aten._flash_attention_forward/_backward), every 64-token block its own sequence",
         _all_kinds(_fa2)),
    Impl("cudnn-sdpa", "cuDNN SDPA on [nblocks, H, 64, D] views", _all_kinds(_sdpa, "CUDNN_ATTENTION"),
         aligned_only=True),
    Impl("flash-sdpa", "SDPA flash backend on [nblocks, H, 64, D] views", _all_kinds(_sdpa, "FLASH_ATTENTION"),
         aligned_only=True),
    Impl("memeff-sdpa", "SDPA memory-efficient backend on [nblocks, H, 64, D] views",
         _all_kinds(_sdpa, "EFFICIENT_ATTENTION"), aligned_only=True),
    Impl("eager", "eager matmul/softmax/matmul on [nblocks, H, 64, D] views", _all_kinds(_eager),
         aligned_only=True),
    Impl("flex", "FlexAttention (torch.compile) on the packed [1, H, T, D] tokens with a block mask of 128 x 128 "
                 "tiles built from the block table (same block, and causal, in its mask_mod)", _all_kinds(_flex)),
]


ROTARY_IMPLS = [
    Impl("ours-fused", "block-attn with fused rotary: block_attention(..., rotary=Rotary(...))",
         _all_kinds(_ours_fused), ours=True),
    Impl("ours-unfused", "a torch.compile'd rotary pass (fp32 math, one rounding), then block-attn without rotary",
         _all_kinds(_ours_unfused)),
    Impl("fa2-rotary", "the same compiled rotary pass, then FA2 varlen (flash_attn if installed, else aten), "
                       "every 64-token block its own sequence", _all_kinds(_fa2_rotary)),
]

# A rotary run's default: the fused, the unfused and FA2 with rotary, and our plain kernel (no rotary)
# on the same tensors, which the fused kernels' cost is measured against.
ROTARY_IMPLS_WITH_PLAIN = [i for i in IMPLS if i.name == "ours"] + ROTARY_IMPLS


def get(name: str) -> Impl:
    for impl in IMPLS + ROTARY_IMPLS:
        if impl.name == name:
            return impl
    known = ", ".join(i.name for i in IMPLS + ROTARY_IMPLS)
    raise ValueError(f"unknown implementation {name!r}; known: {known}")


# --------------------------------------------------------------------------------------------
# Correctness check against float64
# --------------------------------------------------------------------------------------------

CHECK_LENGTHS = (1, 63, 64, 65, 0, 127, 128, 129, 300, 7, 1000, 200)  # partial blocks, an empty sequence
CHECK_LENGTHS_ALIGNED = (64, 128, 192, 640, 64, 1024)
MAX_REL_TOL = 4e-2  # max |x - ref| / max |ref|, per output (bf16 kernels land near 1e-2)
RMS_REL_TOL = 2e-2  # ||x - ref|| / ||ref|| (bf16 kernels land near 6e-3)


def check_lengths(block_size: int, aligned: bool) -> tuple:
    """The check problem's lengths: the block-64 edge cases, and for another block size its own
    (bs - 1, bs, bs + 1, and an aligned problem in whole blocks of it)."""
    if block_size == 64:
        return CHECK_LENGTHS_ALIGNED if aligned else CHECK_LENGTHS
    bs = block_size
    if aligned:
        return tuple(n * bs for n in (1, 2, 3, 10, 1, 16))
    return CHECK_LENGTHS + (bs - 1, bs, bs + 1, 5 * bs + 3)


def check_problem(heads: int, head_dim: int, dtype: torch.dtype, aligned: bool, with_grad: bool,
                  rotary: Optional[RotaryConfig] = None, block_size: int = 64, kv_heads: Optional[int] = None,
                  causal: bool = False) -> Problem:
    lengths = np.array(check_lengths(block_size, aligned), dtype=np.int64)
    w = workloads.Workload("check", lengths, heads, head_dim, dtype, block_size=block_size, kv_heads=kv_heads,
                           causal=causal)
    return Problem.from_workload(w, with_grad, seed=1, rotary=rotary)


def _rotate64(x: torch.Tensor, r: RotaryTensors) -> torch.Tensor:
    """float64 rotation of a float64 [T, H, D] tensor (differentiable)."""
    c = r.cos.double()[r.index][:, None, :]
    s = r.sin.double()[r.index][:, None, :]
    if r.config.interleaved:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).flatten(-2)
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)


def reference(p: Problem, kind: str) -> tuple:
    """float64 outputs of KINDS[kind] on p's (bf16-rounded) inputs: block by block, all blocks batched."""
    bs = p.block_size
    ends = np.cumsum(p.lengths)
    rows = [(r, min(bs, int(e) - r)) for b, e in zip(ends - p.lengths, ends) for r in range(int(b), int(e), bs)]
    starts = torch.tensor([r[0] for r in rows], device=p.q.device)
    counts = torch.tensor([r[1] for r in rows], device=p.q.device)
    cols = torch.arange(bs, device=p.q.device)
    valid = cols[None, :] < counts[:, None]  # [nblocks, bs]
    index = torch.where(valid, starts[:, None] + cols[None, :], 0)
    with torch.enable_grad():
        leaves = [t.detach().double().requires_grad_(kind != "forward") for t in (p.q, p.k, p.v)]
        q, k, v = leaves
        if p.rotary is not None:  # gradients with respect to the un-rotated inputs
            q, k = _rotate64(q, p.rotary), _rotate64(k, p.rotary)
            if p.rotary.config.rotate_v:
                v = _rotate64(v, p.rotary)
        if p.group > 1:  # grouped k/v: query head h reads k/v head h // G; autograd sums dk, dv
            k, v = k.repeat_interleave(p.group, dim=1), v.repeat_interleave(p.group, dim=1)
        Q, K, V = (t[index] for t in (q, k, v))  # [nblocks, bs, H, D]
        S = torch.einsum("bihd,bjhd->bhij", Q, K) * p.scale
        S = S.masked_fill(~valid[:, None, None, :], float("-inf"))
        if p.causal:
            S = S.masked_fill(torch.ones(bs, bs, dtype=torch.bool, device=S.device).triu(1), float("-inf"))
        O = torch.einsum("bhij,bjhd->bihd", torch.softmax(S, dim=-1), V)[valid]  # blocks tile rows in order
        if kind == "forward":
            return (O.detach(),)
        return tuple(torch.autograd.grad(O, leaves, p.do.double()))


def compare(outs: Sequence[torch.Tensor], refs: Sequence[torch.Tensor], names: Sequence[str]) -> tuple[bool, dict]:
    errs, ok = {}, True
    for name, x, r in zip(names, outs, refs):
        if tuple(x.shape) != tuple(r.shape):
            errs[name] = f"shape {tuple(x.shape)}, expected {tuple(r.shape)}"
            ok = False
            continue
        d = x.double() - r
        max_rel = float(d.abs().max() / r.abs().max())
        rms_rel = float(d.norm() / r.norm())
        errs[name] = {"max_rel": max_rel, "rms_rel": rms_rel}
        ok = ok and max_rel <= MAX_REL_TOL and rms_rel <= RMS_REL_TOL  # False for NaN too
    return ok, errs


def check(impl: Impl, kind: str, heads: int, head_dim: int, dtype: torch.dtype,
          rotary: Optional[RotaryConfig] = None, block_size: int = 64, kv_heads: Optional[int] = None,
          causal: bool = False) -> dict:
    """Runs impl on the check problem for every configuration; returns
    {"status": "ok"|"failed"|"skipped", "configs": passing configs, "errors": ..., "reason": ...}."""
    if kind not in impl.factories:
        return {"status": "skipped", "reason": f"no {kind} runner", "configs": []}
    p = check_problem(heads, head_dim, dtype, impl.aligned_only, KINDS[kind].name != "forward", rotary,
                      block_size, kv_heads, causal)
    refs = reference(p, kind)
    passing, errors, wrong, raised = [], {}, [], []
    for c in impl.configs:
        label = "default" if c is None else f"num_warps={c[0]} num_stages={c[1]}"
        runner = None
        try:
            runner = impl.factories[kind](p, [c])
            outs = runner.outputs(runner.fn())
            torch.cuda.synchronize()
            ok, errs = compare(outs, refs, KINDS[kind].outputs)
            errors[label] = errs
            (passing if ok else wrong).append(c if ok else f"{label}: wrong result {errs}")
        except Unavailable as e:
            return {"status": "skipped", "reason": str(e), "configs": []}
        except Exception as e:  # noqa: BLE001 - any failure means: no number from this configuration
            raised.append(f"{label}: {type(e).__name__}: {_first_line(e)}")
        del runner
    del p, refs
    torch.cuda.empty_cache()
    problems = "; ".join(wrong + raised) or None
    if passing:
        return {"status": "ok", "configs": passing, "errors": errors, "reason": problems}
    # A wrong result is a failure; an exception (missing backend, not implemented) a skip.
    return {"status": "failed" if wrong else "skipped", "configs": [], "errors": errors, "reason": problems}


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:300] if text else ""


# --------------------------------------------------------------------------------------------
# Copy bandwidth (the floor's denominator)
# --------------------------------------------------------------------------------------------


def copy_bandwidth(nbytes: int = 4 << 30, warmup: int = 25, rep: int = 100) -> dict:
    """A large device-to-device copy; bandwidth counts bytes read plus bytes written."""
    import triton.testing

    def run() -> float:
        src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").random_()
        dst = torch.empty_like(src)
        return triton.testing.do_bench(lambda: dst.copy_(src), warmup=warmup, rep=rep, return_mode="median")

    ms = run()  # src and dst are freed on return
    torch.cuda.empty_cache()
    return {"bytes_copied": nbytes, "bytes_moved": 2 * nbytes, "ms": ms, "bytes_per_s": 2 * nbytes / (ms * 1e-3)}
