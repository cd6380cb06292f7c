//===- fuzz-allocate-smem.cpp - fuzz target: warpspec-allocate-smem
//--------===//
//
// LLVMFuzzerTestOneInput for warpspec-allocate-smem.
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const llvm::StringRef pipelines[] = {"warpspec-allocate-smem"};
  return mlir::blockattn::fuzz::runPipelines(data, size, pipelines);
}
