"""Running compiled kernels in ``block-attn-emulate``, the CPU emulator of the PTX we emit.

This module needs only NumPy. It builds the small jagged problems the emulator
tests use (the same inputs the H200 fixture was recorded on), writes them as
``.npy`` files, runs ``block-attn-emulate`` on a kernel's PTX and manifest, and
reads the outputs back. See docs/emulator.md.

16-bit floats are kept as their raw bits (``uint16``): NumPy has no bfloat16.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import numpy as np

from . import reference
from ._kernels import KernelKey, grid_tensor, launch_grid, theta_suffix

__all__ = [
    "EDGE_LENGTHS",
    "edge_lengths",
    "tiny_batch_lengths",
    "HEADS",
    "POISON",
    "Case",
    "EmulationError",
    "bits_to_float",
    "check_close",
    "emulate",
    "find_emulator",
    "float_to_bits",
    "make_problem",
    "reference_outputs",
]

_REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]

# The small jagged problem: empty, single-token, bs-1, bs, bs+1 and a long sequence.
EDGE_LENGTHS = (0, 1, 63, 64, 65, 200)
# Blocks smaller than the 64-row tile: their own edges (bs-1, bs, bs+1), the tile's, and tiny
# sequences (several per 64 rows).
TINY_LENGTHS = (3, 0, 9, 2, 17, 5, 1, 30, 12)


def edge_lengths(block_size: int = 64) -> tuple[int, ...]:
    """The small jagged problem's lengths for ``block_size`` (EDGE_LENGTHS at 64)."""
    if block_size == 64:
        return EDGE_LENGTHS
    b = block_size
    return (0, 1, b - 1, b, b + 1, 63, 64, 65, 200) + TINY_LENGTHS


def tiny_batch_lengths(block_size: int, count: int = 200, seed: int = 0) -> tuple[int, ...]:
    """edge_lengths(block_size) and ``count`` tiny sequences (0 to block_size + 4 tokens,
    runs of empty ones among them): the batch where blocks of several sequences share a
    tile (docs/block-sizes.md, "Tiny sequences packed")."""
    rng = np.random.default_rng(seed)
    tiny = [int(n) for n in rng.integers(0, block_size + 5, count)]
    tiny[count // 2:count // 2 + 3] = [0, 0, 0]
    return edge_lengths(block_size) + tuple(tiny)


HEADS = 2
# Every output element starts as this bit pattern (a NaN in bf16 and f16), so an element the
# kernel never writes is seen as such, on the GPU and in the emulator alike.
POISON = 0xFFFF

# Tolerances of the GPU tests (python/tests/gpu/test_forward_gpu.TOL, test_backward_gpu.TOL).
FORWARD_TOL = {"bf16": dict(atol=2e-2, rtol=2e-2, frob=1e-2), "f16": dict(atol=5e-3, rtol=5e-3, frob=2.5e-3)}
BACKWARD_TOL = {"bf16": (2e-2, 4e-2), "f16": (4e-3, 8e-3)}
# The log-sum-exp (f32): without rotary it comes from exact products of the 16-bit inputs, so
# only the f32 sums and ex2/lg2 differ from float64; with rotary the kernel rounds the rotated
# q and k to the 16-bit type (the reference rotates in float64): the forward's atol.
LSE_TOL = {"none": 1e-4, "bf16": FORWARD_TOL["bf16"]["atol"], "f16": FORWARD_TOL["f16"]["atol"]}


class EmulationError(RuntimeError):
    """block-attn-emulate reported a problem (deadlock, race, bad access, unknown instruction)."""


@dataclasses.dataclass(frozen=True)
class Case:
    """One kernel on the small problem."""

    kind: str  # forward / backward
    head_dim: int
    dtype: str  # bf16 / f16
    rotary: str = "none"
    positions: bool = False  # the kernel reads an int32 positions tensor [T]
    rotate_v: bool = False  # the kernel rotates v as well
    group: int = 1  # query heads per k/v head (grouped-query attention)
    causal: bool = False  # causal attention inside each block
    lse: bool = False  # the forward writes the log-sum-exp; the backward reads its gradient
    block_size: int = 64
    # Angles computed in the kernel from this base instead of read from cos/sin tables
    # (the kernel then takes no tables; the reference uses rope_tables at this base).
    rotary_theta: float | None = None

    @property
    def name(self) -> str:
        suffix = ("_pos" if self.positions else "") + ("_rv" if self.rotate_v else "")
        suffix += theta_suffix(self.rotary_theta)
        suffix += f"_g{self.group}" if self.group > 1 else ""
        suffix += ("_causal" if self.causal else "") + ("_lse" if self.lse else "")
        block = "" if self.block_size == 64 else f"_b{self.block_size}"
        return f"{self.kind}_d{self.head_dim}{block}_{self.dtype}_{self.rotary}{suffix}"

    def compiler_flags(self, chip: str) -> list[str]:
        """The kernel's flags (those of its KernelKey), named k_<name>."""
        key = KernelKey(kind=self.kind, head_dim=self.head_dim, block_size=self.block_size, dtype=self.dtype,
                        chip=chip, rotary=self.rotary, positions=self.positions, rotate_v=self.rotate_v,
                        group=self.group, causal=self.causal, lse=self.lse, rotary_theta=self.rotary_theta)
        flags = [f for f in key.compiler_flags() if not f.startswith("--name=")]
        return flags + [f"--name=k_{self.name}"]

    @property
    def outputs(self) -> tuple[str, ...]:
        if self.kind == "forward":
            return ("o", "lse") if self.lse else ("o",)
        return ("dq", "dk", "dv")


# The sm_90a cases whose H200 outputs python/tests/data/emulator_fixture_h200.npz
# holds: scripts/record_emulator_fixture.py records them, test_emulator.py checks them.
FIXTURE_CASES = (
    Case("forward", 64, "bf16"),
    Case("forward", 128, "bf16"),
    Case("forward", 64, "f16"),
    Case("forward", 128, "f16"),
    Case("backward", 64, "bf16"),
    Case("backward", 128, "bf16"),
    Case("backward", 64, "f16"),
    Case("forward", 64, "bf16", "half_split"),
    Case("forward", 128, "bf16", "half_split"),
    Case("forward", 64, "bf16", "interleaved"),
    Case("backward", 64, "bf16", "half_split"),
    Case("backward", 128, "bf16", "half_split"),
    Case("backward", 64, "bf16", "interleaved"),
)


def float_to_bits(x: np.ndarray, dtype: str) -> np.ndarray:
    """Round-to-nearest-even float32 -> bf16/f16 bits (uint16)."""
    x = np.asarray(x, dtype=np.float32)
    if dtype == "f16":
        return x.astype(np.float16).view(np.uint16)
    u = x.view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bits_to_float(bits: np.ndarray, dtype: str) -> np.ndarray:
    """bf16/f16 bits (uint16) -> float64."""
    bits = np.asarray(bits, dtype=np.uint16)
    if dtype == "f16":
        return bits.view(np.float16).astype(np.float64)
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def make_problem(case: Case, lengths=None, heads=HEADS, seed: int = 0) -> dict:
    """The inputs of one case (uint16 bits for q, k, v, do; int32 cu_seqlens; f32 tables) and
    poisoned outputs, with ``heads`` query heads (k, v, dk, dv: ``heads // case.group``), on
    ``lengths`` (default: edge_lengths of the case's block size). Deterministic in ``seed``."""
    if lengths is None:
        lengths = edge_lengths(case.block_size)
    rng = np.random.default_rng(seed)
    cu = reference.make_cu_seqlens(list(lengths)).astype(np.int32)
    T, D = int(cu[-1]), case.head_dim
    tensors = {"cu_seqlens": cu}
    names = ("q", "k", "v") + (("do",) if case.kind == "backward" else ())
    if heads % case.group:
        raise ValueError(f"heads: {heads} is not a multiple of the case's group {case.group}")

    def heads_of(name: str) -> int:
        return heads // case.group if name in ("k", "v", "dk", "dv") else heads

    for name in names:
        tensors[name] = float_to_bits(rng.standard_normal((T, heads_of(name), D), dtype=np.float32),
                                      case.dtype)
    for name in case.outputs:
        tensors[name] = np.full((T, heads_of(name), D), POISON, dtype=np.uint16)
    if case.rotary != "none":
        max_position = max(lengths) + 1
        if case.rotary_theta is None:
            cos, sin = reference.rope_tables(max_position, D)
            tensors["cos"] = cos.astype(np.float32)
            tensors["sin"] = sin.astype(np.float32)
        if case.positions:
            # Arbitrary positions anywhere in the tables, not a token's index.
            tensors["positions"] = rng.integers(0, max_position, size=T, dtype=np.int32)
    # The log-sum-exp, f32 [H, T]: poisoned (NaN) for the forward to write, a random
    # gradient for the backward to read.
    if case.lse and case.kind == "forward":
        tensors["lse"] = np.full((heads, T), np.nan, dtype=np.float32)
    elif case.lse:
        tensors["dlse"] = rng.standard_normal((heads, T), dtype=np.float32)
    return tensors


def inputs_digest(tensors: dict) -> str:
    """A hash of a problem's tensors (the fixture records it, so that a test knows it
    regenerated the very inputs the GPU ran on)."""
    h = hashlib.sha256()
    for name in sorted(tensors):
        h.update(name.encode())
        h.update(np.ascontiguousarray(tensors[name]).tobytes())
    return h.hexdigest()[:16]


def reference_outputs(case: Case, tensors: dict) -> dict:
    """The float64 reference outputs of a problem."""
    f = {n: bits_to_float(tensors[n], case.dtype) for n in ("q", "k", "v", "do") if n in tensors}
    rotary = None
    if case.rotary != "none":
        cos, sin = tensors.get("cos"), tensors.get("sin")
        if case.rotary_theta is not None:
            # The kernel's angles, in float64 (the kernel computes them in f32): tables up to the
            # largest position the problem has (a sequence index or a positions tensor entry).
            cu = np.asarray(tensors["cu_seqlens"])
            largest = int(np.diff(cu).max(initial=0))
            if "positions" in tensors and tensors["positions"].size:
                largest = max(largest, int(tensors["positions"].max()) + 1)
            cos, sin = reference.rope_tables(largest + 1, case.head_dim, base=case.rotary_theta)
        rotary = reference.Rotary(cos, sin, interleaved=case.rotary == "interleaved",
                                  positions=tensors.get("positions"), rotate_v=case.rotate_v)
    if case.kind == "forward":
        o, lse = reference.forward(f["q"], f["k"], f["v"], tensors["cu_seqlens"], block_size=case.block_size,
                                   rotary=rotary, causal=case.causal, return_lse=True)
        return {"o": o, "lse": lse} if case.lse else {"o": o}
    dq, dk, dv = reference.backward(f["q"], f["k"], f["v"], f["do"], tensors["cu_seqlens"], block_size=case.block_size,
                                    rotary=rotary, causal=case.causal,
                                    dlse=tensors.get("dlse") if case.lse else None)
    return {"dq": dq, "dk": dk, "dv": dv}


def check_close(case: Case, got: dict, want: dict) -> list[str]:
    """The GPU tests' tolerance checks; returns the failures (empty when all pass)."""
    failures = []
    for name in case.outputs:
        if name == "lse":
            tol = LSE_TOL["none" if case.rotary == "none" else case.dtype]
            g = np.asarray(got[name], dtype=np.float64)
            if np.isnan(g).any():
                failures.append(f"lse: {int(np.isnan(g).sum())} elements never written")
            elif not np.allclose(g, want[name], atol=tol, rtol=tol):
                failures.append(f"lse: max error {np.abs(g - want[name]).max():.3e}")
            continue
        g = bits_to_float(got[name], case.dtype)
        r = want[name]
        if np.isnan(g).any():
            failures.append(f"{name}: {int(np.isnan(g).sum())} elements never written")
            continue
        diff = g - r
        if case.kind == "forward":
            tol = FORWARD_TOL[case.dtype]
            bad = np.abs(diff) > tol["atol"] + tol["rtol"] * np.abs(r)
            frob = np.linalg.norm(diff) / (np.linalg.norm(r) + 1e-30)
            if bad.any():
                failures.append(f"{name}: {int(bad.sum())} elements outside atol/rtol")
            if frob >= tol["frob"]:
                failures.append(f"{name}: relative Frobenius error {frob:.3e}")
        else:
            frob_tol, max_tol = BACKWARD_TOL[case.dtype]
            scale = np.abs(r).max() or 1.0
            frob = np.linalg.norm(diff) / (np.linalg.norm(r) + 1e-30)
            worst = np.abs(diff).max() / scale if diff.size else 0.0
            if frob >= frob_tol:
                failures.append(f"{name}: relative Frobenius error {frob:.3e}")
            if worst >= max_tol:
                failures.append(f"{name}: max error {worst:.3e} of the largest |grad|")
    # A dynamic schedule's counters must be back at zero for the next launch.
    schedule = got.get("schedule")
    if schedule is not None and np.asarray(schedule).any():
        failures.append(f"schedule: the kernel left its counters at {np.asarray(schedule).tolist()}, not zeroed")
    return failures


def find_emulator() -> str | None:
    """block-attn-emulate: $BLOCKATTN_EMULATOR, the PATH, or this repository's build/bin."""
    env = os.environ.get("BLOCKATTN_EMULATOR")
    if env:
        return env
    found = shutil.which("block-attn-emulate")
    if found:
        return found
    local = _REPO_ROOT / "build" / "bin" / "block-attn-emulate"
    return str(local) if local.exists() else None


def emulate(ptx: os.PathLike, manifest: os.PathLike, tensors: dict, scalars: dict, *,
            num_sms: int = 2, seed: int = 1, extra_args=(), emulator: str | None = None,
            grid: int | None = None) -> dict:
    """Runs one kernel in block-attn-emulate; returns every tensor after the run (by name).

    The grid is the one the runtime would launch on a GPU with ``num_sms`` SMs
    (``_kernels.launch_grid``), or ``grid`` CTAs (one CTA then walks every tile,
    through every slot of its rings many times). Raises EmulationError with the
    emulator's report."""
    emulator = emulator or find_emulator()
    if emulator is None:
        raise RuntimeError("block-attn-emulate not found (build the project first)")
    man = json.loads(pathlib.Path(manifest).read_text())
    schedule = man.get("schedule")
    if schedule is not None and schedule["tensor"] not in tensors:
        # A dynamic schedule's counters, zeroed as the runtime passes them;
        # the result shows whether the kernel left them zeroed.
        tensors = {**tensors, schedule["tensor"]: np.zeros(int(schedule["words"]), np.int32)}
    items = tensors[grid_tensor(man)]  # q, or k for the grouped-query backward
    if grid is None:
        grid = launch_grid(man, num_sms, items.shape, tensors["cu_seqlens"].size)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        cmd = [emulator, str(ptx), f"--manifest={manifest}", f"--grid={grid}", f"--seed={seed}",
               f"--out-dir={tmp / 'out'}", *extra_args]
        for name, array in tensors.items():
            path = tmp / f"{name}.npy"
            np.save(path, np.ascontiguousarray(array))
            cmd.append(f"--tensor={name}={path}")
        for name, value in scalars.items():
            cmd.append(f"--scalar={name}={float(value)!r}")
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise EmulationError(result.stderr.strip() or result.stdout.strip())
        return {name: np.load(tmp / "out" / f"{name}.npy") for name in tensors}
