"""``blockattn.block_attention``: the PyTorch entry point.

Conventions follow FlashAttention's varlen API: ``q``, ``k``, ``v`` are
``[T, H, D]`` (total tokens, heads, head dim) tensors of packed sequences,
``cu_seqlens`` the int32 offsets ``[B+1]`` of the sequences. Every sequence is
cut into blocks of ``block_size`` tokens from its first token (the last block
may be partial) and each token attends to the tokens of its block only.
"""

from __future__ import annotations

import math

import torch

from . import _driver, _kernels

__all__ = ["block_attention", "forward", "backward"]

SUPPORTED_HEAD_DIMS = (64, 128)
SUPPORTED_BLOCK_SIZES = (64,)
_DTYPE_NAMES = {torch.bfloat16: "bf16", torch.float16: "f16"}


def _check_activation(name: str, t, ref: torch.Tensor | None) -> None:
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    if t.dim() != 3:
        raise ValueError(f"{name}: expected a [tokens, heads, head_dim] tensor, got shape {tuple(t.shape)}")
    if not t.is_cuda:
        raise ValueError(f"{name}: expected a CUDA tensor, got one on {t.device}")
    if t.dtype not in _DTYPE_NAMES:
        raise ValueError(f"{name}: expected dtype torch.bfloat16 or torch.float16, got {t.dtype}")
    if t.shape[2] not in SUPPORTED_HEAD_DIMS:
        raise ValueError(
            f"{name}: head_dim {t.shape[2]} is not supported; supported head dims: "
            f"{', '.join(map(str, SUPPORTED_HEAD_DIMS))}"
        )
    if t.stride(2) != 1:
        raise ValueError(f"{name}: the head_dim dimension must be contiguous (stride 1), got stride {t.stride(2)}")
    esize = t.element_size()
    # Under torch.compile the tensors are fake and have no address; the eager
    # call checks it.
    misaligned = not torch.compiler.is_compiling() and t.data_ptr() % 16
    if (t.stride(0) * esize) % 16 or (t.stride(1) * esize) % 16 or misaligned:
        raise ValueError(
            f"{name}: the tensor-memory accelerator needs 16-byte aligned data and token/head "
            f"strides; got strides {t.stride()} and address {t.data_ptr():#x}"
        )
    if ref is not None:
        if t.shape != ref.shape:
            raise ValueError(f"{name}: shape {tuple(t.shape)} differs from q's {tuple(ref.shape)}")
        if t.dtype != ref.dtype:
            raise ValueError(f"{name}: dtype {t.dtype} differs from q's {ref.dtype}")
        if t.device != ref.device:
            raise ValueError(f"{name}: on {t.device}, but q is on {ref.device}")


def _check_cu_seqlens(cu_seqlens, q: torch.Tensor, check_values: bool) -> None:
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
        return
    values = cu_seqlens.cpu()
    if values[0].item() != 0:
        raise ValueError(f"cu_seqlens: must start at 0, starts at {values[0].item()}")
    if values.numel() > 1 and bool((values[1:] < values[:-1]).any()):
        raise ValueError("cu_seqlens: must be non-decreasing")
    if values[-1].item() != q.shape[0]:
        raise ValueError(
            f"cu_seqlens: the last offset must equal the number of tokens {q.shape[0]}, got {values[-1].item()}"
        )


def _num_sms(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def _launch(kind: str, like: torch.Tensor, block_size: int, tensors: dict, softmax_scale: float) -> None:
    """Launches the `kind` kernel specialized for `like`'s head dim and dtype."""
    key = _kernels.KernelKey(
        kind=kind,
        head_dim=like.shape[2],
        block_size=block_size,
        dtype=_DTYPE_NAMES[like.dtype],
        chip=_driver.chip_of(like.device),
    )
    kernel = _driver.load_kernel(_kernels.find_kernel(key), like.device)
    with torch.cuda.device(like.device):
        kernel.launch(
            grid=_num_sms(like.device),
            tensors=tensors,
            scalars={"softmax_scale": float(softmax_scale)},
        )


def _empty(q: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(q, memory_format=torch.contiguous_format)


def forward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    cu_seqlens: torch.Tensor,
    block_size: int,
    softmax_scale: float,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Launches the forward kernel on validated inputs; returns o."""
    o = _empty(q) if out is None else out
    if q.shape[0] and q.shape[1]:
        tensors = {"q": q, "k": k, "v": v, "o": o, "cu_seqlens": cu_seqlens}
        _launch("forward", q, block_size, tensors, softmax_scale)
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
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Launches the backward kernel; returns dq, dk, dv.

    It reads q, k, v and dO only: no forward output, no logsumexp, no
    preprocessing kernel, no atomics (deterministic)."""
    dq, dk, dv = _empty(q), _empty(k), _empty(v)
    if q.shape[0] and q.shape[1]:
        tensors = {
            "q": q, "k": k, "v": v, "do": _tma_ready(grad_o.to(q.dtype)),
            "dq": dq, "dk": dk, "dv": dv, "cu_seqlens": cu_seqlens,
        }
        _launch("backward", q, block_size, tensors, softmax_scale)
    return dq, dk, dv


# The differentiable operator, registered with torch.library so that it
# works under torch.compile (the fake implementations give shapes without
# running anything) and saves only q, k, v and cu_seqlens for the backward.


@torch.library.custom_op("blockattn::block_attention", mutates_args=())
def _block_attention_op(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens: torch.Tensor,
    block_size: int, softmax_scale: float,
) -> torch.Tensor:
    return forward(q, k, v, cu_seqlens, block_size, softmax_scale)


@_block_attention_op.register_fake
def _(q, k, v, cu_seqlens, block_size, softmax_scale):
    return _empty(q)


@torch.library.custom_op("blockattn::block_attention_backward", mutates_args=())
def _block_attention_backward_op(
    grad_o: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    cu_seqlens: torch.Tensor, block_size: int, softmax_scale: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return backward(grad_o, q, k, v, cu_seqlens, block_size, softmax_scale)


@_block_attention_backward_op.register_fake
def _(grad_o, q, k, v, cu_seqlens, block_size, softmax_scale):
    return _empty(q), _empty(k), _empty(v)


def _setup_context(ctx, inputs, output):
    q, k, v, cu_seqlens, block_size, softmax_scale = inputs
    ctx.save_for_backward(q, k, v, cu_seqlens)
    ctx.block_size = block_size
    ctx.softmax_scale = softmax_scale


def _backward_rule(ctx, grad_o):
    q, k, v, cu_seqlens = ctx.saved_tensors
    dq, dk, dv = _block_attention_backward_op(
        grad_o, q, k, v, cu_seqlens, ctx.block_size, ctx.softmax_scale
    )
    return dq, dk, dv, None, None, None


_block_attention_op.register_autograd(_backward_rule, setup_context=_setup_context)


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
) -> torch.Tensor:
    """Fixed block-diagonal self-attention over packed jagged sequences.

    Args:
        q, k, v: ``[T, H, D]`` CUDA tensors, bf16 or fp16, D in (64, 128); the
            last dimension contiguous, strides and address 16-byte aligned.
        cu_seqlens: int32 ``[B+1]``, ``cu_seqlens[0] == 0``, non-decreasing,
            ``cu_seqlens[B] == T``. Empty sequences are allowed.
        block_size: tokens per block (64).
        softmax_scale: defaults to ``1/sqrt(D)``.
        out: optional ``[T, H, D]`` tensor to write ``o`` into (same dtype and
            device as q; last dimension contiguous, 16-byte aligned strides).
        check_inputs: also check the values of ``cu_seqlens`` (a device-to-host
            copy; skipped automatically while a CUDA graph is being captured).

    Returns:
        ``o`` of the shape and dtype of ``q``: for each block,
        ``softmax(scale * Q K^T) V``. Differentiable with respect to q, k and
        v (the backward kernel recomputes the softmax from q and k; only q, k,
        v and cu_seqlens are saved).
    """
    _check_activation("q", q, None)
    _check_activation("k", k, q)
    _check_activation("v", v, q)
    if block_size not in SUPPORTED_BLOCK_SIZES:
        raise ValueError(
            f"block_size: {block_size} is not supported; supported block sizes: "
            f"{', '.join(map(str, SUPPORTED_BLOCK_SIZES))}"
        )
    if softmax_scale is None:
        softmax_scale = 1.0 / math.sqrt(q.shape[2])
    elif not (isinstance(softmax_scale, (int, float)) and math.isfinite(softmax_scale) and softmax_scale > 0):
        raise ValueError(f"softmax_scale: expected a finite positive number, got {softmax_scale!r}")
    if out is not None:
        _check_activation("out", out, q)
    check_values = (
        check_inputs and not torch.compiler.is_compiling() and not torch.cuda.is_current_stream_capturing()
    )
    _check_cu_seqlens(cu_seqlens, q, check_values=check_values)
    if out is not None:
        if torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v)):
            raise ValueError("out: cannot write into a given tensor when gradients are required")
        return forward(q, k, v, cu_seqlens, block_size, float(softmax_scale), out=out)
    return _block_attention_op(q, k, v, cu_seqlens, block_size, float(softmax_scale))
