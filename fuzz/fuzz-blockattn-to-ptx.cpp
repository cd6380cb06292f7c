//===- fuzz-blockattn-to-ptx.cpp - fuzz target: blockattn-to-ptx ----------===//
//
// LLVMFuzzerTestOneInput for the whole blockattn-to-ptx pipeline through NVPTX
// to PTX (no ptxas), both chips.
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const llvm::StringRef pipelines[] = {
      "blockattn-to-ptx{chip=sm_90a format=isa}",
      "blockattn-to-ptx{chip=sm_100a format=isa}"};
  return mlir::blockattn::fuzz::runPipelines(data, size, pipelines);
}
