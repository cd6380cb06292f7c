//===- Passes.h - warpspec transforms ---------------------------*- C++ -*-===//

#ifndef BLOCKATTN_DIALECT_WARPSPEC_TRANSFORMS_PASSES_H
#define BLOCKATTN_DIALECT_WARPSPEC_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::warpspec {

#define GEN_PASS_DECL
#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h.inc"

} // namespace mlir::warpspec

#endif // BLOCKATTN_DIALECT_WARPSPEC_TRANSFORMS_PASSES_H
