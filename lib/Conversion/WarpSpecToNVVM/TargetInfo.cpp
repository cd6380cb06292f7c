//===- TargetInfo.cpp - what the lowering knows of its GPU ----------------===//
//
// The one place where sm_90a and sm_100a differ for convert-warpspec-to-nvvm
// (see TargetInfo.h).
//
//===----------------------------------------------------------------------===//

#include "blockattn/Conversion/WarpSpecToNVVM/TargetInfo.h"

using namespace mlir;
using namespace mlir::blockattn;
using warpspec::Chip;

std::optional<TargetInfo> TargetInfo::get(llvm::StringRef name) {
  if (std::optional<Chip> chip = warpspec::symbolizeChip(name))
    return TargetInfo(*chip);
  return std::nullopt;
}

TargetInfo TargetInfo::get(warpspec::KernelOp kernel) {
  return TargetInfo(kernel.getChip());
}

unsigned TargetInfo::getMinimumPtxVersion() const {
  switch (chip) {
  case Chip::sm_90a:
    return 80;
  case Chip::sm_100a:
    return 86;
  }
  llvm_unreachable("unknown chip");
}

bool TargetInfo::hasWgmma() const { return chip == Chip::sm_90a; }

bool TargetInfo::hasTensorMemory() const { return chip == Chip::sm_100a; }
