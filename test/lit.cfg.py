# -*- Python -*-
# lit configuration for block-attn (`make check`, or `ninja check-blockattn`).

import os
import shutil
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "BLOCKATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".py"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.blockattn_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%blockattn_src_root", config.blockattn_src_root))
config.substitutions.append(("%mlir_dir", config.mlir_dir))
config.substitutions.append(("%cmake_generator", config.cmake_generator))
config.substitutions.append(("%cmake_make_program", config.cmake_make_program))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%cxx_compiler", config.cxx_compiler))
config.substitutions.append(("%blockattn_obj_root", config.blockattn_obj_root))
# The Python that runs lit, unless CMake found one.
config.substitutions.append(("%python", config.python_executable or sys.executable))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.blockattn_tools_dir, config.llvm_tools_dir]
tools = [
    "block-attn-opt",
    "block-attn-compile",
    "block-attn-emulate",
    "blockattn-descriptor-test",
    "blockattn-capi-test",
    "blockattn-tblgen",
    "FileCheck",
    "not",
    "count",
    "split-file",
    # fuzz/: the targets with the replay driver (test/Fuzz)
    "blockattn-fuzz-parse",
    "blockattn-fuzz-warp-specialize",
    "blockattn-fuzz-allocate-smem",
    "blockattn-fuzz-allocate-tmem",
    "blockattn-fuzz-convert-to-nvvm",
    "blockattn-fuzz-blockattn-to-ptx",
    "blockattn-fuzz-compile-flags",
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# libblockattn_launch's C test (test/Launch), built when cuda.h is found.
if os.path.exists(os.path.join(config.blockattn_tools_dir, "blockattn-launch-test")):
    config.available_features.add("launch-library")
    llvm_config.add_tool_substitutions(["blockattn-launch-test"], tool_dirs)

# Upstream's mlir-opt: test/Fuzz/known-upstream.test shows that the crashes
# the fuzz targets skip are MLIR's own.
mlir_opt = os.path.join(config.llvm_tools_dir, "mlir-opt")
if os.path.exists(mlir_opt):
    config.available_features.add("mlir-opt")
    config.substitutions.append(("%mlir_opt", mlir_opt))

# Debian's own mlir-opt (it links libMLIR.so) and our plugins for it; the
# plugins are built only against the MLIR dylib (BLOCKATTN_LINK_MLIR_DYLIB).
upstream_mlir_opt = os.path.join(config.llvm_tools_dir, "mlir-opt")
plugin_dir = os.path.join(config.blockattn_obj_root, "lib")
if os.path.exists(upstream_mlir_opt) and os.path.exists(
        os.path.join(plugin_dir, "BlockAttnDialectPlugin.so")):
    config.available_features.add("plugins")
    config.substitutions.append(("%upstream_mlir_opt", upstream_mlir_opt))
    config.substitutions.append(("%blockattn_libs", plugin_dir))

# CUDA tools: tests that assemble PTX or inspect SASS are marked
# `REQUIRES: ptxas` / `REQUIRES: cuobjdump` and run where the tools exist.
def find_cuda_tool(name, configured):
    if configured and os.path.exists(configured):
        return configured
    for d in [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]:
        p = os.path.join(d, "bin", name) if d else ""
        if p and os.path.exists(p):
            return p
    return shutil.which(name)

def pip_cuda_bin():
    """NVIDIA's PyPI wheels (nvidia-cuda-cuobjdump, -nvdisasm) put their tools
    in site-packages/nvidia/cu13/bin of the python3 on PATH."""
    import subprocess

    code = ("import nvidia, os\n"
            "for p in nvidia.__path__: print(os.path.join(p, 'cu13', 'bin'))")
    try:
        out = subprocess.run(["python3", "-c", code], capture_output=True,
                             text=True, timeout=60).stdout
    except Exception:
        return []
    return [d for d in out.split() if os.path.isdir(d)]


for directory in pip_cuda_bin():
    # cuobjdump runs nvdisasm from PATH.
    config.environment["PATH"] = directory + os.pathsep + config.environment["PATH"]
    if not config.cuobjdump_executable or not os.path.exists(config.cuobjdump_executable):
        candidate = os.path.join(directory, "cuobjdump")
        if os.path.exists(candidate):
            config.cuobjdump_executable = candidate

ptxas = find_cuda_tool("ptxas", config.ptxas_executable)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
cuobjdump = find_cuda_tool("cuobjdump", config.cuobjdump_executable)
if cuobjdump:
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", cuobjdump))

# CUTLASS's headers (the nvidia-cutlass wheel ships them under
# cutlass_library/source/include) plus the CUDA toolkit's include directories
# (CuTe includes cuda_runtime_api.h, cuda_fp16.h and libcu++'s <cuda/std/...>,
# which CUDA 13 keeps under include/cccl): test/Conversion/WarpSpecToNVVM/
# cutlass-oracle.test compiles a host program against them with the C++
# compiler and is marked `REQUIRES: cutlass-headers`.
def cutlass_include_dir():
    import subprocess

    code = ("import importlib.util, os\n"
            "spec = importlib.util.find_spec('cutlass_library')\n"
            "for p in (spec.submodule_search_locations or []) if spec else []:\n"
            "    print(os.path.join(p, 'source', 'include'))")
    try:
        out = subprocess.run(["python3", "-c", code], capture_output=True,
                             text=True, timeout=60).stdout
    except Exception:
        return None
    for d in out.splitlines():
        if os.path.exists(os.path.join(d, "cute", "arch", "mma_sm100_desc.hpp")):
            return d
    return None


def cuda_include_dirs():
    """The CUDA include directory and the one that holds <cuda/std/...>."""
    for root in [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""),
                 "/usr/local/cuda"]:
        inc = os.path.join(root, "include") if root else ""
        if not inc or not os.path.exists(os.path.join(inc, "cuda_runtime_api.h")):
            continue
        for std in [os.path.join(inc, "cccl"), inc]:
            if os.path.exists(os.path.join(std, "cuda", "std", "utility")):
                return [inc] if std == inc else [inc, std]
    return None


cutlass_include = cutlass_include_dir()
cuda_includes = cuda_include_dirs()
if cutlass_include and cuda_includes and config.cxx_compiler and \
        os.path.exists(config.cxx_compiler):
    config.available_features.add("cutlass-headers")
    config.substitutions.append(
        ("%cutlass_cxxflags",
         " ".join(["-std=c++17"] + ['-I"%s"' % d for d in [cutlass_include] + cuda_includes])))
