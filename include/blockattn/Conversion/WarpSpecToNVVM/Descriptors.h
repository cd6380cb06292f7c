//===- Descriptors.h - tensor-core descriptor encoders ----------*- C++ -*-===//
//
// Pure functions that encode the 64-bit shared-memory matrix descriptors of
// Hopper's wgmma and Blackwell's tcgen05, and the layouts TMA writes with the
// 128-byte swizzle (tiles whose width is a multiple of 64 elements) or the
// 64-byte swizzle (the others: head dims 32 and 96). They
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

/// Geometry of a 16-bit tile as TMA writes it: columns split into chunks of
/// `chunkCols()` elements, each chunk `rows` rows of `rowBytes()` bytes, the
/// 16-byte unit index of a row XOR-ed with the swizzle phase of the row.
///   - Width a multiple of 64: 64-column chunks, 128-byte swizzle (CuTe
///     Swizzle<3,4,3>: phase row % 8).
///   - Otherwise (32, 96): 32-column chunks, 64-byte swizzle (Swizzle<2,4,3>:
///     address bits [4,6) XOR bits [7,9), i.e. phase (row / 2) % 4). One
///     chunk width per tile keeps one tensor map box, one descriptor rule
///     and one swizzle mode per tile; 96 is three 32-column chunks.
///   - `chunk` = 32 on a width that is a multiple of 64 (the buffer's
///     `chunk_cols`): 32-column chunks with the 64-byte swizzle, each
///     64-column chunk two pieces that TMA writes as two boxes (the
///     half-split rotary backward's pair-complete chunks; a box must fill
///     its swizzle span on the hardware, docs/head-dims.md).
///   - 16 columns (a width that is not a multiple of 32, or `chunk` = 16 on
///     one that is: head dim 96's pair-complete chunks): 16-column chunks
///     with the 32-byte swizzle (Swizzle<1,4,3>: address bit 4 XOR bit 7,
///     i.e. phase (row / 4) % 2), one 16-column TMA box each.
/// Every way a swizzle period is 8 rows (1024, 512 or 256 bytes), so tiles
/// aligned to 1024 bytes need base offset 0.
struct SwizzledTile {
  int64_t rows;
  int64_t cols;
  /// The chunk width when it is not the width's own (0: chunkColsFor).
  int64_t chunk = 0;

  /// The chunk width of a tile `cols` elements wide (BufferType::
  /// ownChunkCols).
  static int64_t chunkColsFor(int64_t cols) {
    return cols % 64 == 0 ? 64 : cols % 32 == 0 ? 32 : 16;
  }
  int64_t chunkCols() const { return chunk ? chunk : chunkColsFor(cols); }
  /// A chunk's row: the swizzle's span (128, 64 or 32 bytes).
  int64_t rowBytes() const { return chunkCols() * 2; }
  int64_t chunkBytes() const { return rows * rowBytes(); }
  bool swizzle128() const { return chunkCols() == 64; }
  /// Byte offset between two 8-row groups (one swizzle period): the K-major
  /// SBO, and the MN-major SBO (8 K rows).
  int64_t periodBytes() const { return 8 * rowBytes(); }
  /// Rows a swizzle phase lasts (128 / rowBytes: 1, 2 or 4) and the phases
  /// of a period (rowBytes / 16: 8, 4 or 2).
  int64_t rowsPerPhase() const { return 128 / rowBytes(); }
  int64_t phases() const { return rowBytes() / 16; }
  /// The swizzle phase XOR-ed into the 16-byte unit index of row `row`:
  /// address bits [7, 10) of the row's start masked to the row's units,
  /// row % 8, (row / 2) % 4 or (row / 4) % 2.
  int64_t phase(int64_t row) const { return (row / rowsPerPhase()) % phases(); }
  /// Byte offset of element (row, col) from the tile start.
  int64_t byteOffset(int64_t row, int64_t col) const;
};

/// wgmma operand descriptors for such tiles (all 1024-byte aligned, so the
/// base offset is 0; the swizzle field follows the tile's chunk width).
///
/// K-major operand (A of S = Q K^T, or K as its B): rows are M (or N), columns
/// K. SBO = one swizzle period (next 8 rows), LBO unused (1). A k-step of 16
/// elements moves the start by 32 bytes inside a chunk, or to the next chunk.
uint64_t kMajorDescriptor(uint64_t tileStart, const SwizzledTile &tile);
uint64_t kMajorStepOffset(const SwizzledTile &tile, int64_t kStep);

/// MN-major B operand (V in O = P V, stored K x N with N contiguous).
/// LBO = one chunk (next chunk of N columns), SBO = one swizzle period (next
/// 8 K rows); a k-step of 16 rows moves the start by 16 rows.
uint64_t mnMajorDescriptor(uint64_t tileStart, const SwizzledTile &tile);
uint64_t mnMajorStepOffset(const SwizzledTile &tile, int64_t kStep);

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

/// K-major and MN-major operands of 16-bit tiles written by TMA (same
/// geometry and swizzle as the wgmma helpers; k-steps advance the start
/// address by kMajorStepOffset / mnMajorStepOffset).
uint64_t tcgen05KMajorDescriptor(uint64_t tileStart, const SwizzledTile &tile);
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
