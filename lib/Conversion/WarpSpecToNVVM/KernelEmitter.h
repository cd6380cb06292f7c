//===- KernelEmitter.h - warpspec.kernel to NVVM, shared state --*- C++ -*-===//
//
// The lowering of one warpspec.kernel into one llvm.func in a gpu.module. The
// emitter walks the kernel's partitions in program order and emits NVVM/LLVM
// ops (plus scf for structured control flow, converted to branches at the
// end of the pass). The pieces are split by concern, each in its own file:
//
//   KernelEmitter.cpp  prologue, partitions and their dispatch ops, op
//                      dispatch, helpers
//   Abi.cpp            the kernel's parameters and the launch manifest
//   Schedule.cpp       warpspec.tile_loop: the persistent jagged schedule
//   Channels.cpp       the lowered channel protocol on mbarriers, TMA loads
//   TileMath.cpp       softmax, stores and writes of register tiles, written
//                      against a FragmentLayout so that both targets share it
//   Hopper.cpp         wgmma and the wgmma accumulator layout (sm_90a)
//   Blackwell.cpp      tensor memory and tcgen05 (sm_100a)
//   Rotary.cpp         rotary embeddings of shared-memory and register tiles
//   TargetInfo.cpp     what differs between sm_90a and sm_100a (the chip
//                      enum's TargetInfo, which the emitter holds)
//
// The channel protocol arrives lowered (warpspec-lower-protocol): ring
// positions, slots and phases are SSA values of the input, and each op is
// lowered on its own. So are the partitions (warpspec-dispatch-partitions):
// each has its warp range and named barriers as attributes, and its
// register rebalance, replica and thread indices, single-thread region and
// teardown as ops. Values that loops carry (the iter_args of tile_loop
// and scf.while, the schedule's cursor) live in allocas in the entry block;
// LLVM's SROA/mem2reg turns them into registers.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_LIB_CONVERSION_WARPSPECTONVVM_KERNELEMITTER_H
#define BLOCKATTN_LIB_CONVERSION_WARPSPECTONVVM_KERNELEMITTER_H

#include "blockattn/Conversion/WarpSpecToNVVM/TargetInfo.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <array>
#include <functional>
#include <memory>

namespace mlir::blockattn::lowering {

//===----------------------------------------------------------------------===//
// ABI
//===----------------------------------------------------------------------===//

/// One parameter of the kernel, in launch order.
struct KernelParam {
  enum class Kind { TensorMap, Pointer, I32, I64, F32 };
  Kind kind;
  std::string name;   // e.g. "q_tmap", "o", "o_stride0"
  std::string tensor; // the function argument it comes from, e.g. "o"
  std::string value;  // what the runtime passes: "tensormap", "base",
                      // "stride", "size", "scalar"
  int64_t dim = -1;   // for "stride" and "size"
  /// Tensor maps: box (innermost first) and element type.
  SmallVector<int64_t> box;
  Type elementType;
  /// The function argument this parameter is derived from.
  Value source;
};

/// Kernel parameters derived from a function argument.
struct ArgParams {
  Value tensorMap;            // !llvm.ptr to the 128-byte CUtensorMap
  Value pointer;              // !llvm.ptr<1>
  SmallVector<Value> sizes;   // i32 per dim, null when static
  SmallVector<Value> strides; // i64 per dim (elements), null if not passed
  Value scalar;               // f32 scalars
};

/// Decides the parameter list of a kernel from how the kernel uses the
/// enclosing function's arguments.
FailureOr<SmallVector<KernelParam>>
buildKernelParams(func::FuncOp func, warpspec::KernelOp kernel);

/// The `blockattn.manifest` attribute: everything a runtime needs to launch.
DictionaryAttr buildManifest(OpBuilder &b, func::FuncOp func,
                             warpspec::KernelOp kernel,
                             ArrayRef<KernelParam> params, int64_t threads,
                             int64_t maxRegisters);

//===----------------------------------------------------------------------===//
// Register tiles
//===----------------------------------------------------------------------===//

class KernelEmitter;

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
  Value rowIndex(KernelEmitter &e, int64_t slot) const;
  virtual Value rowBase(KernelEmitter &e) const = 0;
  virtual int64_t rowOffset(int64_t slot) const = 0;
  /// The thread's column base (i32), below colBaseBound().
  virtual Value colBase(KernelEmitter &e) const = 0;
  virtual int64_t colBaseBound() const = 0;
  /// Lane XOR masks that reach every other thread holding the same row.
  virtual ArrayRef<int32_t> rowReductionMasks() const = 0;
};

/// A register tile: its type, layout and per-thread registers. f32 tiles hold
/// one value per register; 16-bit tiles hold packed pairs (register 2i and
/// 2i+1, which are adjacent columns of one row) as i32.
struct Fragment {
  warpspec::AccType type;
  std::shared_ptr<FragmentLayout> layout;
  SmallVector<Value> regs;
};

/// Per-row values of a tile, one per row slot of the thread.
struct RowValues {
  std::shared_ptr<FragmentLayout> layout;
  SmallVector<Value> slots;
};

//===----------------------------------------------------------------------===//
// Channels
//===----------------------------------------------------------------------===//

/// What the lowering knows of a channel, fixed for the whole kernel: what
/// its barriers count.
struct ChannelInfo {
  warpspec::ChannelOp op;
  /// Number of consumer partitions (arrivals per phase on `empty`).
  int64_t numConsumers = 0;
  /// Produced by MMAs (completion arrives through tcgen05.commit).
  bool producedByMma = false;
};

//===----------------------------------------------------------------------===//
// Emitter
//===----------------------------------------------------------------------===//

/// One bulk tensor copy of a tile: a 64-column (128-byte, swizzled) chunk,
/// at byte `smemOffset` of the tile in shared memory and at coordinates
/// {column, head, row} of the [T, H, D] tensor map.
struct TmaBox {
  int64_t smemOffset;
  std::array<Value, 3> coords;
};

class KernelEmitter {
public:
  KernelEmitter(func::FuncOp func, warpspec::KernelOp kernel,
                LLVM::LLVMFuncOp llvmFunc, ArrayRef<KernelParam> params);

  /// Emits the whole kernel body.
  LogicalResult emit();

  //===--- helpers used by all parts --------------------------------------===//
  OpBuilder b;
  Location loc;
  MLIRContext *ctx;

  Type i1T() { return b.getI1Type(); }
  Type i32T() { return b.getI32Type(); }
  Type i64T() { return b.getI64Type(); }
  Type f32T() { return b.getF32Type(); }
  Type smemPtrT() { return LLVM::LLVMPointerType::get(ctx, 3); }
  Type globalPtrT() { return LLVM::LLVMPointerType::get(ctx, 1); }

  Value i32(int64_t v);
  Value i64(int64_t v);
  Value f32(double v);
  Value add(Value a, Value c);
  Value sub(Value a, Value c);
  Value mul(Value a, Value c);
  Value udiv(Value a, Value c);
  Value urem(Value a, Value c);
  Value andi(Value a, Value c);
  Value cmp(LLVM::ICmpPredicate p, Value a, Value c);
  Value select(Value c, Value t, Value f);
  Value zext64(Value v);
  Value trunc32(Value v);
  Value load(Type t, Value ptr, unsigned alignment = 0);
  void store(Value v, Value ptr, unsigned alignment = 0);
  /// A per-thread mutable i32/i64 variable (entry-block alloca), optionally
  /// initialized in the entry block.
  Value variable(Type t, std::optional<int64_t> init = std::nullopt);

  /// Pointer into the (1024-aligned) dynamic shared memory.
  Value smem(Value byteOffset);
  Value smem(int64_t byteOffset) { return smem(i32(byteOffset)); }
  /// A barrier or tile record at the planned `byteOffset` (past the buffers;
  /// the prologue may have moved them into the alignment pad).
  Value meta(Value byteOffset);
  Value meta(int64_t byteOffset) { return meta(i32(byteOffset)); }
  /// [first, last) planned byte offsets of the barriers and tile records.
  std::pair<int64_t, int64_t> metadataRange();
  /// Shared-window address (i32) of a shared pointer, for descriptors.
  Value smemAddress(Value ptr);
  /// A shared-memory matrix descriptor (wgmma and tcgen05 share the layout of
  /// its low bits): the address-independent `fixedBits` | ((start + offset)
  /// >> 4) & 0x3FFF.
  Value smemDescriptor(uint64_t fixedBits, Value start, uint64_t offset);
  /// The bulk tensor copies of a `rows` x `cols` tile whose first row is
  /// `row` of head `head` (TMA loads, their L2 prefetches, bulk stores).
  SmallVector<TmaBox> tmaBoxes(Value row, Value head, int64_t rows,
                               int64_t cols);

  /// Structured control flow (converted to branches at the end of the pass).
  void emitIf(Value cond, function_ref<void()> thenFn);
  void emitIfElse(Value cond, function_ref<void()> thenFn,
                  function_ref<void()> elseFn);
  /// while (cond()) body(); `cond` may forward values to `body`, which are
  /// also the loop's results (their values when `cond` failed).
  ValueRange
  emitWhile(function_ref<std::pair<Value, SmallVector<Value>>()> cond,
            function_ref<void(ValueRange)> body, TypeRange forwarded = {});

  /// Named barrier over the threads of the current partition replica.
  void replicaBarrier();

  /// The partition whose body is being lowered. It is a scope (set while
  /// the body is emitted, like the insertion point), not state: what the
  /// lowering knows of the partition is read from the op, its placement
  /// (`first_warp`, `barrier_base`, warpspec-dispatch-partitions) and the
  /// values its `warpspec.partition_index` lowered to.
  warpspec::PartitionOp partition;
  /// The partition's `warpspec.partition_index` (null if it has none).
  warpspec::PartitionIndexOp partitionIndex();
  /// Which replica of the partition runs (i32).
  Value replica();
  /// The thread's index in its replica (i32, 0 .. replicaThreads() - 1).
  Value threadInReplica();
  int64_t replicaThreads() { return partition.getNumWarps() * 32; }
  /// Whether `op` runs on one thread of its replica (in a
  /// `warpspec.single_thread`), so that it needs no replica barrier before
  /// it arrives.
  static bool inSingleThread(Operation *op);

  //===--- values of the kernel being lowered -----------------------------===//
  func::FuncOp func;
  warpspec::KernelOp kernel;
  LLVM::LLVMFuncOp llvmFunc;
  /// The chip, and what it has (the one place sm_90a and sm_100a differ).
  TargetInfo target;

  Value tid, warp, lane; // i32
  Value smemBase;        // !llvm.ptr<3>, 1024-aligned
  Value metaBase;        // !llvm.ptr<3>: where the barriers and records are
  int64_t metaStart = 0; // their planned offset (the first barrier's)
  Value tmemBase;        // i32 tensor-memory address of the allocation
  DenseMap<Value, ArgParams> argParams;
  /// The i32 size parameter of dimension `dim` of `memref`; null when the
  /// memref is not a kernel argument or that size is not passed.
  Value argSize(Value memref, int64_t dim) {
    auto it = argParams.find(memref);
    if (it == argParams.end() || dim < 0 ||
        dim >= static_cast<int64_t>(it->second.sizes.size()))
      return Value();
    return it->second.sizes[dim];
  }
  IRMapping scalars; // warpspec scalars (i32, index as i64, f32)
  DenseMap<Value, Fragment> fragments;
  DenseMap<Value, RowValues> rowValues;
  DenseMap<Value, Value> buffers;   // warpspec buffer -> !llvm.ptr<3>
  DenseMap<Value, Value> tmemAddrs; // tensor-memory buffer -> i32 address
  DenseMap<Value, ChannelInfo> channels;

  Value lookup(Value v);
  /// A scalar operand as i32 (index values are truncated).
  Value lookupI32(Value v);

  //===--- per-concern lowering (one file each) ---------------------------===//
  LogicalResult emitBlock(Block &block);
  LogicalResult emitOp(Operation *op);

  // Schedule.cpp
  LogicalResult emitTileLoop(warpspec::TileLoopOp op);
  /// The variables of a loop's carried values (`inits` stored into them):
  /// fails on a value that is not a scalar.
  LogicalResult carryInits(Operation *op, ValueRange inits,
                           SmallVectorImpl<std::pair<Value, Type>> &carried);
  /// An scf.while of the input (a lowered consume loop).
  LogicalResult emitWhileLoop(scf::WhileOp op);
  // Channels.cpp
  void initChannelBarriers();
  FailureOr<ChannelInfo *> placedChannel(Operation *op, Value channel);
  LogicalResult emitRingSlot(warpspec::RingSlotOp op);
  LogicalResult emitWaitEmpty(warpspec::WaitEmptyOp op);
  LogicalResult emitWaitFull(warpspec::WaitFullOp op);
  LogicalResult emitExpectTx(warpspec::ExpectTxOp op);
  LogicalResult emitSlotBuffers(warpspec::SlotBuffersOp op);
  LogicalResult emitPublish(warpspec::PublishOp op);
  LogicalResult emitPublishClose(warpspec::PublishCloseOp op);
  LogicalResult emitReadTile(warpspec::ReadTileOp op);
  LogicalResult emitArriveEmpty(warpspec::ArriveEmptyOp op);
  LogicalResult emitTmaPrefetch(warpspec::TmaPrefetchOp op);
  LogicalResult emitTmaLoad(warpspec::TmaLoadOp op);
  Value fullBarrier(ChannelInfo &info, Value stage);
  Value emptyBarrier(ChannelInfo &info, Value stage);
  void waitBarrier(Value barrier, Value parity);
  void tcgen05Fence(bool after);
  // TileMath.cpp
  LogicalResult emitSoftmax(warpspec::SoftmaxOp op);
  LogicalResult emitSoftmaxGrad(warpspec::SoftmaxGradOp op);
  LogicalResult emitStore(warpspec::StoreOp op);
  LogicalResult emitWrite(warpspec::WriteOp op);
  Value shuffleXor(Value v, int32_t mask);
  // Hopper.cpp
  LogicalResult emitHopperMma(warpspec::MmaOp op);
  /// The register layout of an f32 tile: the wgmma accumulator's, which the
  /// sm_100a tcgen05.ld shape 16x256b reproduces, so both targets share it.
  std::shared_ptr<FragmentLayout> accumulatorLayout(warpspec::AccType type);
  // Rotary.cpp
  LogicalResult emitRotate(warpspec::RotateOp op);
  LogicalResult emitRotateTile(warpspec::RotateTileOp op);
  LogicalResult emitRotaryAngles(warpspec::RotaryAnglesOp op);
  // Blackwell.cpp
  int64_t countTmemUsers();
  Value tmemTeardownBarrier();
  void allocateTensorMemory();
  LogicalResult emitTmemRelease(warpspec::TmemReleaseOp op);
  LogicalResult emitMmaAsync(warpspec::MmaAsyncOp op);
  LogicalResult emitTmemLoad(warpspec::TmemLoadOp op);
  LogicalResult emitTmemStore(warpspec::TmemStoreOp op);

private:
  ArrayRef<KernelParam> params;
  Value entryAllocaPoint;
  Block *entryBlock = nullptr;

  void emitPrologue();
  LogicalResult emitKernelScalars();
  LogicalResult emitPartitions();
  LogicalResult emitPartition(warpspec::PartitionOp partition);
  LogicalResult emitPartitionIndex(warpspec::PartitionIndexOp op);
  LogicalResult emitSingleThread(warpspec::SingleThreadOp op);
  void bindParams();
};

/// Packs two f32 values into one i32 of two 16-bit floats, `lo` in the low
/// half (TileMath.cpp).
Value packPair(KernelEmitter &e, Type elementType, Value lo, Value hi);

} // namespace mlir::blockattn::lowering

#endif // BLOCKATTN_LIB_CONVERSION_WARPSPECTONVVM_KERNELEMITTER_H
