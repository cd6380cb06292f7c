//===- PlanEnums.h - blockattn-warp-specialize's enums ----------*- C++ -*-===//

#ifndef BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PLANENUMS_H
#define BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PLANENUMS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>

#include "blockattn/Dialect/BlockAttn/Transforms/PlanEnums.h.inc"

#endif // BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PLANENUMS_H
