//===- consumer-compile.cpp - kernels through the compile API -------------===//
//
// Built by test/Install/consumer.test against an installed block-attn
// package: compiles the kernels of an MLIR file to PTX and launch manifests
// with one library call, and writes them as DIR/<kernel>.{ptx,json}, so
// that the test can compare them with block-attn-compile's.
//
//   consumer-compile INPUT.mlir DIR
//
//===----------------------------------------------------------------------===//

#include "blockattn/Compiler/Compiler.h"
#include "blockattn/InitAllDialects.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

int main(int argc, char **argv) {
  if (argc != 3) {
    llvm::errs() << "usage: consumer-compile INPUT.mlir DIR\n";
    return 2;
  }
  DialectRegistry registry;
  blockattn::registerAllBlockAttnDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(argv[1], &context);
  if (!module)
    return 1;
  blockattn::CompileOptions options;
  options.pipeline.chip = warpspec::Chip::sm_90a;
  FailureOr<std::vector<blockattn::CompiledKernel>> kernels =
      blockattn::compileKernels(*module, options);
  if (failed(kernels))
    return 1;
  for (const blockattn::CompiledKernel &kernel : *kernels) {
    std::string error;
    if (failed(blockattn::writeKernelFiles(kernel, argv[2], error))) {
      llvm::errs() << "consumer-compile: " << error << "\n";
      return 1;
    }
    llvm::outs() << kernel.name << ": " << kernel.ptx.size()
                 << " bytes of PTX, " << *kernel.manifest.getInteger("threads")
                 << " threads\n";
  }
  return 0;
}
