//===- WarpSpecDialect.h - warpspec dialect ---------------------*- C++ -*-===//

#ifndef BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECDIALECT_H
#define BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECDIALECT_H

#include "mlir/IR/Dialect.h"

#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOpsDialect.h.inc"

#endif // BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECDIALECT_H
