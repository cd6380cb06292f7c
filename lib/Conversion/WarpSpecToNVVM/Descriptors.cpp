//===- Descriptors.cpp - tensor-core descriptor encoders ------------------===//

#include "blockattn/Conversion/WarpSpecToNVVM/Descriptors.h"

using namespace mlir::blockattn::nvdesc;

uint64_t mlir::blockattn::nvdesc::wgmmaDescriptor(uint64_t start, uint64_t lbo,
                                                  uint64_t sbo,
                                                  WgmmaSwizzle swizzle,
                                                  uint64_t baseOffset) {
  return encodeField(start) | (encodeField(lbo) << 16) |
         (encodeField(sbo) << 32) | ((baseOffset & 0x7) << 49) |
         (static_cast<uint64_t>(swizzle) << 62);
}

int64_t SwizzledTile::byteOffset(int64_t row, int64_t col) const {
  int64_t chunk = col / chunkCols();
  int64_t byteInRow = (col % chunkCols()) * 2;
  int64_t unit = (byteInRow / 16) ^ phase(row);
  return chunk * chunkBytes() + row * rowBytes() + unit * 16 + byteInRow % 16;
}

/// The descriptors' swizzle fields follow the chunk's row (PTX ISA, "Matrix
/// Descriptor Format" and tcgen05 "Shared memory descriptor"): 128, 64 or 32
/// bytes.
static WgmmaSwizzle wgmmaSwizzle(const SwizzledTile &tile) {
  switch (tile.rowBytes()) {
  case 128:
    return WgmmaSwizzle::B128;
  case 64:
    return WgmmaSwizzle::B64;
  default:
    return WgmmaSwizzle::B32;
  }
}

static Tcgen05Swizzle tcgen05Swizzle(const SwizzledTile &tile) {
  switch (tile.rowBytes()) {
  case 128:
    return Tcgen05Swizzle::B128;
  case 64:
    return Tcgen05Swizzle::B64;
  default:
    return Tcgen05Swizzle::B32;
  }
}

uint64_t mlir::blockattn::nvdesc::kMajorDescriptor(uint64_t tileStart,
                                                   const SwizzledTile &tile) {
  return wgmmaDescriptor(tileStart, /*lbo=*/16, /*sbo=*/tile.periodBytes(),
                         wgmmaSwizzle(tile));
}

uint64_t mlir::blockattn::nvdesc::kMajorStepOffset(const SwizzledTile &tile,
                                                   int64_t kStep) {
  // 16 elements = 32 bytes per k-step; 4 steps per 64-column chunk, 2 per
  // 32-column chunk, 1 per 16-column chunk (each step its own chunk).
  int64_t stepsPerChunk = tile.chunkCols() / 16;
  return (kStep % stepsPerChunk) * 32 + (kStep / stepsPerChunk) * tile.chunkBytes();
}

uint64_t mlir::blockattn::nvdesc::mnMajorDescriptor(uint64_t tileStart,
                                                    const SwizzledTile &tile) {
  return wgmmaDescriptor(tileStart, /*lbo=*/tile.chunkBytes(),
                         /*sbo=*/tile.periodBytes(), wgmmaSwizzle(tile));
}

uint64_t mlir::blockattn::nvdesc::mnMajorStepOffset(const SwizzledTile &tile,
                                                    int64_t kStep) {
  return kStep * 16 * tile.rowBytes();
}

uint64_t mlir::blockattn::nvdesc::tcgen05SmemDescriptor(uint64_t start,
                                                       uint64_t lbo,
                                                       uint64_t sbo,
                                                       Tcgen05Swizzle swizzle,
                                                       uint64_t baseOffset) {
  constexpr uint64_t kVersion = 1; // bits 46-48: "fixed constant 0b001"
  return encodeField(start) | (encodeField(lbo) << 16) |
         (encodeField(sbo) << 32) | (kVersion << 46) |
         ((baseOffset & 0x7) << 49) | (static_cast<uint64_t>(swizzle) << 61);
}

uint64_t
mlir::blockattn::nvdesc::tcgen05KMajorDescriptor(uint64_t tileStart,
                                                 const SwizzledTile &tile) {
  return tcgen05SmemDescriptor(tileStart, /*lbo=*/16, /*sbo=*/tile.periodBytes(),
                               tcgen05Swizzle(tile));
}

uint64_t
mlir::blockattn::nvdesc::tcgen05MNMajorDescriptor(uint64_t tileStart,
                                                  const SwizzledTile &tile) {
  return tcgen05SmemDescriptor(tileStart, /*lbo=*/tile.chunkBytes(),
                               /*sbo=*/tile.periodBytes(), tcgen05Swizzle(tile));
}

static uint32_t tcgen05Format(Tcgen05Type type) {
  switch (type) {
  case Tcgen05Type::F16:
    return 0;
  case Tcgen05Type::BF16:
    return 1;
  case Tcgen05Type::F32:
    return 1; // D format: F16 = 0, F32 = 1
  }
  return 0;
}

uint32_t mlir::blockattn::nvdesc::tcgen05InstrDescriptor(
    int64_t m, int64_t n, Tcgen05Type a, Tcgen05Type b, Tcgen05Type d,
    bool aMNMajor, bool bMNMajor) {
  return (tcgen05Format(d) << 4) | (tcgen05Format(a) << 7) |
         (tcgen05Format(b) << 10) | (uint32_t(aMNMajor) << 15) |
         (uint32_t(bMNMajor) << 16) | (uint32_t(n >> 3) << 17) |
         (uint32_t(m >> 4) << 24);
}
