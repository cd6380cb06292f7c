//===- Dialects.cpp - C API for the block-attn dialects -------------------===//

#include "blockattn-c/Dialects.h"

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnDialect.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecDialect.h"
#include "blockattn/InitAllDialects.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(BlockAttn, blockattn,
                                      mlir::blockattn::BlockAttnDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(WarpSpec, warpspec,
                                      mlir::warpspec::WarpSpecDialect)

void mlirRegisterAllBlockAttnDialects(MlirDialectRegistry registry) {
  mlir::blockattn::registerAllBlockAttnDialects(*unwrap(registry));
}
