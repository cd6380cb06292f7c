//===- Descriptors.h - tensor-core descriptor encoders ----------*- C++ -*-===//
//
// Pure functions that encode the 64-bit shared-memory matrix descriptors of
// Hopper's wgmma and the layouts TMA writes with the 128-byte swizzle. They
// are separate from the lowering so that they can be unit-tested against
// constants from the PTX ISA and CUTLASS (test/Conversion/WarpSpecToNVVM/
// descriptors.test), and so that the lowering only has to add a run-time
// start address to a constant.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_CONVERSION_WARPSPECTONVVM_DESCRIPTORS_H
#define BLOCKATTN_CONVERSION_WARPSPECTONVVM_DESCRIPTORS_H

#include <cstdint>

namespace mlir::blockattn::nvdesc {

/// Layout type field of the wgmma descriptor, bits 63-62 (PTX ISA, "Matrix
/// Descriptor Format"; CUTLASS cute/arch/mma_sm90_desc.hpp LayoutType).
/// Not the TMA swizzle enum (128B = 3 there) nor tcgen05's (128B = 2).
enum class WgmmaSwizzle : uint64_t { None = 0, B128 = 1, B64 = 2, B32 = 3 };

/// matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4.
constexpr uint64_t encodeField(uint64_t bytes) { return (bytes & 0x3FFFF) >> 4; }

/// The wgmma shared-memory matrix descriptor for a matrix starting at shared
/// address `start` (bytes), with leading/stride byte offsets `lbo`/`sbo`.
/// Bits: [13:0] start>>4, [29:16] LBO>>4, [45:32] SBO>>4, [51:49] base
/// offset, [63:62] swizzle.
uint64_t wgmmaDescriptor(uint64_t start, uint64_t lbo, uint64_t sbo,
                         WgmmaSwizzle swizzle, uint64_t baseOffset = 0);

/// Geometry of a 16-bit tile as TMA writes it with 128-byte swizzle: columns
/// split into chunks of 64 elements (128 bytes); each chunk is `rows` rows of
/// 128 bytes; the 16-byte unit index of a row is XOR-ed with `row % 8`.
struct SwizzledTile {
  int64_t rows;
  int64_t cols;

  static constexpr int64_t kChunkCols = 64;
  static constexpr int64_t kRowBytes = 128;
  int64_t chunkBytes() const { return rows * kRowBytes; }
  /// Byte offset of element (row, col) from the tile start.
  int64_t byteOffset(int64_t row, int64_t col) const;
};

/// wgmma operand descriptors for such tiles (all 1024-byte aligned, so the
/// base offset is 0).
///
/// K-major operand (A of S = Q K^T, or K as its B): rows are M (or N), columns
/// K. SBO = 1024 (next 8 rows), LBO unused (1). A k-step of 16 elements moves
/// the start by 32 bytes inside a chunk, or to the next chunk.
uint64_t kMajorDescriptor(uint64_t tileStart);
uint64_t kMajorStepOffset(const SwizzledTile &tile, int64_t kStep);

/// MN-major B operand (V in O = P V, stored K x N with N contiguous).
/// LBO = one chunk (next 64 N columns), SBO = 1024 (next 8 K rows); a k-step
/// of 16 rows moves the start by 16 * 128 bytes.
uint64_t mnMajorDescriptor(uint64_t tileStart, const SwizzledTile &tile);
uint64_t mnMajorStepOffset(int64_t kStep);

} // namespace mlir::blockattn::nvdesc

#endif // BLOCKATTN_CONVERSION_WARPSPECTONVVM_DESCRIPTORS_H
