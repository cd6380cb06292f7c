//===- Channels.cpp - the channel protocol on mbarriers, TMA loads --------===//
//
// Each slot s of a channel has two mbarriers in shared memory:
//   full[s]  (count 1): the producer's thread arrives after publishing the
//            slot; the TMA bytes it announced with expect_tx complete it.
//   empty[s] (count = number of consumer partitions): one thread of the
//            consuming replica of each consumer partition arrives on release.
// The producer's n-th slot is s = n % depth in phase (n / depth) & 1; it waits
// for empty[s] with the opposite parity, so the first lap passes at once (a
// fresh barrier is in phase 0 and "phase 1 completed" is the one before it).
// Consumer replica r of R takes entries r, r+R, ...; it waits for full[s]
// with parity (n / depth) & 1. Parity waits alias two phases apart, which
// cannot happen here: a producer is at most `depth` entries ahead of every
// consumer by construction of the ring.
//
// Each slot also carries a 16-byte record (row, rows, head, unused) that the
// producer writes before it arrives on full[s] (release) and consumers read
// after their wait (acquire). `close` publishes one record with rows = -1 per
// consumer replica, which ends the consumers' loops.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

using namespace mlir;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

using Pred = LLVM::ICmpPredicate;

static constexpr int64_t kBarrierBytes = 8;
static constexpr int64_t kRecordBytes = 16;

Value KernelEmitter::fullBarrier(ChannelState &state, Value stage) {
  int64_t base = *state.op.getBarrierOffset();
  return smem(add(i32(base), mul(stage, i32(kBarrierBytes))));
}

Value KernelEmitter::emptyBarrier(ChannelState &state, Value stage) {
  int64_t base = *state.op.getBarrierOffset() +
                 state.op.getDepth() * kBarrierBytes;
  return smem(add(i32(base), mul(stage, i32(kBarrierBytes))));
}

void KernelEmitter::waitBarrier(Value barrier, Value parity) {
  // The suspend-time hint lets the hardware park the thread instead of
  // spinning (CUTLASS uses the same value).
  NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier, parity,
                                        i32(0x989680));
}

/// Slot and parity of ring entry `entry`.
static std::pair<Value, Value> slotOf(KernelEmitter &e, ChannelState &state,
                                      Value entry) {
  Value depth = e.i32(state.op.getDepth());
  Value stage = e.urem(entry, depth);
  Value phase = e.andi(e.udiv(entry, depth), e.i32(1));
  return {stage, phase};
}

void KernelEmitter::initChannelBarriers() {
  // Who consumes each channel decides the empty barriers' arrival counts.
  for (ChannelOp channel : kernel.getChannels()) {
    ChannelState &state = channels[channel.getChannel()];
    state.op = channel;
    for (PartitionOp partition : kernel.getPartitions()) {
      bool consumes = false;
      partition.walk([&](ConsumeOp consume) {
        consumes |= consume.getChannel() == channel.getChannel();
      });
      if (consumes) {
        ++state.numConsumers;
        state.consumerReplicas = partition.getReplicas();
      }
    }
  }
  emitIf(cmp(Pred::eq, tid, i32(0)), [&] {
    for (ChannelOp channel : kernel.getChannels()) {
      ChannelState &state = channels[channel.getChannel()];
      for (int64_t s = 0; s < channel.getDepth(); ++s) {
        NVVM::MBarrierInitOp::create(b, loc, fullBarrier(state, i32(s)), i32(1),
                                     Value());
        NVVM::MBarrierInitOp::create(b, loc, emptyBarrier(state, i32(s)),
                                     i32(state.numConsumers), Value());
      }
    }
    NVVM::FenceMbarrierInitOp::create(b, loc);
  });
  // Every thread must see initialized barriers before any role starts.
  NVVM::Barrier0Op::create(b, loc);
}

/// Bytes the TMA copies between an acquire and its commit deliver.
static int64_t bytesUntilCommit(AcquireOp acquire) {
  int64_t bytes = 0;
  for (Operation *op = acquire->getNextNode(); op; op = op->getNextNode()) {
    if (auto commit = dyn_cast<CommitOp>(op))
      if (commit.getChannel() == acquire.getChannel())
        break;
    if (auto load = dyn_cast<TmaLoadOp>(op))
      bytes += load.getDest().getType().getSizeInBytes();
  }
  return bytes;
}

/// Producer side: wait until the next slot is free.
static void acquireSlot(KernelEmitter &e, ChannelState &state) {
  if (!state.counter)
    state.counter = e.variable(e.i32T(), 0);
  Value entry = e.load(e.i32T(), state.counter);
  auto [stage, phase] = slotOf(e, state, entry);
  e.waitBarrier(e.emptyBarrier(state, stage), LLVM::XOrOp::create(
                                                  e.b, e.loc, phase, e.i32(1)));
  state.stage = stage;
  state.entry = entry;
}

/// Producer side: write the slot's record and publish it.
static void publishSlot(KernelEmitter &e, ChannelState &state, Value row,
                        Value rows, Value head) {
  int64_t base = *state.op.getInfoOffset();
  Value record = e.smem(e.add(e.i32(base), e.mul(state.stage, e.i32(kRecordBytes))));
  Type vec = VectorType::get({4}, e.i32T());
  Value packed = LLVM::UndefOp::create(e.b, e.loc, vec);
  Value fields[] = {row, rows, head, e.i32(0)};
  for (auto [i, field] : llvm::enumerate(fields))
    packed = LLVM::InsertElementOp::create(e.b, e.loc, packed, field,
                                           e.i32(i));
  e.store(packed, record, 16);
  NVVM::MBarrierArriveOp::create(e.b, e.loc, Type(),
                                 e.fullBarrier(state, state.stage), Value());
  e.store(e.add(state.entry, e.i32(1)), state.counter);
}

LogicalResult KernelEmitter::emitAcquire(AcquireOp op) {
  ChannelState &state = channels[op.getChannel()];
  if (!state.op.isAllocated())
    return op.emitOpError() << "channel has no shared-memory offsets: run "
                               "warpspec-allocate-smem first";
  acquireSlot(*this, state);
  // Announce the bytes the copies into this slot will deliver before issuing
  // them, so that the barrier's transaction count never underflows.
  if (int64_t bytes = bytesUntilCommit(op))
    NVVM::MBarrierExpectTxOp::create(b, loc, fullBarrier(state, state.stage),
                                     i32(bytes));
  Value slot = add(i32(*state.op.getBufferOffset()),
                   mul(state.stage, i32(*state.op.getSlotStride())));
  int64_t offset = 0;
  for (Value buffer : op.getBuffers()) {
    buffers[buffer] = smem(add(slot, i32(offset)));
    offset += cast<BufferType>(buffer.getType()).getSizeInBytes();
  }
  return success();
}

LogicalResult KernelEmitter::emitCommit(CommitOp op) {
  ChannelState &state = channels[op.getChannel()];
  publishSlot(*this, state, lookupI32(op.getRow()), lookupI32(op.getRows()),
              lookupI32(op.getHead()));
  return success();
}

LogicalResult KernelEmitter::emitClose(CloseOp op) {
  ChannelState &state = channels[op.getChannel()];
  if (!state.op.isAllocated())
    return op.emitOpError() << "channel has no shared-memory offsets: run "
                               "warpspec-allocate-smem first";
  for (int64_t r = 0; r < state.consumerReplicas; ++r) {
    acquireSlot(*this, state);
    publishSlot(*this, state, i32(0), i32(-1), i32(0));
  }
  return success();
}

LogicalResult KernelEmitter::emitConsume(ConsumeOp op) {
  ChannelState &state = channels[op.getChannel()];
  if (!state.op.isAllocated())
    return op.emitOpError() << "channel has no shared-memory offsets: run "
                               "warpspec-allocate-smem first";
  Value counter = variable(i32T());
  store(partition.replica, counter);
  int64_t stride = state.consumerReplicas;
  Block &body = op.getBody().front();
  LogicalResult result = success();
  Type i32 = i32T();
  emitWhile(
      [&] {
        Value entry = load(i32, counter);
        auto [stage, phase] = slotOf(*this, state, entry);
        waitBarrier(fullBarrier(state, stage), phase);
        int64_t base = *state.op.getInfoOffset();
        Value record =
            smem(add(this->i32(base), mul(stage, this->i32(kRecordBytes))));
        Value packed = load(VectorType::get({4}, i32), record, 16);
        SmallVector<Value> fields;
        for (int64_t i = 0; i < 3; ++i)
          fields.push_back(LLVM::ExtractElementOp::create(b, loc, packed,
                                                          this->i32(i)));
        fields.push_back(stage);
        fields.push_back(entry);
        Value open = cmp(Pred::sge, fields[1], this->i32(0));
        return std::make_pair(open, fields);
      },
      [&](ValueRange values) {
        scalars.map(body.getArgument(0), values[0]);
        scalars.map(body.getArgument(1), values[1]);
        scalars.map(body.getArgument(2), values[2]);
        state.stage = values[3];
        state.entry = values[4];
        Value slot = add(this->i32(*state.op.getBufferOffset()),
                         mul(state.stage, this->i32(*state.op.getSlotStride())));
        int64_t offset = 0;
        for (BlockArgument buffer : body.getArguments().drop_front(3)) {
          buffers[buffer] = smem(add(slot, this->i32(offset)));
          offset += cast<BufferType>(buffer.getType()).getSizeInBytes();
        }
        if (failed(emitBlock(body)))
          result = failure();
        store(add(state.entry, this->i32(stride)), counter);
      },
      TypeRange{i32, i32, i32, i32, i32});
  return result;
}

LogicalResult KernelEmitter::emitRelease(ReleaseOp op) {
  ChannelState &state = channels[op.getChannel()];
  // A compute warpgroup reads a slot only through wgmma (which completed
  // before this point: the lowering waits for every wgmma group it issues)
  // and the record (read before its first wgmma); wgmma is warpgroup-wide,
  // so once thread 0 passed its wait, the whole warpgroup is done with the
  // slot. Any other role synchronizes its threads first.
  if (partition.op.getRole() != Role::compute && !partition.singleThread)
    replicaBarrier();
  Value barrier = emptyBarrier(state, state.stage);
  auto arrive = [&] {
    NVVM::MBarrierArriveOp::create(b, loc, Type(), barrier, Value());
  };
  if (partition.singleThread)
    arrive();
  else
    emitIf(cmp(Pred::eq, partition.threadInReplica, i32(0)), arrive);
  return success();
}

LogicalResult KernelEmitter::emitTmaLoad(TmaLoadOp op) {
  ArgParams &source = argParams[op.getSource()];
  Value dest = buffers.lookup(op.getDest());
  ChannelState *state = nullptr;
  if (auto acquire = op.getDest().getDefiningOp<AcquireOp>())
    state = &channels[acquire.getChannel()];
  if (!source.tensorMap || !dest || !state)
    return op.emitOpError() << "needs a tensor-map kernel argument and an "
                               "acquired destination";
  BufferType type = op.getDest().getType();
  int64_t rows = type.getShape()[0], cols = type.getShape()[1];
  Value barrier = fullBarrier(*state, state->stage);
  Value row = lookupI32(op.getRow()), head = lookupI32(op.getHead());
  // `.shared::cluster` destinations are the PTX 8.0 form: a CTA's own shared
  // address is a valid cluster address without clusters.
  Type clusterPtr = LLVM::LLVMPointerType::get(ctx, 7);
  for (int64_t chunk = 0; chunk < cols / 64; ++chunk) {
    Value chunkPtr = LLVM::GEPOp::create(b, loc, smemPtrT(), b.getI8Type(),
                                         dest,
                                         ValueRange{i32(chunk * rows * 128)});
    Value dst = LLVM::AddrSpaceCastOp::create(b, loc, clusterPtr, chunkPtr);
    Value coords[] = {i32(chunk * 64), head, row};
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, dst, source.tensorMap, coords, barrier, ValueRange{}, Value(),
        Value(), NVVM::TMALoadModeAttr(), BoolAttr(), nullptr, Value());
  }
  return success();
}
