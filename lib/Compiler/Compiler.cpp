//===- Compiler.cpp - blockattn kernels to PTX, cubin and manifest --------===//
//
// The pipeline stops at the NVVM/LLVM dialects (format none) because
// gpu-module-to-binary replaces each gpu.module, and the manifest on its
// kernel with it, by a gpu.binary. Each gpu.module is then serialized through
// its #nvvm.target, the same code gpu-module-to-binary runs, and its manifest
// is completed with what only serialization knows (the PTX size, ptxas'
// report). Diagnostics name the location, not the op: printing a lowered
// kernel next to a ptxas warning would bury the warning.
//
//===----------------------------------------------------------------------===//

#include "Detail.h"

#include "blockattn/Compiler/Compiler.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <mutex>

using namespace mlir;
using namespace mlir::blockattn;

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}
} // namespace

/// Keeps the kernel functions `names` lists; fails on a name the module
/// lacks.
static LogicalResult selectKernels(ModuleOp module,
                                   ArrayRef<std::string> names) {
  if (names.empty())
    return success();
  llvm::StringSet<> wanted;
  for (const std::string &name : names)
    wanted.insert(name);
  for (func::FuncOp func :
       llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (!wanted.erase(func.getSymName()))
      func.erase();
  if (wanted.empty())
    return success();
  // Report the first missing name in the order they were given.
  for (const std::string &name : names)
    if (wanted.contains(name))
      return emitError(module.getLoc())
             << "no kernel function @" << name << " in the input";
  return failure();
}

/// The PTX of one gpu.module, through its first target attribute.
static FailureOr<std::string> serializeToPtx(gpu::GPUModuleOp gpuModule) {
  ArrayAttr targets = gpuModule.getTargetsAttr();
  if (!targets || targets.empty())
    return emitError(gpuModule.getLoc())
           << "gpu.module @" << gpuModule.getName()
           << " has no target attribute to serialize it with (the pipeline "
              "gives each kernel's gpu.module an #nvvm.target)";
  auto target = dyn_cast<gpu::TargetAttrInterface>(targets[0]);
  if (!target)
    return emitError(gpuModule.getLoc())
           << "gpu.module @" << gpuModule.getName() << ": target " << targets[0]
           << " cannot serialize a gpu.module (no gpu::TargetAttrInterface: "
              "is the context's registry registerAllBlockAttnDialects'?)";
  gpu::TargetOptions targetOptions(
      /*toolkitPath=*/"", /*librariesToLink=*/{}, /*cmdOptions=*/"",
      /*elfSection=*/"", gpu::CompilationTarget::Assembly);
  std::optional<SmallVector<char, 0>> ptx =
      target.serializeToObject(gpuModule, targetOptions);
  if (!ptx)
    return emitError(gpuModule.getLoc()) << "PTX generation failed";
  // The object is NUL-terminated PTX text.
  return StringRef(ptx->data(), ptx->size()).rtrim(StringRef("\0", 1)).str();
}

/// Serializes one gpu.module of the lowered module into a CompiledKernel.
static FailureOr<CompiledKernel> compileKernel(gpu::GPUModuleOp gpuModule,
                                               const CompileOptions &options,
                                               double pipelineSeconds) {
  Clock::time_point start = Clock::now();
  CompiledKernel kernel;
  kernel.name = gpuModule.getName().str();
  auto func = gpuModule.lookupSymbol<LLVM::LLVMFuncOp>(kernel.name);
  auto manifestAttr =
      func ? func->getAttrOfType<DictionaryAttr>("blockattn.manifest")
           : DictionaryAttr();
  if (!manifestAttr)
    return emitError(gpuModule.getLoc()) << "kernel has no blockattn.manifest";
  FailureOr<llvm::json::Object> manifest =
      blockattn::detail::convertManifest(manifestAttr, func.getLoc());
  if (failed(manifest))
    return failure();
  kernel.manifest = std::move(*manifest);
  kernel.manifest["schema_version"] = kManifestSchemaVersion;

  FailureOr<std::string> ptx = serializeToPtx(gpuModule);
  if (failed(ptx))
    return failure();
  kernel.ptx = std::move(*ptx);
  kernel.manifest["ptx"] = kernel.name + ".ptx";
  kernel.manifest["ptx_bytes"] = static_cast<int64_t>(kernel.ptx.size());
  // Measured before ptxas, as block-attn-compile always has: the time the
  // compiler itself took.
  kernel.compileSeconds = pipelineSeconds + secondsSince(start);
  kernel.manifest["compile_seconds"] = kernel.compileSeconds;
  if (!options.cubin)
    return kernel;

  StringRef chip = *kernel.manifest.getString("chip");
  FailureOr<blockattn::detail::PtxasResult> assembled =
      blockattn::detail::runPtxas(options.ptxas, kernel.ptx, chip, kernel.name,
                                  gpuModule.getLoc());
  if (failed(assembled))
    return failure();
  if (assembled->report.getBoolean("wgmma_serialized").value_or(false))
    emitWarning(gpuModule.getLoc())
        << "ptxas serialized wgmma in " << kernel.name << ":\n"
        << assembled->log;
  if (assembled->report.getInteger("spill_stores").value_or(0) ||
      assembled->report.getInteger("spill_loads").value_or(0))
    emitWarning(gpuModule.getLoc()) << kernel.name << " spills registers:\n"
                                    << assembled->log;
  kernel.cubin = std::move(assembled->cubin);
  kernel.ptxasLog = std::move(assembled->log);
  kernel.manifest["cubin"] = kernel.name + ".cubin";
  kernel.manifest["ptxas"] = std::move(assembled->report);
  return kernel;
}

/// The NVVM target serializes through LLVM's NVPTX backend, which a
/// program must register before use; an embedder should not have to know.
static void initializeNvptxBackend() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

FailureOr<std::vector<CompiledKernel>>
blockattn::compileKernels(ModuleOp module, const CompileOptions &options) {
  Clock::time_point start = Clock::now();
  initializeNvptxBackend();
  if (failed(selectKernels(module, options.kernels)))
    return failure();

  PassManager pm(module.getContext());
  BlockAttnToPtxOptions pipeline;
  pipeline.copyOptionValuesFrom(options.pipeline);
  pipeline.format = "none";
  std::string message;
  llvm::raw_string_ostream errorStream(message);
  if (failed(buildBlockAttnToPtxPipeline(pm, pipeline, errorStream)))
    return emitError(module.getLoc()) << StringRef(message).rtrim();
  if (failed(pm.run(module)))
    return failure();
  double pipelineSeconds = secondsSince(start);

  SmallVector<gpu::GPUModuleOp> gpuModules(
      module.getBody()->getOps<gpu::GPUModuleOp>());
  if (gpuModules.empty())
    return emitError(module.getLoc()) << "the input has no blockattn kernel";
  std::vector<CompiledKernel> kernels;
  bool ok = true;
  for (gpu::GPUModuleOp gpuModule : gpuModules) {
    FailureOr<CompiledKernel> kernel =
        compileKernel(gpuModule, options, pipelineSeconds / gpuModules.size());
    // Keep going: every kernel's diagnostics are worth seeing at once.
    if (failed(kernel))
      ok = false;
    else
      kernels.push_back(std::move(*kernel));
  }
  if (!ok)
    return failure();
  return kernels;
}

FailureOr<std::vector<CompiledKernel>>
blockattn::compileKernels(StringRef source, StringRef name,
                          MLIRContext *context, const CompileOptions &options) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, context, name);
  if (!module)
    return failure();
  return compileKernels(*module, options);
}

static LogicalResult writeFile(StringRef path, StringRef contents,
                               std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (!ec) {
    os << contents;
    os.close();
    ec = os.error();
    os.clear_error();
  }
  if (ec) {
    error = ("cannot write " + path + ": " + ec.message()).str();
    return failure();
  }
  return success();
}

LogicalResult blockattn::writeKernelFiles(const CompiledKernel &kernel,
                                          StringRef directory,
                                          std::string &error) {
  if (std::error_code ec = llvm::sys::fs::create_directories(directory)) {
    error = ("cannot create " + directory + ": " + ec.message()).str();
    return failure();
  }
  auto path = [&](StringRef extension) {
    SmallString<256> p(directory);
    llvm::sys::path::append(p, kernel.name + extension);
    return p;
  };
  if (failed(writeFile(path(".ptx"), kernel.ptx, error)))
    return failure();
  if (!kernel.cubin.empty() &&
      failed(writeFile(path(".cubin"), kernel.cubin, error)))
    return failure();
  return writeFile(path(".json"), kernel.getManifestJson(), error);
}
