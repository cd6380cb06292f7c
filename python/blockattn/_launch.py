"""The ctypes binding of libblockattn_launch (include/blockattn-c/Launch.h).

libblockattn_launch is the launch path in native code: a plain C library over
the CUDA driver API (no torch or CPython ABI, so one wheel serves every
Python and torch). A :class:`Plan` is a kernel's manifest turned, once, into
the library's parameter array; :meth:`Plan.launch` passes the call's tensors
as (address, shape, strides) and the library encodes the tensor maps (kept
per address, shape and strides) and launches. :meth:`Plan.set_record` adds
the rules that let :meth:`Plan.record_call` take a whole call as one struct-
packed record (stream; each tensor's address, rank, sizes and strides; the
scalars): the library checks the tensors, computes the grid and launches in
one foreign call.

The library is looked up in ``$BLOCKATTN_LAUNCH_LIBRARY``, then the wheel's
``blockattn/_native/``, then this checkout's ``build/lib/``. Without it,
:func:`library` is None and ``blockattn._driver`` launches through
cuda.bindings in Python (slower per call; same kernels, same arguments).
This module needs neither torch nor a GPU.
"""

from __future__ import annotations

import ctypes
import os
import pathlib
import struct

from ._kernels import NATIVE_DIR, _REPO_ROOT, grid_tensor

__all__ = ["ABI_VERSION", "library", "library_path", "Plan", "LaunchError", "CONTIGUOUS", "ALIGNED", "NONEMPTY"]

ABI_VERSION = 3
MAX_RANK = 5
LIBRARY_NAME = "libblockattn_launch.so"

# blockattn_param_kind
TENSORMAP, POINTER, SIZE_I32, SIZE_I64, STRIDE_I32, STRIDE_I64, F32 = range(7)
# blockattn_tensor_rule's flags
CONTIGUOUS, ALIGNED, NONEMPTY = 1, 2, 4
# The manifest's element types, in bytes.
ELEMENT_SIZES = {"bf16": 2, "f16": 2, "f32": 4, "i32": 4}
# The driver's enums (cuda.h): CUtensorMapDataType, ...Swizzle,
# ...L2promotion, ...FloatOOBfill, ...Interleave.
DATA_TYPES = {"f16": 6, "bf16": 9}
SWIZZLES = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
L2_PROMOTIONS = {"none": 0, "64B": 1, "128B": 2, "256B": 3}
# "zero" is CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: out-of-bounds elements read
# as zero (V rows past T are multiplied by P = 0, and 0 * NaN is not 0).
OOB_FILLS = {"zero": 0, "nan": 1}
INTERLEAVES = {"none": 0}


class LaunchError(RuntimeError):
    """A failure the library reported, with its message."""


class Param(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int32), ("tensor", ctypes.c_int32), ("dim", ctypes.c_int32),
        ("data_type", ctypes.c_int32), ("swizzle", ctypes.c_int32),
        ("l2_promotion", ctypes.c_int32), ("oob_fill", ctypes.c_int32),
        ("interleave", ctypes.c_int32), ("box", ctypes.c_uint32 * MAX_RANK), ("rank", ctypes.c_uint32),
    ]


class Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_uint64), ("shape", ctypes.c_int64 * MAX_RANK),
        ("strides", ctypes.c_int64 * MAX_RANK), ("rank", ctypes.c_int32),
        ("element_size", ctypes.c_int32),
    ]


class TensorRule(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int32), ("shape_of", ctypes.c_int32), ("element_size", ctypes.c_int32),
                ("flags", ctypes.c_uint32), ("group", ctypes.c_int32)]


class Grid(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int32) for name in (
        "chunked", "ctas_per_sm", "block_size", "tiles_per_cta", "num_sms", "tokens", "offsets", "blocks_per_tile")]


# One blockattn_tensor, packed by struct (one call per launch, not a ctypes
# field assignment per value).
_TENSOR_FORMAT = "Q5q5qii"
assert struct.calcsize("<" + _TENSOR_FORMAT) == ctypes.sizeof(Tensor)

_ENCODE = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
    ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32),
    ctypes.POINTER(ctypes.c_uint32), ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int)
_LAUNCH = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32,
    ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p,
    ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p))
_SET_CURRENT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
_ERROR_NAME = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p))


class Driver(ctypes.Structure):
    """blockattn_driver: the driver entry points (tests install their own)."""

    _fields_ = [
        ("tensorMapEncodeTiled", _ENCODE), ("launchKernel", _LAUNCH),
        ("ctxSetCurrent", _SET_CURRENT), ("getErrorName", _ERROR_NAME),
    ]


def library_path() -> pathlib.Path | None:
    """Where libblockattn_launch is, or None."""
    env = os.environ.get("BLOCKATTN_LAUNCH_LIBRARY")
    if env:
        return pathlib.Path(env)
    for candidate in (NATIVE_DIR / LIBRARY_NAME, _REPO_ROOT / "build" / "lib" / LIBRARY_NAME):
        if candidate.is_file():
            return candidate
    return None


def _bind(lib: ctypes.CDLL) -> ctypes.CDLL:
    lib.blockattnLaunchAbiVersion.restype = ctypes.c_int32
    lib.blockattnLaunchAbiVersion.argtypes = []
    lib.blockattnLaunchLastError.restype = ctypes.c_char_p
    lib.blockattnLaunchLastError.argtypes = []
    lib.blockattnLaunchDriverAvailable.restype = ctypes.c_int
    lib.blockattnLaunchDriverAvailable.argtypes = []
    lib.blockattnPlanCreate.restype = ctypes.c_int
    lib.blockattnPlanCreate.argtypes = [
        ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(Param),
        ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)]
    lib.blockattnPlanDestroy.restype = None
    lib.blockattnPlanDestroy.argtypes = [ctypes.c_void_p]
    # The tensors and scalars are passed as bytes (struct-packed): c_char_p
    # hands over the bytes' own buffer, with no copy.
    lib.blockattnLaunch.restype = ctypes.c_int
    lib.blockattnLaunch.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_char_p,
                                    ctypes.c_char_p]
    lib.blockattnPlanEncodeCount.restype = ctypes.c_uint64
    lib.blockattnPlanEncodeCount.argtypes = [ctypes.c_void_p]
    lib.blockattnPlanSetRecord.restype = ctypes.c_int
    lib.blockattnPlanSetRecord.argtypes = [ctypes.c_void_p, ctypes.POINTER(TensorRule), ctypes.POINTER(Grid)]
    lib.blockattnPlanRecordWords.restype = ctypes.c_int32
    lib.blockattnPlanRecordWords.argtypes = [ctypes.c_void_p]
    # The record is struct-packed bytes too (c_char_p: the bytes' own buffer).
    lib.blockattnLaunchRecord.restype = ctypes.c_int
    lib.blockattnLaunchRecord.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.blockattnPlanLastGrid.restype = ctypes.c_uint32
    lib.blockattnPlanLastGrid.argtypes = [ctypes.c_void_p]
    lib.blockattnLaunchSetDriver.restype = None
    lib.blockattnLaunchSetDriver.argtypes = [ctypes.POINTER(Driver)]
    return lib


_LIBRARY: list = []  # [CDLL or None], once found


def library() -> ctypes.CDLL | None:
    """libblockattn_launch, loaded once; None if there is none (the Python
    launch path is used). A library of another ABI version is an error."""
    if not _LIBRARY:
        path = library_path()
        lib = None
        if path is not None:
            lib = _bind(ctypes.CDLL(str(path)))
            version = lib.blockattnLaunchAbiVersion()
            if version != ABI_VERSION:
                raise LaunchError(
                    f"blockattn: {path} has launch ABI version {version}, this package needs {ABI_VERSION}"
                )
        _LIBRARY.append(lib)
    return _LIBRARY[0]


def _check(lib: ctypes.CDLL, status: int) -> None:
    if status:
        raise LaunchError(lib.blockattnLaunchLastError().decode(errors="replace"))


def _param(spec: dict, tensors: dict, scalars: dict) -> Param:
    kind, value = spec["kind"], spec.get("value")
    p = Param()
    if kind == "f32":
        p.kind, p.tensor = F32, scalars.setdefault(spec["tensor"], len(scalars))
        return p
    p.tensor = tensors.setdefault(spec["tensor"], len(tensors))
    if kind == "tensormap":
        box = spec["box"]
        p.kind, p.rank = TENSORMAP, len(box)
        for i, b in enumerate(box):
            p.box[i] = int(b)
        p.data_type = DATA_TYPES[spec["dtype"]]
        p.swizzle = SWIZZLES[spec["swizzle"]]
        p.l2_promotion = L2_PROMOTIONS[spec["l2_promotion"]]
        p.oob_fill = OOB_FILLS[spec.get("oob_fill", "zero")]
        p.interleave = INTERLEAVES[spec.get("interleave", "none")]
    elif kind == "pointer":
        p.kind = POINTER
    elif kind in ("i32", "i64") and value in ("size", "stride"):
        p.kind = {("i32", "size"): SIZE_I32, ("i64", "size"): SIZE_I64,
                  ("i32", "stride"): STRIDE_I32, ("i64", "stride"): STRIDE_I64}[kind, value]
        p.dim = int(spec["dim"])
    else:
        raise LaunchError(f"blockattn: unknown manifest parameter {spec}")
    return p


class Plan:
    """A kernel's launch plan: its manifest's parameters in the library's
    form, the names of the tensors and scalars in call order."""

    def __init__(self, manifest: dict, function: int, context: int, lib: ctypes.CDLL | None = None):
        self.lib = lib if lib is not None else library()
        if self.lib is None:
            raise LaunchError("blockattn: libblockattn_launch is not available")
        tensors: dict[str, int] = {}
        scalars: dict[str, int] = {}
        params = [_param(spec, tensors, scalars) for spec in manifest["params"]]
        self.tensor_names = tuple(tensors)
        self.scalar_names = tuple(scalars)
        array = (Param * max(len(params), 1))(*params)
        handle = ctypes.c_void_p()
        _check(self.lib, self.lib.blockattnPlanCreate(
            function, context, int(manifest["threads"]), int(manifest["smem_bytes"]), array,
            len(params), len(tensors), len(scalars), ctypes.byref(handle)))
        self.handle = handle.value
        self._tensors = struct.Struct("<" + _TENSOR_FORMAT * len(tensors))
        self._scalars = struct.Struct("<" + "f" * len(scalars))
        self._launch = self.lib.blockattnLaunch

    def __del__(self):
        handle, self.handle = getattr(self, "handle", None), None
        if handle:
            self.lib.blockattnPlanDestroy(handle)

    @staticmethod
    def tensor_values(data: int, shape, strides, element_size: int) -> list:
        """One tensor's fields, as launch() takes them (rank up to 5)."""
        rank = len(shape)
        pad = (0,) * (MAX_RANK - rank)
        return [data, *shape, *pad, *strides, *pad, rank, element_size]

    def launch(self, grid: int, stream: int, tensor_values: list, scalars) -> None:
        """Launches with the concatenated tensor_values() of the plan's
        tensors (in tensor_names order) and the scalars (scalar_names)."""
        status = self._launch(self.handle, grid, stream, self._tensors.pack(*tensor_values),
                              self._scalars.pack(*scalars))
        if status:
            _check(self.lib, status)

    def set_record(self, manifest: dict, rules: dict, grid: tuple, num_sms: int) -> None:
        """Makes the plan launchable by record_call. `rules` maps each of
        tensor_names to (rank, the name of a tensor whose shape it must have
        or None, flags[, group: that tensor's heads per head of this one]); `grid` is _kernels.grid_inputs(manifest) and the
        grid's tokens/offsets are "q" (k for the grouped-query backward:
        _kernels.grid_tensor) and "cu_seqlens"."""
        sizes = {}
        for spec in manifest["params"]:
            if spec.get("dtype") in ELEMENT_SIZES:
                sizes.setdefault(spec["tensor"], ELEMENT_SIZES[spec["dtype"]])
        index = {name: i for i, name in enumerate(self.tensor_names)}
        array = (TensorRule * max(len(self.tensor_names), 1))()
        for i, name in enumerate(self.tensor_names):
            rank, shape_of, flags, *group = rules[name]  # group: grouped-query k, v (default 1)
            array[i] = TensorRule(rank, -1 if shape_of is None else index[shape_of], sizes[name], flags,
                                  group[0] if group else 1)
        chunked, ctas, block_size, per_cta, packed = grid
        spec = Grid(int(chunked), ctas, block_size, per_cta, num_sms, index.get(grid_tensor(manifest), -1),
                    index.get("cu_seqlens", -1), packed)
        _check(self.lib, self.lib.blockattnPlanSetRecord(self.handle, array, ctypes.byref(spec)))
        self.ranks = tuple(rules[name][0] for name in self.tensor_names)
        words = self.lib.blockattnPlanRecordWords(self.handle)
        # Every word is an int64 but the scalars, which are doubles.
        self.record = struct.Struct("<" + "q" * (words - len(self.scalar_names)) + "d" * len(self.scalar_names))
        self.record_call = self.lib.blockattnLaunchRecord

    def launch_record(self, values) -> None:
        """Launches with a record: [stream, then per tensor (tensor_names
        order) address, rank, *sizes, *strides, then the scalars]."""
        status = self.record_call(self.handle, self.record.pack(*values))
        if status:
            _check(self.lib, status)

    def last_grid(self) -> int:
        """The grid of the plan's last launch."""
        return self.lib.blockattnPlanLastGrid(self.handle)

    def encode_count(self) -> int:
        """The tensor maps encoded so far (the launches that missed the cache)."""
        return self.lib.blockattnPlanEncodeCount(self.handle)
