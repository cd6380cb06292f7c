//===- Passes.h - blockattn transforms --------------------------*- C++ -*-===//

#ifndef BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PASSES_H
#define BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include "blockattn/Dialect/BlockAttn/Transforms/PlanEnums.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecEnums.h"

namespace mlir {
namespace warpspec {
class WarpSpecDialect;
} // namespace warpspec

namespace blockattn {

#define GEN_PASS_DECL
#include "blockattn/Dialect/BlockAttn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "blockattn/Dialect/BlockAttn/Transforms/Passes.h.inc"

} // namespace blockattn
} // namespace mlir

#endif // BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PASSES_H
