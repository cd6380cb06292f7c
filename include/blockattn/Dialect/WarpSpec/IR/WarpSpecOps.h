//===- WarpSpecOps.h - warpspec types and operations ------------*- C++ -*-===//

#ifndef BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECOPS_H
#define BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECOPS_H

#include "blockattn/Dialect/WarpSpec/IR/WarpSpecDialect.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecEnums.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_ATTRDEF_CLASSES
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOpsTypes.h.inc"

namespace mlir::warpspec {
class PartitionOp;
class ChannelOp;
} // namespace mlir::warpspec

namespace mlir::warpspec {
/// Hardware limits the verifiers and allocators check against. Both targets
/// share them (sm_90a and sm_100a: 227 KiB of shared memory per CTA, 64K
/// 32-bit registers per SM, 1024 threads per CTA; TMEM exists on sm_100a only).
struct TargetLimits {
  static constexpr int64_t maxSharedMemoryBytes = 227 * 1024;
  static constexpr int64_t registerFileSize = 64 * 1024;
  static constexpr int64_t maxThreadsPerCta = 1024;
  static constexpr int64_t tmemColumns = 512;
  static constexpr int64_t tmemLanes = 128;
  static constexpr int64_t warpgroupWarps = 4;
  static constexpr int64_t maxWarpsPerCta = maxThreadsPerCta / 32;
  /// Named barriers of a CTA (`bar.sync id`); 0 is the CTA-wide one.
  static constexpr int64_t namedBarriers = 16;
  static constexpr int64_t smemPerSm = 228 * 1024;
  static constexpr int64_t reservedSmemPerCta = 1024;
  /// Dynamic shared memory a CTA can have when `ctas` CTAs share an SM.
  static constexpr int64_t sharedMemoryBudget(int64_t ctas) {
    return ctas <= 1 ? maxSharedMemoryBytes
                     : smemPerSm / ctas - reservedSmemPerCta;
  }
  /// Registers per thread a CTA of `threads` threads is launched with when
  /// `ctas` CTAs share an SM: the register file shared evenly, rounded down
  /// to the multiple of 8 `setmaxnreg` works in (at most 248 at launch).
  /// Partitions then move registers between each other within this pool.
  static constexpr int64_t launchRegisterCap(int64_t threads, int64_t ctas) {
    int64_t even = registerFileSize / (ctas < 1 ? 1 : ctas) /
                   (threads < 1 ? 1 : threads) / 8 * 8;
    return even < 248 ? even : 248;
  }
  /// Whether `name` can name a PTX entry: the PTX ISA's identifiers less the
  /// `%` that LLVM's NVPTX backend rejects ("Symbol name with unsupported
  /// characters"): a letter, `_` or `$`, then letters, digits, `_` and `$`
  /// (a lone `_` or `$` is not one).
  static bool isValidPtxIdentifier(StringRef name);
};

/// The global words of a dynamic tile schedule (`warpspec.tile_loop
/// dynamic`): the next item to claim (less the grid), and the CTAs that
/// made their last claim. The kernel's `schedule` argument.
constexpr int64_t kScheduleWords = 2;
/// The name (`blockattn.name`) of the kernel function's schedule argument,
/// which the manifest and the runtime use.
constexpr llvm::StringLiteral kScheduleName = "schedule";

/// Sizes of the per-slot synchronization state that warpspec-allocate-smem
/// places and the lowering addresses: an mbarrier, and a tile record (row,
/// rows, head, position).
struct SlotState {
  static constexpr int64_t barrierBytes = 8;
  static constexpr int64_t tileRecordBytes = 16;
  /// Shared memory every slot of a channel takes whatever its buffers: its
  /// full and empty barriers and its tile record.
  static constexpr int64_t bytesPerSlot = 2 * barrierBytes + tileRecordBytes;
  /// The deepest ring whose per-slot state alone fits in a CTA's shared
  /// memory (7264 slots); `depth` and `num-stages` are checked against it.
  static constexpr int64_t maxDepth =
      TargetLimits::maxSharedMemoryBytes / bytesPerSlot;
};

/// The trace buffer of a traced kernel (`trace_records` = R, a power of two
/// of at least 4), per CTA: lanes + 1 slots of R records of 16 bytes, the
/// first the header (its first 64 bytes: the anchors and the SM), then one
/// lane per partition replica in warp order. CTA `c`'s region starts at
/// `c * ctaBytes()`. Every lane starts at a record index that is a multiple
/// of R, so a recording thread keeps one 32-bit value: the index of its next
/// record in the buffer, 0 once its lane is full (or if it does not
/// record). The manifest spells this out for the host.
struct TraceLayout {
  static constexpr int64_t recordBytes = 16;
  /// The header's 8-byte words: the anchors (`%globaltimer` in ns and
  /// `%clock64` together, at the start and at the end of warp 0's
  /// partition) and the SM the CTA ran on (`%smid`).
  enum HeaderWord : int64_t {
    startGlobalTimer = 0,
    startClock = 1,
    endGlobalTimer = 2,
    endClock = 3,
    smId = 4,
  };
  static constexpr int64_t headerWords = 5;
  int64_t lanes = 0;
  int64_t recordsPerLane = 0;
  int64_t laneBytes() const { return recordsPerLane * recordBytes; }
  /// The header's slot: one lane's bytes.
  int64_t headerBytes() const { return laneBytes(); }
  int64_t ctaRecords() const { return (lanes + 1) * recordsPerLane; }
  int64_t ctaBytes() const { return ctaRecords() * recordBytes; }
  /// `trace_records` must be a power of two in [minRecordsPerLane,
  /// maxRecordsPerLane] (1 MiB per lane).
  static constexpr int64_t minRecordsPerLane = 4;
  static constexpr int64_t maxRecordsPerLane = 65536;
  static bool isValidRecordsPerLane(int64_t records) {
    return records >= minRecordsPerLane && records <= maxRecordsPerLane &&
           (records & (records - 1)) == 0;
  }
};
} // namespace mlir::warpspec

namespace mlir::warpspec {
/// The trait of the ops that access tensor memory through tcgen05
/// (mma_async, tmem_load, tmem_store; sm_100a only).
template <typename ConcreteType>
class TensorMemoryOp
    : public mlir::OpTrait::TraitBase<ConcreteType, TensorMemoryOp> {};

/// Whether `op` accesses tensor memory (has the TensorMemoryOp trait).
inline bool isTensorMemoryOp(Operation *op) {
  return op->hasTrait<TensorMemoryOp>();
}
} // namespace mlir::warpspec

#define GET_OP_CLASSES
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h.inc"

namespace mlir::warpspec {

/// Number of bytes of an element type stored in memory.
int64_t getElementSizeInBytes(Type type);

/// The channel of a `!warpspec.slot`: the channel of the warpspec.acquire or
/// warpspec.get that returned it, or of the warpspec.consume whose body
/// takes it as its first argument. Null for any other value.
Value getSlotChannel(Value slot);

/// The slot a buffer belongs to: the slot result of the warpspec.acquire or
/// warpspec.get that returned the buffer, or the slot argument of the
/// warpspec.consume body it is an argument of. Null for any other value
/// (scratch buffers).
Value getBufferSlot(Value buffer);

} // namespace mlir::warpspec

#endif // BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECOPS_H
