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

#include "KernelEmitter.h"

using namespace mlir;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

using Pred = LLVM::ICmpPredicate;

static constexpr int64_t kBarrierBytes = SlotState::barrierBytes;
static constexpr int64_t kRecordBytes = SlotState::tileRecordBytes;

Value KernelEmitter::fullBarrier(ChannelInfo &info, Value stage) {
  int64_t base = *info.op.getBarrierOffset();
  return meta(add(i32(base), mul(stage, i32(kBarrierBytes))));
}

Value KernelEmitter::emptyBarrier(ChannelInfo &info, Value stage) {
  int64_t base =
      *info.op.getBarrierOffset() + info.op.getDepth() * kBarrierBytes;
  return meta(add(i32(base), mul(stage, i32(kBarrierBytes))));
}

void KernelEmitter::waitBarrier(Value barrier, Value parity) {
  // The suspend-time hint lets the hardware park the thread instead of
  // spinning (CUTLASS uses the same value).
  NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier, parity, i32(0x989680));
}

void KernelEmitter::tcgen05Fence(bool after) {
  NVVM::Tcgen05FenceOp::create(
      b, loc,
      after ? NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC
            : NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
}

/// Which partitions publish into `channel` (the producer) and which give
/// its slots back (the consumers): what the barriers are initialized for.
static void describeChannel(KernelOp kernel, ChannelInfo &info) {
  Value channel = info.op.getChannel();
  for (PartitionOp partition : kernel.getPartitions()) {
    bool produces = false, consumes = false;
    partition.walk([&](Operation *op) {
      if (auto publish = dyn_cast<PublishOp>(op))
        produces |= publish.getChannel() == channel;
      if (auto close = dyn_cast<PublishCloseOp>(op))
        produces |= close.getChannel() == channel;
      if (auto arrive = dyn_cast<ArriveEmptyOp>(op))
        consumes |= arrive.getChannel() == channel;
    });
    if (produces)
      info.producedByMma = partition.getRole() == Role::mma;
    if (consumes)
      ++info.numConsumers;
  }
}

void KernelEmitter::initChannelBarriers() {
  for (ChannelOp channel : kernel.getChannels()) {
    ChannelInfo &info = channels[channel.getChannel()];
    info.op = channel;
    describeChannel(kernel, info);
  }
  int64_t tmemUsers = countTmemUsers();
  emitIf(cmp(Pred::eq, tid, i32(0)), [&] {
    for (ChannelOp channel : kernel.getChannels()) {
      ChannelInfo &info = channels[channel.getChannel()];
      // An MMA producer arrives twice per phase: once for the record (a
      // release by its thread), once through tcgen05.commit for the data.
      int64_t fullCount = info.producedByMma ? 2 : 1;
      for (int64_t s = 0, e = channel.getDepth(); s < e; ++s) {
        NVVM::MBarrierInitOp::create(b, loc, fullBarrier(info, i32(s)),
                                     i32(fullCount), Value());
        NVVM::MBarrierInitOp::create(b, loc, emptyBarrier(info, i32(s)),
                                     i32(info.numConsumers), Value());
      }
    }
    if (tmemUsers)
      NVVM::MBarrierInitOp::create(b, loc, tmemTeardownBarrier(),
                                   i32(tmemUsers), Value());
    NVVM::FenceMbarrierInitOp::create(b, loc);
  });
  if (tmemUsers)
    allocateTensorMemory();
  // Every thread must see initialized barriers (and the tensor-memory
  // address) before any role starts.
  if (tmemUsers)
    tcgen05Fence(/*after=*/false);
  NVVM::Barrier0Op::create(b, loc);
  if (tmemUsers) {
    tcgen05Fence(/*after=*/true);
    tmemBase = load(i32T(), meta(*kernel.getTmemBaseOffset()), 4);
  }
}

/// The lowering of a slot op: its channel, placed by the allocators.
FailureOr<ChannelInfo *> KernelEmitter::placedChannel(Operation *op,
                                                      Value channel) {
  ChannelInfo &info = channels[channel];
  if (!info.op || !info.op.isAllocated())
    return op->emitOpError() << "channel is not placed: run "
                                "warpspec-allocate-smem (and, for tensor "
                                "memory, warpspec-allocate-tmem) first";
  return &info;
}

LogicalResult KernelEmitter::emitRingSlot(RingSlotOp op) {
  auto info = placedChannel(op, op.getChannel());
  if (failed(info))
    return failure();
  Value depth = i32((*info)->op.getDepth());
  Value entry = lookupI32(op.getEntry());
  scalars.map(op.getStage(), urem(entry, depth));
  scalars.map(op.getPhase(), andi(udiv(entry, depth), i32(1)));
  return success();
}

LogicalResult KernelEmitter::emitWaitEmpty(WaitEmptyOp op) {
  auto info = placedChannel(op, op.getChannel());
  if (failed(info))
    return failure();
  waitBarrier(emptyBarrier(**info, lookupI32(op.getStage())),
              LLVM::XOrOp::create(b, loc, lookupI32(op.getPhase()), i32(1)));
  // The consumers' tcgen05.ld of this slot are ordered before the MMAs that
  // overwrite it.
  if ((*info)->op.inTensorMemory())
    tcgen05Fence(/*after=*/true);
  return success();
}

LogicalResult KernelEmitter::emitWaitFull(WaitFullOp op) {
  auto info = placedChannel(op, op.getChannel());
  if (failed(info))
    return failure();
  waitBarrier(fullBarrier(**info, lookupI32(op.getStage())),
              lookupI32(op.getPhase()));
  // The producer's tcgen05 work (MMAs, stores into tensor memory) is ordered
  // before ours.
  if ((*info)->op.inTensorMemory() || partition.getRole() == Role::mma)
    tcgen05Fence(/*after=*/true);
  return success();
}

LogicalResult KernelEmitter::emitExpectTx(ExpectTxOp op) {
  auto info = placedChannel(op, op.getChannel());
  if (failed(info))
    return failure();
  NVVM::MBarrierExpectTxOp::create(
      b, loc, fullBarrier(**info, lookupI32(op.getStage())),
      i32(op.getBytes()));
  return success();
}

/// Maps a slot's buffers: shared-memory pointers, or tensor-memory addresses.
LogicalResult KernelEmitter::emitSlotBuffers(SlotBuffersOp op) {
  auto placed = placedChannel(op, op.getChannel());
  if (failed(placed))
    return failure();
  ChannelInfo &info = **placed;
  Value stage = lookupI32(op.getStage());
  if (info.op.inTensorMemory()) {
    // tmem_slots holds [lane, column] per slot; select this slot's.
    ArrayRef<int64_t> placedSlots = *info.op.getTmemSlots();
    Value base = i32(0);
    for (int64_t s = info.op.getDepth() - 1; s >= 0; --s) {
      Value address = i32((placedSlots[2 * s] << 16) | placedSlots[2 * s + 1]);
      base = s == static_cast<int64_t>(info.op.getDepth()) - 1
                 ? address
                 : select(cmp(Pred::eq, stage, i32(s)), address, base);
    }
    int64_t column = 0;
    for (Value buffer : op.getBuffers()) {
      tmemAddrs[buffer] = add(add(tmemBase, base), i32(column));
      auto type = cast<BufferType>(buffer.getType());
      int64_t bits = type.getElementType().getIntOrFloatBitWidth();
      column += bits >= 32 ? type.getShape()[1]
                           : llvm::divideCeil(type.getShape()[1] * bits, 32);
    }
    return success();
  }
  Value slot = add(i32(*info.op.getBufferOffset()),
                   mul(stage, i32(*info.op.getSlotStride())));
  int64_t offset = 0;
  for (Value buffer : op.getBuffers()) {
    buffers[buffer] = smem(add(slot, i32(offset)));
    offset += cast<BufferType>(buffer.getType()).getSizeInBytes();
  }
  return success();
}

/// Producer side: write the slot's record and publish it. A sentinel (the
/// record of publish_close) has no data to order first.
static void publishSlot(KernelEmitter &e, Operation *op, ChannelInfo &info,
                        Value stage, Value row, Value rows, Value head,
                        Value position, bool sentinel) {
  bool threads = !KernelEmitter::inSingleThread(op);
  if (threads) {
    // Every thread of the replica wrote (tcgen05.st or st.shared); make the
    // writes visible to the tensor cores and gather the replica.
    if (info.op.inTensorMemory() && !sentinel) {
      NVVM::Tcgen05WaitOp::create(e.b, e.loc, NVVM::Tcgen05WaitKind::STORE);
      e.tcgen05Fence(/*after=*/false);
    } else if (!sentinel) {
      NVVM::FenceProxyOp::create(
          e.b, e.loc, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(e.ctx, NVVM::SharedSpace::shared_cta));
    }
    e.replicaBarrier();
  }
  auto arrive = [&] {
    int64_t base = *info.op.getInfoOffset();
    Value record =
        e.meta(e.add(e.i32(base), e.mul(stage, e.i32(kRecordBytes))));
    Type vec = VectorType::get({4}, e.i32T());
    Value packed = LLVM::UndefOp::create(e.b, e.loc, vec);
    Value fields[] = {row, rows, head, position ? position : e.i32(0)};
    for (auto [i, field] : llvm::enumerate(fields))
      packed =
          LLVM::InsertElementOp::create(e.b, e.loc, packed, field, e.i32(i));
    e.store(packed, record, 16);
    Value full = e.fullBarrier(info, stage);
    // The record's arrival has release semantics; the tcgen05.commit's
    // arrival comes when the MMAs into the slot complete. A sentinel has no
    // data: both arrivals at once.
    Value count = info.producedByMma && sentinel ? e.i32(2) : Value();
    NVVM::MBarrierArriveOp::create(e.b, e.loc, Type(), full, count);
    if (info.producedByMma && !sentinel)
      NVVM::Tcgen05CommitOp::create(e.b, e.loc, full, Value());
  };
  if (threads)
    e.emitIf(e.cmp(Pred::eq, e.threadInReplica(), e.i32(0)), arrive);
  else
    arrive();
}

LogicalResult KernelEmitter::emitPublish(PublishOp op) {
  auto info = placedChannel(op, op.getChannel());
  if (failed(info))
    return failure();
  publishSlot(*this, op, **info, lookupI32(op.getStage()),
              lookupI32(op.getRow()), lookupI32(op.getRows()),
              lookupI32(op.getHead()),
              op.getPosition() ? lookupI32(op.getPosition()) : Value(),
              /*sentinel=*/false);
  return success();
}

LogicalResult KernelEmitter::emitPublishClose(PublishCloseOp op) {
  auto info = placedChannel(op, op.getChannel());
  if (failed(info))
    return failure();
  publishSlot(*this, op, **info, lookupI32(op.getStage()), i32(0), i32(-1),
              i32(0), Value(), /*sentinel=*/true);
  return success();
}

LogicalResult KernelEmitter::emitReadTile(ReadTileOp op) {
  auto info = placedChannel(op, op.getChannel());
  if (failed(info))
    return failure();
  int64_t base = *(*info)->op.getInfoOffset();
  Value record =
      meta(add(i32(base), mul(lookupI32(op.getStage()), i32(kRecordBytes))));
  Value packed = load(VectorType::get({4}, i32T()), record, 16);
  for (auto [i, field] : llvm::enumerate(op->getResults()))
    scalars.map(field, LLVM::ExtractElementOp::create(b, loc, packed, i32(i)));
  return success();
}

LogicalResult KernelEmitter::emitArriveEmpty(ArriveEmptyOp op) {
  auto info = placedChannel(op, op.getChannel());
  if (failed(info))
    return failure();
  Value barrier = emptyBarrier(**info, lookupI32(op.getStage()));
  if (op.getAfterMma()) {
    // Arrives when every MMA this thread issued so far, including those
    // reading the slot, has completed.
    NVVM::Tcgen05CommitOp::create(b, loc, barrier, Value());
    return success();
  }
  // Thread 0's arrival (a release) covers only what happens-before it, and
  // every thread of the replica read the slot's record with ld.shared. The
  // warpgroup-wide wgmma between that read and this point orders nothing in
  // the PTX memory model, so without the replica barrier the producer's next
  // record store races the other threads' reads (compute-sanitizer's
  // racecheck reports it; docs/sanitizers.md). Roles reading tensor memory
  // first order their tcgen05.ld (waited for) before the barrier.
  bool singleThread = inSingleThread(op);
  if (!singleThread) {
    if ((*info)->op.inTensorMemory())
      tcgen05Fence(/*after=*/false);
    replicaBarrier();
  }
  auto arrive = [&] {
    NVVM::MBarrierArriveOp::create(b, loc, Type(), barrier, Value());
  };
  if (singleThread)
    arrive();
  else
    emitIf(cmp(Pred::eq, threadInReplica(), i32(0)), arrive);
  return success();
}

/// The bulk tensor copies of a `rows` x `cols` tile at (`row`, `head`).
static SmallVector<TmaBox> tileBoxes(KernelEmitter &e, Value row, Value head,
                                     BufferType tile) {
  ArrayRef<int64_t> shape = tile.getShape();
  return e.tmaBoxes(e.lookupI32(row), e.lookupI32(head), shape[0], shape[1]);
}

LogicalResult KernelEmitter::emitTmaPrefetch(TmaPrefetchOp op) {
  Value tensorMap = argParams[op.getSource()].tensorMap;
  if (!tensorMap)
    return op.emitOpError() << "needs a tensor-map kernel argument (a source "
                               "that a warpspec.tma_load also reads)";
  for (const TmaBox &box :
       tileBoxes(*this, op.getRow(), op.getHead(), op.getTileType()))
    NVVM::CpAsyncBulkTensorPrefetchOp::create(
        b, loc, tensorMap, box.coords, ValueRange{}, NVVM::TMALoadModeAttr(),
        /*l2CacheHint=*/Value());
  return success();
}

LogicalResult KernelEmitter::emitTmaLoad(TmaLoadOp op) {
  ArgParams &source = argParams[op.getSource()];
  Value dest = buffers.lookup(op.getDest());
  // The copy completes on the full barrier of the slot its destination is a
  // buffer of.
  auto slot = op.getDest().getDefiningOp<SlotBuffersOp>();
  if (!source.tensorMap || !dest || !slot)
    return op.emitOpError() << "needs a tensor-map kernel argument and a "
                               "destination of warpspec.slot_buffers (run "
                               "warpspec-lower-protocol first)";
  Value barrier =
      fullBarrier(channels[slot.getChannel()], lookupI32(slot.getStage()));
  // `.shared::cluster` destinations are the PTX 8.0 form: a CTA's own shared
  // address is a valid cluster address without clusters.
  Type clusterPtr = LLVM::LLVMPointerType::get(ctx, 7);
  for (const TmaBox &box :
       tileBoxes(*this, op.getRow(), op.getHead(), op.getDest().getType())) {
    Value chunkPtr = LLVM::GEPOp::create(b, loc, smemPtrT(), b.getI8Type(),
                                         dest, ValueRange{i32(box.smemOffset)});
    Value dst = LLVM::AddrSpaceCastOp::create(b, loc, clusterPtr, chunkPtr);
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, dst, source.tensorMap, box.coords, barrier, ValueRange{},
        Value(), Value(), NVVM::TMALoadModeAttr(), BoolAttr(), nullptr,
        Value());
  }
  return success();
}
