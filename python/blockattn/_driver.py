"""Loading and launching compiled kernels with the CUDA driver API.

Everything a launch needs comes from the kernel's manifest: the threads per
CTA, the dynamic shared memory, and the ordered parameter list, where each
parameter says what to pass (a tensor map of a tensor, a pointer, a size or a
stride, a scalar). Launches go to PyTorch's current stream.

Modules are loaded with cuda.bindings, once per kernel and device. Launches go
through libblockattn_launch (``blockattn._launch``: the manifest turned once
into a launch plan, tensor maps encoded and kept in native code) when the
library is there; without it (or with ``BLOCKATTN_LAUNCH=python``) they go
through cuda.bindings from Python, which costs more host time per call.
"""

from __future__ import annotations

import ctypes
import os
import threading

import torch
from cuda.bindings import driver as cu

from . import _launch
from ._kernels import KernelFiles, grid_inputs, grid_of, grid_tensor

__all__ = ["LoadedKernel", "load_kernel", "chip_of"]


def _check(result):
    """Unpacks a cuda.bindings (err, *values) tuple, raising on errors."""
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        raise RuntimeError(f"blockattn: CUDA driver error {name.decode() if name else err}")
    if not values:
        return None
    return values[0] if len(values) == 1 else values


_DTYPES = {
    torch.bfloat16: cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    torch.float16: cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
}
_SWIZZLE = {
    # 16-column boxes (head dim 96's half-split pair-complete pieces, chunk_cols = 16).
    "32B": cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_32B,
    "64B": cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B,
    "128B": cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
}
_L2 = {
    "none": cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
    "64B": cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
    "128B": cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
    "256B": cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
}


def chip_of(device: torch.device) -> str:
    """The compiler's chip name for a CUDA device."""
    major, minor = torch.cuda.get_device_capability(device)
    if (major, minor) == (9, 0):
        return "sm_90a"
    if major == 10 and minor == 0:
        return "sm_100a"
    raise ValueError(
        f"device: blockattn kernels run on sm_90a (H100/H200) and sm_100a (B200); "
        f"this device is sm_{major}{minor}"
    )


class _TensorMapArg(ctypes.Structure):
    """A 128-byte CUtensorMap passed by value (the driver copies it into the
    kernel's 64-byte-aligned parameter slot)."""

    _fields_ = [("bytes", ctypes.c_uint64 * 16)]


def _tensor_map(spec: dict, tensor: torch.Tensor) -> _TensorMapArg:
    """Encodes the TMA descriptor of a [T, H, D] tensor as the manifest asks:
    rank 3 (D, H, T innermost first)."""
    esize = tensor.element_size()
    dims = [tensor.shape[2], tensor.shape[1], tensor.shape[0]]
    strides = [tensor.stride(1) * esize, tensor.stride(0) * esize]
    rank = len(spec["box"])
    tmap = _check(
        cu.cuTensorMapEncodeTiled(
            _DTYPES[tensor.dtype],
            rank,
            tensor.data_ptr(),
            [cu.cuuint64_t(d) for d in dims],
            [cu.cuuint64_t(s) for s in strides],
            [cu.cuuint32_t(b) for b in spec["box"]],
            [cu.cuuint32_t(1)] * rank,
            cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            _SWIZZLE[spec["swizzle"]],
            _L2[spec["l2_promotion"]],
            # Zero fill past T: V rows past T are multiplied by P = 0, and
            # 0 * NaN would not be 0.
            cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    )
    arg = _TensorMapArg()
    ctypes.memmove(ctypes.addressof(arg), tmap.getPtr(), 128)
    return arg


def _handle(obj) -> int:
    """The value of a cuda.bindings driver handle (CUfunction, CUcontext)."""
    try:
        return int(obj)
    except TypeError:
        return ctypes.c_void_p.from_address(obj.getPtr()).value or 0


_CONTEXTS: dict[int, object] = {}


def _make_context_current(index: int) -> None:
    """Makes device `index`'s primary context (PyTorch's) current on this thread.

    The driver API's current context is per thread, and PyTorch binds it only
    lazily: the autograd engine runs backward passes on threads of its own
    where no context may be current yet."""
    ctx = _CONTEXTS.get(index)
    if ctx is None:
        device = _check(cu.cuDeviceGet(index))
        ctx = _check(cu.cuDevicePrimaryCtxRetain(device))
        _CONTEXTS[index] = ctx
    _check(cu.cuCtxSetCurrent(ctx))


_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _current_stream(index: int) -> int:
    """The CUstream of PyTorch's current stream on device `index`."""
    if _raw_stream is not None:
        return _raw_stream(index)
    return torch.cuda.current_stream(index).cuda_stream


_PADS = tuple((0,) * (_launch.MAX_RANK - rank) for rank in range(_launch.MAX_RANK + 1))

# What a record launch (libblockattn_launch's blockattnLaunchRecord) checks of
# each tensor a kernel takes, by the manifest's tensor names: (rank, the tensor
# whose shape it must have, flags). Activations and their gradients are
# [T, H, D] with q's shape (their tensor maps check the innermost stride, the
# 16-byte alignment of address and strides, and T, H > 0); cu_seqlens and
# the rotary positions are contiguous 1-D int32; the rotary tables are
# contiguous, 16-byte aligned [P, D/2] fp32 (what blockattn.api's checks
# make of them). A kernel that takes a tensor not named here is launched
# without a record.
_ACTIVATION = (3, "q", _launch.NONEMPTY)
_TABLE = (2, None, _launch.CONTIGUOUS | _launch.ALIGNED | _launch.NONEMPTY)
RECORD_RULES = {
    "q": (3, None, _launch.NONEMPTY),
    **{name: _ACTIVATION for name in ("k", "v", "o", "do", "dq", "dk", "dv")},
    "cu_seqlens": (1, None, _launch.CONTIGUOUS | _launch.NONEMPTY),
    "positions": (1, None, _launch.CONTIGUOUS | _launch.NONEMPTY),
    "cos": _TABLE,
    "sin": _TABLE,
    # The log-sum-exp and its gradient: contiguous fp32 [H, T] (blockattn.api
    # allocates the one and makes the other so).
    "lse": (2, None, _launch.CONTIGUOUS | _launch.NONEMPTY),
    "dlse": (2, None, _launch.CONTIGUOUS | _launch.NONEMPTY),
    # A dynamic schedule's counters (the manifest's "schedule"): an int32
    # [2] that LoadedKernel passes, one per device and stream.
    "schedule": (1, None, _launch.CONTIGUOUS | _launch.NONEMPTY),
}

# The counters of dynamic schedules, by (device, stream): zeroed once, and
# left zeroed by every kernel that claims from them (the last CTA resets
# them), so launches in one stream share them; kernels on two streams may
# run at once, so each stream has its own.
_SCHEDULES: dict[tuple[int, int], torch.Tensor] = {}


def schedule_counters(device_index: int, stream: int, words: int) -> torch.Tensor:
    """The zeroed int32 counters of a dynamic schedule for launches on `stream`."""
    key = (device_index, stream)
    counters = _SCHEDULES.get(key)
    if counters is None or counters.numel() < words:
        # Allocated in the stream's order, before the kernel that reads it.
        counters = torch.zeros(words, dtype=torch.int32, device=torch.device("cuda", device_index))
        _SCHEDULES[key] = counters
    return counters


def record_rules(manifest: dict) -> dict:
    """RECORD_RULES for a kernel: with grouped-query attention (the
    manifest's group G > 1), k and v (and dk, dv) have q's shape with a G-th
    of its heads."""
    group = int(manifest.get("group", 1))
    if group <= 1:
        return RECORD_RULES
    return {**RECORD_RULES, **{name: (3, "q", _launch.NONEMPTY, group) for name in ("k", "v", "dk", "dv")}}


class LoadedKernel:
    """One kernel loaded into a device's primary context."""

    def __init__(self, files: KernelFiles, device_index: int = 0):
        self.device_index = device_index
        _make_context_current(device_index)
        self.files = files
        self.manifest = files.manifest
        self.module = _check(cu.cuModuleLoadData(files.image()))
        self.function = _check(cu.cuModuleGetFunction(self.module, files.name.encode()))
        self.threads = int(self.manifest["threads"])
        self.smem = int(self.manifest["smem_bytes"])
        _check(
            cu.cuFuncSetAttribute(
                self.function,
                cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                self.smem,
            )
        )
        self._grid_inputs = grid_inputs(self.manifest)  # launch_grid's, read once
        # A dynamic schedule: the tensor name and words of its counters.
        schedule = self.manifest.get("schedule")
        self._schedule = None if schedule is None else (schedule["tensor"], int(schedule["words"]))
        self.num_sms = torch.cuda.get_device_properties(device_index).multi_processor_count
        self.plan = None
        # With a plan whose tensors all have rules: the record launch (one
        # foreign call that checks, computes the grid and launches).
        self.record = None
        if os.environ.get("BLOCKATTN_LAUNCH", "native") != "python" and _launch.library() is not None:
            self.plan = _launch.Plan(self.manifest, _handle(self.function), _handle(_CONTEXTS[device_index]))
            if all(name in RECORD_RULES for name in self.plan.tensor_names):
                self.plan.set_record(self.manifest, record_rules(self.manifest), self._grid_inputs, self.num_sms)
                self.record = self.plan

    def _argument(self, spec: dict, tensors: dict, scalars: dict):
        kind = spec["kind"]
        if kind == "f32":
            return ctypes.c_float(scalars[spec["tensor"]])
        tensor = tensors[spec["tensor"]]
        if kind == "tensormap":
            return _tensor_map(spec, tensor)
        if kind == "pointer":
            return ctypes.c_uint64(tensor.data_ptr())
        if spec["value"] == "size":
            value = tensor.shape[spec["dim"]]
        elif spec["value"] == "stride":
            value = tensor.stride(spec["dim"])
        else:
            raise RuntimeError(f"blockattn: unknown manifest parameter {spec}")
        return ctypes.c_int32(value) if kind == "i32" else ctypes.c_int64(value)

    def grid(self, num_sms: int, tensors: dict) -> int:
        """The grid this kernel's manifest asks for (see launch_grid)."""
        return grid_of(self._grid_inputs, num_sms, tensors[grid_tensor(self.manifest)].shape,
                       tensors["cu_seqlens"].shape[0])

    def _with_schedule(self, tensors: dict, stream: int) -> dict:
        """`tensors` and, for a dynamic schedule the caller did not pass, the
        stream's counters."""
        name, words = self._schedule
        if name in tensors:
            return tensors
        return {**tensors, name: schedule_counters(self.device_index, stream, words)}

    def call(self, tensors: dict, scalars: dict) -> None:
        """Launches on the current stream of the kernel's device with the grid
        the manifest asks for; `tensors` and `scalars` by name."""
        plan = self.record
        if plan is None:
            self.launch(self.grid(self.num_sms, tensors), tensors, scalars)
            return
        stream = _current_stream(self.device_index)
        if self._schedule is not None:
            tensors = self._with_schedule(tensors, stream)
        values = [stream]
        for name in plan.tensor_names:
            t = tensors[name]
            shape = t.shape
            values += (t.data_ptr(), len(shape), *shape, *t.stride())
        values += [scalars[name] for name in plan.scalar_names]
        plan.launch_record(values)

    def launch(self, grid: int, tensors: dict, scalars: dict) -> None:
        """Launches on the current stream of the kernel's device; `tensors`
        and `scalars` by name."""
        if self._schedule is not None:
            tensors = self._with_schedule(tensors, _current_stream(self.device_index))
        plan = self.plan
        if plan is not None:
            # Plan.tensor_values inlined: this loop runs for every tensor of
            # every launch. The tensors are [T, H, D] or 1-D (rank 3 or 1).
            values = []
            for name in plan.tensor_names:
                t = tensors[name]
                shape = t.shape
                pad = _PADS[len(shape)]
                values += (t.data_ptr(), *shape, *pad, *t.stride(), *pad, len(shape), t.element_size())
            plan.launch(grid, _current_stream(self.device_index), values,
                        [scalars[name] for name in plan.scalar_names])
            return
        _make_context_current(self.device_index)
        args = [self._argument(p, tensors, scalars) for p in self.manifest["params"]]
        pointers = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
        stream = _current_stream(self.device_index)
        _check(
            cu.cuLaunchKernel(
                self.function,
                grid, 1, 1,
                self.threads, 1, 1,
                self.smem,
                cu.CUstream(stream),
                ctypes.addressof(pointers),
                0,
            )
        )


_LOADED: dict[tuple[int, str], LoadedKernel] = {}
_LOCK = threading.Lock()


def load_kernel(files: KernelFiles, device: torch.device) -> LoadedKernel:
    """The kernel loaded in `device`'s primary context (loaded once)."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    key = (index, files.name)
    with _LOCK:
        kernel = _LOADED.get(key)
        if kernel is None:
            torch.cuda.init()
            kernel = LoadedKernel(files, index)
            _LOADED[key] = kernel
    return kernel
