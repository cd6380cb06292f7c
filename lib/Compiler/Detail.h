//===- Detail.h - pieces of the compile API shared by its files -*- C++ -*-===//

#ifndef BLOCKATTN_LIB_COMPILER_DETAIL_H
#define BLOCKATTN_LIB_COMPILER_DETAIL_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace mlir::blockattn::detail {

/// The `blockattn.manifest` attribute as JSON. Fails with a diagnostic at
/// `loc` if it lacks what the compile API and a runtime read: a string
/// `kernel` and `chip`, integer `threads` and `smem_bytes`, and `params` and
/// `partitions` as arrays of dictionaries.
FailureOr<llvm::json::Object> convertManifest(DictionaryAttr manifest,
                                              Location loc);

/// What `ptxas -v` assembled: the cubin and its resource report.
struct PtxasResult {
  std::string cubin;
  std::string log;
  llvm::json::Object report;
};

/// Assembles `ptx` with `ptxas -arch=<chip> -v` in temporary files. Fails
/// with a diagnostic at `loc` if ptxas is missing or fails, or if its report
/// holds a number out of range.
FailureOr<PtxasResult> runPtxas(StringRef ptxas, StringRef ptx, StringRef chip,
                                StringRef kernel, Location loc);

} // namespace mlir::blockattn::detail

#endif // BLOCKATTN_LIB_COMPILER_DETAIL_H
