//===- PtxFeatures.h - which PTX ISA versions a kernel can use --*- C++ -*-===//
//
// convert-warpspec-to-nvvm puts `ptx-features` (+ptxNN) on each kernel's
// #nvvm.target, and LLVM's NVPTX backend aborts on a PTX ISA older than the
// chip's instructions (and silently picks its own for one it does not know).
// The conversion checks the option against each kernel's chip with this
// function; the blockattn-to-ptx pipeline checks it before it runs.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_CONVERSION_WARPSPECTONVVM_PTXFEATURES_H
#define BLOCKATTN_CONVERSION_WARPSPECTONVVM_PTXFEATURES_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::blockattn {

/// Why `features` (as in ptx-features=+ptx86) cannot compile a kernel for
/// `chip`: not one PTX ISA version, older than the chip's instructions
/// (sm_90a needs +ptx80, sm_100a +ptx86), or a version the NVPTX backend
/// does not know. std::nullopt when it can; an unknown chip is not judged
/// here (the chip's own verifier names it).
std::optional<std::string> checkPtxFeatures(llvm::StringRef features,
                                            llvm::StringRef chip);

} // namespace mlir::blockattn

#endif // BLOCKATTN_CONVERSION_WARPSPECTONVVM_PTXFEATURES_H
