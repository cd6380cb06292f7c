//===- fuzz-warp-specialize.cpp - fuzz target: blockattn-warp-specialize
//---===//
//
// LLVMFuzzerTestOneInput for blockattn-warp-specialize for both chips.
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const llvm::StringRef pipelines[] = {
      "func.func(blockattn-warp-specialize{chip=sm_90a})",
      "func.func(blockattn-warp-specialize{chip=sm_100a})"};
  return mlir::blockattn::fuzz::runPipelines(data, size, pipelines);
}
