//===- DialectPlugin.cpp - block-attn's dialects for any mlir-opt ---------===//
//
//   mlir-opt-22 --load-dialect-plugin=lib/BlockAttnDialectPlugin.so ...
//
// Registers what registerAllBlockAttnDialects registers into the loading
// tool's registry. The plugin links libMLIR.so, as Debian's mlir-opt does, so
// both share one copy of MLIR and its type and pass registries.
//
//===----------------------------------------------------------------------===//

#include "blockattn/InitAllDialects.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "BlockAttnDialects", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            mlir::blockattn::registerAllBlockAttnDialects(*registry);
          }};
}
