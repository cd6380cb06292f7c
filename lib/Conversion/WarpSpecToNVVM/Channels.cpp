//===- Channels.cpp - the lowered channel protocol on mbarriers, TMA -----===//
//
// The ops of the lowered protocol (warpspec-lower-protocol), each on its own:
// the ring positions, slots and phases are SSA values of the input, so
// nothing here keeps state between ops.
//
// Each slot s of a channel has two mbarriers in shared memory:
//   full[s]  the producer publishes the slot: one arrival after it wrote the
//            slot's record, plus, for an MMA-produced (tensor-memory) slot,
//            the tcgen05.commit arrival when the MMAs into it complete; TMA
//            bytes announced with expect_tx complete a loaded slot;
//   empty[s] (count = number of consumer partitions): one arrival per
//            consumer partition when it releases the slot (or, after_mma,
//            a tcgen05.commit when its MMAs reading the slot complete).
// Producers wait for empty[s] with the opposite parity of the entry's phase,
// so the first lap passes at once (a fresh barrier is in phase 0 and "phase
// 1 completed" is the one before it).
//
// Each slot also carries a 16-byte record (row, rows, head, position)
// written before the producer's arrival (release) and read after the
// consumer's wait (acquire). publish_close writes rows = -1, which ends a
// consumer's loop.
//
// Tensor-memory slots add the tcgen05 ordering of the PTX ISA's canonical
// patterns: `tcgen05.fence::after_thread_sync` after every wait that
// precedes tcgen05 work, `tcgen05.wait::st` and
// `tcgen05.fence::before_thread_sync` before every arrival that follows it.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "blockattn/Conversion/WarpSpecToNVVM/WarpSpecToNVVM.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"

using namespace mlir;
using namespace mlir::blockattn;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

using Pred = LLVM::ICmpPredicate;

static constexpr int64_t kBarrierBytes = SlotState::barrierBytes;
static constexpr int64_t kRecordBytes = SlotState::tileRecordBytes;

Value lowering::fullBarrier(KernelBuilder &e, ChannelOp channel, Value stage) {
  int64_t base = *channel.getBarrierOffset();
  return e.meta(e.add(e.i32(base), e.mul(stage, e.i32(kBarrierBytes))));
}

Value lowering::emptyBarrier(KernelBuilder &e, ChannelOp channel, Value stage) {
  int64_t base =
      *channel.getBarrierOffset() + channel.getDepth() * kBarrierBytes;
  return e.meta(e.add(e.i32(base), e.mul(stage, e.i32(kBarrierBytes))));
}

namespace {

/// Emits `body` in the thread of the op's replica that publishes its slots:
/// the producer's one thread (a warpspec.single_thread region), or thread 0
/// where every thread runs the producer's body (warpspec.commit ...
/// landed). The bytes a slot expects and the copies into it are issued
/// there.
void inPublishingThread(KernelBuilder &e, Operation *op,
                        function_ref<void()> body) {
  if (KernelBuilder::inSingleThread(op))
    body();
  else
    e.emitIf(e.cmp(Pred::eq, e.threadInReplica(), e.i32(0)), body);
}

/// The channel of a slot op, placed by the allocators.
FailureOr<ChannelOp> placedChannel(Operation *op, Value channel) {
  auto channelOp = channel.getDefiningOp<ChannelOp>();
  if (!channelOp || !channelOp.isAllocated())
    return op->emitOpError() << "channel is not placed: run "
                                "warpspec-allocate-smem (and, for tensor "
                                "memory, warpspec-allocate-tmem) first";
  return channelOp;
}

/// The base of the patterns of this file: the op's placed channel.
template <typename OpTy>
struct ChannelOpLowering : ConvertOpToLLVMPattern<OpTy> {
  using ConvertOpToLLVMPattern<OpTy>::ConvertOpToLLVMPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    FailureOr<ChannelOp> channel = placedChannel(op, op.getChannel());
    if (failed(channel))
      return failure();
    KernelBuilder e(rewriter, op);
    return lower(op, adaptor, *channel, e, rewriter);
  }
  virtual LogicalResult lower(OpTy op, OpAdaptor adaptor, ChannelOp channel,
                              KernelBuilder &e,
                              ConversionPatternRewriter &rewriter) const = 0;
};

struct RingSlotLowering : ChannelOpLowering<RingSlotOp> {
  using ChannelOpLowering::ChannelOpLowering;
  LogicalResult lower(RingSlotOp op, OpAdaptor adaptor, ChannelOp channel,
                      KernelBuilder &e,
                      ConversionPatternRewriter &rewriter) const override {
    Value depth = e.i32(channel.getDepth());
    Value entry = e.asI32(adaptor.getEntry());
    Value stage = e.urem(entry, depth);
    Value phase = e.andi(e.udiv(entry, depth), e.i32(1));
    rewriter.replaceOp(op, {stage, phase});
    return success();
  }
};

struct WaitEmptyLowering : ChannelOpLowering<WaitEmptyOp> {
  using ChannelOpLowering::ChannelOpLowering;
  LogicalResult lower(WaitEmptyOp op, OpAdaptor adaptor, ChannelOp channel,
                      KernelBuilder &e,
                      ConversionPatternRewriter &rewriter) const override {
    e.waitBarrier(
        emptyBarrier(e, channel, e.asI32(adaptor.getStage())),
        LLVM::XOrOp::create(e.b, e.loc, e.asI32(adaptor.getPhase()), e.i32(1)));
    // The consumers' tcgen05.ld of this slot are ordered before the MMAs
    // that overwrite it.
    if (channel.inTensorMemory())
      e.tcgen05Fence(/*after=*/true);
    rewriter.eraseOp(op);
    return success();
  }
};

struct WaitFullLowering : ChannelOpLowering<WaitFullOp> {
  using ChannelOpLowering::ChannelOpLowering;
  LogicalResult lower(WaitFullOp op, OpAdaptor adaptor, ChannelOp channel,
                      KernelBuilder &e,
                      ConversionPatternRewriter &rewriter) const override {
    e.waitBarrier(fullBarrier(e, channel, e.asI32(adaptor.getStage())),
                  e.asI32(adaptor.getPhase()));
    // The producer's tcgen05 work (MMAs, stores into tensor memory) is
    // ordered before ours.
    if (channel.inTensorMemory() || e.partition.getRole() == Role::mma)
      e.tcgen05Fence(/*after=*/true);
    rewriter.eraseOp(op);
    return success();
  }
};

struct ExpectTxLowering : ChannelOpLowering<ExpectTxOp> {
  using ChannelOpLowering::ChannelOpLowering;
  LogicalResult lower(ExpectTxOp op, OpAdaptor adaptor, ChannelOp channel,
                      KernelBuilder &e,
                      ConversionPatternRewriter &rewriter) const override {
    auto expect = [&] {
      NVVM::MBarrierExpectTxOp::create(
          e.b, e.loc, fullBarrier(e, channel, e.asI32(adaptor.getStage())),
          e.i32(op.getBytes()));
    };
    inPublishingThread(e, op, expect);
    rewriter.eraseOp(op);
    return success();
  }
};

/// A slot's buffers: shared-memory pointers, or tensor-memory addresses.
struct SlotBuffersLowering : ChannelOpLowering<SlotBuffersOp> {
  using ChannelOpLowering::ChannelOpLowering;
  LogicalResult lower(SlotBuffersOp op, OpAdaptor adaptor, ChannelOp channel,
                      KernelBuilder &e,
                      ConversionPatternRewriter &rewriter) const override {
    Value stage = e.asI32(adaptor.getStage());
    SmallVector<Value> buffers;
    if (channel.inTensorMemory()) {
      // tmem_slots holds [lane, column] per slot; select this slot's.
      ArrayRef<int64_t> placedSlots = *channel.getTmemSlots();
      Value base = e.i32(0);
      for (int64_t s = channel.getDepth() - 1; s >= 0; --s) {
        Value address =
            e.i32((placedSlots[2 * s] << 16) | placedSlots[2 * s + 1]);
        base = s == static_cast<int64_t>(channel.getDepth()) - 1
                   ? address
                   : e.select(e.cmp(Pred::eq, stage, e.i32(s)), address, base);
      }
      int64_t column = 0;
      for (Value buffer : op.getBuffers()) {
        buffers.push_back(e.add(e.add(e.frame.tmemBase, base), e.i32(column)));
        auto type = cast<BufferType>(buffer.getType());
        int64_t bits = type.getElementType().getIntOrFloatBitWidth();
        column += bits >= 32 ? type.getShape()[1]
                             : llvm::divideCeil(type.getShape()[1] * bits, 32);
      }
    } else {
      Value slot = e.add(e.i32(*channel.getBufferOffset()),
                         e.mul(stage, e.i32(*channel.getSlotStride())));
      // Row values (1-D buffers) live apart: rows_offset, slot by slot.
      ChannelType type = channel.getChannelType();
      Value rowSlot;
      if (int64_t rowBytes = type.getRowBuffersSizeInBytes())
        rowSlot = e.add(e.i32(*channel.getRowsOffset()),
                        e.mul(stage, e.i32(rowBytes)));
      int64_t offset = 0, rowOffset = 0;
      for (Value buffer : op.getBuffers()) {
        auto bufferType = cast<BufferType>(buffer.getType());
        if (ChannelType::isRowBuffer(bufferType)) {
          buffers.push_back(e.smem(e.add(rowSlot, e.i32(rowOffset))));
          rowOffset += llvm::alignTo(bufferType.getSizeInBytes(), 16);
          continue;
        }
        buffers.push_back(e.smem(e.add(slot, e.i32(offset))));
        offset += bufferType.getSizeInBytes();
      }
    }
    rewriter.replaceOp(op, buffers);
    return success();
  }
};

/// Producer side: write the slot's record and publish it. A sentinel (the
/// record of publish_close) has no data to order first. The producer is the
/// op's partition: an MMA partition's data arrives through tcgen05.commit.
void publishSlot(KernelBuilder &e, Operation *op, ChannelOp channel,
                 Value stage, Value row, Value rows, Value head, Value position,
                 bool sentinel) {
  bool producedByMma = e.partition.getRole() == Role::mma;
  bool threads = !KernelBuilder::inSingleThread(op);
  if (threads) {
    // Every thread of the replica wrote (tcgen05.st or st.shared); make the
    // writes visible to the tensor cores and gather the replica.
    if (channel.inTensorMemory() && !sentinel) {
      NVVM::Tcgen05WaitOp::create(e.b, e.loc, NVVM::Tcgen05WaitKind::STORE);
      e.tcgen05Fence(/*after=*/false);
    } else if (!sentinel) {
      e.asyncProxyFence();
    }
    e.replicaBarrier();
  }
  auto arrive = [&] {
    int64_t base = *channel.getInfoOffset();
    Value record =
        e.meta(e.add(e.i32(base), e.mul(stage, e.i32(kRecordBytes))));
    Type vec = VectorType::get({4}, e.i32T());
    Value packed = LLVM::UndefOp::create(e.b, e.loc, vec);
    Value fields[] = {row, rows, head, position ? position : e.i32(0)};
    for (auto [i, field] : llvm::enumerate(fields))
      packed =
          LLVM::InsertElementOp::create(e.b, e.loc, packed, field, e.i32(i));
    e.store(packed, record, 16);
    Value full = fullBarrier(e, channel, stage);
    // The record's arrival has release semantics; the tcgen05.commit's
    // arrival comes when the MMAs into the slot complete. A sentinel has no
    // data: both arrivals at once.
    Value count = producedByMma && sentinel ? e.i32(2) : Value();
    NVVM::MBarrierArriveOp::create(e.b, e.loc, Type(), full, count);
    if (producedByMma && !sentinel)
      NVVM::Tcgen05CommitOp::create(e.b, e.loc, full, Value());
  };
  if (threads)
    e.emitIf(e.cmp(Pred::eq, e.threadInReplica(), e.i32(0)), arrive);
  else
    arrive();
}

struct PublishLowering : ChannelOpLowering<PublishOp> {
  using ChannelOpLowering::ChannelOpLowering;
  LogicalResult lower(PublishOp op, OpAdaptor adaptor, ChannelOp channel,
                      KernelBuilder &e,
                      ConversionPatternRewriter &rewriter) const override {
    publishSlot(
        e, op, channel, e.asI32(adaptor.getStage()), e.asI32(adaptor.getRow()),
        e.asI32(adaptor.getRows()), e.asI32(adaptor.getHead()),
        adaptor.getPosition() ? e.asI32(adaptor.getPosition()) : Value(),
        /*sentinel=*/false);
    rewriter.eraseOp(op);
    return success();
  }
};

struct PublishCloseLowering : ChannelOpLowering<PublishCloseOp> {
  using ChannelOpLowering::ChannelOpLowering;
  LogicalResult lower(PublishCloseOp op, OpAdaptor adaptor, ChannelOp channel,
                      KernelBuilder &e,
                      ConversionPatternRewriter &rewriter) const override {
    publishSlot(e, op, channel, e.asI32(adaptor.getStage()), e.i32(0),
                e.i32(-1), e.i32(0), Value(), /*sentinel=*/true);
    rewriter.eraseOp(op);
    return success();
  }
};

struct ReadTileLowering : ChannelOpLowering<ReadTileOp> {
  using ChannelOpLowering::ChannelOpLowering;
  LogicalResult lower(ReadTileOp op, OpAdaptor adaptor, ChannelOp channel,
                      KernelBuilder &e,
                      ConversionPatternRewriter &rewriter) const override {
    int64_t base = *channel.getInfoOffset();
    Value record = e.meta(e.add(
        e.i32(base), e.mul(e.asI32(adaptor.getStage()), e.i32(kRecordBytes))));
    Value packed = e.load(VectorType::get({4}, e.i32T()), record, 16);
    SmallVector<Value> fields;
    for (int64_t i = 0, n = op->getNumResults(); i < n; ++i)
      fields.push_back(
          LLVM::ExtractElementOp::create(e.b, e.loc, packed, e.i32(i)));
    rewriter.replaceOp(op, fields);
    return success();
  }
};

struct ArriveEmptyLowering : ChannelOpLowering<ArriveEmptyOp> {
  using ChannelOpLowering::ChannelOpLowering;
  LogicalResult lower(ArriveEmptyOp op, OpAdaptor adaptor, ChannelOp channel,
                      KernelBuilder &e,
                      ConversionPatternRewriter &rewriter) const override {
    Value barrier = emptyBarrier(e, channel, e.asI32(adaptor.getStage()));
    if (op.getAfterMma()) {
      // Arrives when every MMA this thread issued so far, including those
      // reading the slot, has completed.
      NVVM::Tcgen05CommitOp::create(e.b, e.loc, barrier, Value());
      rewriter.eraseOp(op);
      return success();
    }
    // Thread 0's arrival (a release) covers only what happens-before it, and
    // every thread of the replica read the slot's record with ld.shared. The
    // warpgroup-wide wgmma between that read and this point orders nothing
    // in the PTX memory model, so without the replica barrier the producer's
    // next record store races the other threads' reads (compute-sanitizer's
    // racecheck reports it; docs/sanitizers.md). Roles reading tensor memory
    // first order their tcgen05.ld (waited for) before the barrier.
    bool singleThread = KernelBuilder::inSingleThread(op);
    if (!singleThread) {
      if (channel.inTensorMemory())
        e.tcgen05Fence(/*after=*/false);
      e.replicaBarrier();
    }
    auto arrive = [&] {
      // The arriving thread issued the replica's bulk stores, some from the
      // slot's buffers: their reads of it complete before the producer may
      // copy the next tile in.
      if (op.getAfterStores())
        NVVM::CpAsyncBulkWaitGroupOp::create(e.b, e.loc, 0, e.b.getUnitAttr());
      NVVM::MBarrierArriveOp::create(e.b, e.loc, Type(), barrier, Value());
    };
    if (singleThread)
      arrive();
    else
      e.emitIf(e.cmp(Pred::eq, e.threadInReplica(), e.i32(0)), arrive);
    rewriter.eraseOp(op);
    return success();
  }
};

/// The bulk tensor copies of a warpspec.tma_load or warpspec.tma_prefetch
/// of `tile` at (`row`, `head`): one box a chunk of the tile's layout
/// (nvdesc::SwizzledTile), from column col_offset on. With pair_halves the
/// tile is pieces of C = chunk_cols columns, piece 2 i from column C (j + i)
/// and piece 2 i + 1 from its partner D / 2 on, where j = col_offset / 2 C:
/// pair-complete chunks.
template <typename CopyOp>
SmallVector<TmaBox> copyBoxes(KernelBuilder &e, CopyOp op, Value row,
                              Value head, BufferType tile) {
  ArrayRef<int64_t> shape = tile.getShape();
  int64_t colOffset = op.getColOffset().value_or(0);
  int64_t headDim = cast<MemRefType>(op.getSource().getType()).getShape()[2];
  SmallVector<TmaBox> boxes = e.tmaBoxes(e.asI32(row), e.asI32(head), shape[0],
                                         shape[1], tile.getChunkCols());
  for (auto [index, box] : llvm::enumerate(boxes)) {
    auto piece = static_cast<int64_t>(index);
    if (op.getPairHalves()) {
      int64_t pair = colOffset / 2 + tile.getChunkCols() * (piece / 2);
      box.coords[0] = e.i32(piece % 2 ? headDim / 2 + pair : pair);
    } else if (colOffset) {
      box.coords[0] = e.add(box.coords[0], e.i32(colOffset));
    }
  }
  return boxes;
}

struct TmaPrefetchLowering : ConvertOpToLLVMPattern<TmaPrefetchOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TmaPrefetchOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value tensorMap = ArgParams::of(op.getSource()).tensorMap;
    if (!tensorMap)
      return op.emitOpError() << "needs a tensor-map kernel argument (a "
                                 "source that a warpspec.tma_load also reads)";
    KernelBuilder e(rewriter, op);
    for (const TmaBox &box : copyBoxes(e, op, adaptor.getRow(),
                                       adaptor.getHead(), op.getTileType()))
      NVVM::CpAsyncBulkTensorPrefetchOp::create(
          e.b, e.loc, tensorMap, box.coords, ValueRange{},
          NVVM::TMALoadModeAttr(), /*l2CacheHint=*/Value());
    rewriter.eraseOp(op);
    return success();
  }
};

struct TmaLoadLowering : ConvertOpToLLVMPattern<TmaLoadOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TmaLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value tensorMap = ArgParams::of(op.getSource()).tensorMap;
    Value dest = adaptor.getDest();
    // The copy completes on the full barrier of the slot its destination is
    // a buffer of.
    auto slot = op.getDest().getDefiningOp<SlotBuffersOp>();
    if (!tensorMap || !slot)
      return op.emitOpError() << "needs a tensor-map kernel argument and a "
                                 "destination of warpspec.slot_buffers (run "
                                 "warpspec-lower-protocol first)";
    KernelBuilder e(rewriter, op);
    Value stage = rewriter.getRemappedValue(slot.getStage());
    inPublishingThread(
        e, op, [&] { issue(op, adaptor, e, tensorMap, dest, slot, stage); });
    rewriter.eraseOp(op);
    return success();
  }

  /// One box of `tensorMap` at `coords` into shared memory at `smemPtr`,
  /// completing on `barrier`. `.shared::cluster` destinations are the PTX
  /// 8.0 form: a CTA's own shared address is a valid cluster address
  /// without clusters.
  static void copyBox(KernelBuilder &e, Value smemPtr, Value tensorMap,
                      ValueRange coords, Value barrier) {
    Type clusterPtr = LLVM::LLVMPointerType::get(e.ctx, 7);
    Value dst = LLVM::AddrSpaceCastOp::create(e.b, e.loc, clusterPtr, smemPtr);
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        e.b, e.loc, dst, tensorMap, coords, barrier, ValueRange{}, Value(),
        Value(), NVVM::TMALoadModeAttr(), BoolAttr(), nullptr, Value());
  }

  /// The copies into the slot's buffer `dest`, completing on its full
  /// barrier.
  void issue(TmaLoadOp op, OpAdaptor adaptor, KernelBuilder &e, Value tensorMap,
             Value dest, SlotBuffersOp slot, Value stage) const {
    Value barrier = fullBarrier(e, slot.getChannel().getDefiningOp<ChannelOp>(),
                                e.asI32(stage));
    for (const TmaBox &box :
         copyBoxes(e, op, adaptor.getRow(), adaptor.getHead(),
                   op.getDest().getType())) {
      Value boxPtr =
          LLVM::GEPOp::create(e.b, e.loc, e.smemPtrT(), e.b.getI8Type(), dest,
                              ValueRange{e.i32(box.smemOffset)});
      copyBox(e, boxPtr, tensorMap, box.coords, barrier);
    }
  }
};

/// The tile's positions into its slot: 4-byte cp.async copies from the
/// thread that issues the slot's TMA copies, then cp.async.mbarrier.arrive
/// on the slot's full barrier. Without .noinc that arrival first raises the
/// barrier's pending count by one, so the barrier's phase waits for the
/// copies without a change of its expected count (PTX ISA,
/// "cp.async.mbarrier.arrive"). NVVM has both ops.
struct CopyPositionsLowering : ConvertOpToLLVMPattern<CopyPositionsOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(CopyPositionsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto slot = op.getDest().getDefiningOp<SlotBuffersOp>();
    ArgParams positions = ArgParams::of(op.getPositions());
    KernelBuilder e(rewriter, op);
    Value count = rowCount(e, op.getPositions());
    if (!slot || !positions.pointer || !count)
      return op.emitOpError() << "needs a positions kernel argument and a "
                                 "destination of warpspec.slot_buffers (run "
                                 "warpspec-lower-protocol first)";
    Value stage = rewriter.getRemappedValue(slot.getStage());
    auto issue = [&] {
      Value row = e.asI32(adaptor.getRow());
      int64_t rows = op.getDest().getType().getShape()[0];
      for (int64_t r = 0; r < rows; ++r) {
        Value from =
            positionAddress(e, positions.pointer, count, row, e.i32(r));
        Value to = LLVM::GEPOp::create(e.b, e.loc, e.smemPtrT(), e.i32T(),
                                       adaptor.getDest(), ValueRange{e.i32(r)});
        NVVM::CpAsyncOp::create(e.b, e.loc, to, from, /*size=*/4,
                                NVVM::LoadCacheModifierKind::CA,
                                /*cpSize=*/Value());
      }
      Value full = fullBarrier(e, slot.getChannel().getDefiningOp<ChannelOp>(),
                               e.asI32(stage));
      NVVM::CpAsyncMBarrierArriveOp::create(e.b, e.loc, full,
                                            /*noinc=*/false);
    };
    inPublishingThread(e, op, issue);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::blockattn::populateWarpSpecChannelsToNVVMPatterns(
    LLVMTypeConverter &converter, const TargetInfo &,
    RewritePatternSet &patterns) {
  patterns.add<RingSlotLowering, WaitEmptyLowering, WaitFullLowering,
               ExpectTxLowering, SlotBuffersLowering, PublishLowering,
               PublishCloseLowering, ReadTileLowering, ArriveEmptyLowering,
               TmaPrefetchLowering, TmaLoadLowering, CopyPositionsLowering>(
      converter);
}
