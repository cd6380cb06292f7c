//===- BlockAttnDialect.cpp - blockattn dialect ---------------------------===//

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnDialect.h"
#include "blockattn/Dialect/BlockAttn/IR/BlockAttnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::blockattn;

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnOpsDialect.cpp.inc"
#include "blockattn/Dialect/BlockAttn/IR/BlockAttnEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "blockattn/Dialect/BlockAttn/IR/BlockAttnAttrs.cpp.inc"

void BlockAttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "blockattn/Dialect/BlockAttn/IR/BlockAttnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "blockattn/Dialect/BlockAttn/IR/BlockAttnAttrs.cpp.inc"
      >();
}
