//===- TargetInfo.h - what the lowering knows of its GPU ---------*- C++
//-*-===//
//
// convert-warpspec-to-nvvm targets sm_90a (wgmma, accumulators in registers)
// and sm_100a (tcgen05, accumulators in tensor memory). Everything the
// lowering asks about the chip goes through one TargetInfo, built from the
// kernel's chip (the warpspec::Chip enum of WarpSpecAttrs.td), so that a new
// chip is one enum case and one place to describe it, as Triton's TargetInfo
// is per backend.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_CONVERSION_WARPSPECTONVVM_TARGETINFO_H
#define BLOCKATTN_CONVERSION_WARPSPECTONVVM_TARGETINFO_H

#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::blockattn {

/// The GPU a kernel is lowered for and what it has.
class TargetInfo {
public:
  explicit TargetInfo(warpspec::Chip chip) : chip(chip) {}
  /// The target named `name` (sm_90a, sm_100a); std::nullopt for any other.
  static std::optional<TargetInfo> get(llvm::StringRef name);
  /// The target of a verified kernel (its verifier accepts supported chips
  /// only).
  static TargetInfo get(warpspec::KernelOp kernel);

  warpspec::Chip getChip() const { return chip; }
  /// The chip's name, as #nvvm.target and the manifest spell it.
  llvm::StringRef getName() const { return warpspec::stringifyChip(chip); }
  bool operator==(const TargetInfo &other) const { return chip == other.chip; }
  bool operator!=(const TargetInfo &other) const { return chip != other.chip; }

  /// The oldest PTX ISA (as in +ptxNN) that has the chip's instructions:
  /// PTX ISA 8.0 introduced sm_90a (wgmma, setmaxnreg, the bulk tensor
  /// copies), 8.6 sm_100a (tcgen05).
  unsigned getMinimumPtxVersion() const;
  /// Whether warpspec.mma (wgmma.mma_async, accumulators in registers) can
  /// be lowered: sm_90a only; sm_100a's MMAs are warpspec.mma_async.
  bool hasWgmma() const;
  /// Whether the chip has tensor memory and tcgen05 (warpspec.mma_async,
  /// tmem_load, tmem_store): sm_100a.
  bool hasTensorMemory() const;

private:
  warpspec::Chip chip;
};

} // namespace mlir::blockattn

#endif // BLOCKATTN_CONVERSION_WARPSPECTONVVM_TARGETINFO_H
