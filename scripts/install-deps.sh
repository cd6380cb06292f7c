#!/usr/bin/env bash
#===- scripts/install-deps.sh - install what block-attn needs -------------===#
#
# Installs whatever is missing, and nothing when everything is there:
#   apt: llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools cmake
#        ninja-build, zlib1g-dev libzstd-dev lld (the wheel's statically
#        linked compiler), libgtest-dev (the C++ unit tests, unittests/) (plus g++ when there is no C++ compiler, and python3
#        / python3-pip / python3-venv when the system has no Python, no pip or
#        no venv for it);
#   pip: numpy pytest pytest-xdist (for the Python tests, spread over the
#        cores), matplotlib (bench/timeline.py's
#        chart, which a Python test draws), scikit-build-core (the wheel's
#        build backend), cuobjdump/nvdisasm (SASS tests),
#        nvidia-cutlass (headers only, for the CUTLASS descriptor oracle test).
# `apt-get update && apt-get install -y` runs only if an apt package is
# missing, through sudo unless we are root. pip installs into the Python that
# `python3` runs (as the user, never through sudo).
#
# With FUZZ=1 (`make fuzz`), also clang-22 and libclang-rt-22-dev: libFuzzer
# for the fuzz campaigns (docs/fuzzing.md); `make check` does not need them.
#
# Called by `make check` and `make run`; safe to run again at any time.
#
#===----------------------------------------------------------------------===#

set -euo pipefail

APT_PACKAGES=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools cmake ninja-build
              zlib1g-dev libzstd-dev lld libgtest-dev)
if [[ ${FUZZ:-0} == 1 ]]; then
  APT_PACKAGES+=(clang-22 libclang-rt-22-dev)
fi
# pip distribution=module to import to see whether it is there. cuobjdump and
# nvdisasm (NVIDIA's PyPI wheels) let the SASS lit tests run; CUDA's own
# toolkit on this machine has ptxas but no disassembler.
PIP_PACKAGES=(numpy=numpy pytest=pytest pytest-xdist=xdist matplotlib=matplotlib
              scikit-build-core=scikit_build_core
              nvidia-cuda-cuobjdump=nvidia.cu13.bin nvidia-cuda-nvdisasm=nvidia.cu13.bin)
# Installed with --no-deps: test/Conversion/WarpSpecToNVVM/cutlass-oracle.test
# only needs the C++ headers this wheel ships (cutlass_library/source/include;
# cutlass_library imports without the dependencies). Its dependencies
# (cuda-python, scipy, pydot, treelib, networkx) are unused here, and
# cuda-python would pin cuda-bindings, which the runtime uses, to another
# version.
PIP_NODEPS_PACKAGES=(nvidia-cutlass=cutlass_library)
PYTHON=${PYTHON:-python3}

log() { echo "install-deps: $*"; }

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
  if [[ $(id -u) -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    log "need root to run '$*', and sudo is not installed" >&2
    exit 1
  fi
}

apt_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

#--- apt ---------------------------------------------------------------------
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for pkg in "${APT_PACKAGES[@]}"; do
    apt_installed "$pkg" || missing+=("$pkg")
  done
  if ! command -v c++ >/dev/null 2>&1 && ! command -v g++ >/dev/null 2>&1 &&
     ! command -v clang++ >/dev/null 2>&1; then
    missing+=(g++)
  fi
  if ! command -v "$PYTHON" >/dev/null 2>&1; then
    missing+=(python3 python3-pip)
  elif ! "$PYTHON" -m pip --version >/dev/null 2>&1 &&
       [[ $(command -v "$PYTHON") == /usr/bin/* ]] && ! apt_installed python3-pip; then
    missing+=(python3-pip)
  fi
  # `make check` installs the wheel into a fresh virtual environment.
  if command -v "$PYTHON" >/dev/null 2>&1 && ! "$PYTHON" -c "import ensurepip" >/dev/null 2>&1 &&
     [[ $(command -v "$PYTHON") == /usr/bin/* ]] && ! apt_installed python3-venv; then
    missing+=(python3-venv)
  fi

  if [[ ${#missing[@]} -gt 0 ]]; then
    log "installing apt packages: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update
    if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y \
        --no-install-recommends "${missing[@]}"; then
      log "apt-get install failed. The LLVM/MLIR 22 packages come from Debian" >&2
      log "(or from https://apt.llvm.org for older releases): add a source" >&2
      log "that has them and run this script again." >&2
      exit 1
    fi
  else
    log "apt packages: all present"
  fi
else
  log "no dpkg: not a Debian-like system; install LLVM/MLIR 22, cmake and" \
      "ninja yourself (MLIR_DIR is passed to cmake by the Makefile)" >&2
fi

#--- pip ---------------------------------------------------------------------
# pip_missing ENTRY...: the distributions of those pkg=module entries that are
# not installed.
pip_missing() {
  local entry pkg tool
  for entry in "$@"; do
    pkg=${entry%%=*}
    if [[ $pkg == nvidia-cuda-* ]]; then
      tool=${pkg#nvidia-cuda-}
      "$PYTHON" -c "import nvidia, os, sys; sys.exit(not any(os.path.exists(os.path.join(p, 'cu13', 'bin', '$tool')) for p in nvidia.__path__))" \
        >/dev/null 2>&1 || echo "$pkg"
    else
      "$PYTHON" -c "import ${entry#*=}" >/dev/null 2>&1 || echo "$pkg"
    fi
  done
}
mapfile -t missing < <(pip_missing "${PIP_PACKAGES[@]}")
mapfile -t missing_nodeps < <(pip_missing "${PIP_NODEPS_PACKAGES[@]}")
if [[ ${#missing[@]} -eq 0 && ${#missing_nodeps[@]} -eq 0 ]]; then
  log "pip packages: all present"
  exit 0
fi

if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
  log "no pip for $PYTHON; trying ensurepip"
  "$PYTHON" -m ensurepip --upgrade >/dev/null 2>&1 || {
    log "cannot install pip for $PYTHON; install ${missing[*]} ${missing_nodeps[*]} yourself" >&2
    exit 1
  }
fi

pip_log=$(mktemp)
trap 'rm -f "$pip_log"' EXIT
# pip_install ARG...: pip install ARG... into $PYTHON.
pip_install() {
  if ! "$PYTHON" -m pip install --disable-pip-version-check "$@" 2>&1 |
       tee "$pip_log"; then
    # Debian's system Python is "externally managed" (PEP 668): pip refuses to
    # install into it unless told that this is intended.
    if grep -q "externally-managed-environment" "$pip_log"; then
      log "the system Python is externally managed; retrying with --break-system-packages"
      "$PYTHON" -m pip install --disable-pip-version-check --break-system-packages "$@"
    else
      exit 1
    fi
  fi
}
if [[ ${#missing[@]} -gt 0 ]]; then
  log "installing pip packages: ${missing[*]}"
  pip_install "${missing[@]}"
fi
if [[ ${#missing_nodeps[@]} -gt 0 ]]; then
  log "installing pip packages without their dependencies: ${missing_nodeps[*]}"
  pip_install --no-deps "${missing_nodeps[@]}"
fi
