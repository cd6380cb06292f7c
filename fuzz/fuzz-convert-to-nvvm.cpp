//===- fuzz-convert-to-nvvm.cpp - fuzz target: convert-warpspec-to-nvvm
//----===//
//
// LLVMFuzzerTestOneInput for convert-warpspec-to-nvvm (after
// warpspec-lower-protocol and warpspec-dispatch-partitions) on planned
// (allocated) kernels, and after the allocators on unplanned ones.
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const llvm::StringRef pipelines[] = {
      "warpspec-lower-protocol,warpspec-dispatch-partitions,"
      "convert-warpspec-to-nvvm",
      "warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,"
      "warpspec-dispatch-partitions,convert-warpspec-to-nvvm"};
  return mlir::blockattn::fuzz::runPipelines(data, size, pipelines);
}
