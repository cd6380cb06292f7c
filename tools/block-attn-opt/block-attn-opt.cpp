//===- block-attn-opt.cpp - the block-attn optimizer driver ---------------===//
//
// mlir-opt with the blockattn and warpspec dialects, their passes and the
// blockattn-to-ptx pipeline, plus the upstream dialects and passes a user
// needs next to them. Parse and verification errors are diagnostics with exit
// code 1 (MlirOptMain), never crashes.
//
//===----------------------------------------------------------------------===//

#include "blockattn/InitAllDialects.h"
#include "blockattn/InitAllPasses.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::blockattn::registerBlockAttnToolPasses();
  mlir::DialectRegistry registry;
  mlir::blockattn::registerBlockAttnToolDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "block-attn optimizer driver\n", registry));
}
