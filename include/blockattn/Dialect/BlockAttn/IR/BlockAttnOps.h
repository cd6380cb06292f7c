//===- BlockAttnOps.h - blockattn operations --------------------*- C++ -*-===//

#ifndef BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNOPS_H
#define BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNOPS_H

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "blockattn/Dialect/BlockAttn/IR/BlockAttnAttrs.h.inc"

#define GET_OP_CLASSES
#include "blockattn/Dialect/BlockAttn/IR/BlockAttnOps.h.inc"

namespace mlir::blockattn {

/// Compile-time limits of the compiler, which the blockattn ops verify.
/// The Python API checks its arguments before it compiles, against its one
/// copy of these lists (HEAD_DIMS and BLOCK_SIZES in
/// python/blockattn/_kernels.py); python/tests/test_kernel_key.py checks
/// that copy against block-attn-compile.
struct Support {
  static constexpr int64_t blockSizes[] = {16, 32, 64, 128};
  static constexpr int64_t headDims[] = {32, 64, 96, 128, 192, 256};
  static bool isSupportedBlockSize(int64_t bs);
  static bool isSupportedHeadDim(int64_t d);
  static bool isSupportedElementType(Type t);
};

} // namespace mlir::blockattn

#endif // BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNOPS_H
