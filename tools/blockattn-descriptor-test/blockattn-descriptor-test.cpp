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
  std::printf("kmajor(0x400) = 0x%016" PRIx64 "\n", kMajorDescriptor(0x400, SwizzledTile{64, 128}));
  SwizzledTile v128{64, 128};
  std::printf("mnmajor(0x8400, 64x128) = 0x%016" PRIx64 "\n",
              mnMajorDescriptor(0x8400, v128));
  // Every k-step the lowering takes (32 and 96: 64-byte swizzle).
  for (int64_t cols : {32, 64, 96, 128}) {
    SwizzledTile tile{64, cols};
    for (int64_t k = 0; k < cols / 16; ++k)
      std::printf("kmajor 64x%" PRId64 " step %" PRId64 " = 0x%016" PRIx64
                  "\n",
                  cols, k,
                  kMajorDescriptor(0x400 + kMajorStepOffset(tile, k), tile));
    for (int64_t k = 0; k < 4; ++k)
      std::printf("mnmajor 64x%" PRId64 " step %" PRId64 " = 0x%016" PRIx64
                  "\n",
                  cols, k,
                  mnMajorDescriptor(0x8400 + mnMajorStepOffset(tile, k), tile));
  }
  // The 128-byte swizzle: element (row, col) of a 64x128 bf16 tile.
  for (auto [row, col] : {std::pair<int64_t, int64_t>{0, 0}, {0, 8}, {1, 0},
                          {1, 8}, {7, 56}, {8, 0}, {0, 64}, {9, 72}})
    std::printf("swizzle(%" PRId64 ", %" PRId64 ") = %" PRId64 "\n", row, col,
                v128.byteOffset(row, col));
  // tcgen05 (sm_100a): the shared-memory descriptors of the same tiles and
  // the instruction descriptors of every MMA the Blackwell lowering emits.
  std::printf("tcgen05 kmajor(0x1000) = 0x%016" PRIx64 "\n",
              tcgen05KMajorDescriptor(0x1000, v128));
  std::printf("tcgen05 mnmajor(0x9000, 64x128) = 0x%016" PRIx64 "\n",
              tcgen05MNMajorDescriptor(0x9000, v128));
  for (int64_t k = 0; k < 8; ++k)
    std::printf("tcgen05 kmajor 64x128 step %" PRId64 " = 0x%016" PRIx64 "\n",
                k, tcgen05KMajorDescriptor(0x1000 + kMajorStepOffset(v128, k), v128));
  for (int64_t k = 0; k < 4; ++k)
    std::printf("tcgen05 mnmajor 64x128 step %" PRId64 " = 0x%016" PRIx64
                "\n",
                k, tcgen05MNMajorDescriptor(0x9000 + mnMajorStepOffset(v128, k), v128));
  // The 64-byte swizzle (head dims 32 and 96): element (row, col) of a 64x96
  // tile, and the tcgen05 descriptors of its tiles.
  SwizzledTile v96{64, 96};
  for (auto [row, col] : {std::pair<int64_t, int64_t>{0, 0}, {0, 8}, {1, 8},
                          {2, 0}, {2, 8}, {3, 24}, {7, 16}, {8, 0}, {0, 32},
                          {5, 40}, {63, 95}})
    std::printf("swizzle64B(%" PRId64 ", %" PRId64 ") = %" PRId64 "\n", row,
                col, v96.byteOffset(row, col));
  for (int64_t cols : {32, 96}) {
    SwizzledTile tile{64, cols};
    for (int64_t k = 0; k < cols / 16; ++k)
      std::printf("tcgen05 kmajor 64x%" PRId64 " step %" PRId64
                  " = 0x%016" PRIx64 "\n",
                  cols, k,
                  tcgen05KMajorDescriptor(0x1000 + kMajorStepOffset(tile, k),
                                          tile));
    for (int64_t k = 0; k < 4; ++k)
      std::printf("tcgen05 mnmajor 64x%" PRId64 " step %" PRId64
                  " = 0x%016" PRIx64 "\n",
                  cols, k,
                  tcgen05MNMajorDescriptor(0x9000 + mnMajorStepOffset(tile, k),
                                           tile));
  }
  // A 64-column tile of two 32-column pieces (chunk_cols = 32: the half-split
  // pair-complete chunks): the 64-byte swizzle's descriptors, a K-major
  // k-step from piece 0 to piece 1 jumps one piece (64 rows x 64 bytes).
  SwizzledTile pieces{64, 64, 32};
  for (int64_t k = 0; k < 4; ++k) {
    std::printf("pieces kmajor 64x64 step %" PRId64 " = 0x%016" PRIx64 "\n", k,
                kMajorDescriptor(0x400 + kMajorStepOffset(pieces, k), pieces));
    std::printf(
        "pieces mnmajor 64x64 step %" PRId64 " = 0x%016" PRIx64 "\n", k,
        mnMajorDescriptor(0x8400 + mnMajorStepOffset(pieces, k), pieces));
    std::printf(
        "pieces tcgen05 kmajor 64x64 step %" PRId64 " = 0x%016" PRIx64 "\n", k,
        tcgen05KMajorDescriptor(0x1000 + kMajorStepOffset(pieces, k), pieces));
  }
  std::printf("pieces tcgen05 mnmajor 64x64 = 0x%016" PRIx64 "\n",
              tcgen05MNMajorDescriptor(0x9000, pieces));
  for (auto [row, col] :
       {std::pair<int64_t, int64_t>{0, 0}, {2, 8}, {0, 32}, {5, 40}, {63, 63}})
    std::printf("pieces swizzle(%" PRId64 ", %" PRId64 ") = %" PRId64 "\n", row,
                col, pieces.byteOffset(row, col));
  // A 96-column tile of six 16-column pieces (chunk_cols = 16: head dim 96's
  // half-split pair-complete 32-column chunks): the 32-byte swizzle's
  // descriptors; every K-major k-step of 16 columns is its own piece.
  SwizzledTile pieces16{64, 96, 16};
  for (int64_t k = 0; k < 6; ++k)
    std::printf(
        "pieces16 kmajor 64x96 step %" PRId64 " = 0x%016" PRIx64
        " tcgen05 0x%016" PRIx64 "\n",
        k, kMajorDescriptor(0x400 + kMajorStepOffset(pieces16, k), pieces16),
        tcgen05KMajorDescriptor(0x1000 + kMajorStepOffset(pieces16, k),
                                pieces16));
  for (int64_t k = 0; k < 4; ++k)
    std::printf(
        "pieces16 mnmajor 64x96 step %" PRId64 " = 0x%016" PRIx64
        " tcgen05 0x%016" PRIx64 "\n",
        k, mnMajorDescriptor(0x8400 + mnMajorStepOffset(pieces16, k), pieces16),
        tcgen05MNMajorDescriptor(0x9000 + mnMajorStepOffset(pieces16, k),
                                 pieces16));
  for (auto [row, col] : {std::pair<int64_t, int64_t>{0, 0},
                          {0, 8},
                          {4, 0},
                          {4, 8},
                          {5, 3},
                          {0, 16},
                          {7, 40},
                          {63, 95}})
    std::printf("pieces16 swizzle(%" PRId64 ", %" PRId64 ") = %" PRId64 "\n",
                row, col, pieces16.byteOffset(row, col));
  struct Form {
    const char *name;
    int64_t m, n;
    Tcgen05Type ab;
    bool aMN, bMN;
  };
  for (Form f : {Form{"S=QK^T bf16 n64", 64, 64, Tcgen05Type::BF16, false, false},
                 Form{"S=QK^T f16 n64", 64, 64, Tcgen05Type::F16, false, false},
                 Form{"O=PV bf16 n64", 64, 64, Tcgen05Type::BF16, false, true},
                 Form{"O=PV bf16 n128", 64, 128, Tcgen05Type::BF16, false, true},
                 Form{"O=PV bf16 n32", 64, 32, Tcgen05Type::BF16, false, true},
                 Form{"O=PV bf16 n96", 64, 96, Tcgen05Type::BF16, false, true},
                 Form{"dV=P^T dO bf16 n96", 64, 96, Tcgen05Type::BF16, true, true},
                 Form{"O=PV f16 n128", 64, 128, Tcgen05Type::F16, false, true},
                 Form{"dV=P^T dO bf16 n128", 64, 128, Tcgen05Type::BF16, true, true},
                 Form{"m128 n64 bf16", 128, 64, Tcgen05Type::BF16, false, false}})
    std::printf("idesc %s = 0x%08x\n", f.name,
                tcgen05InstrDescriptor(f.m, f.n, f.ab, f.ab, Tcgen05Type::F32,
                                       f.aMN, f.bMN));
  return 0;
}
