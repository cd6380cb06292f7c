#!/usr/bin/env bash
#===- scripts/check_wheel.sh - the wheel, installed where LLVM is not -----===#
#
#   scripts/check_wheel.sh dist/blockattn-*.whl
#
# `make check`'s wheel test (no GPU needed). Installs the wheel with pip
# (--no-deps --no-index) into a fresh virtual environment, then, with a
# library path and PATH that hold no LLVM/MLIR and from a directory outside
# the repository:
#   - the wheel's name has the platform tag its native files need, and it is
#     under 60 MiB;
#   - ldd of the bundled compiler shows no LLVM/MLIR (or C++ runtime)
#     library, and it has no run path;
#   - `blockattn-compile` compiles a kernel that is not prebuilt (computed
#     rotary angles, --rotary-theta); with BLOCKATTN_REFERENCE_COMPILER (the
#     build's dylib-linked block-attn-compile; `make check` sets it) its PTX
#     must be byte-identical to that compiler's;
#   - the launch library (blockattn/_native/libblockattn_launch.so) needs
#     only libc (libcuda is opened at run time), and blockattn._launch loads
#     it from the package, with the package's ABI version, and reports that
#     this machine has no libcuda as an error with a message;
#   - the package's own lookup (blockattn._kernels.find_kernel) finds a
#     prebuilt kernel in the package, and compiles one that is not there
#     (removed from this throwaway install) with the bundled compiler into
#     the cache, under the compiler's id, then finds it there.
# The venv sees the system's site-packages for numpy only; torch is not
# needed (and not imported).
#
#===----------------------------------------------------------------------===#

set -euo pipefail
PYTHON=${PYTHON:-python3}
[[ $# -eq 1 && -f $1 ]] || { echo "usage: $0 WHEEL" >&2; exit 2; }
wheel=$(realpath "$1")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

fail() { echo "check_wheel: FAIL: $*" >&2; exit 1; }

size=$(stat -c %s "$wheel")
echo "check_wheel: $(basename "$wheel"): $((size / 1024 / 1024)) MiB"
(( size < 60 * 1024 * 1024 )) || fail "the wheel is $size bytes, over 60 MiB"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kernel_flags=(--kind=forward --head-dim=64 --dtype=f16 --rotary=interleaved
              --rotary-theta=10000 --chip=sm_90a --quiet)
reference=${BLOCKATTN_REFERENCE_COMPILER:-}
if [[ -n $reference ]]; then
  "$reference" "${kernel_flags[@]}" -o "$work/reference"
fi
"$PYTHON" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-index "$wheel"

# From here on: no LLVM on any path, no source tree on PYTHONPATH.
export PATH="$work/venv/bin:/usr/bin:/bin"
unset LD_LIBRARY_PATH PYTHONPATH BLOCKATTN_COMPILER BLOCKATTN_KERNEL_DIR
export BLOCKATTN_CACHE_DIR="$work/cache"
cd "$work"
py="$work/venv/bin/python"

pkg=$("$py" -c 'import blockattn, os; print(os.path.dirname(blockattn.__file__))')
[[ $pkg == "$work/venv/"* ]] || fail "blockattn imported from $pkg, not from the venv"
compiler="$pkg/_native/block-attn-compile"
[[ -x $compiler ]] || fail "no bundled compiler at $compiler"

echo "check_wheel: ldd $compiler"
ldd "$compiler" | sed 's/^/    /'
if ldd "$compiler" | grep -Ei 'llvm|mlir|libstdc\+\+|libz3|libxml|libzstd|not found'; then
  fail "the bundled compiler needs the libraries above"
fi
tag=$("$PYTHON" "$here/wheel_platform.py" "$compiler") || fail "wheel_platform.py rejected the compiler"
[[ $(basename "$wheel") == *"-py3-none-$tag.whl" ]] || fail "the wheel's tag is not py3-none-$tag"

echo "check_wheel: blockattn-compile (a kernel the wheel does not prebuild)"
blockattn-compile "${kernel_flags[@]}" -o "$work/cli"
ls "$work/cli" | sed 's/^/    /'
name=blockattn_forward_d64_b64_f16_interleaved_theta
[[ -s $work/cli/$name.ptx && -s $work/cli/$name.json ]] || fail "blockattn-compile wrote no $name"
grep -q "\.entry $name" "$work/cli/$name.ptx" || fail "$name.ptx has no entry $name"
if [[ -n $reference ]]; then
  cmp "$work/reference/$name.ptx" "$work/cli/$name.ptx" ||
    fail "the bundled compiler's PTX differs from $reference's"
  echo "    PTX byte-identical to $reference's"
fi

echo "check_wheel: the launch library"
launch_lib="$pkg/_native/libblockattn_launch.so"
[[ -f $launch_lib ]] || fail "no launch library at $launch_lib"
ldd "$launch_lib" | sed 's/^/    /'
if ldd "$launch_lib" | grep -Ev 'linux-vdso|ld-linux|libc\.so|libdl\.so|libpthread\.so'; then
  fail "the launch library needs the libraries above"
fi
BLOCKATTN_LIBCUDA=/nonexistent/libcuda.so.1 "$py" - <<'PY'
import sys

from blockattn import _kernels, _launch

assert "torch" not in sys.modules, "blockattn._launch imported torch"
assert _launch.library_path() == _kernels.NATIVE_DIR / _launch.LIBRARY_NAME, _launch.library_path()
lib = _launch.library()
assert lib.blockattnLaunchAbiVersion() == _launch.ABI_VERSION
assert lib.blockattnLaunchDriverAvailable() == 2
message = lib.blockattnLaunchLastError().decode()
assert "cannot open /nonexistent/libcuda.so.1" in message, message
print(f"    loaded from the package, ABI {_launch.ABI_VERSION}; without libcuda: {message}")
PY

echo "check_wheel: ptxas's spill report of the prebuilt kernels"
prebuilt=$("$py" -c 'from blockattn import _kernels; print(_kernels.PREBUILT_DIR)')
if ! "$py" "$here/check_spills.py" "$prebuilt" | sed 's/^/    /'; then
  fail "the spill report of a prebuilt kernel is not the expected one (scripts/check_spills.py)"
fi

echo "check_wheel: the package's kernel lookup"
"$py" - <<'PY'
import json, os, pathlib, sys

from blockattn import _kernels

assert "torch" not in sys.modules, "the kernel lookup imported torch"
assert _kernels.find_compiler() == str(_kernels.BUNDLED_COMPILER), _kernels.find_compiler()

prebuilt = _kernels.KernelKey("backward", 128, 64, "bf16", "sm_90a", rotary="half_split")
files = _kernels.find_kernel(prebuilt)
assert files.directory == _kernels.PREBUILT_DIR / "sm_90a", files.directory
assert files.image()[:4] == b"\x7fELF", "the prebuilt kernel has no cubin"
count = len(list(_kernels.PREBUILT_DIR.glob("*/*.json")))
assert count == 152, f"{count} prebuilt manifests, expected 152 (144 and 8 small-grid variants)"
print(f"    prebuilt: {files.directory / files.name}.cubin ({count} kernels in the package)")

# Not prebuilt any more: take it out of this throwaway install.
missing = _kernels.KernelKey("forward", 64, 64, "f16", "sm_100a", rotary="interleaved",
                             positions=True, rotate_v=True)
for suffix in (".json", ".ptx", ".cubin"):
    (_kernels.PREBUILT_DIR / "sm_100a" / (missing.name + suffix)).unlink()
files = _kernels.find_kernel(missing)
expected = (pathlib.Path(os.environ["BLOCKATTN_CACHE_DIR"])
            / _kernels.compiler_id(_kernels.BUNDLED_COMPILER) / "sm_100a")
assert files.directory == expected, (files.directory, expected)
assert files.manifest["kernel"] == missing.name and files.manifest["chip"] == "sm_100a"
names = {p["tensor"] for p in files.manifest["params"]}
assert {"positions", "cos", "sin"} <= names, names
ptx = (files.directory / files.manifest["ptx"]).read_text()
assert f".entry {missing.name}" in ptx and ".target sm_100a" in ptx
print(f"    compiled on first use: {files.directory / files.name}.ptx")
stamp = (files.directory / files.manifest["ptx"]).stat().st_mtime_ns
again = _kernels.find_kernel(missing)
assert again.directory == expected and (again.directory / again.manifest["ptx"]).stat().st_mtime_ns == stamp
print("    found in the cache the second time")
PY
echo "check_wheel: OK"
