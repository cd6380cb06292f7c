//===- Compiler.cpp - C API for the compile call --------------------------===//

#include "blockattn-c/Compiler.h"

#include "blockattn/Compiler/Compiler.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace {
/// A CompiledKernel with its manifest printed once, so that the C strings
/// handed out stay valid.
struct CompiledKernelWithJson {
  blockattn::CompiledKernel kernel;
  std::string manifestJson;
};
using CompileResult = std::vector<CompiledKernelWithJson>;

CompileResult &unwrapResult(MlirBlockAttnCompileResult result) {
  return *static_cast<CompileResult *>(result.ptr);
}
} // namespace

MlirBlockAttnCompileResult mlirBlockAttnCompile(MlirModule module,
                                                MlirStringRef pipelineOptions,
                                                bool cubin,
                                                MlirStringRef ptxas) {
  ModuleOp op = unwrap(module);
  blockattn::CompileOptions options;
  std::string message;
  llvm::raw_string_ostream errorStream(message);
  if (failed(options.pipeline.parseFromString(unwrap(pipelineOptions),
                                              errorStream))) {
    emitError(op.getLoc()) << StringRef(message).rtrim();
    return {nullptr};
  }
  options.cubin = cubin;
  options.ptxas = unwrap(ptxas).str();
  FailureOr<std::vector<blockattn::CompiledKernel>> kernels =
      blockattn::compileKernels(op, options);
  if (failed(kernels))
    return {nullptr};
  auto *result = new CompileResult;
  for (blockattn::CompiledKernel &kernel : *kernels) {
    std::string json = kernel.getManifestJson();
    result->push_back({std::move(kernel), std::move(json)});
  }
  return {result};
}

void mlirBlockAttnCompileResultDestroy(MlirBlockAttnCompileResult result) {
  delete static_cast<CompileResult *>(result.ptr);
}

intptr_t
mlirBlockAttnCompileResultGetNumKernels(MlirBlockAttnCompileResult result) {
  return static_cast<intptr_t>(unwrapResult(result).size());
}

MlirStringRef
mlirBlockAttnCompileResultGetKernelName(MlirBlockAttnCompileResult result,
                                        intptr_t pos) {
  return wrap(StringRef(unwrapResult(result)[pos].kernel.name));
}

MlirStringRef
mlirBlockAttnCompileResultGetPtx(MlirBlockAttnCompileResult result,
                                 intptr_t pos) {
  return wrap(StringRef(unwrapResult(result)[pos].kernel.ptx));
}

MlirStringRef
mlirBlockAttnCompileResultGetCubin(MlirBlockAttnCompileResult result,
                                   intptr_t pos) {
  return wrap(StringRef(unwrapResult(result)[pos].kernel.cubin));
}

MlirStringRef
mlirBlockAttnCompileResultGetManifest(MlirBlockAttnCompileResult result,
                                      intptr_t pos) {
  return wrap(StringRef(unwrapResult(result)[pos].manifestJson));
}
