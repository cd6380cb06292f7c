"""``blockattn.nn``: the attention layer as a ranking model writes it.

``BlockAttention(embed_dim, num_heads)`` is one qkv projection, the packed
block-diagonal attention with fused rotary embeddings
(:func:`blockattn.block_attention_qkvpacked`, whose backward writes one
packed gradient), and an output projection. With ``num_kv_heads`` below
``num_heads`` (grouped-query attention) the one projection makes q's heads
and fewer k and v heads (``block_attention_qkvpacked(num_heads_q=)``).
"""

from __future__ import annotations

import torch

from . import api
from .api import SUPPORTED_BLOCK_SIZES, SUPPORTED_HEAD_DIMS, block_attention_qkvpacked
from .reference import Rotary, rope_tables

__all__ = ["BlockAttention"]

_ROTARY_MODES = ("half_split", "interleaved")


class BlockAttention(torch.nn.Module):
    """Fixed block-diagonal self-attention over packed jagged sequences.

    ``forward(x, cu_seqlens)``: ``x`` is ``[T, embed_dim]`` (the tokens of
    every sequence, packed), ``cu_seqlens`` the int32 offsets ``[B+1]``;
    returns ``[T, embed_dim]``. Every sequence is cut into blocks of
    ``block_size`` tokens and each token attends to its block only
    (:func:`blockattn.block_attention`), or with ``causal`` to the tokens
    of its block up to itself.

    Args:
        embed_dim: model width E; ``E / num_heads`` is the head dim (32, 64,
            96, 128, 192 or 256: ``blockattn.api.SUPPORTED_HEAD_DIMS``).
        num_heads: H.
        num_kv_heads: Hkv, the heads of k and v (default H); H a multiple of
            it (grouped-query attention: each group of H / Hkv consecutive
            query heads shares one k/v head; 1 is multi-query attention).
            The projection then makes ``(H + 2 Hkv) * head_dim`` features: q,
            then k and v (``block_attention_qkvpacked(num_heads_q=H)``).
        block_size: tokens per block: 16, 32, 64 or 128 (default 64;
            ``blockattn.api.SUPPORTED_BLOCK_SIZES``).
        causal: token i of a block attends to tokens 0..i of its block
            (default False: to the whole block).
        rotary: None (no position embedding), ``"half_split"`` or
            ``"interleaved"`` (RoPE tables of ``max_position`` rows with base
            ``rotary_base``, kept as fp32 buffers; a token's position is its
            index in its sequence), or a :class:`blockattn.Rotary` whose
            tables (and ``interleaved``, ``rotate_v``) are used as given
            (its ``positions`` must be None). The rotation is fused into the
            attention kernels.
        bias: whether the projections have biases.
        max_position, rotary_base: the tables of a named rotary mode.
        check_inputs: check the values of ``cu_seqlens`` (and that the
            longest sequence fits the rotary tables) as the attention does:
            a device-to-host copy the first time a cu_seqlens tensor (or
            version of it) is seen, made before the projection is launched;
            skipped under torch.compile, and under CUDA graph capture for a
            tensor not checked before. The attribute of the same name can be
            changed later.
        device, dtype: of the parameters (bf16 or fp16 for the kernels;
            under autocast the projections produce them).

    The layer works under ``torch.compile(fullgraph=True)`` and in CUDA graphs (tested
    without ``causal`` and grouping).
    """

    def __init__(self, embed_dim: int, num_heads: int, *, block_size: int = 64, rotary=None, bias: bool = True,
                 max_position: int = 8192, rotary_base: float = 10000.0, check_inputs: bool = True,
                 causal: bool = False, num_kv_heads: int | None = None, device=None, dtype=None):
        super().__init__()
        self.check_inputs = bool(check_inputs)
        self.causal = api._check_flag("causal", causal)
        if num_kv_heads is None:
            num_kv_heads = num_heads
        for name, value in (("embed_dim", embed_dim), ("num_heads", num_heads),
                            ("num_kv_heads", num_kv_heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: expected a positive int, got {value!r}")
        if embed_dim % num_heads:
            raise ValueError(f"num_heads: {num_heads} does not divide embed_dim {embed_dim}")
        head_dim = embed_dim // num_heads
        if head_dim not in SUPPORTED_HEAD_DIMS:
            raise ValueError(
                f"num_heads: embed_dim / num_heads = {head_dim} is not a supported head dim "
                f"({', '.join(map(str, SUPPORTED_HEAD_DIMS))})"
            )
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, head_dim
        if num_heads % num_kv_heads:
            raise ValueError(f"num_kv_heads: {num_kv_heads} does not divide num_heads {num_heads}")
        self.num_kv_heads = num_kv_heads
        if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size not in SUPPORTED_BLOCK_SIZES:
            raise ValueError(
                f"block_size: {block_size!r} is not supported; supported block sizes: "
                f"{', '.join(map(str, SUPPORTED_BLOCK_SIZES))}"
            )
        self.block_size = block_size
        factory = {"device": device, "dtype": dtype}
        projected = (num_heads + 2 * num_kv_heads) * head_dim
        self.qkv = torch.nn.Linear(embed_dim, projected, bias=bias, **factory)
        self.out_proj = torch.nn.Linear(embed_dim, embed_dim, bias=bias, **factory)

        self.interleaved = False
        self.rotate_v = False
        self.rotary_mode = None
        if rotary is None:
            return
        if isinstance(rotary, str):
            if rotary not in _ROTARY_MODES:
                raise ValueError(
                    f"rotary: expected None, a blockattn.Rotary or one of {', '.join(_ROTARY_MODES)}, "
                    f"got {rotary!r}"
                )
            cos, sin = (torch.tensor(t, dtype=torch.float32, device=device)
                        for t in rope_tables(max_position, head_dim, rotary_base))
            self.interleaved = rotary == "interleaved"
        elif isinstance(rotary, Rotary):
            if rotary.positions is not None:
                raise ValueError("rotary: the layer's Rotary must have positions=None "
                                 "(positions come from cu_seqlens)")
            cos, sin = (torch.as_tensor(t, dtype=torch.float32, device=device).detach()
                        for t in (rotary.cos, rotary.sin))
            if cos.dim() != 2 or cos.shape[1] != head_dim // 2 or sin.shape != cos.shape:
                raise ValueError(
                    f"rotary: expected cos and sin tables [max_position, {head_dim // 2}], got "
                    f"{tuple(cos.shape)} and {tuple(sin.shape)}"
                )
            self.interleaved, self.rotate_v = bool(rotary.interleaved), bool(rotary.rotate_v)
        else:
            raise ValueError(
                f"rotary: expected None, a blockattn.Rotary or one of {', '.join(_ROTARY_MODES)}, "
                f"got {type(rotary).__name__}"
            )
        self.rotary_mode = "interleaved" if self.interleaved else "half_split"
        self.register_buffer("rotary_cos", cos.contiguous(), persistent=False)
        self.register_buffer("rotary_sin", sin.contiguous(), persistent=False)

    def forward(self, x: torch.Tensor, cu_seqlens: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor) or x.dim() != 2 or x.shape[1] != self.embed_dim:
            shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"x: expected a [tokens, {self.embed_dim}] tensor, got {shape}")
        if not x.is_cuda:
            raise ValueError(f"x: expected a CUDA tensor, got one on {x.device}")
        tokens = x.shape[0]
        # The values of cu_seqlens are checked here, before the projection is
        # launched: the check copies them to the host, which waits for the
        # GPU; done after the projection, it would leave the GPU idle until
        # the attention kernel is launched.
        # (Once per cu_seqlens tensor and version: see api._CHECKED_CU.)
        if self.check_inputs and not torch.compiler.is_compiling():
            api._check_cu_seqlens(cu_seqlens, x, check_values=False)
            cu_values, longest = api._checked_cu_values(cu_seqlens, tokens)
            if cu_values is not None and self.rotary_mode is not None:
                api._check_sequence_positions(cu_values, self.rotary_cos.shape[0], longest)
        rotary = None
        if self.rotary_mode is not None:
            rotary = Rotary(self.rotary_cos, self.rotary_sin, interleaved=self.interleaved,
                            rotate_v=self.rotate_v)
        projected = self.qkv(x)
        if self.num_kv_heads == self.num_heads:
            qkv = projected.view(tokens, 3, self.num_heads, self.head_dim)
            num_heads_q = None
        else:
            # q's heads, then k's, then v's: the grouped layout of
            # block_attention_qkvpacked, read in place.
            qkv = projected.view(tokens, self.num_heads + 2 * self.num_kv_heads, self.head_dim)
            num_heads_q = self.num_heads
        o = block_attention_qkvpacked(qkv, cu_seqlens, block_size=self.block_size, rotary=rotary,
                                      check_inputs=False, causal=self.causal,
                                      num_heads_q=num_heads_q)
        return self.out_proj(o.reshape(tokens, self.embed_dim))

    def extra_repr(self) -> str:
        block = "" if self.block_size == 64 else f", block_size={self.block_size}"
        causal = ", causal=True" if self.causal else ""
        kv = "" if self.num_kv_heads == self.num_heads else f", num_kv_heads={self.num_kv_heads}"
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}{kv}{block}, "
                f"rotary={self.rotary_mode}, rotate_v={self.rotate_v}{causal}")
