//===- fuzz-parse.cpp - fuzz target: parse and verify --------------------===//
//
// LLVMFuzzerTestOneInput for parse and verify (what block-attn-opt does with no
// pass).
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const llvm::StringRef pipelines[] = {""};
  return mlir::blockattn::fuzz::runPipelines(data, size, pipelines);
}
