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

//===----------------------------------------------------------------------===//
// Blackwell (tcgen05)
//===----------------------------------------------------------------------===//

/// Swizzle code of the tcgen05 shared-memory descriptor, bits 61-63 (PTX ISA,
/// "Shared memory descriptor"; CUTLASS cute/arch/mma_sm100_desc.hpp
/// LayoutType). 128B is 2 here, 1 in wgmma's field and 3 in the TMA enum.
enum class Tcgen05Swizzle : uint64_t {
  None = 0,
  B128Base32B = 1,
  B128 = 2,
  B64 = 4,
  B32 = 6
};

/// The tcgen05 shared-memory descriptor: wgmma's start/LBO/SBO fields, the
/// fixed "version" 0b001 at bits 46-48, base offset at 49-51, LBO mode 0 at
/// bit 52, the 3-bit swizzle at 61-63.
uint64_t tcgen05SmemDescriptor(uint64_t start, uint64_t lbo, uint64_t sbo,
                               Tcgen05Swizzle swizzle,
                               uint64_t baseOffset = 0);

/// K-major and MN-major operands of 16-bit tiles written by TMA with the
/// 128-byte swizzle (same geometry as the wgmma helpers; k-steps advance the
/// start address by kMajorStepOffset / mnMajorStepOffset).
uint64_t tcgen05KMajorDescriptor(uint64_t tileStart);
uint64_t tcgen05MNMajorDescriptor(uint64_t tileStart, const SwizzledTile &tile);

/// Element types of the tcgen05 `.kind::f16` instruction descriptor.
enum class Tcgen05Type { F16, BF16, F32 };

/// The 32-bit tcgen05 instruction descriptor for `.kind::f16` (PTX ISA,
/// "Instruction descriptor", table for .kind::f16/tf32; CUTLASS
/// UMMA::InstrDescriptor): D format at bits 4-5, A and B formats at 7-9 and
/// 10-12, A/B major (1 = MN-major) at 15/16, N >> 3 at 17-22, M >> 4 at
/// 24-28. Dense, no negation, no saturation, no shift.
uint32_t tcgen05InstrDescriptor(int64_t m, int64_t n, Tcgen05Type a,
                                Tcgen05Type b, Tcgen05Type d, bool aMNMajor,
                                bool bMNMajor);

} // namespace mlir::blockattn::nvdesc

#endif // BLOCKATTN_CONVERSION_WARPSPECTONVVM_DESCRIPTORS_H
