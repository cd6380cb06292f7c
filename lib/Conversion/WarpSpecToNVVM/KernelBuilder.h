//===- KernelBuilder.h - what a pattern knows of its kernel -----*- C++ -*-===//
//
// convert-warpspec-to-nvvm lowers one warpspec.kernel into one llvm.func:
//
//   1. Abi.cpp, Prologue.cpp (a pre-step): the llvm.func, its parameters and
//      the manifest; the kernel moves into it, behind the prologue (thread
//      indices, the aligned shared-memory base, barrier initialization, the
//      tensor-memory allocation).
//   2. The patterns, one per op (populateWarpSpec*ToNVVMPatterns), lower
//      every op inside the kernel in place, in one dialect conversion: the
//      register tiles (!warpspec.acc, !warpspec.rows) and buffers become
//      LLVM values through the type converter (Types.cpp).
//   3. Prologue.cpp again: the shells that are left (the kernel, its
//      partitions and channels) become the warp-range dispatch.
//
// A pattern reads what it needs from the IR, never from another pattern:
// the prologue's values from the kernel's frame (KernelFrame, a marker op
// the pre-step writes), the kernel parameters of a memref from the cast
// that binds it (ArgParams), its partition from the enclosing
// warpspec.partition (attributes, and the results of its
// warpspec.partition_index, which the patterns use as they are).
// KernelBuilder gathers these for the op being lowered.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_LIB_CONVERSION_WARPSPECTONVVM_KERNELBUILDER_H
#define BLOCKATTN_LIB_CONVERSION_WARPSPECTONVVM_KERNELBUILDER_H

#include "NVVMBuilder.h"

#include "blockattn/Conversion/WarpSpecToNVVM/TargetInfo.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"

#include <memory>

namespace mlir::blockattn::lowering {

//===----------------------------------------------------------------------===//
// Kernel parameters
//===----------------------------------------------------------------------===//

/// The kernel parameters derived from a memref argument of the function: the
/// operands of the `builtin.unrealized_conversion_cast` that stands for the
/// memref inside the llvm.func (Prologue.cpp writes it; its
/// `blockattn.params` attribute says which parameter each operand is, as
/// (ParamRole, dimension) pairs).
struct ArgParams {
  enum class ParamRole : int64_t { TensorMap, Pointer, Size, Stride };
  static constexpr StringLiteral kRoles = "blockattn.params";
  Value tensorMap;            // !llvm.ptr to the 128-byte CUtensorMap
  Value pointer;              // !llvm.ptr<1>
  SmallVector<Value> sizes;   // i32 per dim, null when static
  SmallVector<Value> strides; // i64 per dim (elements), null if not passed
  /// The parameters of `memref`; empty when it is not a kernel argument.
  static ArgParams of(Value memref);
};

/// The i32 size parameter of dimension `dim` of `memref`; null when the
/// memref is not a kernel argument or that size is not passed.
Value argSize(Value memref, int64_t dim);

/// The row count (i32) of a kernel-parameter memref: its run-time size, or
/// the static one of its type; null if neither.
Value rowCount(NVVMBuilder &e, Value memref);

/// The address of positions[min(row + r, numPositions - 1)] (i32 elements
/// in global memory): a token past the tensor reads its last position, so
/// nothing is read past its end.
Value positionAddress(NVVMBuilder &e, Value positions, Value numPositions,
                      Value row, Value r);

//===----------------------------------------------------------------------===//
// The kernel's frame
//===----------------------------------------------------------------------===//

/// The values of the kernel's prologue that every part of it reads. The
/// pre-step records them as the operands of one marker op (a
/// `builtin.unrealized_conversion_cast` with the `blockattn.kernel_frame`
/// attribute) in the kernel's body, which the post-step erases.
struct KernelFrame {
  Value tid, warp, lane; // i32
  Value smemBase;        // !llvm.ptr<3>, 1024-aligned
  Value metaBase;        // !llvm.ptr<3>: where the barriers and records are
  int64_t metaStart = 0; // their planned offset (the first barrier's)
  Value tmemBase;        // i32 tensor-memory address; null without one

  static constexpr StringLiteral kMarker = "blockattn.kernel_frame";
  static constexpr StringLiteral kMetaStart = "blockattn.meta_start";
  /// The frame of `kernel` (recorded by Prologue.cpp).
  static KernelFrame of(warpspec::KernelOp kernel);
};

//===----------------------------------------------------------------------===//
// Register tiles
//===----------------------------------------------------------------------===//

struct KernelBuilder;

/// Which element of a warpgroup tile each register of a thread holds. Tile
/// math is written against this interface, so the softmax and the stores are
/// the same code on both targets.
class FragmentLayout {
public:
  virtual ~FragmentLayout() = default;
  /// f32 registers per thread for a `rows x cols` tile.
  virtual int64_t numRegs() const = 0;
  /// Distinct tile rows a thread holds.
  virtual int64_t numRowSlots() const = 0;
  /// Which of the thread's rows register `reg` belongs to.
  virtual int64_t rowSlot(int64_t reg) const = 0;
  /// Column of register `reg` is colBase() + colOffset(reg).
  virtual int64_t colOffset(int64_t reg) const = 0;
  /// Tile row of the thread's row `slot` (i32): rowBase() + rowOffset(slot).
  Value rowIndex(KernelBuilder &e, int64_t slot) const;
  virtual Value rowBase(KernelBuilder &e) const = 0;
  virtual int64_t rowOffset(int64_t slot) const = 0;
  /// The thread's column base (i32), below colBaseBound().
  virtual Value colBase(KernelBuilder &e) const = 0;
  virtual int64_t colBaseBound() const = 0;
  /// Lane XOR masks that reach every other thread holding the same row.
  virtual ArrayRef<int32_t> rowReductionMasks() const = 0;
};

/// The register layout of a tile: the wgmma accumulator's, which the sm_100a
/// tcgen05.ld shape 16x256b reproduces, so both targets share it
/// (Types.cpp).
std::shared_ptr<FragmentLayout> accumulatorLayout(warpspec::AccType type);

/// The row layout of a !warpspec.rows value: that of any tile with its rows.
std::shared_ptr<FragmentLayout> rowsLayout(warpspec::RowsType type);

/// A register tile: its type, layout and per-thread registers (the values
/// the type converter gives a !warpspec.acc). f32 tiles hold one value per
/// register; 16-bit tiles hold packed pairs (register 2i and 2i+1, which are
/// adjacent columns of one row) as i32.
struct Fragment {
  warpspec::AccType type;
  std::shared_ptr<FragmentLayout> layout;
  SmallVector<Value> regs;
  Fragment(warpspec::AccType type, ValueRange regs)
      : type(type), layout(accumulatorLayout(type)), regs(regs) {}
  Fragment(warpspec::AccType type, std::shared_ptr<FragmentLayout> layout,
           SmallVector<Value> regs)
      : type(type), layout(std::move(layout)), regs(std::move(regs)) {}
};

//===----------------------------------------------------------------------===//
// KernelBuilder
//===----------------------------------------------------------------------===//

/// NVVMBuilder at an op inside a kernel, with what the op's kernel and
/// partition say. Built for one op, read-only.
struct KernelBuilder : NVVMBuilder {
  KernelBuilder(OpBuilder &b, Operation *op);

  warpspec::KernelOp kernel;
  /// The partition around the op (null at the kernel's top level).
  warpspec::PartitionOp partition;
  KernelFrame frame;

  Value tid() { return frame.tid; }
  Value warp() { return frame.warp; }
  Value lane() { return frame.lane; }

  /// Pointer into the (1024-aligned) dynamic shared memory.
  Value smem(Value byteOffset);
  Value smem(int64_t byteOffset) { return smem(i32(byteOffset)); }
  /// A barrier or tile record at the planned `byteOffset` (past the buffers;
  /// the prologue may have moved them into the alignment pad).
  Value meta(Value byteOffset);
  Value meta(int64_t byteOffset) { return meta(i32(byteOffset)); }
  /// A per-thread variable in the kernel's entry block.
  Value variable(Type t);

  /// The partition's `warpspec.partition_index` (null if it has none).
  warpspec::PartitionIndexOp partitionIndex();
  /// Which replica of the partition runs (i32).
  Value replica() { return partitionIndex().getReplica(); }
  /// The thread's index in its replica (i32, 0 .. replicaThreads() - 1).
  Value threadInReplica() { return partitionIndex().getThread(); }
  int64_t replicaThreads() { return partition.getNumWarps() * 32; }
  /// Named barrier over the threads of the current partition replica.
  void replicaBarrier();
  /// `values` (i32 or f32) through an empty side-effecting asm that reads and
  /// redefines them (CUTLASS's warpgroup_fence_operand; NVVM has no op that
  /// pins a register): what is computed from the results cannot move above
  /// this point, and what feeds it cannot move below.
  SmallVector<Value> pinRegisters(ArrayRef<Value> values);
  /// Whether `op` runs on one thread of its replica (in a
  /// `warpspec.single_thread`), so that it needs no replica barrier before
  /// it arrives.
  static bool inSingleThread(Operation *op);
};

/// The full and empty mbarriers of slot `stage` of a channel (Channels.cpp).
Value fullBarrier(KernelBuilder &e, warpspec::ChannelOp channel, Value stage);
Value emptyBarrier(KernelBuilder &e, warpspec::ChannelOp channel, Value stage);

/// The mbarrier on which every partition that used tensor memory arrives
/// before warp 0 frees it (Blackwell.cpp).
Value tmemTeardownBarrier(KernelBuilder &e);

/// The shared-memory pointer `ptr`, pinned at the builder's position: an
/// empty side-effecting asm reads and redefines its address (NVVM has no op
/// that does), so that what is computed from it (descriptors, per-thread
/// addresses) is computed after this point instead of being hoisted to the
/// top of the tile or out of the tile loop and held in registers.
Value pinSharedPointer(KernelBuilder &e, Value ptr);

/// An i32 pinned the same way: what is computed from it is computed after
/// this point (warpspec.pin of an i32).
Value pinI32(KernelBuilder &e, Value value);

} // namespace mlir::blockattn::lowering

#endif // BLOCKATTN_LIB_CONVERSION_WARPSPECTONVVM_KERNELBUILDER_H
