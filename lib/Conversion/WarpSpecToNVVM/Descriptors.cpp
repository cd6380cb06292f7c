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
  int64_t chunk = col / kChunkCols;
  int64_t byteInRow = (col % kChunkCols) * 2;
  int64_t unit = (byteInRow / 16) ^ (row % 8);
  return chunk * chunkBytes() + row * kRowBytes + unit * 16 + byteInRow % 16;
}

uint64_t mlir::blockattn::nvdesc::kMajorDescriptor(uint64_t tileStart) {
  return wgmmaDescriptor(tileStart, /*lbo=*/16, /*sbo=*/8 * 128,
                         WgmmaSwizzle::B128);
}

uint64_t mlir::blockattn::nvdesc::kMajorStepOffset(const SwizzledTile &tile,
                                                   int64_t kStep) {
  // 16 elements = 32 bytes per k-step; 4 steps per 64-column chunk.
  return (kStep % 4) * 32 + (kStep / 4) * tile.chunkBytes();
}

uint64_t mlir::blockattn::nvdesc::mnMajorDescriptor(uint64_t tileStart,
                                                    const SwizzledTile &tile) {
  return wgmmaDescriptor(tileStart, /*lbo=*/tile.chunkBytes(),
                         /*sbo=*/8 * 128, WgmmaSwizzle::B128);
}

uint64_t mlir::blockattn::nvdesc::mnMajorStepOffset(int64_t kStep) {
  return kStep * 16 * 128;
}
