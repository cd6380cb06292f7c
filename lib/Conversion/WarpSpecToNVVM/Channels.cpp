//===- Channels.cpp - the channel protocol on mbarriers, TMA loads --------===//
//
// Each slot s of a channel has two mbarriers in shared memory:
//   full[s]  the producer publishes the slot: one arrival after it wrote the
//            slot's record, plus, for an MMA-produced (tensor-memory) slot,
//            the tcgen05.commit arrival when the MMAs into it complete; TMA
//            bytes announced with expect_tx complete a loaded slot;
//   empty[s] (count = number of consumer partitions): one arrival per
//            consumer partition when it releases the slot (or, after_mma,
//            a tcgen05.commit when its MMAs reading the slot complete).
// Entry n of a ring is in slot n % depth, phase (n / depth) & 1. Producers
// wait for empty[s] with the opposite parity, so the first lap passes at
// once (a fresh barrier is in phase 0 and "phase 1 completed" is the one
// before it). Replicas take entries round-robin on both sides: replica r of
// R handles entries r, r + R, ... The verifier makes the depth a multiple of
// R, so every slot belongs to one replica and parity waits, which alias two
// phases apart, never see another replica's phase.
//
// Each slot also carries a 16-byte record (row, rows, head, position) written
// before the producer's arrival (release) and read after the consumer's wait
// (acquire). `close` publishes one record with rows = -1 per consumer
// replica, which ends the consumers' loops.
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

/// Slot and parity of ring entry `entry`.
static std::pair<Value, Value> slotOf(KernelEmitter &e, ChannelInfo &info,
                                      Value entry) {
  Value depth = e.i32(info.op.getDepth());
  Value stage = e.urem(entry, depth);
  Value phase = e.andi(e.udiv(entry, depth), e.i32(1));
  return {stage, phase};
}

/// The partition that produces into `channel` and the replicas of the
/// partitions that consume it.
static void describeChannel(KernelOp kernel, ChannelInfo &info) {
  Value channel = info.op.getChannel();
  for (PartitionOp partition : kernel.getPartitions()) {
    bool produces = false, consumes = false;
    partition.walk([&](Operation *op) {
      if (auto acquire = dyn_cast<AcquireOp>(op))
        produces |= acquire.getChannel() == channel;
      if (auto consume = dyn_cast<ConsumeOp>(op))
        consumes |= consume.getChannel() == channel;
      if (auto get = dyn_cast<GetOp>(op))
        consumes |= get.getChannel() == channel;
    });
    if (produces) {
      info.producerReplicas = partition.getReplicas();
      info.producedByMma = partition.getRole() == Role::mma;
    }
    if (consumes) {
      ++info.numConsumers;
      info.consumerReplicas = partition.getReplicas();
    }
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

/// Bytes the TMA copies into an acquired slot's buffers deliver.
static int64_t bytesUntilCommit(AcquireOp acquire) {
  int64_t bytes = 0;
  for (Value buffer : acquire.getBuffers())
    for (Operation *user : buffer.getUsers())
      if (auto load = dyn_cast<TmaLoadOp>(user))
        bytes += load.getDest().getType().getSizeInBytes();
  return bytes;
}

void KernelEmitter::initPartitionCounters(PartitionOp op) {
  partitionCounters.clear();
  op.walk([&](Operation *inner) {
    Value channel;
    int64_t replicas = 1;
    if (auto acquire = dyn_cast<AcquireOp>(inner)) {
      channel = acquire.getChannel();
      replicas = channels[channel].producerReplicas;
    } else if (auto close = dyn_cast<CloseOp>(inner)) {
      channel = close.getChannel();
      replicas = channels[channel].producerReplicas;
    } else if (auto get = dyn_cast<GetOp>(inner)) {
      channel = get.getChannel();
      replicas = channels[channel].consumerReplicas;
    }
    if (!channel || partitionCounters.count(channel))
      return;
    // Replica r takes entries r, r + R, ...
    Value counter = variable(i32T());
    store(replicas > 1 ? partition.replica : i32(0), counter);
    partitionCounters[channel] = counter;
  });
}

/// Maps a slot's buffers: shared-memory pointers, or tensor-memory addresses.
void KernelEmitter::bindSlotBuffers(ChannelInfo &info, Value stage,
                                    ValueRange buffers) {
  if (info.op.inTensorMemory()) {
    // tmem_slots holds [lane, column] per slot; select this slot's.
    ArrayRef<int64_t> placed = *info.op.getTmemSlots();
    Value base = i32(0);
    for (int64_t s = info.op.getDepth() - 1; s >= 0; --s) {
      Value address = i32((placed[2 * s] << 16) | placed[2 * s + 1]);
      base = s == static_cast<int64_t>(info.op.getDepth()) - 1
                 ? address
                 : select(cmp(Pred::eq, stage, i32(s)), address, base);
    }
    int64_t column = 0;
    for (Value buffer : buffers) {
      tmemAddrs[buffer] = add(add(tmemBase, base), i32(column));
      auto type = cast<BufferType>(buffer.getType());
      int64_t bits = type.getElementType().getIntOrFloatBitWidth();
      column += bits >= 32 ? type.getShape()[1]
                           : llvm::divideCeil(type.getShape()[1] * bits, 32);
    }
    return;
  }
  Value slot = add(i32(*info.op.getBufferOffset()),
                   mul(stage, i32(*info.op.getSlotStride())));
  int64_t offset = 0;
  for (Value buffer : buffers) {
    this->buffers[buffer] = smem(add(slot, i32(offset)));
    offset += cast<BufferType>(buffer.getType()).getSizeInBytes();
  }
}

/// Producer side: wait until the partition's next slot is free.
static SlotValues acquireSlot(KernelEmitter &e, ChannelInfo &info) {
  Value counter = e.partitionCounters.lookup(info.op.getChannel());
  Value entry = e.load(e.i32T(), counter);
  auto [stage, phase] = slotOf(e, info, entry);
  e.waitBarrier(e.emptyBarrier(info, stage),
                LLVM::XOrOp::create(e.b, e.loc, phase, e.i32(1)));
  // The consumers' tcgen05.ld of this slot are ordered before the MMAs that
  // overwrite it.
  if (info.op.inTensorMemory())
    e.tcgen05Fence(/*after=*/true);
  return {stage, entry, Value()};
}

/// Producer side: write the slot's record and publish it.
static void publishSlot(KernelEmitter &e, ChannelInfo &info,
                        const SlotValues &slot, Value row, Value rows,
                        Value head, Value position, bool sentinel = false) {
  Value counter = e.partitionCounters.lookup(info.op.getChannel());
  bool threads = !e.partition.singleThread;
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
        e.meta(e.add(e.i32(base), e.mul(slot.stage, e.i32(kRecordBytes))));
    Type vec = VectorType::get({4}, e.i32T());
    Value packed = LLVM::UndefOp::create(e.b, e.loc, vec);
    Value fields[] = {row, rows, head, position ? position : e.i32(0)};
    for (auto [i, field] : llvm::enumerate(fields))
      packed =
          LLVM::InsertElementOp::create(e.b, e.loc, packed, field, e.i32(i));
    e.store(packed, record, 16);
    Value full = e.fullBarrier(info, slot.stage);
    // The record's arrival has release semantics; the tcgen05.commit's
    // arrival comes when the MMAs into the slot complete. A sentinel has no
    // data: both arrivals at once.
    Value count = info.producedByMma && sentinel ? e.i32(2) : Value();
    NVVM::MBarrierArriveOp::create(e.b, e.loc, Type(), full, count);
    if (info.producedByMma && !sentinel)
      NVVM::Tcgen05CommitOp::create(e.b, e.loc, full, Value());
  };
  if (threads)
    e.emitIf(e.cmp(Pred::eq, e.partition.threadInReplica, e.i32(0)), arrive);
  else
    arrive();
  e.store(e.add(slot.entry, e.i32(info.producerReplicas)), counter);
}

LogicalResult KernelEmitter::emitAcquire(AcquireOp op) {
  ChannelInfo &info = channels[op.getChannel()];
  if (!info.op.isAllocated())
    return op.emitOpError() << "channel is not placed: run "
                               "warpspec-allocate-smem (and, for tensor "
                               "memory, warpspec-allocate-tmem) first";
  if (op.getL2Prefetch())
    emitL2Prefetches(op);
  SlotValues slot = acquireSlot(*this, info);
  // Announce the bytes the copies into this slot will deliver before issuing
  // them, so that the barrier's transaction count never underflows.
  if (int64_t bytes = bytesUntilCommit(op))
    NVVM::MBarrierExpectTxOp::create(b, loc, fullBarrier(info, slot.stage),
                                     i32(bytes));
  bindSlotBuffers(info, slot.stage, op.getBuffers());
  slots[op.getSlot()] = slot;
  return success();
}

LogicalResult KernelEmitter::emitCommit(CommitOp op) {
  ChannelInfo &info = channels[op.getChannel()];
  publishSlot(*this, info, slots.lookup(op.getSlot()), lookupI32(op.getRow()),
              lookupI32(op.getRows()), lookupI32(op.getHead()),
              op.getPosition() ? lookupI32(op.getPosition()) : Value());
  return success();
}

LogicalResult KernelEmitter::emitClose(CloseOp op) {
  ChannelInfo &info = channels[op.getChannel()];
  if (!info.op.isAllocated())
    return op.emitOpError() << "channel is not placed: run "
                               "warpspec-allocate-smem first";
  for (int64_t r = 0; r < info.consumerReplicas; ++r) {
    SlotValues slot = acquireSlot(*this, info);
    publishSlot(*this, info, slot, i32(0), i32(-1), i32(0), Value(),
                /*sentinel=*/true);
  }
  return success();
}

/// Consumer side: wait for a slot and read its record.
static SmallVector<Value> waitSlot(KernelEmitter &e, ChannelInfo &info,
                                   Value entry) {
  auto [stage, phase] = slotOf(e, info, entry);
  e.waitBarrier(e.fullBarrier(info, stage), phase);
  // The producer's tcgen05 work (MMAs, stores into tensor memory) is ordered
  // before ours.
  if (info.op.inTensorMemory() || e.partition.op.getRole() == Role::mma)
    e.tcgen05Fence(/*after=*/true);
  int64_t base = *info.op.getInfoOffset();
  Value record = e.meta(e.add(e.i32(base), e.mul(stage, e.i32(kRecordBytes))));
  Value packed = e.load(VectorType::get({4}, e.i32T()), record, 16);
  SmallVector<Value> fields;
  for (int64_t i = 0; i < 4; ++i)
    fields.push_back(
        LLVM::ExtractElementOp::create(e.b, e.loc, packed, e.i32(i)));
  fields.push_back(stage);
  fields.push_back(entry);
  return fields;
}

LogicalResult KernelEmitter::emitConsume(ConsumeOp op) {
  ChannelInfo &info = channels[op.getChannel()];
  if (!info.op.isAllocated())
    return op.emitOpError() << "channel is not placed: run "
                               "warpspec-allocate-smem first";
  Value counter = variable(i32T());
  store(partition.replica, counter);
  int64_t stride = info.consumerReplicas;
  Block &body = op.getBody().front();
  LogicalResult result = success();
  Type i32 = i32T();
  emitWhile(
      [&] {
        SmallVector<Value> fields = waitSlot(*this, info, load(i32, counter));
        Value open = cmp(Pred::sge, fields[1], this->i32(0));
        return std::make_pair(open, fields);
      },
      [&](ValueRange values) {
        scalars.map(op.getRow(), values[0]);
        scalars.map(op.getRows(), values[1]);
        scalars.map(op.getHead(), values[2]);
        SlotValues slot{values[4], values[5], values[3]};
        slots[op.getSlot()] = slot;
        bindSlotBuffers(info, slot.stage, op.getBufferArgs());
        if (failed(emitBlock(body)))
          result = failure();
        store(add(slot.entry, this->i32(stride)), counter);
      },
      TypeRange{i32, i32, i32, i32, i32, i32});
  return result;
}

LogicalResult KernelEmitter::emitGet(GetOp op) {
  ChannelInfo &info = channels[op.getChannel()];
  if (!info.op.isAllocated())
    return op.emitOpError() << "channel is not placed: run "
                               "warpspec-allocate-smem first";
  Value counter = partitionCounters.lookup(op.getChannel());
  SmallVector<Value> fields = waitSlot(*this, info, load(i32T(), counter));
  SlotValues slot{fields[4], fields[5], fields[3]};
  slots[op.getSlot()] = slot;
  bindSlotBuffers(info, slot.stage, op.getBuffers());
  store(add(slot.entry, i32(info.consumerReplicas)), counter);
  return success();
}

LogicalResult KernelEmitter::emitRelease(ReleaseOp op) {
  ChannelInfo &info = channels[op.getChannel()];
  Value barrier = emptyBarrier(info, slots.lookup(op.getSlot()).stage);
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
  if (!partition.singleThread) {
    if (info.op.inTensorMemory())
      tcgen05Fence(/*after=*/false);
    replicaBarrier();
  }
  auto arrive = [&] {
    NVVM::MBarrierArriveOp::create(b, loc, Type(), barrier, Value());
  };
  if (partition.singleThread)
    arrive();
  else
    emitIf(cmp(Pred::eq, partition.threadInReplica, i32(0)), arrive);
  return success();
}

/// The bulk tensor copies of a tma_load's tile.
static SmallVector<TmaBox> loadBoxes(KernelEmitter &e, TmaLoadOp op) {
  ArrayRef<int64_t> shape = op.getDest().getType().getShape();
  return e.tmaBoxes(e.lookupI32(op.getRow()), e.lookupI32(op.getHead()),
                    shape[0], shape[1]);
}

/// The copies are those between the acquire and its commit in the same
/// block, as the recipes build them; a copy nested in a region there would
/// only go without its prefetch.
void KernelEmitter::emitL2Prefetches(AcquireOp op) {
  for (Operation *next = op->getNextNode(); next && !isa<CommitOp>(next);
       next = next->getNextNode()) {
    auto load = dyn_cast<TmaLoadOp>(next);
    if (!load || load.getDest().getDefiningOp() != op.getOperation())
      continue;
    Value tensorMap = argParams[load.getSource()].tensorMap;
    if (!tensorMap)
      continue; // emitTmaLoad reports it
    for (const TmaBox &box : loadBoxes(*this, load))
      NVVM::CpAsyncBulkTensorPrefetchOp::create(
          b, loc, tensorMap, box.coords, ValueRange{}, NVVM::TMALoadModeAttr(),
          /*l2CacheHint=*/Value());
  }
}

LogicalResult KernelEmitter::emitTmaLoad(TmaLoadOp op) {
  ArgParams &source = argParams[op.getSource()];
  Value dest = buffers.lookup(op.getDest());
  // The verifier makes the destination a buffer of an acquired slot.
  Value slot = getBufferSlot(op.getDest());
  Value stage = slot ? slots.lookup(slot).stage : Value();
  if (!source.tensorMap || !dest || !stage)
    return op.emitOpError() << "needs a tensor-map kernel argument and an "
                               "acquired destination";
  Value barrier = fullBarrier(channels[getSlotChannel(slot)], stage);
  // `.shared::cluster` destinations are the PTX 8.0 form: a CTA's own shared
  // address is a valid cluster address without clusters.
  Type clusterPtr = LLVM::LLVMPointerType::get(ctx, 7);
  for (const TmaBox &box : loadBoxes(*this, op)) {
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

LogicalResult KernelEmitter::emitTilePosition(TilePositionOp op) {
  // The verifier makes the slot a consumer's, which dominates this use, so
  // its get or consume bound the position.
  Value position = slots.lookup(op.getSlot()).position;
  if (!position)
    return op.emitOpError() << "reads a slot whose record was not read";
  scalars.map(op.getPosition(), position);
  return success();
}
