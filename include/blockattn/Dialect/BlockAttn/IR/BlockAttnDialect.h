//===- BlockAttnDialect.h - blockattn dialect -------------------*- C++ -*-===//
//
// The blockattn dialect: target-independent block-diagonal attention.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNDIALECT_H
#define BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnOpsDialect.h.inc"

#endif // BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNDIALECT_H
