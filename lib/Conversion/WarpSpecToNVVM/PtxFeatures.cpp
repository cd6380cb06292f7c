//===- PtxFeatures.cpp - which PTX ISA versions a kernel can use ----------===//

#include "blockattn/Conversion/WarpSpecToNVVM/PtxFeatures.h"
#include "blockattn/Conversion/WarpSpecToNVVM/TargetInfo.h"

#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace mlir::blockattn;

/// The PTX ISA versions from 8.0 on that LLVM 22's NVPTX backend knows; it
/// ignores any other +ptxNN with a warning and would pick a version of its
/// own.
static bool isKnownPtxVersion(unsigned version) {
  return (version >= 80 && version <= 88) || version == 90;
}

static std::string isaVersion(unsigned version) {
  return (llvm::Twine(version / 10) + "." + llvm::Twine(version % 10)).str();
}

std::optional<std::string> blockattn::checkPtxFeatures(llvm::StringRef features,
                                                       llvm::StringRef chip) {
  unsigned version = 0;
  llvm::StringRef digits = features;
  if (!digits.consume_front("+ptx") || digits.size() != 2 ||
      digits.getAsInteger(10, version))
    return ("ptx-features must be one PTX ISA version such as +ptx86, got '" +
            features + "'")
        .str();
  std::optional<TargetInfo> target = TargetInfo::get(chip);
  if (!target)
    return std::nullopt;
  std::optional<unsigned> minimum = target->getMinimumPtxVersion();
  if (version < *minimum)
    return ("ptx-features '" + features + "' is PTX ISA " +
            isaVersion(version) + ", older than " + chip +
            " allows: it needs PTX ISA " + isaVersion(*minimum) +
            " or newer (+ptx" + llvm::Twine(*minimum) + ")")
        .str();
  if (!isKnownPtxVersion(version))
    return ("ptx-features '" + features +
            "' is no PTX ISA version LLVM's NVPTX backend knows (+ptx80 ... "
            "+ptx88, +ptx90)")
        .str();
  return std::nullopt;
}
