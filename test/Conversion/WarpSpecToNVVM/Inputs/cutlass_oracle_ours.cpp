//===- cutlass_oracle_ours.cpp - our descriptors, oracle's labels ---------===//
//
// Prints, from our encoders (lib/Conversion/WarpSpecToNVVM/Descriptors.cpp),
// exactly the lines Inputs/cutlass_oracle.cpp prints from CUTLASS: the lines
// of blockattn-descriptor-test plus the configurations that tool does not
// print (every tcgen05 k-step of both tile widths, MN-major A operands, and
// the instruction descriptor of every GEMM of the forward and backward pass
// for bf16 and f16). Each value is built the way the lowering builds it
// (Hopper.cpp: fixed descriptor of the tile plus the k-step offset added to
// the start address). Compiled at test time together with Descriptors.cpp,
// which only needs <cstdint>.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Conversion/WarpSpecToNVVM/Descriptors.h"

#include <cinttypes>
#include <cstdio>
#include <initializer_list>
#include <utility>

using namespace mlir::blockattn::nvdesc;

namespace {

void print64(const char *label, uint64_t value) {
  std::printf("%s = 0x%016" PRIx64 "\n", label, value);
}

void printIdescForms(Tcgen05Type t, const char *name) {
  struct Form {
    const char *gemm;
    int64_t n;
    bool aMN, bMN;
  };
  const Form forms[] = {
      {"S=QK^T", 64, false, false},    {"O=PV", 64, false, true},
      {"O=PV", 128, false, true},      {"dV=P^T dO", 64, true, true},
      {"dV=P^T dO", 128, true, true},  {"dK=dS^T Q", 64, true, true},
      {"dK=dS^T Q", 128, true, true},  {"dQ=dS K", 64, false, true},
      {"dQ=dS K", 128, false, true},
  };
  for (const Form &f : forms)
    std::printf("idesc %s %s n%" PRId64 " = 0x%08x\n", f.gemm, name, f.n,
                tcgen05InstrDescriptor(64, f.n, t, t, Tcgen05Type::F32, f.aMN,
                                       f.bMN));
  for (int64_t n : {64, 128})
    for (bool aMN : {false, true})
      for (bool bMN : {false, true})
        std::printf("idesc m64 n%" PRId64 " %s A %s B %s = 0x%08x\n", n, name,
                    aMN ? "MN" : "K", bMN ? "MN" : "K",
                    tcgen05InstrDescriptor(64, n, t, t, Tcgen05Type::F32, aMN,
                                           bMN));
  std::printf("idesc m128 n64 %s = 0x%08x\n", name,
              tcgen05InstrDescriptor(128, 64, t, t, Tcgen05Type::F32, false,
                                     false));
}

} // namespace

int main() {
  char label[96];
  SwizzledTile t64{64, 64}, t128{64, 128};

  print64("kmajor(0x400)", kMajorDescriptor(0x400, t128));
  print64("mnmajor(0x8400, 64x128)", mnMajorDescriptor(0x8400, t128));
  for (const SwizzledTile &tile : {t64, t128})
    for (int64_t k = 0; k < tile.cols / 16; ++k) {
      std::snprintf(label, sizeof label, "kmajor 64x%" PRId64 " step %" PRId64,
                    tile.cols, k);
      print64(label, kMajorDescriptor(0x400 + kMajorStepOffset(tile, k), tile));
    }
  for (const SwizzledTile &tile : {t64, t128})
    for (int64_t k = 0; k < 4; ++k) {
      std::snprintf(label, sizeof label,
                    "mnmajor 64x%" PRId64 " step %" PRId64, tile.cols, k);
      print64(label, mnMajorDescriptor(0x8400 + mnMajorStepOffset(tile, k), tile));
    }
  // MN-major A (transpose_a): Hopper.cpp uses the MN-major B rules.
  for (int64_t k = 0; k < 4; ++k) {
    std::snprintf(label, sizeof label, "mnmajor A 64x64 step %" PRId64, k);
    print64(label, mnMajorDescriptor(0x8400 + mnMajorStepOffset(t64, k), t64));
  }

  const int64_t points[][2] = {{0, 0}, {0, 8},  {1, 0}, {1, 8},
                               {7, 56}, {8, 0}, {0, 64}, {9, 72}};
  for (const auto &p : points)
    std::printf("swizzle(%" PRId64 ", %" PRId64 ") = %" PRId64 "\n", p[0],
                p[1], t128.byteOffset(p[0], p[1]));

  print64("tcgen05 kmajor(0x1000)", tcgen05KMajorDescriptor(0x1000, t128));
  print64("tcgen05 mnmajor(0x9000, 64x128)",
          tcgen05MNMajorDescriptor(0x9000, t128));
  for (const SwizzledTile &tile : {t64, t128})
    for (int64_t k = 0; k < tile.cols / 16; ++k) {
      std::snprintf(label, sizeof label,
                    "tcgen05 kmajor 64x%" PRId64 " step %" PRId64, tile.cols,
                    k);
      print64(label,
              tcgen05KMajorDescriptor(0x1000 + kMajorStepOffset(tile, k), tile));
    }
  for (const SwizzledTile &tile : {t64, t128})
    for (int64_t k = 0; k < 4; ++k) {
      std::snprintf(label, sizeof label,
                    "tcgen05 mnmajor 64x%" PRId64 " step %" PRId64, tile.cols,
                    k);
      print64(label,
              tcgen05MNMajorDescriptor(0x9000 + mnMajorStepOffset(tile, k), tile));
    }
  for (int64_t k = 0; k < 4; ++k) {
    std::snprintf(label, sizeof label, "tcgen05 mnmajor A 64x64 step %" PRId64,
                  k);
    print64(label,
            tcgen05MNMajorDescriptor(0x9000 + mnMajorStepOffset(t64, k), t64));
  }

  printIdescForms(Tcgen05Type::BF16, "bf16");
  printIdescForms(Tcgen05Type::F16, "f16");

  // Head dims 32 and 96: 64-byte-swizzled tiles.
  for (int64_t d : {32, 96}) {
    SwizzledTile tile{64, d};
    for (int64_t k = 0; k < d / 16; ++k) {
      std::snprintf(label, sizeof label, "kmajor 64x%" PRId64 " step %" PRId64,
                    d, k);
      print64(label, kMajorDescriptor(0x400 + kMajorStepOffset(tile, k), tile));
    }
    for (int64_t k = 0; k < 4; ++k) {
      std::snprintf(label, sizeof label,
                    "mnmajor 64x%" PRId64 " step %" PRId64, d, k);
      print64(label,
              mnMajorDescriptor(0x8400 + mnMajorStepOffset(tile, k), tile));
    }
    for (int64_t k = 0; k < d / 16; ++k) {
      std::snprintf(label, sizeof label,
                    "tcgen05 kmajor 64x%" PRId64 " step %" PRId64, d, k);
      print64(label, tcgen05KMajorDescriptor(
                         0x1000 + kMajorStepOffset(tile, k), tile));
    }
    for (int64_t k = 0; k < 4; ++k) {
      std::snprintf(label, sizeof label,
                    "tcgen05 mnmajor 64x%" PRId64 " step %" PRId64, d, k);
      print64(label, tcgen05MNMajorDescriptor(
                         0x9000 + mnMajorStepOffset(tile, k), tile));
    }
  }
  SwizzledTile t96{64, 96};
  const int64_t points64[][2] = {{0, 0}, {0, 8}, {1, 8},  {2, 0},
                                 {2, 8}, {3, 24}, {7, 16}, {8, 0},
                                 {0, 32}, {5, 40}, {63, 95}};
  for (const auto &p : points64)
    std::printf("swizzle64B(%" PRId64 ", %" PRId64 ") = %" PRId64 "\n", p[0],
                p[1], t96.byteOffset(p[0], p[1]));
  for (auto [t, name] : {std::pair{Tcgen05Type::BF16, "bf16"},
                         std::pair{Tcgen05Type::F16, "f16"}})
    for (auto [gemm, aMN] : {std::pair{"O=PV", false},
                             std::pair{"dV=P^T dO", true},
                             std::pair{"dQ=dS K", false}})
      for (int64_t n : {32, 96})
        std::printf("idesc %s %s n%" PRId64 " = 0x%08x\n", gemm, name, n,
                    tcgen05InstrDescriptor(64, n, t, t, Tcgen05Type::F32, aMN,
                                           /*bMN=*/true));
  return 0;
}
