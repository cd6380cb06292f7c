//===- fuzz-allocate-tmem.cpp - fuzz target: warpspec-allocate-tmem
//--------===//
//
// LLVMFuzzerTestOneInput for warpspec-allocate-tmem.
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const llvm::StringRef pipelines[] = {"warpspec-allocate-tmem"};
  return mlir::blockattn::fuzz::runPipelines(data, size, pipelines);
}
