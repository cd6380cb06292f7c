"""Finding compiled kernels: prebuilt directories, a compile cache, the compiler.

A kernel is identified by a :class:`KernelKey` (kind, head dim, block size,
dtype, rotary mode with its positions/rotate-v options, chip, and the
small-grid variant's tiles per CTA). Its files are ``<name>.ptx`` (and optionally
``<name>.cubin``) plus ``<name>.json``, the launch manifest that
``block-attn-compile`` writes. They are looked up, in order, in:

1. ``$BLOCKATTN_KERNEL_DIR/<chip>/`` and ``$BLOCKATTN_KERNEL_DIR/``: kernels
   compiled elsewhere (for a GPU machine with no compiler installed);
2. ``blockattn/_prebuilt/<chip>/``: the kernels the wheel ships, compiled
   by the compiler it bundles (absent in a source checkout);
3. ``$BLOCKATTN_CACHE_DIR/<compiler id>/<chip>/`` (default
   ``~/.cache/blockattn``), where kernels compiled on demand are kept. The
   compiler id is a hash of the compiler's executable, so a new compiler never
   loads a kernel that an old one compiled;

and if none has it, ``block-attn-compile`` compiles it into the cache: the
``$BLOCKATTN_COMPILER``, else the one the wheel bundles
(``blockattn/_native/block-attn-compile``), else the one on the ``PATH``, else
this repository's ``build/bin``. This module needs neither torch nor a GPU.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

__all__ = [
    "HEAD_DIMS", "CHUNKED_HEAD_DIMS", "PREBUILT_HEAD_DIMS", "BLOCK_SIZES", "BACKWARD_BLOCK_SIZES", "ROTARY_MODES", "KernelKey", "KernelFiles", "find_kernel", "find_compiler", "compiler_id",
    "cache_dir", "compile_kernel", "prebuild",
    "SMALL_GRID_TILES", "small_grid_key", "small_grid_limit", "work_items",
    "tile_rows", "PERSISTENT_BACKWARD_BLOCK_SIZES", "PERSISTENT_FORWARD_BLOCK_SIZES",
]

_PACKAGE_DIR = pathlib.Path(__file__).resolve().parent
_REPO_ROOT = _PACKAGE_DIR.parents[1]
# What the wheel adds to the package (CMake's `wheel` install component):
# native executables and libraries, and the prebuilt kernels.
NATIVE_DIR = _PACKAGE_DIR / "_native"
PREBUILT_DIR = _PACKAGE_DIR / "_prebuilt"
BUNDLED_COMPILER = NATIVE_DIR / "block-attn-compile"


# The head dims and block sizes the compiler supports: the Python side's one
# copy of `Support::headDims` and `Support::blockSizes`
# (include/blockattn/Dialect/BlockAttn/IR/BlockAttnOps.h), which the blockattn
# verifier checks. The API checks its arguments against these before it looks
# for a kernel; python/tests/test_kernel_key.py checks them against the
# compiler's.
HEAD_DIMS = (32, 64, 96, 128, 192, 256)
# Head dims above 128, whose outputs the kernels make in 64-column chunks
# (docs/head-dims.md), at every block size on both chips; what is refused
# there (half-split rotary embeddings in the backward at block size 128, some
# grouped backwards) the API checks where it dispatches.
CHUNKED_HEAD_DIMS = (192, 256)
# The head dims of the wheel's prebuilt kernels (scripts/prebuild_kernels.py's
# default): the others compile on first use (find_kernel), with the bundled
# compiler, into the cache.
PREBUILT_HEAD_DIMS = (64, 128)
BLOCK_SIZES = (16, 32, 64, 128)
# The block sizes with a backward kernel (128: plain, causal, dlse and every
# rotary variant on both chips, docs/block-sizes.md); the compiler refuses the
# others.
BACKWARD_BLOCK_SIZES = (16, 32, 64, 128)
# Block sizes whose backward launches persistent, one CTA per SM (its slot and
# scratch fill the SM's shared memory), so it has no small-grid variant.
PERSISTENT_BACKWARD_BLOCK_SIZES = (128,)
# Block sizes whose plain sm_90a forward launches persistent with two consumers
# (each takes a whole block of two query halves; docs/block-sizes.md), so it
# has no small-grid variant either.
PERSISTENT_FORWARD_BLOCK_SIZES = (128,)
# Rows of a kernel's tile: blocks smaller than the 64-row MMA tile share it (the
# kernel masks each query row to its own block's keys), so a work item is a
# 64-row tile, not a block; a block of 128 is one work item. The compiler's rule
# (KernelShape::tileRows); the manifest states it as ``tile_rows`` where it
# differs from ``block_size``.
MIN_TILE_ROWS = 64


def tile_rows(block_size: int) -> int:
    """The rows of a tile of a kernel for ``block_size``: what a work item covers."""
    return max(block_size, MIN_TILE_ROWS)


ROTARY_MODES = ("none", "half_split", "interleaved")


def theta_suffix(theta: float | None) -> str:
    """A kernel name's mark for angles from ``theta``: ``_theta`` at the usual base 10000 (as
    block-attn-compile names it), ``_theta<base>`` at another, so that kernels of two bases
    never share a name (a cache file); empty for tables."""
    if theta is None:
        return ""
    return "_theta" if theta == 10000.0 else f"_theta{theta:g}"


@dataclasses.dataclass(frozen=True)
class KernelKey:
    """What a compiled kernel is specialized for (everything else is run-time).

    With rotary embeddings (``rotary`` other than ``"none"``) the kernel takes
    the fp32 ``cos``/``sin`` tables; ``positions`` adds an int32 positions
    tensor (else a token's position is its index in its sequence) and
    ``rotate_v`` rotates v as well.
    """

    kind: str  # "forward" or "backward"
    head_dim: int
    block_size: int
    dtype: str  # "bf16" or "f16"
    chip: str  # "sm_90a" or "sm_100a"
    rotary: str = "none"  # "none", "half_split", "interleaved"
    positions: bool = False  # the kernel takes a positions tensor
    rotate_v: bool = False  # the kernel rotates v too
    tiles_per_cta: int = 0  # a chunked launch's tiles per CTA; 0: the compiler's choice
    group: int = 1  # query heads per k/v head (grouped-query attention); 1: none
    causal: bool = False  # causal attention inside each block
    lse: bool = False  # the forward writes the log-sum-exp; the backward takes its gradient
    # Angles computed in the kernel from this base (pair i of position p turns by
    # p * theta^(-2i/head_dim)) instead of read from cos/sin tables; None: tables. The
    # attention functions pass tables; scripts/prebuild_kernels.py --rotary-theta and the
    # emulator tests build these.
    rotary_theta: float | None = None

    def __post_init__(self):
        if self.rotary not in ROTARY_MODES:
            raise ValueError(f"rotary: expected one of {', '.join(ROTARY_MODES)}, got {self.rotary!r}")
        if self.rotary == "none" and (self.positions or self.rotate_v):
            raise ValueError("positions and rotate_v need a rotary mode (half_split or interleaved)")
        if not isinstance(self.tiles_per_cta, int) or self.tiles_per_cta < 0:
            raise ValueError(f"tiles_per_cta: expected an int >= 0, got {self.tiles_per_cta!r}")
        if not isinstance(self.group, int) or self.group < 1:
            raise ValueError(f"group: expected an int >= 1, got {self.group!r}")
        if self.rotary_theta is not None and self.rotary == "none":
            raise ValueError("rotary_theta needs a rotary mode (half_split or interleaved)")

    @property
    def name(self) -> str:
        """blockattn_<kind>_d<D>_b<B>_<dtype>[_g<G>][_causal][_lse][_<rotary>][_pos][_rv][_theta][_t<N>], as
        block-attn-compile names it."""
        suffix = f"_g{self.group}" if self.group > 1 else ""
        suffix += ("_causal" if self.causal else "") + ("_lse" if self.lse else "")
        if self.rotary != "none":
            suffix += f"_{self.rotary}" + ("_pos" if self.positions else "") + ("_rv" if self.rotate_v else "")
            suffix += theta_suffix(self.rotary_theta)
        if self.tiles_per_cta:
            suffix += f"_t{self.tiles_per_cta}"
        return f"blockattn_{self.kind}_d{self.head_dim}_b{self.block_size}_{self.dtype}{suffix}"

    def compiler_flags(self) -> list[str]:
        flags = [
            f"--kind={self.kind}",
            f"--head-dim={self.head_dim}",
            f"--block-size={self.block_size}",
            f"--dtype={self.dtype}",
            f"--rotary={self.rotary}",
        ]
        if self.positions:
            flags.append("--positions")
        if self.rotate_v:
            flags.append("--rotate-v")
        if self.rotary_theta is not None:
            flags.append(f"--rotary-theta={self.rotary_theta!r}")
        if self.tiles_per_cta:
            flags.append(f"--tiles-per-cta={self.tiles_per_cta}")
        if self.group > 1:
            flags.append(f"--group={self.group}")
        if self.causal:
            flags.append("--causal")
        if self.lse:
            flags.append("--lse")
        return flags + [f"--chip={self.chip}", f"--name={self.name}"]


@dataclasses.dataclass
class KernelFiles:
    """The manifest and the code of one compiled kernel."""

    manifest: dict
    directory: pathlib.Path

    @property
    def name(self) -> str:
        return self.manifest["kernel"]

    def image(self) -> bytes:
        """The cubin if there is one (no JIT at load), else NUL-terminated PTX."""
        cubin = self.manifest.get("cubin")
        if cubin and (self.directory / cubin).exists():
            return (self.directory / cubin).read_bytes()
        return (self.directory / self.manifest["ptx"]).read_bytes() + b"\0"


def _cache_root() -> pathlib.Path:
    env = os.environ.get("BLOCKATTN_CACHE_DIR")
    if env:
        return pathlib.Path(env)
    return pathlib.Path.home() / ".cache" / "blockattn"


@functools.lru_cache(maxsize=None)
def _file_id(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:16]


def compiler_id(compiler: str | os.PathLike) -> str:
    """The first 16 hex digits of the SHA-256 of the compiler's executable:
    the compile cache's key for the compiler version (hashed once per file
    version and process)."""
    path = os.path.realpath(shutil.which(str(compiler)) or compiler)
    st = os.stat(path)
    return _file_id(path, st.st_size, st.st_mtime_ns)


def cache_dir(chip: str, compiler: str | os.PathLike | None = None) -> pathlib.Path | None:
    """Where kernels that ``compiler`` (default: :func:`find_compiler`)
    compiles for ``chip`` are cached; None without a compiler."""
    compiler = compiler if compiler is not None else find_compiler()
    if compiler is None:
        return None
    return _cache_root() / compiler_id(compiler) / chip


def _search_dirs(chip: str) -> list[pathlib.Path]:
    dirs = []
    prebuilt = os.environ.get("BLOCKATTN_KERNEL_DIR")
    if prebuilt:
        dirs += [pathlib.Path(prebuilt) / chip, pathlib.Path(prebuilt)]
    dirs.append(PREBUILT_DIR / chip)
    return dirs


def _load(directory: pathlib.Path, key: KernelKey) -> KernelFiles | None:
    path = directory / f"{key.name}.json"
    if not path.exists():
        return None
    manifest = json.loads(path.read_text())
    if manifest.get("chip") != key.chip:
        return None
    return KernelFiles(manifest, directory)


def find_compiler() -> str | None:
    """The block-attn-compile executable, or None."""
    env = os.environ.get("BLOCKATTN_COMPILER")
    if env:
        return env
    if BUNDLED_COMPILER.is_file() and os.access(BUNDLED_COMPILER, os.X_OK):
        return str(BUNDLED_COMPILER)
    found = shutil.which("block-attn-compile")
    if found:
        return found
    local = _REPO_ROOT / "build" / "bin" / "block-attn-compile"
    return str(local) if local.exists() else None


def compile_kernel(
    key: KernelKey, directory: pathlib.Path | None = None, cubin: bool = False, compiler: str | None = None,
) -> KernelFiles:
    """Compiles one kernel with block-attn-compile (``compiler``, default
    :func:`find_compiler`) into ``directory`` (default: the cache,
    :func:`cache_dir`)."""
    compiler = compiler if compiler is not None else find_compiler()
    if compiler is None:
        raise RuntimeError(
            f"blockattn: no compiled kernel {key.name} for {key.chip} and no "
            "block-attn-compile to build it; set BLOCKATTN_KERNEL_DIR to a "
            "directory of prebuilt kernels or BLOCKATTN_COMPILER to the compiler"
        )
    if directory is None:
        directory = cache_dir(key.chip, compiler)
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    # Compile into a private directory, then move the files in place, so that
    # concurrent processes never read half-written kernels.
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        cmd = [compiler, *key.compiler_flags(), "-o", tmp, "--quiet"]
        if cubin:
            cmd.append("--cubin")
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(
                f"blockattn: compiling {key.name} failed:\n{result.stderr}{result.stdout}"
            )
        # The manifest last: a reader takes a kernel as soon as it finds its
        # manifest (_load), so the PTX and cubin it names must be there first.
        for entry in sorted(pathlib.Path(tmp).iterdir(), key=lambda e: e.suffix == ".json"):
            os.replace(entry, directory / entry.name)
    files = _load(directory, key)
    assert files is not None, "block-attn-compile wrote no manifest"
    return files


def find_kernel(key: KernelKey) -> KernelFiles:
    """Prebuilt, cached or freshly compiled files of the kernel ``key``."""
    for directory in _search_dirs(key.chip):
        files = _load(directory, key)
        if files is not None:
            return files
    compiler = find_compiler()
    if compiler is not None:
        files = _load(cache_dir(key.chip, compiler), key)
        if files is not None:
            return files
    return compile_kernel(key, compiler=compiler)


def prebuild(
    directory: str | os.PathLike, keys: list[KernelKey], cubin: bool = True, jobs: int = 1,
    compiler: str | None = None,
) -> None:
    """Compiles ``keys`` into ``directory/<chip>/`` for use as
    BLOCKATTN_KERNEL_DIR (or as the wheel's prebuilt set), ``jobs`` at a time."""
    def one(key):
        compile_kernel(key, pathlib.Path(directory) / key.chip, cubin=cubin, compiler=compiler)

    if jobs <= 1:
        for key in keys:
            one(key)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(one, keys))


def launch_grid(manifest: dict, num_sms: int, q_shape, cu_seqlens_numel: int) -> int:
    """The grid a kernel's manifest asks for.

    A persistent kernel runs ``ctas_per_sm`` (default 1) CTAs on every SM. A
    chunked one runs a CTA per ``tiles_per_cta`` work items, which the
    hardware hands out in order as CTAs finish. The work items are the tile
    loop's virtual tiles, ``floor(T / tile_rows) + B``, times the heads
    (``q_shape`` is ``[T, H, D]``, B = ``cu_seqlens_numel - 1``): known from
    shapes, so the launch needs no host synchronization. Where blocks are
    packed (``blocks_per_tile`` k in the manifest: blocks of 16 or 32 of
    several sequences share a 64-row tile), a work item is k virtual blocks:
    ``ceil((floor(T / block_size) + B) / k)`` of them per head.
    """
    return grid_of(grid_inputs(manifest), num_sms, q_shape, cu_seqlens_numel)


def grid_inputs(manifest: dict) -> tuple:
    """What launch_grid reads from a manifest: (chunked, ctas_per_sm,
    rows, tiles_per_cta, blocks_per_tile), read once per loaded kernel. The
    rows are the block size where blocks are packed (``blocks_per_tile`` > 1
    of them a work item), else ``tile_rows`` where blocks share a tile (one
    sequence's), else ``block_size``."""
    chunked = manifest.get("grid", "persistent") == "chunked"
    if not chunked:
        return (False, int(manifest.get("ctas_per_sm", 1)), 1, 1, 1)
    packed = int(manifest.get("blocks_per_tile", 1))
    rows = manifest["block_size"] if packed > 1 else manifest.get("tile_rows", manifest["block_size"])
    return (True, int(manifest.get("ctas_per_sm", 1)), int(rows), int(manifest["tiles_per_cta"]), packed)


def grid_tensor(manifest: dict) -> str:
    """The tensor whose tokens and heads count a chunked launch's work items:
    q's, but k's for the grouped-query backward, whose work item is a block
    and a k/v head (docs/pipeline.md, "Grouped-query attention")."""
    grouped = int(manifest.get("group", 1)) > 1 and manifest.get("kind") == "backward"
    return "k" if grouped else "q"


def grid_of(inputs: tuple, num_sms: int, q_shape, cu_seqlens_numel: int) -> int:
    """launch_grid from grid_inputs(manifest)."""
    chunked, ctas, block_size, per_cta, packed = inputs
    if not chunked:
        return num_sms * ctas
    return max(1, -(-work_items(block_size, q_shape, cu_seqlens_numel, packed) // per_cta))


# The small-grid variant (issue 22). A chunked kernel runs `tiles_per_cta`
# work items one after the other in each CTA (4 for the sm_90a forward at head
# dim 128): right for a big batch, but a tiny one (1 x 512 tokens, H=4: 36
# items, 9 CTAs) leaves most SMs idle. For a grid whose items all fit on the
# GPU at once the launch takes the same kernel compiled with SMALL_GRID_TILES
# tiles per CTA instead, chosen from the shapes alone (no host
# synchronization), by small_grid_limit.
SMALL_GRID_TILES = 1


def small_grid_key(key: KernelKey) -> KernelKey | None:
    """The small-grid variant of ``key``, for the kernels that have one: the
    sm_90a kernels without rotary embeddings, grouped-query attention, causal
    mask or log-sum-exp (chunked launches, the ones block_attention's fast
    path launches; prebuilt with them); else None."""
    if (key.chip != "sm_90a" or key.rotary != "none" or key.tiles_per_cta or key.group > 1 or key.causal
            or key.lse):
        return None
    if key.kind == "backward" and key.block_size in PERSISTENT_BACKWARD_BLOCK_SIZES:
        return None  # launched persistent (one CTA per SM holds its 208 KiB), never small-grid
    if key.kind == "forward" and key.block_size in PERSISTENT_FORWARD_BLOCK_SIZES:
        return None  # launched persistent (two consumers, a block each), never small-grid
    return dataclasses.replace(key, tiles_per_cta=SMALL_GRID_TILES)


# The sm_90a rotary kernels at head dims 64 and 128 have no launch variant:
# their persistent CTAs claim their tiles (schedule=dynamic, Plan.cpp), so
# every SM works until the grid's work ends whatever the batch. At 128 that
# beat the chunked variant of 16 tiles a CTA that the launch took for grids of
# 36 waves and more from session 33 to 36 (on an H100: 1.000-1.002x the plain forward against
# 1.039-1.057x; performance-notes.md, runs 23 and 32).


def work_items(block_size: int, q_shape, cu_seqlens_numel: int, blocks_per_tile: int = 1) -> int:
    """A chunked launch's work items: ``(floor(T / block_size) + B) * H``, or
    with packed tiles of ``blocks_per_tile`` virtual blocks,
    ``ceil((floor(T / block_size) + B) / blocks_per_tile) * H``."""
    virtual = int(q_shape[0]) // block_size + max(int(cu_seqlens_numel) - 1, 0)
    return -(-virtual // blocks_per_tile) * int(q_shape[1])


def small_grid_limit(inputs: tuple, num_sms: int) -> int:
    """The most work items for which the small-grid variant launches instead
    of the kernel whose grid_inputs are ``inputs``: as many as the GPU holds
    CTAs at once (``num_sms * ctas_per_sm``), so that the variant's grid (a
    CTA per item) runs in one wave; -1 (never) for a persistent kernel or one
    with SMALL_GRID_TILES tiles per CTA already.

    Measured on the H200 (docs/performance-notes.md, issue 22's fourth
    round): one wave of one-tile CTAs halves the GPU time of 1 x 512 tokens
    at H = 4 (36 items); two waves (8 x ~1k, 512 items) lose to the default
    kernel's one wave of 4-tile CTAs (10.1 against 9.0 us)."""
    chunked, ctas, _, per_cta, _ = inputs
    if not chunked or per_cta <= SMALL_GRID_TILES:
        return -1
    return num_sms * ctas
