"""``blockattn.block_attention``: the PyTorch entry point.

Conventions follow FlashAttention's varlen API: ``q``, ``k``, ``v`` are
``[T, H, D]`` (total tokens, heads, head dim) tensors of packed sequences,
``cu_seqlens`` the int32 offsets ``[B+1]`` of the sequences. Every sequence is
cut into blocks of ``block_size`` tokens from its first token (the last block
may be partial) and each token attends to the tokens of its block only.

With ``rotary=blockattn.Rotary(cos, sin, ...)`` the kernels apply rotary
position embeddings (RoPE) to q and k (and v with ``rotate_v``) in fp32 after
loading them, and the backward kernel returns gradients with respect to the
un-rotated inputs: callers pass un-rotated tensors.
"""

from __future__ import annotations

import math
import struct
import weakref
from typing import Optional

import torch

from . import _driver, _kernels
from .reference import Rotary

__all__ = [
    "Rotary", "block_attention", "block_attention_qkvpacked", "block_attention_kvpacked",
    "forward", "backward",
]

# The compiler's limits, from their one Python copy (_kernels.py).
SUPPORTED_HEAD_DIMS = _kernels.HEAD_DIMS
SUPPORTED_BLOCK_SIZES = _kernels.BLOCK_SIZES
_DTYPE_NAMES = {torch.bfloat16: "bf16", torch.float16: "f16"}


def _check_activation(name: str, t, ref: torch.Tensor | None, eager: bool | None = None, group: int = 1) -> None:
    """Checks an activation tensor (and that it matches `ref`, q, with a
    `group`-th of its heads: grouped-query attention's k and v). `eager` is
    ``not torch.compiler.is_compiling()`` if the caller has it. Each property
    is read once: block_attention runs this three times per call."""
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    shape = t.shape
    if len(shape) != 3:
        raise ValueError(f"{name}: expected a [tokens, heads, head_dim] tensor, got shape {tuple(shape)}")
    if not t.is_cuda:
        raise ValueError(f"{name}: expected a CUDA tensor, got one on {t.device}")
    dtype = t.dtype
    if dtype not in _DTYPE_NAMES:
        raise ValueError(f"{name}: expected dtype torch.bfloat16 or torch.float16, got {dtype}")
    if shape[2] not in SUPPORTED_HEAD_DIMS:
        raise ValueError(
            f"{name}: head_dim {shape[2]} is not supported; supported head dims: "
            f"{', '.join(map(str, SUPPORTED_HEAD_DIMS))}"
        )
    s0, s1, s2 = t.stride()
    if s2 != 1:
        raise ValueError(f"{name}: the head_dim dimension must be contiguous (stride 1), got stride {s2}")
    # Both dtypes have 2-byte elements: 16-byte aligned strides are multiples of 8.
    if eager is None:
        eager = not torch.compiler.is_compiling()
    # Under torch.compile the tensors are fake and have no address; the eager
    # call checks it.
    if s0 % 8 or s1 % 8 or (eager and t.data_ptr() % 16):
        raise ValueError(
            f"{name}: the tensor-memory accelerator needs 16-byte aligned data and token/head "
            f"strides; got strides {t.stride()} and address {t.data_ptr():#x}"
        )
    if ref is not None:
        if group > 1:
            expected = (ref.shape[0], ref.shape[1] // group, ref.shape[2])
            if tuple(shape) != expected:
                raise ValueError(
                    f"{name}: shape {tuple(shape)}, but q's {tuple(ref.shape)} with {group} query heads "
                    f"per k/v head (grouped-query attention) needs {expected}"
                )
        elif shape != ref.shape:
            raise ValueError(f"{name}: shape {tuple(shape)} differs from q's {tuple(ref.shape)}")
        if dtype != ref.dtype:
            raise ValueError(f"{name}: dtype {dtype} differs from q's {ref.dtype}")
        if t.device != ref.device:
            raise ValueError(f"{name}: on {t.device}, but q is on {ref.device}")


def _query_group(q: torch.Tensor, k) -> int:
    """Query heads per k/v head, implied by the shapes (grouped-query
    attention: q ``[T, Hq, D]``, k and v ``[T, Hkv, D]``, ``Hq = G * Hkv``);
    1 when k is not a 3-D tensor (its own check says why)."""
    if not isinstance(k, torch.Tensor) or k.dim() != 3 or k.shape[1] == q.shape[1]:
        return 1
    hq, hkv = q.shape[1], k.shape[1]
    if hkv == 0 or hq % hkv:
        raise ValueError(
            f"k: {hkv} heads, but q has {hq}: grouped-query attention needs q's heads to be a "
            f"multiple of k's and v's"
        )
    return hq // hkv


# The values of the cu_seqlens (and rotary positions) tensors already checked,
# by tensor: id -> (weak reference, version, address, tokens, host values,
# longest sequence) (for positions: id -> (weak reference, version, address,
# (low, high))). A training loop passes one cu_seqlens tensor to every layer
# and a benchmark the same one to every call: the device-to-host copy (a
# synchronization with the GPU) is paid once per tensor, not once per call.
# The entry is valid while the tensor object is alive, at the same address,
# and its version counter (bumped by every in-place write through torch,
# views included) has not moved; writes that bypass torch's version counter
# (``.data``, DLPack consumers, a foreign kernel) are not seen.
_CHECKED_CU: dict = {}
_CHECKED_POSITIONS: dict = {}
_CHECKED_LIMIT = 64  # entries kept before the caches are emptied


def _remember(cache: dict, t: torch.Tensor, entry: tuple) -> None:
    if len(cache) >= _CHECKED_LIMIT:
        cache.clear()
    cache[id(t)] = (weakref.ref(t), t._version, t.data_ptr()) + entry


def _recalled(cache: dict, t: torch.Tensor):
    """The remembered tail of t's entry, or None if t was not checked as it is now."""
    entry = cache.get(id(t))
    if entry is not None and entry[0]() is t and entry[1] == t._version and entry[2] == t.data_ptr():
        return entry[3:]
    return None


def _cu_values(cu_seqlens: torch.Tensor, tokens: int) -> tuple:
    """Checks cu_seqlens' values (once per tensor and version); returns
    (host values, the longest sequence's length)."""
    recalled = _recalled(_CHECKED_CU, cu_seqlens)
    if recalled is not None and recalled[0] == tokens:
        return recalled[1], recalled[2]
    values = cu_seqlens.to("cpu", copy=True)  # a copy even of a CPU tensor: it is kept
    if values[0].item() != 0:
        raise ValueError(f"cu_seqlens: must start at 0, starts at {values[0].item()}")
    if values.numel() > 1 and bool((values[1:] < values[:-1]).any()):
        raise ValueError("cu_seqlens: must be non-decreasing")
    if values[-1].item() != tokens:
        raise ValueError(
            f"cu_seqlens: the last offset must equal the number of tokens {tokens}, got {values[-1].item()}"
        )
    longest = int((values[1:] - values[:-1]).max()) if values.numel() > 1 else 0
    _remember(_CHECKED_CU, cu_seqlens, (tokens, values, longest))
    return values, longest


def _checked_cu_values(cu_seqlens: torch.Tensor, tokens: int) -> tuple:
    """_cu_values, or (None, None) while a CUDA graph is being captured and
    this cu_seqlens was not checked before (the copy would break the capture)."""
    recalled = _recalled(_CHECKED_CU, cu_seqlens)
    if recalled is not None and recalled[0] == tokens:
        return recalled[1], recalled[2]
    if cu_seqlens.is_cuda and torch.cuda.is_current_stream_capturing():
        return None, None
    return _cu_values(cu_seqlens, tokens)


def _check_cu_seqlens(cu_seqlens, q: torch.Tensor, check_values: bool) -> torch.Tensor | None:
    """Checks cu_seqlens; returns a host copy of its values if `check_values`
    (copied once per tensor and version: see _CHECKED_CU)."""
    if not isinstance(cu_seqlens, torch.Tensor):
        raise ValueError(f"cu_seqlens: expected a torch.Tensor, got {type(cu_seqlens).__name__}")
    if cu_seqlens.dtype != torch.int32:
        raise ValueError(f"cu_seqlens: expected dtype torch.int32, got {cu_seqlens.dtype}")
    if cu_seqlens.dim() != 1 or cu_seqlens.numel() < 1:
        raise ValueError(
            f"cu_seqlens: expected a 1-D tensor of num_sequences + 1 offsets, got shape {tuple(cu_seqlens.shape)}"
        )
    if cu_seqlens.device != q.device:
        raise ValueError(f"cu_seqlens: on {cu_seqlens.device}, but q is on {q.device}")
    if not cu_seqlens.is_contiguous():
        raise ValueError("cu_seqlens: must be contiguous")
    if not check_values:
        return None
    return _cu_values(cu_seqlens, q.shape[0])[0]


def _check_table(name: str, t, q: torch.Tensor) -> torch.Tensor:
    """A cos/sin table: fp32 [max_position, D/2] on q's device; returns it
    contiguous and 16-byte aligned (copied if it is not)."""
    half = q.shape[2] // 2
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    if t.dtype != torch.float32:
        raise ValueError(f"{name}: expected dtype torch.float32, got {t.dtype}")
    if t.dim() != 2 or t.shape[1] != half:
        raise ValueError(
            f"{name}: expected a [max_position, head_dim/2] = [P, {half}] table, got shape {tuple(t.shape)}"
        )
    if t.shape[0] < 1:
        raise ValueError(f"{name}: the table has no rows (max_position must be at least 1)")
    # Some kernels index the tables in 32 bits (warpspec.rotate_tile's narrow_index).
    if t.numel() >= 2**32:
        raise ValueError(
            f"{name}: {t.numel()} elements; the kernels index the tables in 32 bits (fewer than 2^32)"
        )
    if t.device != q.device:
        raise ValueError(f"{name}: on {t.device}, but q is on {q.device}")
    if t.requires_grad and torch.is_grad_enabled():
        raise ValueError(
            f"{name}: requires grad, but no gradient is computed for the rotary tables; pass {name}.detach()"
        )
    misaligned = not torch.compiler.is_compiling() and t.data_ptr() % 16
    if not t.is_contiguous() or misaligned:
        t = t.clone(memory_format=torch.contiguous_format)
    return t


def _check_rotary(rotary, q: torch.Tensor, cu_values: torch.Tensor | None, longest: int | None = None):
    """Validates `rotary` for q; returns (cos, sin, positions, interleaved, rotate_v)
    ready for the kernel. `cu_values` (host cu_seqlens, or None when values are
    not checked) bounds the default positions; `longest`, if given, is its
    longest sequence."""
    if not isinstance(rotary, Rotary):
        raise ValueError(f"rotary: expected a blockattn.Rotary or None, got {type(rotary).__name__}")
    D = q.shape[2]
    if D % 2 or D % 16:
        raise ValueError(f"rotary: needs a head_dim that is even and a multiple of 16, got {D}")
    for field in ("interleaved", "rotate_v"):
        if not isinstance(getattr(rotary, field), bool):
            raise ValueError(f"rotary.{field}: expected a bool, got {type(getattr(rotary, field)).__name__}")
    cos = _check_table("rotary.cos", rotary.cos, q)
    sin = _check_table("rotary.sin", rotary.sin, q)
    if cos.shape != sin.shape:
        raise ValueError(
            f"rotary.sin: shape {tuple(sin.shape)} differs from rotary.cos's {tuple(cos.shape)}"
        )
    max_position = cos.shape[0]
    positions = rotary.positions
    if positions is not None:
        if not isinstance(positions, torch.Tensor):
            raise ValueError(f"rotary.positions: expected a torch.Tensor or None, got {type(positions).__name__}")
        if positions.dtype != torch.int32:
            raise ValueError(f"rotary.positions: expected dtype torch.int32, got {positions.dtype}")
        if positions.dim() != 1 or positions.shape[0] != q.shape[0]:
            raise ValueError(
                f"rotary.positions: expected a 1-D tensor of one position per token [{q.shape[0]}], "
                f"got shape {tuple(positions.shape)}"
            )
        if positions.device != q.device:
            raise ValueError(f"rotary.positions: on {positions.device}, but q is on {q.device}")
        if not positions.is_contiguous():
            positions = positions.contiguous()
        found = _positions_range(positions) if cu_values is not None and positions.numel() else None
        if found is not None:
            low, high = found
            if low < 0 or high >= max_position:
                raise ValueError(
                    f"rotary.positions: must lie in [0, {max_position}) (max_position = the rows of the "
                    f"cos/sin tables), got values from {low} to {high}"
                )
    elif cu_values is not None:
        _check_sequence_positions(cu_values, max_position, longest)
    return cos, sin, positions, rotary.interleaved, rotary.rotate_v


def _positions_range(positions: torch.Tensor) -> tuple[int, int] | None:
    """(min, max) of a positions tensor, copied to the host once per tensor
    and version (see _CHECKED_CU); None while a CUDA graph is captured and
    the tensor was not checked before."""
    recalled = _recalled(_CHECKED_POSITIONS, positions)
    if recalled is not None:
        return recalled[0]
    if positions.is_cuda and torch.cuda.is_current_stream_capturing():
        return None  # the copy would break the capture
    low, high = torch.stack(torch.aminmax(positions)).tolist()
    _remember(_CHECKED_POSITIONS, positions, ((low, high),))
    return low, high


def _check_sequence_positions(cu_values: torch.Tensor, max_position: int, longest: int | None = None) -> None:
    """Default positions (a token's index in its sequence) must fit the tables.
    `longest` is cu_values' longest sequence if the caller has it."""
    if cu_values.numel() > 1:
        if longest is None:
            longest = int((cu_values[1:] - cu_values[:-1]).max())
        if longest > max_position:
            raise ValueError(
                f"rotary: the longest sequence has {longest} tokens, so its positions reach {longest - 1}, "
                f"but the cos/sin tables have only {max_position} rows; pass longer tables or "
                f"rotary.positions"
            )


def _num_sms(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


_KERNELS: dict = {}  # (kind, D, block, dtype, rotary options, device) -> (kernel, num_sms)
# The same key (rotary "none") -> [the small-grid limit of the kernel, its small-grid variant (None until used)]
_SMALL: dict = {}


def _kernel_key(kind, like, block_size, rotary, positions, rotate_v, tiles_per_cta=0, group=1, causal=False,
                lse=False) -> _kernels.KernelKey:
    return _kernels.KernelKey(
        kind=kind,
        head_dim=like.shape[2],
        block_size=block_size,
        dtype=_DTYPE_NAMES[like.dtype],
        chip=_driver.chip_of(like.device),
        rotary=rotary,
        positions=positions,
        rotate_v=rotate_v,
        tiles_per_cta=tiles_per_cta,
        group=group,
        causal=causal,
        lse=lse,
    )


def _kernel(kind, like, block_size, rotary, positions, rotate_v, group=1, causal=False, lse=False):
    """The loaded kernel and the SM count for a launch like `like`'s: looked
    up (on disk, compiled if need be) and loaded once per key and device."""
    key = (kind, like.shape[2], block_size, like.dtype, rotary, positions, rotate_v, like.get_device())
    if group > 1 or causal or lse:
        key += (group, causal, lse)
    found = _KERNELS.get(key)
    if found is None:
        kernel_key = _kernel_key(kind, like, block_size, rotary, positions, rotate_v, group=group, causal=causal,
                                 lse=lse)
        kernel = _driver.load_kernel(_kernels.find_kernel(kernel_key), like.device)
        found = _KERNELS.setdefault(key, (kernel, _num_sms(like.device)))
    return found


def _small_grid(limit: int, block_size: int, q_shape, cu_seqlens_numel: int) -> bool:
    """Whether a launch of q_shape ([T, H, D]) takes the small-grid variant of
    a kernel whose small-grid limit is `limit` (_small_entry): the one rule of
    the checks' path and the fast path, from shapes only (work items
    (T // tile_rows + B) * H, _kernels.tile_rows)."""
    return _kernels.work_items(_kernels.tile_rows(block_size), q_shape, cu_seqlens_numel) <= limit


def _small_entry(kind, like, block_size) -> list:
    """[limit, variant] of the plain (no rotary) `kind` kernel for `like`
    (_SMALL): the limit from the default kernel's manifest (-1: no variant)."""
    key = (kind, like.shape[2], block_size, like.dtype, "none", False, False, like.get_device())
    entry = _SMALL.get(key)
    if entry is None:
        kernel, num_sms = _kernel(kind, like, block_size, "none", False, False)
        limit = -1
        if _kernels.small_grid_key(_kernel_key(kind, like, block_size, "none", False, False)) is not None:
            limit = _kernels.small_grid_limit(_kernels.grid_inputs(kernel.manifest), num_sms)
        entry = _SMALL.setdefault(key, [limit, None])
    return entry


def _load_variant(kernel_key, like):
    """The launch variant `kernel_key` (small-grid) loaded on
    `like`'s device, or None where it is neither found nor compilable (a
    kernel directory from before the variant, and no compiler; OSError:
    $BLOCKATTN_COMPILER names no file)."""
    try:
        files = _kernels.find_kernel(kernel_key)
    except (RuntimeError, OSError):
        return None
    return _driver.load_kernel(files, like.device)


def _small_kernel(kind, like, block_size):
    """The small-grid variant of the plain `kind` kernel for `like`, loaded
    once (prebuilt with the kernels of the fast path); the default kernel
    where it cannot be had (_load_variant)."""
    entry = _small_entry(kind, like, block_size)
    if entry[1] is None:
        kernel_key = _kernels.small_grid_key(_kernel_key(kind, like, block_size, "none", False, False))
        entry[1] = (_load_variant(kernel_key, like)
                    or _kernel(kind, like, block_size, "none", False, False)[0])
    return entry[1]


def _launch(
    kind: str, like: torch.Tensor, block_size: int, tensors: dict, softmax_scale: float,
    rotary: str = "none", positions: bool = False, rotate_v: bool = False, group: int = 1,
    causal: bool = False, lse: bool = False,
) -> None:
    """Launches the `kind` kernel specialized for `like`'s head dim and dtype
    (and the rotary options, the query heads per k/v head, the causal and
    log-sum-exp options) on `like`'s device's current stream; without any of
    them, its small-grid variant for a grid that would leave SMs idle."""
    if group > 1 or causal or lse:
        kernel = _kernel(kind, like, block_size, rotary, positions, rotate_v, group, causal, lse)[0]
        kernel.call(tensors, {"softmax_scale": softmax_scale})
        return
    key = (kind, like.shape[2], block_size, like.dtype, rotary, positions, rotate_v, like.get_device())
    found = _KERNELS.get(key)
    kernel = found[0] if found is not None else _kernel(kind, like, block_size, rotary, positions, rotate_v)[0]
    if rotary == "none":
        entry = _SMALL.get(key) or _small_entry(kind, like, block_size)
        if _small_grid(entry[0], block_size, like.shape, tensors["cu_seqlens"].shape[0]):
            kernel = entry[1] or _small_kernel(kind, like, block_size)
    kernel.call(tensors, {"softmax_scale": softmax_scale})


def _empty(q: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(q, memory_format=torch.contiguous_format)


def _rotary_launch_args(tensors: dict, cos, sin, positions, interleaved: bool, rotate_v: bool) -> dict:
    """Adds the rotary tensors to `tensors`; returns _launch's rotary keywords."""
    if cos is None:
        return {}
    tensors["cos"], tensors["sin"] = cos, sin
    if positions is not None:
        tensors["positions"] = positions
    return {
        "rotary": "interleaved" if interleaved else "half_split",
        "positions": positions is not None,
        "rotate_v": bool(rotate_v),
    }


def forward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    cu_seqlens: torch.Tensor,
    block_size: int,
    softmax_scale: float,
    out: torch.Tensor | None = None,
    cos: torch.Tensor | None = None,
    sin: torch.Tensor | None = None,
    positions: torch.Tensor | None = None,
    interleaved: bool = False,
    rotate_v: bool = False,
    *,
    causal: bool = False,
    lse: torch.Tensor | None = None,
) -> torch.Tensor:
    """Launches the forward kernel on validated inputs; returns o. With the
    rotary tables (`cos`, `sin`), q and k (and v if `rotate_v`) are rotated
    in the kernel; with `causal`, token i of a block attends to tokens 0..i
    of its block; with `lse` (a contiguous fp32 [H, T] tensor), the kernel
    writes the log-sum-exp of every row there too."""
    o = _empty(q) if out is None else out
    if q.shape[0] and q.shape[1]:
        tensors = {"q": q, "k": k, "v": v, "o": o, "cu_seqlens": cu_seqlens}
        # Grouped-query attention: k and v have a G-th of q's heads.
        features = {"group": q.shape[1] // k.shape[1]} if k.shape[1] != q.shape[1] else {}
        if causal or lse is not None:
            features.update(causal=bool(causal), lse=lse is not None)
            if lse is not None:
                tensors["lse"] = lse
        if cos is None:
            _launch("forward", q, block_size, tensors, softmax_scale, **features)
        else:
            rope = _rotary_launch_args(tensors, cos, sin, positions, interleaved, rotate_v)
            _launch("forward", q, block_size, tensors, softmax_scale, **rope, **features)
    return o


def _tma_ready(t: torch.Tensor) -> torch.Tensor:
    """`t` itself if the tensor-memory accelerator can read it, else a copy."""
    esize = t.element_size()
    if t.stride(2) == 1 and not (t.stride(0) * esize % 16 or t.stride(1) * esize % 16 or t.data_ptr() % 16):
        return t
    return t.contiguous()


def backward(
    grad_o: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    cu_seqlens: torch.Tensor,
    block_size: int,
    softmax_scale: float,
    cos: torch.Tensor | None = None,
    sin: torch.Tensor | None = None,
    positions: torch.Tensor | None = None,
    interleaved: bool = False,
    rotate_v: bool = False,
    grads: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
    *,
    causal: bool = False,
    dlse: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Launches the backward kernel; returns dq, dk, dv.

    ``grads`` are the tensors to write dq, dk, dv into (any TMA-ready
    strides, e.g. views of one packed buffer); by default three contiguous
    tensors are allocated.

    It reads q, k, v and dO only: no forward output, no logsumexp, no
    preprocessing kernel, no atomics (deterministic). With the rotary tables,
    q, k (and v) are the un-rotated inputs and so are the gradients: the
    kernel rotates q, k and applies the transposed rotation to dq, dk (and
    dv) in fp32 before rounding them.

    With `causal`, the causal forward's gradients; with `dlse` (fp32
    [H, T], the gradient of the forward's log-sum-exp), its term is added to
    dS (d lse_i / d s_ij = scale P_ij). Without it the kernel is the one
    without the log-sum-exp."""
    if block_size not in _kernels.BACKWARD_BLOCK_SIZES:
        raise ValueError(
            f"block_size: {block_size} has no backward kernel yet; block sizes with a backward: "
            f"{', '.join(map(str, _kernels.BACKWARD_BLOCK_SIZES))}"
        )
    group = q.shape[1] // max(k.shape[1], 1) if k.shape[1] != q.shape[1] else 1
    dq, dk, dv = (_empty(q), _empty(k), _empty(v)) if grads is None else grads
    if q.shape[0] and q.shape[1]:
        tensors = {
            "q": q, "k": k, "v": v, "do": _tma_ready(grad_o.to(q.dtype)),
            "dq": dq, "dk": dk, "dv": dv, "cu_seqlens": cu_seqlens,
        }
        # Grouped-query attention: dk and dv (k's shape) are summed over each
        # group in the kernel.
        features = {"group": group} if group > 1 else {}
        if causal or dlse is not None:
            features.update(causal=bool(causal), lse=dlse is not None)
            if dlse is not None:
                tensors["dlse"] = dlse.to(torch.float32).contiguous()
        if cos is None:
            _launch("backward", q, block_size, tensors, softmax_scale, **features)
        else:
            rope = _rotary_launch_args(tensors, cos, sin, positions, interleaved, rotate_v)
            _launch("backward", q, block_size, tensors, softmax_scale, **rope, **features)
    return dq, dk, dv


# The differentiable operator, registered with torch.library so that it
# works under torch.compile (the fake implementations give shapes without
# running anything) and saves only q, k, v, cu_seqlens (and the rotary
# tables and positions) for the backward. The rotary arguments are optional:
# without them the schema and the kernels are those of plain attention.


@torch.library.custom_op("blockattn::block_attention", mutates_args=())
def _block_attention_op(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens: torch.Tensor,
    block_size: int, softmax_scale: float,
    cos: Optional[torch.Tensor] = None, sin: Optional[torch.Tensor] = None,
    positions: Optional[torch.Tensor] = None, interleaved: bool = False, rotate_v: bool = False,
) -> torch.Tensor:
    return forward(
        q, k, v, cu_seqlens, block_size, softmax_scale,
        cos=cos, sin=sin, positions=positions, interleaved=interleaved, rotate_v=rotate_v,
    )


@_block_attention_op.register_fake
def _(q, k, v, cu_seqlens, block_size, softmax_scale, cos=None, sin=None, positions=None,
      interleaved=False, rotate_v=False):
    return _empty(q)


@torch.library.custom_op("blockattn::block_attention_backward", mutates_args=())
def _block_attention_backward_op(
    grad_o: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    cu_seqlens: torch.Tensor, block_size: int, softmax_scale: float,
    cos: Optional[torch.Tensor] = None, sin: Optional[torch.Tensor] = None,
    positions: Optional[torch.Tensor] = None, interleaved: bool = False, rotate_v: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return backward(
        grad_o, q, k, v, cu_seqlens, block_size, softmax_scale,
        cos=cos, sin=sin, positions=positions, interleaved=interleaved, rotate_v=rotate_v,
    )


@_block_attention_backward_op.register_fake
def _(grad_o, q, k, v, cu_seqlens, block_size, softmax_scale, cos=None, sin=None, positions=None,
      interleaved=False, rotate_v=False):
    return _empty(q), _empty(k), _empty(v)


def _setup_context(ctx, inputs, output):
    q, k, v, cu_seqlens, block_size, softmax_scale, cos, sin, positions, interleaved, rotate_v = inputs
    # None (no rotary, default positions) is saved as None and packs nothing.
    ctx.save_for_backward(q, k, v, cu_seqlens, cos, sin, positions)
    ctx.block_size = block_size
    ctx.softmax_scale = softmax_scale
    ctx.interleaved = interleaved
    ctx.rotate_v = rotate_v


def _backward_rule(ctx, grad_o):
    q, k, v, cu_seqlens, cos, sin, positions = ctx.saved_tensors
    dq, dk, dv = _block_attention_backward_op(
        grad_o, q, k, v, cu_seqlens, ctx.block_size, ctx.softmax_scale,
        cos, sin, positions, ctx.interleaved, ctx.rotate_v,
    )
    # No gradients for cu_seqlens, the scalars, the rotary tables or positions.
    return dq, dk, dv, None, None, None, None, None, None, None, None


_block_attention_op.register_autograd(_backward_rule, setup_context=_setup_context)


# The packed layouts (flash-attn's qkvpacked / kvpacked): q, k, v are views
# of one [T, 3, H, D] tensor (or k, v of one [T, 2, H, D]), which is what a
# single qkv projection produces. The kernels read the views directly (their
# tensor maps carry the packed strides), and the backward op allocates the
# packed gradient once and has the kernel write dq, dk, dv straight into its
# views: autograd gets one [T, 3, H, D] gradient (or dq and one [T, 2, H, D]),
# with no zero fill, no stack and no copy.


def _packed_empty(packed: torch.Tensor) -> torch.Tensor:
    return torch.empty(packed.shape, dtype=packed.dtype, device=packed.device)


@torch.library.custom_op("blockattn::block_attention_qkvpacked", mutates_args=())
def _qkvpacked_op(
    qkv: torch.Tensor, cu_seqlens: torch.Tensor, block_size: int, softmax_scale: float,
    cos: Optional[torch.Tensor] = None, sin: Optional[torch.Tensor] = None,
    positions: Optional[torch.Tensor] = None, interleaved: bool = False, rotate_v: bool = False,
) -> torch.Tensor:
    q, k, v = qkv.unbind(1)
    return forward(
        q, k, v, cu_seqlens, block_size, softmax_scale,
        cos=cos, sin=sin, positions=positions, interleaved=interleaved, rotate_v=rotate_v,
    )


@_qkvpacked_op.register_fake
def _(qkv, cu_seqlens, block_size, softmax_scale, cos=None, sin=None, positions=None,
      interleaved=False, rotate_v=False):
    return _empty(qkv[:, 0])


@torch.library.custom_op("blockattn::block_attention_qkvpacked_backward", mutates_args=())
def _qkvpacked_backward_op(
    grad_o: torch.Tensor, qkv: torch.Tensor, cu_seqlens: torch.Tensor, block_size: int,
    softmax_scale: float, cos: Optional[torch.Tensor] = None, sin: Optional[torch.Tensor] = None,
    positions: Optional[torch.Tensor] = None, interleaved: bool = False, rotate_v: bool = False,
) -> torch.Tensor:
    dqkv = _packed_empty(qkv)
    backward(
        grad_o, *qkv.unbind(1), cu_seqlens, block_size, softmax_scale,
        cos=cos, sin=sin, positions=positions, interleaved=interleaved, rotate_v=rotate_v,
        grads=dqkv.unbind(1),
    )
    return dqkv


@_qkvpacked_backward_op.register_fake
def _(grad_o, qkv, cu_seqlens, block_size, softmax_scale, cos=None, sin=None, positions=None,
      interleaved=False, rotate_v=False):
    return _packed_empty(qkv)


def _qkvpacked_setup_context(ctx, inputs, output):
    qkv, cu_seqlens, block_size, softmax_scale, cos, sin, positions, interleaved, rotate_v = inputs
    ctx.save_for_backward(qkv, cu_seqlens, cos, sin, positions)
    ctx.block_size, ctx.softmax_scale = block_size, softmax_scale
    ctx.interleaved, ctx.rotate_v = interleaved, rotate_v


def _qkvpacked_backward_rule(ctx, grad_o):
    qkv, cu_seqlens, cos, sin, positions = ctx.saved_tensors
    dqkv = _qkvpacked_backward_op(
        grad_o, qkv, cu_seqlens, ctx.block_size, ctx.softmax_scale,
        cos, sin, positions, ctx.interleaved, ctx.rotate_v,
    )
    return dqkv, None, None, None, None, None, None, None, None


_qkvpacked_op.register_autograd(_qkvpacked_backward_rule, setup_context=_qkvpacked_setup_context)


@torch.library.custom_op("blockattn::block_attention_kvpacked", mutates_args=())
def _kvpacked_op(
    q: torch.Tensor, kv: torch.Tensor, cu_seqlens: torch.Tensor, block_size: int, softmax_scale: float,
    cos: Optional[torch.Tensor] = None, sin: Optional[torch.Tensor] = None,
    positions: Optional[torch.Tensor] = None, interleaved: bool = False, rotate_v: bool = False,
) -> torch.Tensor:
    k, v = kv.unbind(1)
    return forward(
        q, k, v, cu_seqlens, block_size, softmax_scale,
        cos=cos, sin=sin, positions=positions, interleaved=interleaved, rotate_v=rotate_v,
    )


@_kvpacked_op.register_fake
def _(q, kv, cu_seqlens, block_size, softmax_scale, cos=None, sin=None, positions=None,
      interleaved=False, rotate_v=False):
    return _empty(q)


@torch.library.custom_op("blockattn::block_attention_kvpacked_backward", mutates_args=())
def _kvpacked_backward_op(
    grad_o: torch.Tensor, q: torch.Tensor, kv: torch.Tensor, cu_seqlens: torch.Tensor, block_size: int,
    softmax_scale: float, cos: Optional[torch.Tensor] = None, sin: Optional[torch.Tensor] = None,
    positions: Optional[torch.Tensor] = None, interleaved: bool = False, rotate_v: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    dq, dkv = _empty(q), _packed_empty(kv)
    dk, dv = dkv.unbind(1)
    backward(
        grad_o, q, *kv.unbind(1), cu_seqlens, block_size, softmax_scale,
        cos=cos, sin=sin, positions=positions, interleaved=interleaved, rotate_v=rotate_v,
        grads=(dq, dk, dv),
    )
    return dq, dkv


@_kvpacked_backward_op.register_fake
def _(grad_o, q, kv, cu_seqlens, block_size, softmax_scale, cos=None, sin=None, positions=None,
      interleaved=False, rotate_v=False):
    return _empty(q), _packed_empty(kv)


def _kvpacked_setup_context(ctx, inputs, output):
    q, kv, cu_seqlens, block_size, softmax_scale, cos, sin, positions, interleaved, rotate_v = inputs
    ctx.save_for_backward(q, kv, cu_seqlens, cos, sin, positions)
    ctx.block_size, ctx.softmax_scale = block_size, softmax_scale
    ctx.interleaved, ctx.rotate_v = interleaved, rotate_v


def _kvpacked_backward_rule(ctx, grad_o):
    q, kv, cu_seqlens, cos, sin, positions = ctx.saved_tensors
    dq, dkv = _kvpacked_backward_op(
        grad_o, q, kv, cu_seqlens, ctx.block_size, ctx.softmax_scale,
        cos, sin, positions, ctx.interleaved, ctx.rotate_v,
    )
    return dq, dkv, None, None, None, None, None, None, None, None


_kvpacked_op.register_autograd(_kvpacked_backward_rule, setup_context=_kvpacked_setup_context)


# The eager path: the same forward and backward as the custom ops above, in
# plain autograd.Functions. torch.library's dispatch costs more host time per
# call than an autograd.Function (docs/benchmarks.md, "Latency of small
# batches"); the custom ops stay for torch.compile, which needs their fake
# implementations. The backward launches directly (no second op dispatch).
#
# The Functions take ctx in forward (no setup_context: with one,
# Function.apply binds the arguments with inspect.signature, tens of us per
# call) and are applied through the C++ apply that Function.apply ends in
# (_eager_apply): Function.apply's Python prologue only routes functorch
# transforms (those calls take the custom ops instead) and unwraps their
# dead wrappers.


class _AttentionFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, cu_seqlens, block_size, softmax_scale, cos, sin, positions, interleaved,
                rotate_v):
        ctx.save_for_backward(q, k, v, cu_seqlens, cos, sin, positions)
        ctx.block_size, ctx.softmax_scale = block_size, softmax_scale
        ctx.interleaved, ctx.rotate_v = interleaved, rotate_v
        return forward(q, k, v, cu_seqlens, block_size, softmax_scale, None, cos, sin, positions,
                       interleaved, rotate_v)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_o):
        q, k, v, cu_seqlens, cos, sin, positions = ctx.saved_tensors
        dq, dk, dv = backward(grad_o, q, k, v, cu_seqlens, ctx.block_size, ctx.softmax_scale,
                              cos, sin, positions, ctx.interleaved, ctx.rotate_v)
        return dq, dk, dv, None, None, None, None, None, None, None, None


class _QKVPackedFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, qkv, cu_seqlens, block_size, softmax_scale, cos, sin, positions, interleaved, rotate_v):
        ctx.save_for_backward(qkv, cu_seqlens, cos, sin, positions)
        ctx.block_size, ctx.softmax_scale = block_size, softmax_scale
        ctx.interleaved, ctx.rotate_v = interleaved, rotate_v
        q, k, v = qkv.unbind(1)
        return forward(q, k, v, cu_seqlens, block_size, softmax_scale, None, cos, sin, positions,
                       interleaved, rotate_v)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_o):
        qkv, cu_seqlens, cos, sin, positions = ctx.saved_tensors
        dqkv = _packed_empty(qkv)
        backward(grad_o, *qkv.unbind(1), cu_seqlens, ctx.block_size, ctx.softmax_scale,
                 cos, sin, positions, ctx.interleaved, ctx.rotate_v, dqkv.unbind(1))
        return dqkv, None, None, None, None, None, None, None, None


class _KVPackedFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, kv, cu_seqlens, block_size, softmax_scale, cos, sin, positions, interleaved,
                rotate_v):
        ctx.save_for_backward(q, kv, cu_seqlens, cos, sin, positions)
        ctx.block_size, ctx.softmax_scale = block_size, softmax_scale
        ctx.interleaved, ctx.rotate_v = interleaved, rotate_v
        k, v = kv.unbind(1)
        return forward(q, k, v, cu_seqlens, block_size, softmax_scale, None, cos, sin, positions,
                       interleaved, rotate_v)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_o):
        q, kv, cu_seqlens, cos, sin, positions = ctx.saved_tensors
        dq, dkv = _empty(q), _packed_empty(kv)
        dk, dv = dkv.unbind(1)
        backward(grad_o, q, *kv.unbind(1), cu_seqlens, ctx.block_size, ctx.softmax_scale,
                 cos, sin, positions, ctx.interleaved, ctx.rotate_v, (dq, dk, dv))
        return dq, dkv, None, None, None, None, None, None, None, None


class _FeaturesFunction(torch.autograd.Function):
    """The eager path with causal blocks and/or the log-sum-exp output: returns
    (o, lse) (lse None without return_lse). The backward passes lse's
    gradient to the kernel only when there is one (else the kernel without
    the log-sum-exp runs, as without return_lse)."""

    @staticmethod
    def forward(ctx, q, k, v, cu_seqlens, block_size, softmax_scale, causal, return_lse, cos, sin, positions,
                interleaved, rotate_v):
        ctx.save_for_backward(q, k, v, cu_seqlens, cos, sin, positions)
        ctx.block_size, ctx.softmax_scale = block_size, softmax_scale
        ctx.interleaved, ctx.rotate_v, ctx.causal = interleaved, rotate_v, causal
        # An output without a gradient arrives as None, not zeros: no dlse
        # means the backward without the log-sum-exp.
        ctx.set_materialize_grads(False)
        lse = _empty_lse(q) if return_lse else None
        o = forward(q, k, v, cu_seqlens, block_size, softmax_scale, None, cos, sin, positions,
                    interleaved, rotate_v, causal=causal, lse=lse)
        return o, lse

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_o, grad_lse):
        q, k, v, cu_seqlens, cos, sin, positions = ctx.saved_tensors
        if grad_o is None:
            grad_o = torch.zeros_like(q)
        dq, dk, dv = backward(grad_o, q, k, v, cu_seqlens, ctx.block_size, ctx.softmax_scale,
                              cos, sin, positions, ctx.interleaved, ctx.rotate_v,
                              causal=ctx.causal, dlse=grad_lse)
        return dq, dk, dv, *(None,) * 10


class _PackedFeaturesFunction(torch.autograd.Function):
    """The packed entry points' eager path with causal blocks, the
    log-sum-exp or a grouped qkv (num_heads_q): _FeaturesFunction's forward
    and backward on the views of ``packed`` (qkv, or kv next to ``q``), with
    the backward kernel writing straight into views of one packed gradient
    (as _QKVPackedFunction does), so autograd gets one tensor per input: no
    zero fill and no copy per view."""

    @staticmethod
    def forward(ctx, q, packed, num_heads_q, cu_seqlens, block_size, softmax_scale, causal,
                return_lse, cos, sin, positions, interleaved, rotate_v):
        ctx.save_for_backward(q, packed, cu_seqlens, cos, sin, positions)
        ctx.num_heads_q, ctx.block_size, ctx.softmax_scale = num_heads_q, block_size, softmax_scale
        ctx.interleaved, ctx.rotate_v, ctx.causal = interleaved, rotate_v, causal
        ctx.set_materialize_grads(False)
        views = _packed_views(q, packed, num_heads_q)
        lse = _empty_lse(views[0]) if return_lse else None
        o = forward(*views, cu_seqlens, block_size, softmax_scale, None, cos, sin, positions,
                    interleaved, rotate_v, causal=causal, lse=lse)
        return o, lse

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_o, grad_lse):
        q, packed, cu_seqlens, cos, sin, positions = ctx.saved_tensors
        dq, dpacked = _packed_features_backward(grad_o, q, packed, ctx.num_heads_q, cu_seqlens,
                                                ctx.block_size, ctx.softmax_scale, ctx.causal,
                                                grad_lse, cos, sin, positions, ctx.interleaved,
                                                ctx.rotate_v)
        return dq, dpacked, *(None,) * 11


def _packed_features_backward(grad_o, q, packed, num_heads_q, cu_seqlens, block_size, softmax_scale,
                              causal, dlse, cos, sin, positions, interleaved, rotate_v):
    """The packed entry points' backward with causal blocks, dlse or a grouped
    qkv: (dq, or None for qkv; the packed gradient), the kernel writing into
    views of the one packed gradient. No gradient for o (None) is a zero dO."""
    views = _packed_views(q, packed, num_heads_q)
    if grad_o is None:
        grad_o = torch.zeros_like(views[0])
    dq, dpacked = (None if q is None else _empty(q)), _packed_empty(packed)
    backward(grad_o, *views, cu_seqlens, block_size, softmax_scale, cos, sin, positions,
             interleaved, rotate_v, _packed_views(dq, dpacked, num_heads_q), causal=causal,
             dlse=dlse)
    return dq, dpacked


def _packed_views(q, packed, num_heads_q):
    """q, k, v as views of the packed layouts: q and kv ``[T, 2, Hkv, D]``
    (q not None); qkv ``[T, 3, H, D]`` (num_heads_q None); qkv ``[T, Hq +
    2 Hkv, D]`` with ``Hq = num_heads_q``: q's heads, then k's, then v's."""
    if q is not None:
        return (q, *packed.unbind(1))
    if num_heads_q is None:
        return packed.unbind(1)
    hkv = (packed.shape[1] - num_heads_q) // 2
    return (packed[:, :num_heads_q], packed[:, num_heads_q:num_heads_q + hkv],
            packed[:, num_heads_q + hkv:])


def _empty_lse(q: torch.Tensor) -> torch.Tensor:
    """The fp32 [H, T] log-sum-exp of a forward over q [T, H, D]."""
    return torch.empty((q.shape[1], q.shape[0]), dtype=torch.float32, device=q.device)


def _check_flag(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected True or False, got {value!r}")
    return value


def _c_apply(function):
    """`function`'s C++ apply (what Function.apply calls last), or its apply."""
    try:
        return super(torch.autograd.Function, function).apply
    except AttributeError:  # another torch's class layout
        return function.apply


_APPLY = {f: _c_apply(f) for f in (_AttentionFunction, _QKVPackedFunction, _KVPackedFunction)}
_functorch_active = getattr(torch._C, "_are_functorch_transforms_active", lambda: False)


def _eager_apply(function, *args):
    """function.apply(*args) without Function.apply's Python prologue (no
    functorch transform is active: the callers check)."""
    return _APPLY[function](*args)


# The fast eager path (issue 22). Once a (dtype, head dim, device, block
# size) has passed the checks above, block_attention's later calls on plain
# tensors, without `out` and `rotary`, take _fast_attention: a few identity
# and integer comparisons in Python (dtypes, devices, the scale, the
# cu_seqlens value check's memo) and everything else in one foreign call,
# libblockattn_launch's blockattnLaunchRecord, which checks what
# _check_activation and _check_cu_seqlens check of shapes, strides and
# addresses (the record rules of blockattn._driver.RECORD_RULES and the tensor
# maps' own), computes the grid and launches, or refuses without launching.
# Whatever the fast path does not handle, or the library refuses, is raised
# as _Refused and block_attention takes the path above, whose checks raise
# the ValueError that names the argument: the fast path changes how much a
# call costs, never what it accepts or what it says.


class _Refused(Exception):
    """The fast path does not take this call (the checks' path will)."""


_REFUSED = _Refused()
_Tensor = torch.Tensor
_INT32 = torch.int32
_CONTIGUOUS = torch.contiguous_format
_INF = math.inf
_empty_like = torch.empty_like
_grad_enabled = torch.is_grad_enabled
_is_compiling = torch.compiler.is_compiling
_FORWARD_TENSORS = ("q", "k", "v", "o", "cu_seqlens")
_BACKWARD_TENSORS = ("q", "k", "v", "do", "dq", "dk", "dv", "cu_seqlens")


def _record_launcher(kernel, tensor_names):
    """(pack, call, handle, plan) of `kernel`'s record launch if its plan
    takes `tensor_names` and the softmax scale in that order, else None. The
    plan is there to keep the handle alive (its __del__ destroys it).

    A kernel with a dynamic schedule (--schedule=dynamic; LoadedKernel's
    _schedule, the counters' tensor name and words) also takes its counters,
    after `tensor_names`: its pack takes the same fields as the others' and
    adds the stream's counters (_driver.schedule_counters, which the checks'
    path shares) before the scale, so that every fast call site launches it
    unchanged."""
    plan = getattr(kernel, "record", None)
    if plan is None or plan.scalar_names != ("softmax_scale",):
        return None
    pack = plan.record.pack
    if plan.tensor_names == tensor_names:
        return pack, plan.record_call, plan.handle, plan
    schedule = getattr(kernel, "_schedule", None)
    if schedule is None or plan.tensor_names != (*tensor_names, schedule[0]):
        return None
    pack = _with_counters(pack, kernel.device_index, schedule[1])
    return pack, plan.record_call, plan.handle, plan


def _with_counters(pack, device: int, words: int):
    """`pack` of a record whose last tensor is a dynamic schedule's counters:
    takes the fields without them (the stream first, the scale last)."""
    counters = _driver.schedule_counters

    def pack_with_counters(stream, *fields):
        c = counters(device, stream, words)
        return pack(stream, *fields[:-1], c.data_ptr(), 1, c.shape[0], 1, fields[-1])

    return pack_with_counters


class _FastPath:
    """The launch state of one (dtype, head dim, device, block size): the
    forward kernel's record launch, and the backward's once a backward ran;
    each with its small-grid limit (_small_grid) and its small-grid variant's
    record launch, loaded by the first call that takes it."""

    __slots__ = ("forward", "backward", "device", "block_size", "tile_rows", "scale", "stream",
                 "forward_limit", "backward_limit", "forward_small", "backward_small")

    def __init__(self, forward, device: int, head_dim: int, block_size: int, stream, forward_limit: int = -1):
        self.forward = forward  # (pack, call, handle, plan)
        self.backward = None  # the same for the backward kernel, loaded by its first use; False: none
        self.device = device
        self.block_size = block_size
        self.tile_rows = _kernels.tile_rows(block_size)  # a work item's rows (_one_wave)
        self.scale = 1.0 / math.sqrt(head_dim)
        self.stream = stream  # device index -> CUstream (torch's current stream)
        self.forward_limit = forward_limit  # _small_grid's limit; -1: never
        self.backward_limit = -1  # set with the backward
        self.forward_small = None  # the small-grid variants' launchers, loaded by their first use
        self.backward_small = None

    def load_backward(self, q: torch.Tensor):
        kernel, _ = _kernel("backward", q, self.block_size, "none", False, False)
        self.backward = _record_launcher(kernel, _BACKWARD_TENSORS) or False
        if self.backward:
            self.backward_limit = _small_entry("backward", q, self.block_size)[0]
        return self.backward

    def load_small(self, kind: str, q: torch.Tensor):
        """The small-grid variant's launcher of `kind` (the default one's if
        the variant has no record launch)."""
        names = _FORWARD_TENSORS if kind == "forward" else _BACKWARD_TENSORS
        launcher = _record_launcher(_small_kernel(kind, q, self.block_size), names) or getattr(self, kind)
        setattr(self, kind + "_small", launcher)
        return launcher


def _one_wave(limit: int, tile_rows: int, tokens: int, offsets: int, heads: int) -> bool:
    """_small_grid's rule for the fast paths, from the shapes' numbers:
    (T // tile_rows + B) * H work items, B = offsets - 1, at most `limit`
    (-1: never). One plain call instead of _small_grid's two and its int()s
    (test_fast_path checks that both paths pick the same kernel)."""
    return limit >= 0 and (tokens // tile_rows + (offsets - 1 if offsets else 0)) * heads <= limit


_FAST: dict = {}  # (dtype, head dim, device index, block size) -> _FastPath or None


def _register_fast(q: torch.Tensor, block_size: int) -> None:
    """Gives the fast path q's (dtype, head dim, device, block size), which
    the checks have just accepted."""
    key = (q.dtype, q.shape[2], q.get_device(), block_size)
    if key in _FAST:
        return
    if block_size not in _kernels.BACKWARD_BLOCK_SIZES:
        # The fast path would take a later call that needs gradients too;
        # the checked path refuses those (_check_common).
        _FAST[key] = None
        return
    kernel, _ = _kernel("forward", q, block_size, "none", False, False)
    forward = _record_launcher(kernel, _FORWARD_TENSORS)
    _FAST[key] = None if forward is None else _FastPath(
        forward, key[2], key[1], block_size, _driver._raw_stream or _driver._current_stream,
        _small_entry("forward", q, block_size)[0])


def _fast_forward(fast: _FastPath, q, k, v, cu_seqlens, qs, scale):
    """o, launched through the record; raises _Refused (nothing launched)
    when the library's checks refuse the call."""
    ks, vs, cs = k.shape, v.shape, cu_seqlens.shape
    if _one_wave(fast.forward_limit, fast.tile_rows, qs[0], cs[0], qs[1]):
        pack, call, handle, _ = fast.forward_small or fast.load_small("forward", q)
    else:
        pack, call, handle, _ = fast.forward
    # torch.empty_like without a memory format (it preserves q's) parses
    # no keyword: the cheaper call where q is contiguous, as it almost always is.
    o = _empty_like(q) if q.is_contiguous() else _empty_like(q, memory_format=_CONTIGUOUS)
    # o is contiguous and has q's shape: its strides are q's shape's (a
    # q of another rank than 3 makes a record of another length, which
    # struct refuses, or an IndexError: both leave the call to the checks).
    if call(handle, pack(
            fast.stream(fast.device),
            q.data_ptr(), len(qs), *qs, *q.stride(),
            k.data_ptr(), len(ks), *ks, *k.stride(),
            v.data_ptr(), len(vs), *vs, *v.stride(),
            o.data_ptr(), len(qs), *qs, qs[1] * qs[2], qs[2], 1,
            cu_seqlens.data_ptr(), len(cs), *cs, *cu_seqlens.stride(),
            scale)):
        raise _REFUSED
    return o


def _fast_backward(fast: _FastPath, grad_o, q, k, v, cu_seqlens, scale):
    """(dq, dk, dv) through the backward kernel's record, or None when the
    library refuses (a grad_o that is not TMA-ready, say): the caller takes
    backward(). q, k, v and cu_seqlens passed the forward's checks."""
    launcher = fast.backward
    if launcher is None:
        launcher = fast.load_backward(q)
    if not launcher or grad_o.dtype is not q.dtype:
        return None
    qs, ds, cs = q.shape, grad_o.shape, cu_seqlens.shape
    if _one_wave(fast.backward_limit, fast.tile_rows, qs[0], cs[0], qs[1]):
        launcher = fast.backward_small or fast.load_small("backward", q)
    pack, call, handle, _ = launcher
    dq = _empty_like(q, memory_format=_CONTIGUOUS)
    dk = _empty_like(k, memory_format=_CONTIGUOUS)
    dv = _empty_like(v, memory_format=_CONTIGUOUS)
    # k, v (saved with q, so of q's shape) and the contiguous dq, dk, dv
    # share q's shape; dq's strides are the contiguous ones.
    r, contiguous = len(qs), dq.stride()
    if call(handle, pack(
            fast.stream(fast.device),
            q.data_ptr(), r, *qs, *q.stride(),
            k.data_ptr(), r, *qs, *k.stride(),
            v.data_ptr(), r, *qs, *v.stride(),
            grad_o.data_ptr(), len(ds), *ds, *grad_o.stride(),
            dq.data_ptr(), r, *qs, *contiguous,
            dk.data_ptr(), r, *qs, *contiguous,
            dv.data_ptr(), r, *qs, *contiguous,
            cu_seqlens.data_ptr(), len(cs), *cs, *cu_seqlens.stride(),
            scale)):
        return None
    return dq, dk, dv


class _FastAttentionFunction(torch.autograd.Function):
    """_AttentionFunction for the fast path: no rotary, the launch state
    carried to the backward (which reuses it instead of looking the kernel
    up)."""

    @staticmethod
    def forward(ctx, q, k, v, cu_seqlens, softmax_scale, fast):
        o = _fast_forward(fast, q, k, v, cu_seqlens, q.shape, softmax_scale)
        ctx.save_for_backward(q, k, v, cu_seqlens)
        ctx.softmax_scale, ctx.fast = softmax_scale, fast
        return o

    @staticmethod
    def backward(ctx, grad_o):
        # The engine runs a backward with grad mode on only for
        # create_graph=True: then once_differentiable's wrapper (which makes a
        # second differentiation raise); otherwise the body itself, without
        # the wrapper's no_grad context (grad mode is off already).
        if _grad_enabled():
            return _fast_backward_once(ctx, grad_o)
        return _fast_backward_body(ctx, grad_o)


def _fast_backward_body(ctx, grad_o):
    q, k, v, cu_seqlens = ctx.saved_tensors
    fast = ctx.fast
    grads = _fast_backward(fast, grad_o, q, k, v, cu_seqlens, ctx.softmax_scale)
    if grads is None:
        grads = backward(grad_o, q, k, v, cu_seqlens, fast.block_size, ctx.softmax_scale)
    return (*grads, None, None, None)


_fast_backward_once = torch.autograd.function.once_differentiable(_fast_backward_body)
_FAST_APPLY = _c_apply(_FastAttentionFunction)


def _fast_scale(fast: _FastPath, softmax_scale) -> float:
    """The scale of a fast call: the default, or a given finite positive
    float (anything else is left to the checks, which say why)."""
    if softmax_scale is None:
        return fast.scale
    if type(softmax_scale) is float and 0.0 < softmax_scale < _INF:
        return softmax_scale
    raise _REFUSED


def _fast_checked_cu(cu_seqlens, tokens: int) -> None:
    """check_inputs=True on the fast path: cu_seqlens' values must have been
    checked before, as _recalled finds them (else the checks' path checks)."""
    entry = _CHECKED_CU.get(id(cu_seqlens))
    if (entry is None or entry[0]() is not cu_seqlens or entry[1] != cu_seqlens._version
            or entry[2] != cu_seqlens.data_ptr() or entry[3] != tokens):
        raise _REFUSED


def _fast_attention(q, k, v, cu_seqlens, block_size, softmax_scale, check_inputs):
    """block_attention's fast path (see _FastPath); raises _Refused, a
    LookupError, a TypeError (an unhashable block_size) or struct.error (a
    record of another length) for a call it does not take."""
    qs = q.shape
    dtype, device = q.dtype, q.get_device()
    fast = _FAST[dtype, qs[-1], device, block_size]
    if (fast is None or k.dtype is not dtype or v.dtype is not dtype or cu_seqlens.dtype is not _INT32
            or k.get_device() != device or v.get_device() != device or cu_seqlens.get_device() != device):
        raise _REFUSED
    if softmax_scale is None:
        scale = fast.scale
    else:
        scale = _fast_scale(fast, softmax_scale)
    if check_inputs:
        _fast_checked_cu(cu_seqlens, qs[0])
    if (q.requires_grad or k.requires_grad or v.requires_grad) and _grad_enabled():
        return _FAST_APPLY(q, k, v, cu_seqlens, scale, fast)
    return _fast_forward(fast, q, k, v, cu_seqlens, qs, scale)


# block_attention_qkvpacked's fast path: the same launch state and kernels as
# _fast_attention's (the forward and backward take q, k and v as three
# tensors); q, k and v are described as the three [T, H, D] slices of qkv,
# and dq, dk and dv as those of one packed gradient, by address arithmetic
# instead of views.


def _packed_words(base: int, step: int, t: int, h: int, d: int, strides) -> tuple:
    """The record words of the three [T, H, D] slices of a [T, 3, H, D]
    tensor at `base` whose slices are `step` bytes apart."""
    s0, s2, s3 = strides[0], strides[2], strides[3]
    return (base, 3, t, h, d, s0, s2, s3,
            base + step, 3, t, h, d, s0, s2, s3,
            base + 2 * step, 3, t, h, d, s0, s2, s3)


def _fast_qkvpacked_forward(fast: _FastPath, qkv, cu_seqlens, scale):
    """o of the slices of qkv, launched through the forward's record; raises
    _Refused (nothing launched) when the library refuses the call."""
    qs, cs = qkv.shape, cu_seqlens.shape
    t, h, d = qs[0], qs[2], qs[3]
    if _one_wave(fast.forward_limit, fast.tile_rows, t, cs[0], h):
        pack, call, handle, _ = fast.forward_small or fast.load_small("forward", qkv[:, 0])
    else:
        pack, call, handle, _ = fast.forward
    strides = qkv.stride()
    o = qkv.new_empty((t, h, d))
    if call(handle, pack(
            fast.stream(fast.device),
            *_packed_words(qkv.data_ptr(), strides[1] * qkv.element_size(), t, h, d, strides),
            o.data_ptr(), 3, t, h, d, h * d, d, 1,
            cu_seqlens.data_ptr(), len(cs), *cs, *cu_seqlens.stride(),
            scale)):
        raise _REFUSED
    return o


def _fast_qkvpacked_backward(fast: _FastPath, grad_o, qkv, cu_seqlens, scale):
    """dqkv, one contiguous [T, 3, H, D] tensor whose slices the backward
    kernel writes, or None when the library refuses (the caller takes
    backward())."""
    launcher = fast.backward
    if launcher is None:
        launcher = fast.load_backward(qkv[:, 0])
    if not launcher or grad_o.dtype is not qkv.dtype:
        return None
    qs, ds, cs = qkv.shape, grad_o.shape, cu_seqlens.shape
    t, h, d = qs[0], qs[2], qs[3]
    if _one_wave(fast.backward_limit, fast.tile_rows, t, cs[0], h):
        launcher = fast.backward_small or fast.load_small("backward", qkv[:, 0])
    pack, call, handle, _ = launcher
    dqkv = qkv.new_empty(qs)
    size = qkv.element_size()
    if call(handle, pack(
            fast.stream(fast.device),
            *_packed_words(qkv.data_ptr(), qkv.stride(1) * size, t, h, d, qkv.stride()),
            grad_o.data_ptr(), len(ds), *ds, *grad_o.stride(),
            *_packed_words(dqkv.data_ptr(), h * d * size, t, h, d, (3 * h * d, h * d, d, 1)),
            cu_seqlens.data_ptr(), len(cs), *cs, *cu_seqlens.stride(),
            scale)):
        return None
    return dqkv


class _FastQKVPackedFunction(torch.autograd.Function):
    """_QKVPackedFunction for the fast path (no rotary)."""

    @staticmethod
    def forward(ctx, qkv, cu_seqlens, softmax_scale, fast):
        o = _fast_qkvpacked_forward(fast, qkv, cu_seqlens, softmax_scale)
        ctx.save_for_backward(qkv, cu_seqlens)
        ctx.softmax_scale, ctx.fast = softmax_scale, fast
        return o

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_o):
        qkv, cu_seqlens = ctx.saved_tensors
        fast = ctx.fast
        dqkv = _fast_qkvpacked_backward(fast, grad_o, qkv, cu_seqlens, ctx.softmax_scale)
        if dqkv is None:
            dqkv = _packed_empty(qkv)
            backward(grad_o, *qkv.unbind(1), cu_seqlens, fast.block_size, ctx.softmax_scale,
                     grads=dqkv.unbind(1))
        return dqkv, None, None, None


_FAST_QKVPACKED_APPLY = _c_apply(_FastQKVPackedFunction)


def _fast_qkvpacked(qkv, cu_seqlens, block_size, softmax_scale, check_inputs):
    """block_attention_qkvpacked's fast path; raises what _fast_attention
    raises for a call it does not take."""
    qs = qkv.shape
    if len(qs) != 4 or qs[1] != 3:
        raise _REFUSED
    dtype, device = qkv.dtype, qkv.get_device()
    fast = _FAST[dtype, qs[3], device, block_size]
    if fast is None or cu_seqlens.dtype is not _INT32 or cu_seqlens.get_device() != device:
        raise _REFUSED
    scale = _fast_scale(fast, softmax_scale)
    if check_inputs:
        _fast_checked_cu(cu_seqlens, qs[0])
    if qkv.requires_grad and _grad_enabled():
        return _FAST_QKVPACKED_APPLY(qkv, cu_seqlens, scale, fast)
    return _fast_qkvpacked_forward(fast, qkv, cu_seqlens, scale)


def _check_packed(name: str, t, count: int) -> None:
    """A packed [T, count, H, D] tensor: its count views must each pass
    _check_activation (the views' strides and addresses are the kernels')."""
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    if t.dim() != 4 or t.shape[1] != count:
        raise ValueError(
            f"{name}: expected a [tokens, {count}, heads, head_dim] tensor, got shape {tuple(t.shape)}"
        )
    if (t.stride(1) * t.element_size()) % 16:
        raise ValueError(
            f"{name}: the tensor-memory accelerator needs 16-byte aligned data and strides; got "
            f"strides {t.stride()}"
        )
    _check_activation(name, t[:, 0], None)


def _qkv_views(qkv, num_heads_q):
    """q, k, v of block_attention_qkvpacked's qkv, after the checks of its
    layout: ``[T, 3, H, D]`` without num_heads_q, else ``[T, Hq + 2 Hkv, D]``
    (the views' own checks follow in block_attention's)."""
    if num_heads_q is None:
        _check_packed("qkv", qkv, 3)
        return qkv.unbind(1)
    if isinstance(num_heads_q, bool) or not isinstance(num_heads_q, int) or num_heads_q < 1:
        raise ValueError(f"num_heads_q: expected a positive int, got {num_heads_q!r}")
    if not isinstance(qkv, torch.Tensor):
        raise ValueError(f"qkv: expected a torch.Tensor, got {type(qkv).__name__}")
    if qkv.dim() != 3:
        raise ValueError(
            f"qkv: with num_heads_q, expected a [tokens, num_heads_q + 2 * kv_heads, head_dim] "
            f"tensor, got shape {tuple(qkv.shape)}"
        )
    kv_heads2 = qkv.shape[1] - num_heads_q
    if kv_heads2 < 2 or kv_heads2 % 2 or num_heads_q % (kv_heads2 // 2):
        raise ValueError(
            f"num_heads_q: {num_heads_q} query heads leave {kv_heads2} of qkv's {qkv.shape[1]} "
            f"heads to k and v; expected 2 * Hkv with Hkv > 0 dividing {num_heads_q}"
        )
    return _packed_views(None, qkv, num_heads_q)


_NO_ROTARY = (None, None, None, False, False)


def _check_common(q, block_size, softmax_scale, out, cu_seqlens, check_inputs, rotary, requires_grad,
                  eager=None):
    """The checks every entry point shares; returns (softmax_scale, rope):
    rope is (cos, sin, positions, interleaved, rotate_v), _NO_ROTARY without
    rotary. `eager` is ``not torch.compiler.is_compiling()`` if the caller
    has it.

    With `check_inputs`, the values of cu_seqlens (and of the rotary
    positions) are checked once per tensor and version (_CHECKED_CU): the
    first call with a tensor copies it to the host, the next ones look it up.
    While a CUDA graph is being captured, a tensor not checked before is not
    checked (the copy would break the capture); under torch.compile neither."""
    if isinstance(block_size, bool) or not hasattr(block_size, "__index__"):
        # 64.0 == 64 would pass the membership test and name a kernel `_b64.0`.
        raise ValueError(f"block_size: expected an int, got {block_size!r} ({type(block_size).__name__})")
    if block_size not in SUPPORTED_BLOCK_SIZES:
        raise ValueError(
            f"block_size: {block_size} is not supported; supported block sizes: "
            f"{', '.join(map(str, SUPPORTED_BLOCK_SIZES))}"
        )
    if requires_grad and block_size not in _kernels.BACKWARD_BLOCK_SIZES and torch.is_grad_enabled():
        raise ValueError(
            f"block_size: {block_size} has a forward kernel only (no backward yet); block sizes with "
            f"a backward: {', '.join(map(str, _kernels.BACKWARD_BLOCK_SIZES))} (or run the forward "
            "under torch.no_grad() or with inputs that do not require grad)"
        )
    if softmax_scale is None:
        softmax_scale = 1.0 / math.sqrt(q.shape[2])
    elif not (isinstance(softmax_scale, (int, float)) and math.isfinite(softmax_scale) and softmax_scale > 0):
        raise ValueError(f"softmax_scale: expected a finite positive number, got {softmax_scale!r}")
    if eager is None:
        eager = not torch.compiler.is_compiling()
    if out is not None:
        _check_activation("out", out, q, eager)
    _check_cu_seqlens(cu_seqlens, q, check_values=False)
    cu_values = longest = None
    if check_inputs and eager:
        cu_values, longest = _checked_cu_values(cu_seqlens, q.shape[0])
    rope = _NO_ROTARY
    if rotary is not None:
        rope = _check_rotary(rotary, q, cu_values, longest)
    if out is not None and requires_grad and torch.is_grad_enabled():
        raise ValueError("out: cannot write into a given tensor when gradients are required")
    return float(softmax_scale), rope


def block_attention_qkvpacked(
    qkv: torch.Tensor,
    cu_seqlens: torch.Tensor,
    *,
    block_size: int = 64,
    softmax_scale: float | None = None,
    out: torch.Tensor | None = None,
    check_inputs: bool = True,
    rotary: Rotary | None = None,
    causal: bool = False,
    return_lse: bool = False,
    num_heads_q: int | None = None,
):
    """:func:`block_attention` of ``q, k, v = qkv.unbind(1)``, for q, k, v
    packed in one tensor (flash-attn's ``flash_attn_varlen_qkvpacked_func``
    layout), with a packed gradient.

    Args:
        qkv: ``[T, 3, H, D]``, as ``Linear(E, 3 * E)(x).view(T, 3, H, D)``
            gives it; bf16 or fp16, D in (32, 64, 96, 128, 192, 256), the last dimension
            contiguous, strides and address 16-byte aligned. It is read in
            place (no copy). With ``num_heads_q``: ``[T, Hq + 2 Hkv, D]``.
        cu_seqlens, block_size, softmax_scale, out, check_inputs, rotary,
            causal, return_lse: as for :func:`block_attention`.
        num_heads_q: grouped-query (or multi-query) attention in one tensor,
            as flash-attn's ``num_heads_q``: qkv is ``[T, Hq + 2 Hkv, D]``
            with ``Hq = num_heads_q`` query heads, then Hkv k heads, then
            Hkv v heads (``Linear(E, (Hq + 2 Hkv) * D)(x).view(T, -1, D)``),
            Hq a multiple of Hkv; query head ``h`` attends with k/v head
            ``h // (Hq / Hkv)``. Default None: the ``[T, 3, H, D]`` layout.

    Returns:
        ``o``, ``[T, H, D]`` (with ``return_lse``, ``(o, lse)``). The gradient
        with respect to ``qkv`` is one tensor of qkv's shape whose slices the
        backward kernel writes directly (with causal blocks, the log-sum-exp's
        gradient and ``num_heads_q`` too): the backward allocates nothing
        else (unlike ``block_attention`` on views of qkv, where autograd
        zero-fills a packed gradient per view and adds them).
    """
    if causal is not False or return_lse is not False or num_heads_q is not None:
        views = _qkv_views(qkv, num_heads_q)
        return _block_attention_features(*views, cu_seqlens, block_size, softmax_scale, out,
                                         check_inputs, rotary, causal, return_lse,
                                         packed=(None, qkv, num_heads_q))
    if (out is None and rotary is None and not _is_compiling() and type(qkv) is _Tensor
            and type(cu_seqlens) is _Tensor and not _functorch_active()):
        try:
            return _fast_qkvpacked(qkv, cu_seqlens, block_size, softmax_scale, check_inputs)
        except (_Refused, LookupError, TypeError, struct.error):
            pass  # as in block_attention
    _check_packed("qkv", qkv, 3)
    q, k, v = qkv.unbind(1)
    eager = not torch.compiler.is_compiling()
    scale, rope = _check_common(q, block_size, softmax_scale, out, cu_seqlens, check_inputs, rotary,
                                qkv.requires_grad, eager)
    if out is not None:
        return forward(q, k, v, cu_seqlens, block_size, scale, out, *rope)
    if eager and type(qkv) is torch.Tensor and not _functorch_active():
        if rotary is None and type(cu_seqlens) is torch.Tensor and q.is_cuda:
            _register_fast(q, block_size)
        if qkv.requires_grad and torch.is_grad_enabled():
            return _eager_apply(_QKVPackedFunction, qkv, cu_seqlens, block_size, scale, *rope)
        return forward(q, k, v, cu_seqlens, block_size, scale, None, *rope)
    return _qkvpacked_op(qkv, cu_seqlens, block_size, scale, *rope)


def block_attention_kvpacked(
    q: torch.Tensor,
    kv: torch.Tensor,
    cu_seqlens: torch.Tensor,
    *,
    block_size: int = 64,
    softmax_scale: float | None = None,
    out: torch.Tensor | None = None,
    check_inputs: bool = True,
    rotary: Rotary | None = None,
    causal: bool = False,
    return_lse: bool = False,
):
    """:func:`block_attention` of ``q`` and ``k, v = kv.unbind(1)``
    (flash-attn's ``flash_attn_varlen_kvpacked_func`` layout), with a packed
    gradient for ``kv``.

    Args:
        q: ``[T, H, D]``, as for :func:`block_attention`.
        kv: ``[T, 2, H, D]``, the same T, H, D, dtype and device as q; the
            last dimension contiguous, strides and address 16-byte aligned.
            Grouped-query attention: ``[T, 2, Hkv, D]`` with H a multiple of
            Hkv (dk and dv summed over each group, as for
            :func:`block_attention`).
        cu_seqlens, block_size, softmax_scale, out, check_inputs, rotary,
            causal, return_lse: as for :func:`block_attention`.

    Returns:
        ``o``, ``[T, H, D]`` (with ``return_lse``, ``(o, lse)``). The
        gradients are dq (``[T, H, D]``) and one ``[T, 2, H, D]`` tensor for
        kv, whose two slices the backward kernel writes directly (with
        ``causal`` or ``return_lse`` too).
    """
    _check_activation("q", q, None)
    _check_packed("kv", kv, 2)
    k, v = kv.unbind(1)
    # Grouped-query attention: kv may have Hkv heads, q's a multiple of them.
    hkv = k.shape[1]
    grouped = hkv and hkv != q.shape[1] and q.shape[1] % hkv == 0 and k.shape[::2] == q.shape[::2]
    if k.shape != q.shape and not grouped:
        raise ValueError(
            f"kv: shape {tuple(kv.shape)} does not match q's {tuple(q.shape)} "
            f"(expected [{q.shape[0]}, 2, Hkv, {q.shape[2]}] with Hkv = {q.shape[1]} or a divisor of it)"
        )
    if kv.dtype != q.dtype:
        raise ValueError(f"kv: dtype {kv.dtype} differs from q's {q.dtype}")
    if kv.device != q.device:
        raise ValueError(f"kv: on {kv.device}, but q is on {q.device}")
    if causal is not False or return_lse is not False:
        return _block_attention_features(q, k, v, cu_seqlens, block_size, softmax_scale, out, check_inputs,
                                         rotary, causal, return_lse, packed=(q, kv, None))
    eager = not torch.compiler.is_compiling()
    requires_grad = q.requires_grad or kv.requires_grad
    scale, rope = _check_common(q, block_size, softmax_scale, out, cu_seqlens, check_inputs, rotary,
                                requires_grad, eager)
    if out is not None:
        return forward(q, k, v, cu_seqlens, block_size, scale, out, *rope)
    if eager and type(q) is torch.Tensor and type(kv) is torch.Tensor and not _functorch_active():
        if requires_grad and torch.is_grad_enabled():
            return _eager_apply(_KVPackedFunction, q, kv, cu_seqlens, block_size, scale, *rope)
        return forward(q, k, v, cu_seqlens, block_size, scale, None, *rope)
    return _kvpacked_op(q, kv, cu_seqlens, block_size, scale, *rope)


def block_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    cu_seqlens: torch.Tensor,
    *,
    block_size: int = 64,
    softmax_scale: float | None = None,
    out: torch.Tensor | None = None,
    check_inputs: bool = True,
    rotary: Rotary | None = None,
    causal: bool = False,
    return_lse: bool = False,
):
    """Fixed block-diagonal self-attention over packed jagged sequences.

    Args:
        q, k, v: ``[T, H, D]`` CUDA tensors, bf16 or fp16, D in (32, 64, 96, 128, 192, 256); the
            last dimension contiguous, strides and address 16-byte aligned.
            Grouped-query (and multi-query) attention: k and v may have
            ``Hkv`` heads with q's ``H`` a multiple ``G * Hkv``; query head
            ``h`` attends with k/v head ``h // G``; the backward sums dk
            and dv over each group in the kernel (deterministic), with or
            without ``rotary``; with gradients, block sizes up to 64.
        cu_seqlens: int32 ``[B+1]``, ``cu_seqlens[0] == 0``, non-decreasing,
            ``cu_seqlens[B] == T``. Empty sequences are allowed.
        block_size: tokens per block: 16, 32 or 64 (default 64).
        softmax_scale: defaults to ``1/sqrt(D)``.
        out: optional ``[T, H, D]`` tensor to write ``o`` into (same dtype and
            device as q; last dimension contiguous, 16-byte aligned strides).
        check_inputs: also check the values of ``cu_seqlens`` (and of the
            rotary positions): a device-to-host copy the first time a tensor
            is seen, then once more after each in-place change to it through
            torch (its version counter); the next calls with the same tensor
            only look it up. Skipped under torch.compile, and while a CUDA
            graph is being captured for a tensor not checked before. (The
            checks of shapes, dtypes, devices, strides and alignment always
            run: in Python on a configuration's first call, then, for plain
            tensors without ``out`` or ``rotary``, in libblockattn_launch, which
            leaves any call it refuses to the Python checks, so a bad argument
            raises the same ``ValueError`` either way.)
        rotary: optional ``blockattn.Rotary(cos, sin, interleaved=False,
            positions=None, rotate_v=False)``: rotary position embeddings
            fused into the kernels. ``cos``/``sin`` are fp32 tables
            ``[max_position, D/2]`` on q's device (copied if not contiguous;
            no gradient flows to them). Pair ``i`` of a token at position
            ``p`` is ``(x[i], x[i + D/2])`` (half-split, "NeoX") or
            ``(x[2i], x[2i+1])`` (``interleaved=True``, "GPT-J") and turns by
            the angle of ``cos[p, i]``, ``sin[p, i]``. A token's position is
            its index inside its sequence, or ``positions[token]`` with
            ``positions`` an int32 ``[T]`` tensor; every position must be in
            ``[0, max_position)`` (checked with ``check_inputs``; the kernel
            clamps out-of-range positions for memory safety). q and k (and v
            if ``rotate_v``; o is not rotated back) are rotated in fp32 after
            loading; pass them un-rotated. The same object works with
            ``blockattn.reference.forward``.
        causal: causal attention inside each block: token ``i`` of a block
            attends to tokens ``0..i`` of its block (forward and backward).
        return_lse: also return the log-sum-exp of every query row, fp32
            ``[H, T]``: ``lse[h, t] = log(sum_j exp(scale * s_tj))`` (natural
            log, over the keys row ``t`` attends to), for merging this
            attention with another. Differentiable: its gradient adds
            ``scale * P * dlse`` to the scores' gradient (the backward runs
            the kernel without it when lse gets no gradient).

    Returns:
        ``o`` of the shape and dtype of ``q``: for each block,
        ``softmax(scale * R(Q) R(K)^T) V`` (R the rotation, or the identity
        without ``rotary``; ``R(V)`` with ``rotate_v``). Differentiable with
        respect to q, k and v, the un-rotated inputs (the backward kernel
        recomputes the softmax from q and k; only q, k, v, cu_seqlens and the
        rotary tables and positions are saved). With ``return_lse``, the pair
        ``(o, lse)``.
    """
    if causal is not False or return_lse is not False:
        return _block_attention_features(q, k, v, cu_seqlens, block_size, softmax_scale, out, check_inputs,
                                         rotary, causal, return_lse)
    if (out is None and rotary is None and not _is_compiling() and type(q) is _Tensor and type(k) is _Tensor
            and type(v) is _Tensor and type(cu_seqlens) is _Tensor and not _functorch_active()):
        try:
            return _fast_attention(q, k, v, cu_seqlens, block_size, softmax_scale, check_inputs)
        except (_Refused, LookupError, TypeError, struct.error):
            pass  # the checks below say why, or the call is one the fast path does not take
    eager = not torch.compiler.is_compiling()
    _check_activation("q", q, None, eager)
    group = _query_group(q, k)
    _check_activation("k", k, q, eager, group)
    _check_activation("v", v, q, eager, group)
    requires_grad = q.requires_grad or k.requires_grad or v.requires_grad
    scale, rope = _check_common(q, block_size, softmax_scale, out, cu_seqlens, check_inputs, rotary,
                                requires_grad, eager)
    if out is not None:
        return forward(q, k, v, cu_seqlens, block_size, scale, out, *rope)
    # Eagerly, on plain tensors: the autograd.Function (or, with no gradient
    # to compute, the launch itself), which costs less host time per call
    # than torch.library's dispatch. Under torch.compile, and for tensor
    # subclasses (fake tensors, DTensor, ...) and functorch transforms, the
    # custom op.
    if (eager and type(q) is torch.Tensor and type(k) is torch.Tensor and type(v) is torch.Tensor
            and not _functorch_active()):
        if rotary is None and group == 1 and type(cu_seqlens) is torch.Tensor and q.is_cuda:
            _register_fast(q, block_size)
        if requires_grad and torch.is_grad_enabled():
            return _eager_apply(_AttentionFunction, q, k, v, cu_seqlens, block_size, scale, *rope)
        return forward(q, k, v, cu_seqlens, block_size, scale, None, *rope)
    return _block_attention_op(q, k, v, cu_seqlens, block_size, scale, *rope)


def _block_attention_features(q, k, v, cu_seqlens, block_size, softmax_scale, out, check_inputs, rotary,
                              causal, return_lse, packed=None):
    """block_attention with causal blocks and/or the log-sum-exp: the checks,
    then the eager autograd.Function (no fast path). ``packed``, from the
    packed entry points, is ``(q or None, the packed tensor, num_heads_q)``,
    of which q, k, v are the views (_packed_views): the backward then writes
    one packed gradient (_PackedFeaturesFunction eagerly, else
    _packed_features_op)."""
    causal = _check_flag("causal", causal)
    return_lse = _check_flag("return_lse", return_lse)
    eager = not torch.compiler.is_compiling()
    _check_activation("q", q, None, eager)
    # Grouped-query attention composes with both: k and v with a G-th of
    # q's heads (the _g<G>_causal / _lse kernels).
    group = _query_group(q, k)
    _check_activation("k", k, q, eager, group)
    _check_activation("v", v, q, eager, group)
    requires_grad = q.requires_grad or k.requires_grad or v.requires_grad
    scale, rope = _check_common(q, block_size, softmax_scale, out, cu_seqlens, check_inputs, rotary,
                                requires_grad, eager)
    if out is not None:
        lse = _empty_lse(q) if return_lse else None
        o = forward(q, k, v, cu_seqlens, block_size, scale, out, *rope, causal=causal, lse=lse)
        return (o, lse) if return_lse else o
    # Under torch.compile, and for tensor subclasses and functorch transforms,
    # the custom op; eagerly the autograd.Function (or the launch itself).
    if not (eager and type(q) is torch.Tensor and type(k) is torch.Tensor and type(v) is torch.Tensor
            and not _functorch_active()):
        if packed is not None:
            q_or_none, tensor, num_heads_q = packed
            o, lse = _packed_features_op(q_or_none, tensor, num_heads_q or 0, cu_seqlens,
                                         block_size, scale, causal, return_lse, *rope)
        else:
            o, lse = _features_op(q, k, v, cu_seqlens, block_size, scale, causal, return_lse, *rope)
        return (o, lse) if return_lse else o
    if not (requires_grad and torch.is_grad_enabled()):
        lse = _empty_lse(q) if return_lse else None
        o = forward(q, k, v, cu_seqlens, block_size, scale, None, *rope, causal=causal, lse=lse)
        return (o, lse) if return_lse else o
    if packed is not None:
        o, lse = _PackedFeaturesFunction.apply(*packed, cu_seqlens, block_size, scale, causal,
                                               return_lse, *rope)
    else:
        o, lse = _FeaturesFunction.apply(q, k, v, cu_seqlens, block_size, scale, causal,
                                         return_lse, *rope)
    return (o, lse) if return_lse else o


# The custom ops of causal blocks and the log-sum-exp (torch.compile): the
# forward returns (o, lse), lse an empty [0, 0] tensor without return_lse (a
# custom op returns tensors); the backward takes dlse or None.


@torch.library.custom_op("blockattn::block_attention_features", mutates_args=())
def _features_op(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens: torch.Tensor,
    block_size: int, softmax_scale: float, causal: bool, return_lse: bool,
    cos: Optional[torch.Tensor] = None, sin: Optional[torch.Tensor] = None,
    positions: Optional[torch.Tensor] = None, interleaved: bool = False, rotate_v: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    return _features_forward(q, k, v, cu_seqlens, block_size, softmax_scale, causal, return_lse,
                             cos, sin, positions, interleaved, rotate_v)


def _features_forward(q, k, v, cu_seqlens, block_size, softmax_scale, causal, return_lse, cos, sin,
                      positions, interleaved, rotate_v):
    """The features ops' forward: (o, lse), lse an empty [0, 0] tensor
    without return_lse."""
    lse = _empty_lse(q) if return_lse else q.new_empty((0, 0), dtype=torch.float32)
    o = forward(q, k, v, cu_seqlens, block_size, softmax_scale, None, cos, sin, positions, interleaved,
                rotate_v, causal=causal, lse=lse if return_lse else None)
    return o, lse


@_features_op.register_fake
def _(q, k, v, cu_seqlens, block_size, softmax_scale, causal, return_lse, cos=None, sin=None,
      positions=None, interleaved=False, rotate_v=False):
    return _empty(q), (_empty_lse(q) if return_lse else q.new_empty((0, 0), dtype=torch.float32))


@torch.library.custom_op("blockattn::block_attention_features_backward", mutates_args=())
def _features_backward_op(
    grad_o: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens: torch.Tensor,
    block_size: int, softmax_scale: float, causal: bool, dlse: Optional[torch.Tensor] = None,
    cos: Optional[torch.Tensor] = None, sin: Optional[torch.Tensor] = None,
    positions: Optional[torch.Tensor] = None, interleaved: bool = False, rotate_v: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return backward(grad_o, q, k, v, cu_seqlens, block_size, softmax_scale, cos, sin, positions, interleaved,
                    rotate_v, causal=causal, dlse=dlse)


@_features_backward_op.register_fake
def _(grad_o, q, k, v, cu_seqlens, block_size, softmax_scale, causal, dlse=None, cos=None, sin=None,
      positions=None, interleaved=False, rotate_v=False):
    return _empty(q), _empty(k), _empty(v)


def _features_setup_context(ctx, inputs, output):
    q, k, v, cu_seqlens, block_size, softmax_scale, causal, return_lse, cos, sin, positions, interleaved, \
        rotate_v = inputs
    ctx.save_for_backward(q, k, v, cu_seqlens, cos, sin, positions)
    ctx.block_size, ctx.softmax_scale, ctx.causal, ctx.return_lse = block_size, softmax_scale, causal, return_lse
    ctx.interleaved, ctx.rotate_v = interleaved, rotate_v


def _features_backward_rule(ctx, grad_o, grad_lse):
    q, k, v, cu_seqlens, cos, sin, positions = ctx.saved_tensors
    dlse = grad_lse if ctx.return_lse else None
    if grad_o is None:
        grad_o = torch.zeros_like(q)
    dq, dk, dv = _features_backward_op(grad_o, q, k, v, cu_seqlens, ctx.block_size, ctx.softmax_scale,
                                       ctx.causal, dlse, cos, sin, positions, ctx.interleaved, ctx.rotate_v)
    return dq, dk, dv, *(None,) * 10


_features_op.register_autograd(_features_backward_rule, setup_context=_features_setup_context)


# The custom ops of the packed entry points with causal blocks, the
# log-sum-exp or a grouped qkv (torch.compile): _PackedFeaturesFunction's
# forward and backward. q is None for qkv (the backward's dq is then an empty
# [0] tensor: a custom op returns tensors); num_heads_q 0 stands for None.


@torch.library.custom_op("blockattn::block_attention_packed_features", mutates_args=())
def _packed_features_op(
    q: Optional[torch.Tensor], packed: torch.Tensor, num_heads_q: int, cu_seqlens: torch.Tensor,
    block_size: int, softmax_scale: float, causal: bool, return_lse: bool,
    cos: Optional[torch.Tensor] = None, sin: Optional[torch.Tensor] = None,
    positions: Optional[torch.Tensor] = None, interleaved: bool = False, rotate_v: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    return _features_forward(*_packed_views(q, packed, num_heads_q or None), cu_seqlens, block_size,
                             softmax_scale, causal, return_lse, cos, sin, positions, interleaved,
                             rotate_v)


@_packed_features_op.register_fake
def _(q, packed, num_heads_q, cu_seqlens, block_size, softmax_scale, causal, return_lse, cos=None,
      sin=None, positions=None, interleaved=False, rotate_v=False):
    views = _packed_views(q, packed, num_heads_q or None)
    return _empty(views[0]), (_empty_lse(views[0]) if return_lse
                              else packed.new_empty((0, 0), dtype=torch.float32))


@torch.library.custom_op("blockattn::block_attention_packed_features_backward", mutates_args=())
def _packed_features_backward_op(
    grad_o: Optional[torch.Tensor], q: Optional[torch.Tensor], packed: torch.Tensor,
    num_heads_q: int,
    cu_seqlens: torch.Tensor, block_size: int, softmax_scale: float, causal: bool,
    dlse: Optional[torch.Tensor] = None, cos: Optional[torch.Tensor] = None,
    sin: Optional[torch.Tensor] = None, positions: Optional[torch.Tensor] = None,
    interleaved: bool = False, rotate_v: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    dq, dpacked = _packed_features_backward(grad_o, q, packed, num_heads_q or None, cu_seqlens,
                                            block_size, softmax_scale, causal, dlse, cos, sin,
                                            positions, interleaved, rotate_v)
    return (packed.new_empty((0,)) if dq is None else dq), dpacked


@_packed_features_backward_op.register_fake
def _(grad_o, q, packed, num_heads_q, cu_seqlens, block_size, softmax_scale, causal, dlse=None,
      cos=None, sin=None, positions=None, interleaved=False, rotate_v=False):
    return (_empty(q) if q is not None else packed.new_empty((0,))), _packed_empty(packed)


def _packed_features_setup_context(ctx, inputs, output):
    q, packed, num_heads_q, cu_seqlens, block_size, softmax_scale, causal, return_lse, cos, sin, \
        positions, interleaved, rotate_v = inputs
    ctx.save_for_backward(q, packed, cu_seqlens, cos, sin, positions)
    ctx.num_heads_q, ctx.block_size, ctx.softmax_scale = num_heads_q, block_size, softmax_scale
    ctx.causal, ctx.return_lse = causal, return_lse
    ctx.interleaved, ctx.rotate_v = interleaved, rotate_v


def _packed_features_backward_rule(ctx, grad_o, grad_lse):
    q, packed, cu_seqlens, cos, sin, positions = ctx.saved_tensors
    dlse = grad_lse if ctx.return_lse else None
    dq, dpacked = _packed_features_backward_op(grad_o, q, packed, ctx.num_heads_q, cu_seqlens,
                                               ctx.block_size, ctx.softmax_scale, ctx.causal, dlse,
                                               cos, sin, positions, ctx.interleaved, ctx.rotate_v)
    return (dq if q is not None else None), dpacked, *(None,) * 11


_packed_features_op.register_autograd(_packed_features_backward_rule,
                                      setup_context=_packed_features_setup_context)
