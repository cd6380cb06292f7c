"""Float64 NumPy reference for fixed block-diagonal self-attention.

This module is the oracle that every GPU test of block-attn compares against. It favours
clarity over speed and computes everything in float64.

Conventions (FlashAttention "varlen"):

* ``q``, ``k``, ``v`` have shape ``[T, H, D]`` (tokens, heads, head dim). Any real float
  dtype or array-like is accepted, including torch tensors on any device (they are converted
  with ``np.asarray(x.detach().float().cpu())``).
* ``cu_seqlens`` is an integer array ``[B + 1]`` with ``cu[0] == 0``, non-decreasing and
  ``cu[B] == T``. Sequence ``b`` owns rows ``[cu[b], cu[b+1])``. Empty sequences are legal.
* With block size ``bs``, block ``j`` of sequence ``b`` is rows
  ``cu[b] + j*bs .. min(cu[b] + (j+1)*bs, cu[b+1])``: blocks are aligned to the start of each
  sequence, not to global multiples of ``bs``. The last block of a sequence may be partial.
* Each token attends to every token of its own block and to nothing else (no causal mask):
  per (block, head) ``O = softmax(scale * Q K^T) V`` with an exact softmax. With
  ``causal=True`` token ``i`` of a block attends to tokens ``0..i`` of its block only.
* Grouped-query attention: ``k`` and ``v`` may have ``Hkv`` heads while ``q`` has
  ``Hq = G * Hkv``; query head ``h`` reads key/value head ``h // G`` (consecutive query heads
  share one, as in FlashAttention), and the gradients of k and v sum over the group.
* The log-sum-exp, on request (``return_lse=True``): ``lse[h, t] = log(sum_j exp(scale *
  q_t . k_j))`` over the keys token ``t`` attends to, natural log, float64 ``[Hq, T]``.
  :func:`backward` takes its gradient as ``dlse`` (``dS += P * dlse``).

Rotary position embedding (RoPE) is optional. Tables ``cos``/``sin`` have shape
``[max_position, D/2]``; the pair ``i`` of a token at position ``p`` is rotated by the angle
whose cosine/sine are ``cos[p, i]``/``sin[p, i]``. Two layouts are supported: half-split
("NeoX": pair ``i`` is ``(x[i], x[i + D/2])``) and interleaved ("GPT-J": pair ``i`` is
``(x[2i], x[2i+1])``). When ``rotary`` is passed to :func:`forward`/:func:`backward`, ``q``
and ``k`` (and ``v`` if ``rotate_v``) are *un-rotated* inputs; the functions rotate them
first, and :func:`backward` returns gradients with respect to the un-rotated inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import numpy as np

__all__ = [
    "Rotary",
    "backward",
    "block_mask",
    "block_tiles",
    "check_cu_seqlens",
    "dense_reference",
    "forward",
    "make_cu_seqlens",
    "rope_tables",
    "rotate",
    "rotate_backward",
    "sequence_positions",
]

_REJECTED_FLOAT_KINDS = "bcOSUMmV"


# --------------------------------------------------------------------------------------------
# Conversion helpers
# --------------------------------------------------------------------------------------------


def _to_numpy(x: Any, name: str, *, as_float: bool) -> np.ndarray:
    """Convert ``x`` (numpy array, array-like or torch tensor) to a NumPy array.

    Torch tensors (anything with ``detach``) are detached and moved to the CPU. When
    ``as_float``, tensors other than float64 (and complex, which is rejected later) are first
    converted with ``.float()`` (float32: exact for bf16/fp16/fp32, which NumPy may not
    support natively); float64 tensors are kept in full precision. Meta tensors (shape
    only, no data) and inputs NumPy cannot convert (ragged nesting, integers past 64 bits,
    objects without an array form) raise ``ValueError`` naming ``name``, not whatever the
    conversion raised (``NotImplementedError``, ``OverflowError``, ``TypeError``).
    """
    if hasattr(x, "detach"):
        if getattr(x, "is_meta", False) or str(getattr(x, "device", "")) == "meta":
            raise ValueError(
                f"{name} is a meta tensor (a shape without data); the reference needs its values"
            )
    try:
        if hasattr(x, "detach"):
            t = x.detach()
            dtype = str(getattr(t, "dtype", ""))
            if as_float and dtype != "torch.float64" and "complex" not in dtype:
                t = t.float()
            return np.asarray(t.cpu())
        return np.asarray(x)
    except (TypeError, ValueError, OverflowError, NotImplementedError, RuntimeError) as err:
        raise ValueError(f"{name} cannot be converted to an array: {err}") from err


def _as_float64(x: Any, name: str) -> np.ndarray:
    """Return ``x`` as a float64 array, rejecting non-real or non-numeric inputs."""
    if x is None:
        raise ValueError(f"{name} must be an array, got None")
    arr = _to_numpy(x, name, as_float=True)
    if arr.dtype.kind in _REJECTED_FLOAT_KINDS and not _is_extension_float(arr.dtype):
        raise ValueError(f"{name} must have a real numeric dtype, got {arr.dtype}")
    return arr.astype(np.float64)


def _is_extension_float(dtype: np.dtype) -> bool:
    """True for third-party float dtypes such as ``ml_dtypes.bfloat16`` (numpy kind 'V')."""
    if dtype.kind != "V" or dtype.fields is not None:
        return False
    try:
        np.zeros((), dtype=dtype).astype(np.float64)
    except (TypeError, ValueError):
        return False
    return True


def _as_int_array(x: Any, name: str) -> np.ndarray:
    """Return ``x`` as an int64 array, requiring an integer dtype (no silent truncation)."""
    if x is None:
        raise ValueError(f"{name} must be an integer array, got None")
    arr = _to_numpy(x, name, as_float=False)
    empty_list = arr.size == 0 and arr.dtype.kind == "f"  # np.asarray([]) is float64
    if arr.dtype.kind not in "iu" and not empty_list:
        raise ValueError(f"{name} must have an integer dtype, got {arr.dtype}")
    return arr.astype(np.int64)


_INT64_MAX = int(np.iinfo(np.int64).max)


def _check_int(value: Any, name: str, minimum: int, what: str) -> int:
    """Validate an integer argument in ``[minimum, 2**63 - 1]`` and return it as ``int``.

    Row and position arithmetic is done in int64 NumPy arrays, where a larger Python int
    raises ``OverflowError``; the bound is stated instead.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be {what}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be {what}, got {value}")
    if value > _INT64_MAX:
        raise ValueError(f"{name} must be at most 2**63 - 1, got {value}")
    return int(value)


def _check_block_size(block_size: Any) -> int:
    """Validate ``block_size`` (a positive integer) and return it as ``int``."""
    if isinstance(block_size, (bool, np.bool_)) or not isinstance(block_size, (int, np.integer)):
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
    if block_size <= 0:
        raise ValueError(f"block_size must be positive, got {block_size}")
    return _check_int(block_size, "block_size", 1, "a positive integer")


# --------------------------------------------------------------------------------------------
# Sequences and blocks
# --------------------------------------------------------------------------------------------


def make_cu_seqlens(lengths: Any) -> np.ndarray:
    """Return ``cu_seqlens`` (int32, ``[B + 1]``) for sequence ``lengths`` (``[B]``).

    ``cu[0] = 0`` and ``cu[b + 1] = cu[b] + lengths[b]``; zero lengths are allowed.
    """
    lens = _as_int_array(lengths, "lengths")
    if lens.ndim != 1:
        raise ValueError(f"lengths must be 1-D, got shape {lens.shape}")
    if np.any(lens < 0):
        raise ValueError(f"lengths must be non-negative, got {lens.tolist()}")
    cu = np.zeros(lens.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=cu[1:])
    if cu[-1] > np.iinfo(np.int32).max:
        raise ValueError(f"lengths sum to {cu[-1]}, which overflows int32")
    return cu.astype(np.int32)


def check_cu_seqlens(cu_seqlens: Any, total_tokens: Optional[int] = None) -> np.ndarray:
    """Validate ``cu_seqlens`` and return it as an int64 array.

    Requires a 1-D integer array with at least one entry, ``cu[0] == 0``, non-decreasing
    entries and, when ``total_tokens`` is given, ``cu[-1] == total_tokens``.
    """
    cu = _as_int_array(cu_seqlens, "cu_seqlens")
    if cu.ndim != 1:
        raise ValueError(f"cu_seqlens must be 1-D, got shape {cu.shape}")
    if cu.shape[0] < 1:
        raise ValueError("cu_seqlens must have at least one entry (B + 1 >= 1)")
    if cu[0] != 0:
        raise ValueError(f"cu_seqlens[0] must be 0, got {cu[0]}")
    if np.any(np.diff(cu) < 0):
        raise ValueError(f"cu_seqlens must be non-decreasing, got {cu.tolist()}")
    if total_tokens is not None and cu[-1] != total_tokens:
        raise ValueError(
            f"cu_seqlens[-1] must equal the number of tokens T={total_tokens}, got {cu[-1]}"
        )
    return cu


def block_tiles(cu_seqlens: Any, block_size: int) -> List[Tuple[int, int]]:
    """Return the blocks as ``(row_start, n_valid)`` pairs, sequence-major, in order.

    Sequence ``b`` of length ``L`` contributes ``ceil(L / block_size)`` blocks; block ``j``
    starts at row ``cu[b] + j * block_size`` and holds ``min(block_size, L - j * block_size)``
    valid rows. Empty sequences contribute no block.
    """
    bs = _check_block_size(block_size)
    cu = check_cu_seqlens(cu_seqlens)
    tiles: List[Tuple[int, int]] = []
    for start, end in zip(cu[:-1].tolist(), cu[1:].tolist()):
        for row in range(start, end, bs):
            tiles.append((row, min(bs, end - row)))
    return tiles


def sequence_positions(cu_seqlens: Any) -> np.ndarray:
    """Return each token's index inside its own sequence (int64, ``[T]``)."""
    cu = check_cu_seqlens(cu_seqlens)
    lengths = np.diff(cu)
    starts = np.repeat(cu[:-1], lengths)
    return np.arange(int(cu[-1]), dtype=np.int64) - starts


def block_mask(cu_seqlens: Any, block_size: int) -> np.ndarray:
    """Return the dense ``[T, T]`` boolean mask: ``mask[i, j]`` iff i and j share a block.

    Built independently of :func:`block_tiles` (from per-token sequence and block ids), so the
    dense reference can cross-check the blocked one.
    """
    bs = _check_block_size(block_size)
    cu = check_cu_seqlens(cu_seqlens)
    total = int(cu[-1])
    rows = np.arange(total)
    seq_id = np.searchsorted(cu, rows, side="right") - 1
    blk_id = (rows - cu[seq_id]) // bs
    same_seq = seq_id[:, None] == seq_id[None, :]
    same_blk = blk_id[:, None] == blk_id[None, :]
    return same_seq & same_blk


# --------------------------------------------------------------------------------------------
# Rotary position embedding
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Rotary:
    """Rotary embedding options for :func:`forward`, :func:`backward`, :func:`dense_reference`.

    This is also ``blockattn.Rotary``, the ``rotary=`` argument of
    ``blockattn.block_attention``: one object serves the kernels and this reference. The
    kernels need torch tables (fp32, on q's device) and int32 torch positions. Instances
    compare by identity (their fields are arrays).

    Attributes:
        cos, sin: tables ``[max_position, D/2]`` (fp32 or fp64, numpy or torch).
        interleaved: False for the half-split ("NeoX") layout, True for "GPT-J" pairs.
        positions: optional int array ``[T]``; default is each token's index in its sequence.
        rotate_v: also rotate ``v`` (as the TLX kernel does). The output is then ``P @ R v``
            and is *not* un-rotated; ``dv`` gets the transposed rotation.
    """

    cos: Any
    sin: Any
    interleaved: bool = False
    positions: Any = None
    rotate_v: bool = False


def rope_tables(max_position: int, dim: int, base: float = 10000.0) -> Tuple[np.ndarray, ...]:
    """Return standard RoPE ``(cos, sin)`` tables ``[max_position, dim/2]`` in float64.

    Pair ``i`` at position ``p`` has angle ``p * base ** (-2 i / dim)``.
    """
    dim = _check_int(dim, "dim", 1, "a positive even integer")
    if dim % 2:
        raise ValueError(f"dim must be a positive even integer, got {dim}")
    max_position = _check_int(max_position, "max_position", 0, "a non-negative integer")
    if isinstance(base, (str, bytes, bool, np.bool_)):
        raise ValueError(f"base must be a positive real number, got {base!r}")
    try:
        base = float(base)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"base must be a positive real number, got {base!r}") from None
    if not math.isfinite(base) or base <= 0:
        raise ValueError(f"base must be a positive finite real number, got {base}")
    inv_freq = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    angles = np.arange(max_position, dtype=np.float64)[:, None] * inv_freq[None, :]
    return np.cos(angles), np.sin(angles)


def _check_tables(cos: Any, sin: Any, head_dim: int) -> Tuple[np.ndarray, np.ndarray]:
    """Validate the cos/sin tables against the head dim and return them as float64."""
    if head_dim % 2:
        raise ValueError(f"rotary needs an even head dim D, got D={head_dim}")
    c = _as_float64(cos, "cos")
    s = _as_float64(sin, "sin")
    want = head_dim // 2
    for name, table in (("cos", c), ("sin", s)):
        if table.ndim != 2 or table.shape[1] != want:
            raise ValueError(
                f"{name} table must have shape [max_position, D/2={want}], got {table.shape}"
            )
    if c.shape != s.shape:
        raise ValueError(f"cos and sin tables differ in shape: {c.shape} vs {s.shape}")
    return c, s


def _resolve_positions(
    positions: Any, cu_seqlens: Any, num_tokens: int, table_len: int
) -> np.ndarray:
    """Return per-token positions ``[T]``, explicit or derived from ``cu_seqlens``."""
    if positions is not None:
        pos = _as_int_array(positions, "positions")
        if pos.shape != (num_tokens,):
            raise ValueError(f"positions must have shape [T={num_tokens}], got {pos.shape}")
        source = "positions"
    elif cu_seqlens is not None:
        pos = sequence_positions(check_cu_seqlens(cu_seqlens, num_tokens))
        source = "positions (derived from cu_seqlens)"
    else:
        raise ValueError("rotate needs either positions or cu_seqlens to place tokens")
    if pos.size and pos.min() < 0:
        raise ValueError(f"{source} must be non-negative, got min {pos.min()}")
    if pos.size and pos.max() >= table_len:
        raise ValueError(
            f"{source} reach {pos.max()} but the cos/sin tables have only {table_len} rows"
        )
    return pos


def _split_pairs(x: np.ndarray, interleaved: bool) -> Tuple[np.ndarray, np.ndarray]:
    """Return the (first, second) element of every rotation pair, each ``[..., D/2]``."""
    if interleaved:
        return x[..., 0::2], x[..., 1::2]
    half = x.shape[-1] // 2
    return x[..., :half], x[..., half:]


def _merge_pairs(a: np.ndarray, b: np.ndarray, interleaved: bool) -> np.ndarray:
    """Inverse of :func:`_split_pairs`."""
    if interleaved:
        out = np.empty(a.shape[:-1] + (2 * a.shape[-1],), dtype=np.float64)
        out[..., 0::2] = a
        out[..., 1::2] = b
        return out
    return np.concatenate([a, b], axis=-1)


def _apply_rotation(
    x: Any,
    cos: Any,
    sin: Any,
    sign: float,
    interleaved: bool,
    positions: Any,
    cu_seqlens: Any,
) -> np.ndarray:
    """Rotate pairs of ``x`` by ``(cos, sign * sin)`` gathered at each token's position."""
    arr = _as_float64(x, "x")
    if arr.ndim < 2:
        raise ValueError(f"x must be [T, ..., D] with at least 2 dims, got shape {arr.shape}")
    c, s = _check_tables(cos, sin, arr.shape[-1])
    pos = _resolve_positions(positions, cu_seqlens, arr.shape[0], c.shape[0])
    bshape = (arr.shape[0],) + (1,) * (arr.ndim - 2) + (c.shape[1],)
    c_tok = c[pos].reshape(bshape)
    s_tok = sign * s[pos].reshape(bshape)
    x1, x2 = _split_pairs(arr, interleaved)
    return _merge_pairs(x1 * c_tok - x2 * s_tok, x2 * c_tok + x1 * s_tok, interleaved)


def rotate(
    x: Any,
    cos: Any,
    sin: Any,
    *,
    interleaved: bool = False,
    positions: Any = None,
    cu_seqlens: Any = None,
) -> np.ndarray:
    """Apply rotary embedding to ``x`` (``[T, D]`` or ``[T, H, D]``; same angle for all heads).

    For each pair ``(x1, x2)`` of a token at position ``p`` and pair index ``i``:
    ``(x1 * cos[p, i] - x2 * sin[p, i], x2 * cos[p, i] + x1 * sin[p, i])``.
    Half-split pairs are ``(x[i], x[i + D/2])``; interleaved pairs are ``(x[2i], x[2i+1])``.
    The position is ``positions[t]`` if given, else the token's index inside its sequence
    (from ``cu_seqlens``).
    """
    return _apply_rotation(x, cos, sin, 1.0, interleaved, positions, cu_seqlens)


def rotate_backward(
    dx: Any,
    cos: Any,
    sin: Any,
    *,
    interleaved: bool = False,
    positions: Any = None,
    cu_seqlens: Any = None,
) -> np.ndarray:
    """Apply the transpose of :func:`rotate` (rotation by the negated angle) to ``dx``.

    This maps a gradient with respect to the rotated tensor to the gradient with respect to
    the un-rotated one. For unit tables (``cos^2 + sin^2 = 1``) it is also the inverse.
    """
    return _apply_rotation(dx, cos, sin, -1.0, interleaved, positions, cu_seqlens)


def _rotary_kwargs(rotary: Rotary, cu_seqlens: np.ndarray) -> dict:
    """Keyword arguments for :func:`rotate` taken from a :class:`Rotary`."""
    if not isinstance(rotary, Rotary):
        raise ValueError(f"rotary must be a Rotary instance or None, got {type(rotary)}")
    return dict(
        interleaved=bool(rotary.interleaved),
        positions=rotary.positions,
        cu_seqlens=cu_seqlens,
    )


# --------------------------------------------------------------------------------------------
# Blocked attention
# --------------------------------------------------------------------------------------------


def _check_qkv(q: Any, k: Any, v: Any) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Convert q, k, v to float64 and check their shapes: q ``[T, Hq, D]``, k and v
    ``[T, Hkv, D]`` with ``Hq`` a multiple of ``Hkv`` (``Hkv == Hq`` without grouping)."""
    arrays = []
    for name, x in (("q", q), ("k", k), ("v", v)):
        arr = _as_float64(x, name)
        if arr.ndim != 3:
            raise ValueError(f"{name} must be 3-D [T, H, D], got shape {arr.shape}")
        arrays.append(arr)
    qa, ka, va = arrays
    if qa.shape[2] == 0:
        raise ValueError(f"q must have a positive head dim D, got shape {qa.shape}")
    if ka.shape[0] != qa.shape[0] or ka.shape[2] != qa.shape[2]:
        raise ValueError(
            f"k shape {ka.shape} does not match q shape {qa.shape} in tokens or head dim"
        )
    if va.shape != ka.shape:
        raise ValueError(f"v shape {va.shape} does not match k shape {ka.shape}")
    if ka.shape[1] == 0 and qa.shape[1] != 0:
        raise ValueError(f"k must have at least one head for q's {qa.shape[1]}, got shape {ka.shape}")
    if ka.shape[1] and qa.shape[1] % ka.shape[1]:
        raise ValueError(
            f"q's {qa.shape[1]} heads must be a multiple of k's and v's {ka.shape[1]} heads "
            "(grouped-query attention: Hq = G * Hkv)"
        )
    return qa, ka, va


def _check_flag(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool, got {value!r}")
    return bool(value)


def _group(qa: np.ndarray, ka: np.ndarray) -> int:
    """Query heads per key/value head (G)."""
    return qa.shape[1] // ka.shape[1] if ka.shape[1] else 1


def _expand_heads(x: np.ndarray, group: int) -> np.ndarray:
    """``[n, Hkv, D]`` -> ``[n, Hq, D]``: query head ``h`` gets key/value head ``h // G``."""
    return np.repeat(x, group, axis=1) if group > 1 else x


def _sum_groups(x: np.ndarray, group: int) -> np.ndarray:
    """``[n, Hq, D]`` -> ``[n, Hkv, D]``: the sum over each group's query heads."""
    if group == 1:
        return x
    n, hq, d = x.shape
    return x.reshape(n, hq // group, group, d).sum(axis=2)


def _resolve_scale(softmax_scale: Any, head_dim: int) -> float:
    """Return ``softmax_scale`` as a float, defaulting to ``1/sqrt(D)``."""
    if softmax_scale is None:
        return 1.0 / math.sqrt(head_dim)
    if isinstance(softmax_scale, (str, bytes)):
        raise ValueError(f"softmax_scale must be a real number, got {softmax_scale!r}")
    try:
        scale = float(softmax_scale)
    except (TypeError, ValueError):
        raise ValueError(f"softmax_scale must be a real number, got {softmax_scale!r}")
    if not math.isfinite(scale):
        raise ValueError(f"softmax_scale must be finite, got {scale}")
    return scale


def _prepare(q, k, v, cu_seqlens, block_size, softmax_scale, rotary):
    """Validate all inputs; return rotated (q, k, v), cu (int64), block size, scale."""
    qa, ka, va = _check_qkv(q, k, v)
    cu = check_cu_seqlens(cu_seqlens, qa.shape[0])
    bs = _check_block_size(block_size)
    scale = _resolve_scale(softmax_scale, qa.shape[2])
    if rotary is not None:
        kw = _rotary_kwargs(rotary, cu)
        qa = rotate(qa, rotary.cos, rotary.sin, **kw)
        ka = rotate(ka, rotary.cos, rotary.sin, **kw)
        if rotary.rotate_v:
            va = rotate(va, rotary.cos, rotary.sin, **kw)
    return qa, ka, va, cu, bs, scale


def _softmax_rows(s: np.ndarray) -> np.ndarray:
    """Exact softmax over the last axis (max-subtracted for stability; -inf entries are 0)."""
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _logsumexp_rows(s: np.ndarray) -> np.ndarray:
    """``log(sum(exp(s)))`` over the last axis, stably (every row has a finite entry)."""
    m = s.max(axis=-1)
    return m + np.log(np.exp(s - m[..., None]).sum(axis=-1))


def _block_logits(qb: np.ndarray, kb: np.ndarray, scale: float, causal: bool) -> np.ndarray:
    """``S = scale * Q K^T`` for one block: q/k ``[n, H, D]`` -> ``[H, n, n]``; with
    ``causal``, ``-inf`` above the diagonal (token i sees 0..i of its block)."""
    s = scale * np.einsum("ihd,jhd->hij", qb, kb)
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    return s


def _block_probs(qb: np.ndarray, kb: np.ndarray, scale: float, causal: bool = False) -> np.ndarray:
    """``P = softmax(S)`` for one block (:func:`_block_logits`) -> ``[H, n, n]``."""
    return _softmax_rows(_block_logits(qb, kb, scale, causal))


def forward(
    q: Any,
    k: Any,
    v: Any,
    cu_seqlens: Any,
    *,
    block_size: int = 64,
    softmax_scale: Optional[float] = None,
    rotary: Optional[Rotary] = None,
    causal: bool = False,
    return_lse: bool = False,
):
    """Block-diagonal attention forward; returns ``o`` ``[T, Hq, D]`` in float64, and with
    ``return_lse`` the pair ``(o, lse)``, ``lse`` float64 ``[Hq, T]`` (natural log).

    For every block of :func:`block_tiles` and every head:
    ``O = softmax(softmax_scale * Q K^T) V`` over the block's valid rows only (with
    ``causal``, row ``i`` over keys ``0..i``). ``softmax_scale`` defaults to ``1/sqrt(D)``.
    k and v may have fewer heads than q (grouped-query attention, see the module notes).
    With ``rotary``, q and k (and v if ``rotary.rotate_v``) are rotated before the attention.
    """
    causal = _check_flag(causal, "causal")
    return_lse = _check_flag(return_lse, "return_lse")
    qa, ka, va, cu, bs, scale = _prepare(q, k, v, cu_seqlens, block_size, softmax_scale, rotary)
    group = _group(qa, ka)
    out = np.zeros_like(qa)
    lse = np.zeros((qa.shape[1], qa.shape[0]))
    for row, n in block_tiles(cu, bs):
        rows = slice(row, row + n)
        s = _block_logits(qa[rows], _expand_heads(ka[rows], group), scale, causal)
        out[rows] = np.einsum("hij,jhd->ihd", _softmax_rows(s), _expand_heads(va[rows], group))
        lse[:, rows] = _logsumexp_rows(s)
    return (out, lse) if return_lse else out


def _block_backward(qb, kb, vb, dob, scale, causal=False, dlseb=None):
    """Gradients of one block (all query heads) w.r.t. its (already rotated) q, k, v;
    k and v already expanded to the query heads. ``dlseb`` is ``[H, n]`` or None."""
    p = _block_probs(qb, kb, scale, causal)  # [H, n, n], 0 where masked
    dp = np.einsum("ihd,jhd->hij", dob, vb)  # dP = dO V^T
    di = np.sum(p * dp, axis=-1, keepdims=True)  # Di = rowsum(P * dP) = rowsum(dO * O)
    ds = p * (dp - di)  # dS = P * (dP - Di)
    if dlseb is not None:
        ds = ds + p * dlseb[:, :, None]  # d lse_i / d S_ij = P_ij
    dv = np.einsum("hij,ihd->jhd", p, dob)  # dV = P^T dO
    dk = scale * np.einsum("hij,ihd->jhd", ds, qb)  # dK = scale dS^T Q
    dq = scale * np.einsum("hij,jhd->ihd", ds, kb)  # dQ = scale dS K
    return dq, dk, dv


def backward(
    q: Any,
    k: Any,
    v: Any,
    do: Any,
    cu_seqlens: Any,
    *,
    block_size: int = 64,
    softmax_scale: Optional[float] = None,
    rotary: Optional[Rotary] = None,
    causal: bool = False,
    dlse: Any = None,
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Block-diagonal attention backward; returns ``(dq, dk, dv)`` in float64, dk and dv of
    k's shape (summed over each group's query heads under grouped-query attention).

    Recomputes ``S`` and ``P`` per block (``O`` is never needed), then
    ``dP = dO V^T``, ``Di = rowsum(P * dP)``, ``dS = P * (dP - Di)``, ``dV = P^T dO``,
    ``dK = scale * dS^T Q``, ``dQ = scale * dS K``. ``dlse`` (``[Hq, T]``, optional) is the
    gradient of the ``lse`` that :func:`forward` returns with ``return_lse``; it adds
    ``P * dlse`` to ``dS``. With ``rotary`` the gradients are with respect to the
    *un-rotated* inputs: the transposed rotation is applied to dq, dk (and dv if
    ``rotary.rotate_v``).
    """
    causal = _check_flag(causal, "causal")
    qa, ka, va, cu, bs, scale = _prepare(q, k, v, cu_seqlens, block_size, softmax_scale, rotary)
    doa = _as_float64(do, "do")
    if doa.shape != qa.shape:
        raise ValueError(f"do shape {doa.shape} does not match q shape {qa.shape}")
    dlsea = None
    if dlse is not None:
        dlsea = _as_float64(dlse, "dlse")
        if dlsea.shape != (qa.shape[1], qa.shape[0]):
            raise ValueError(
                f"dlse shape {dlsea.shape} must be [Hq, T] = {(qa.shape[1], qa.shape[0])}"
            )
    group = _group(qa, ka)
    dq, dk, dv = np.zeros_like(qa), np.zeros_like(ka), np.zeros_like(va)
    for row, n in block_tiles(cu, bs):
        rows = slice(row, row + n)
        dqb, dkb, dvb = _block_backward(
            qa[rows], _expand_heads(ka[rows], group), _expand_heads(va[rows], group),
            doa[rows], scale, causal, None if dlsea is None else dlsea[:, rows],
        )
        dq[rows], dk[rows], dv[rows] = dqb, _sum_groups(dkb, group), _sum_groups(dvb, group)
    if rotary is not None:
        kw = _rotary_kwargs(rotary, cu)
        dq = rotate_backward(dq, rotary.cos, rotary.sin, **kw)
        dk = rotate_backward(dk, rotary.cos, rotary.sin, **kw)
        if rotary.rotate_v:
            dv = rotate_backward(dv, rotary.cos, rotary.sin, **kw)
    return dq, dk, dv


# --------------------------------------------------------------------------------------------
# Independent dense cross-check
# --------------------------------------------------------------------------------------------


def _rotate_complex(x: np.ndarray, rotary: Rotary, cu: np.ndarray) -> np.ndarray:
    """RoPE via complex multiplication, independent of :func:`rotate`'s real arithmetic."""
    c, s = _check_tables(rotary.cos, rotary.sin, x.shape[-1])
    pos = _resolve_positions(rotary.positions, cu, x.shape[0], c.shape[0])
    w = (c + 1j * s)[pos][:, None, :]  # [T, 1, D/2]
    half = x.shape[-1] // 2
    if rotary.interleaved:
        z = x[..., 0::2] + 1j * x[..., 1::2]
    else:
        z = x[..., :half] + 1j * x[..., half:]
    z = z * w
    out = np.empty_like(x)
    if rotary.interleaved:
        out[..., 0::2], out[..., 1::2] = z.real, z.imag
    else:
        out[..., :half], out[..., half:] = z.real, z.imag
    return out


def dense_reference(
    q: Any,
    k: Any,
    v: Any,
    cu_seqlens: Any,
    *,
    block_size: int = 64,
    softmax_scale: Optional[float] = None,
    rotary: Optional[Rotary] = None,
    causal: bool = False,
    return_lse: bool = False,
):
    """Dense masked-softmax attention over the full ``[T, T]`` block mask (small T only).

    Mathematically equal to :func:`forward` but shares none of its blocking code: the mask
    comes from :func:`block_mask` (and, with ``causal``, the token order: within a block,
    key ``j`` is visible to query ``i`` iff ``j <= i``), rotary is applied with complex
    arithmetic, and grouped heads are indexed, not repeated.
    """
    causal = _check_flag(causal, "causal")
    return_lse = _check_flag(return_lse, "return_lse")
    qa, ka, va = _check_qkv(q, k, v)
    total, heads, dim = qa.shape
    cu = check_cu_seqlens(cu_seqlens, total)
    scale = _resolve_scale(softmax_scale, dim)
    mask = block_mask(cu, block_size)
    if causal:
        mask = mask & (np.arange(total)[None, :] <= np.arange(total)[:, None])
    if rotary is not None:
        _rotary_kwargs(rotary, cu)  # type check only
        qa, ka = _rotate_complex(qa, rotary, cu), _rotate_complex(ka, rotary, cu)
        if rotary.rotate_v:
            va = _rotate_complex(va, rotary, cu)
    out = np.zeros_like(qa)
    lse = np.zeros((heads, total))
    group = heads // ka.shape[1] if ka.shape[1] else 1
    for h in range(heads if total else 0):
        s = scale * (qa[:, h, :] @ ka[:, h // group, :].T)
        s = np.where(mask, s, -np.inf)
        out[:, h, :] = _softmax_rows(s) @ va[:, h // group, :]
        lse[h] = _logsumexp_rows(s)
    return (out, lse) if return_lse else out
