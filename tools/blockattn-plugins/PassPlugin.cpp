//===- PassPlugin.cpp - block-attn's passes for any mlir-opt --------------===//
//
//   mlir-opt-22 --load-pass-plugin=lib/BlockAttnPassPlugin.so
//     --pass-pipeline="builtin.module(blockattn-to-ptx{chip=sm_90a})" ...
//
// Registers the project's passes and the blockattn-to-ptx pipeline
// (registerAllBlockAttnPasses). Load the dialect plugin too: the passes
// create blockattn and warpspec ops. Like the dialect plugin it links
// libMLIR.so, so that the upstream passes it registers again are the very
// ones the tool registered (same TypeIDs), not a second copy.
//
//===----------------------------------------------------------------------===//

#include "blockattn/InitAllPasses.h"

#include "mlir/Tools/Plugins/PassPlugin.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "BlockAttnPasses", LLVM_VERSION_STRING,
          []() { mlir::blockattn::registerAllBlockAttnPasses(); }};
}
