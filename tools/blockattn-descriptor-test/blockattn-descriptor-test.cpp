//===- blockattn-descriptor-test.cpp - print descriptor encodings ---------===//
//
// Prints the shared-memory descriptors and swizzled offsets the Hopper
// lowering emits, for every tile the compiler uses, so that
// test/Conversion/WarpSpecToNVVM/descriptors.test can compare them with
// constants from the PTX ISA and CUTLASS.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Conversion/WarpSpecToNVVM/Descriptors.h"

#include <cinttypes>
#include <cstdio>
#include <initializer_list>
#include <utility>

using namespace mlir::blockattn::nvdesc;

int main() {
  // The worked examples of the reference (start addresses 0x400 and 0x8400).
  std::printf("kmajor(0x400) = 0x%016" PRIx64 "\n", kMajorDescriptor(0x400));
  SwizzledTile v128{64, 128};
  std::printf("mnmajor(0x8400, 64x128) = 0x%016" PRIx64 "\n",
              mnMajorDescriptor(0x8400, v128));
  // Every k-step the lowering takes.
  for (int64_t cols : {64, 128}) {
    SwizzledTile tile{64, cols};
    for (int64_t k = 0; k < cols / 16; ++k)
      std::printf("kmajor 64x%" PRId64 " step %" PRId64 " = 0x%016" PRIx64
                  "\n",
                  cols, k,
                  kMajorDescriptor(0x400 + kMajorStepOffset(tile, k)));
    for (int64_t k = 0; k < 4; ++k)
      std::printf("mnmajor 64x%" PRId64 " step %" PRId64 " = 0x%016" PRIx64
                  "\n",
                  cols, k,
                  mnMajorDescriptor(0x8400 + mnMajorStepOffset(k), tile));
  }
  // The 128-byte swizzle: element (row, col) of a 64x128 bf16 tile.
  for (auto [row, col] : {std::pair<int64_t, int64_t>{0, 0}, {0, 8}, {1, 0},
                          {1, 8}, {7, 56}, {8, 0}, {0, 64}, {9, 72}})
    std::printf("swizzle(%" PRId64 ", %" PRId64 ") = %" PRId64 "\n", row, col,
                v128.byteOffset(row, col));
  return 0;
}
