//===- WarpSpecEnums.h - warpspec enums -------------------------*- C++ -*-===//
//
// The enums of WarpSpecAttrs.td without the dialect's ops: among them
// `warpspec::Chip`, the one chip enum of the compiler, which the pipeline
// options (Pipelines.h) and the compile API (Compiler.h) take.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECENUMS_H
#define BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECENUMS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>

#include "blockattn/Dialect/WarpSpec/IR/WarpSpecEnums.h.inc"

#endif // BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECENUMS_H
