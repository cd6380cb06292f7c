//===- LowerProtocol.cpp - the channel protocol to ring positions ---------===//
//
// warpspec-lower-protocol: every acquire, commit, close, get, consume,
// release and tile_position of a kernel becomes the ring arithmetic and the
// mbarrier-level ops that implement it (see the pass description). The ring
// positions become SSA values that each partition threads through its
// loops, so the NVVM conversion lowers each op on its own.
//
// Ring entry n of a channel is in slot n % depth on phase (n / depth) & 1;
// replica r of R takes entries r, r + R, ... on both sides, R being the
// replicas of its own partition (the verifier makes depth a multiple of
// every R, so each slot belongs to one replica of each partition). A close
// publishes one end record per replica of the most replicated consumer; a
// consumer with fewer replicas stops at the first it meets.
//
// The ops are emitted in the order the protocol's lowering always used
// (prefetches, wait, expect_tx, buffers; the position advanced right after
// the commit or get), which keeps the generated PTX what it was.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h"

#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::warpspec {
#define GEN_PASS_DEF_WARPSPECLOWERPROTOCOLPASS
#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h.inc"
} // namespace mlir::warpspec

using namespace mlir;
using namespace mlir::warpspec;

namespace {

/// The replicas on each side of a channel: how far a producer position
/// advances, and how many consumer loops a close must end (the most
/// replicas of any consumer partition; a consumer position advances by its
/// own partition's replicas, see PartitionLowering::consumerStep).
struct ChannelSides {
  int64_t producerReplicas = 1;
  int64_t consumerReplicas = 1;
};

/// What a `!warpspec.slot` value lowered to.
struct SlotLowering {
  Value channel;
  Value stage;    // i32 slot index
  Value entry;    // i32 ring position (producer slots advance at the commit)
  Value position; // i32 position field of the record (consumer slots)
};

/// The current ring position of every channel a partition acquires, gets or
/// closes, in the order of their first use.
using Positions = llvm::MapVector<Value, Value>;

Value positionedChannel(Operation *op) {
  return TypeSwitch<Operation *, Value>(op)
      .Case<AcquireOp, GetOp, CloseOp>(
          [](auto typed) { return typed.getChannel(); })
      .Default([](Operation *) { return Value(); });
}

bool isProtocolOp(Operation *op) {
  return isa<AcquireOp, CommitOp, CloseOp, GetOp, ConsumeOp, ReleaseOp,
             TilePositionOp>(op);
}

/// The channels of `positions` that ops nested in `op` advance, in the order
/// of their first use.
SmallVector<Value> carriedChannels(Operation *op, const Positions &positions) {
  SmallVector<Value> carried;
  op->walk([&](Operation *inner) {
    Value channel = positionedChannel(inner);
    if (channel && positions.count(channel) &&
        !llvm::is_contained(carried, channel))
      carried.push_back(channel);
  });
  return carried;
}

/// Lowers the protocol ops of one partition.
class PartitionLowering {
public:
  PartitionLowering(PartitionOp partition,
                    const DenseMap<Value, ChannelSides> &sides)
      : partition(partition), sides(sides), b(partition.getContext()) {}

  LogicalResult run() {
    Block &body = partition.getBody().front();
    // Replica r starts at entry r of each ring it takes its own share of.
    Positions positions;
    b.setInsertionPointToStart(&body);
    Value replica;
    partition.walk([&](Operation *op) {
      Value channel = positionedChannel(op);
      if (!channel || positions.count(channel))
        return;
      const ChannelSides &side = sides.lookup(channel);
      int64_t replicas =
          isa<GetOp>(op) ? consumerStep() : side.producerReplicas;
      if (replicas > 1) {
        if (!replica)
          replica = ReplicaIdOp::create(b, partition.getLoc());
        positions[channel] = replica;
      } else {
        positions[channel] = constant(partition.getLoc(), 0);
      }
    });
    if (failed(lowerBlock(body, positions)))
      return failure();
    // Users first: commits and releases before the slots they name.
    for (Operation *op : llvm::reverse(toErase))
      op->erase();
    return success();
  }

private:
  PartitionOp partition;
  const DenseMap<Value, ChannelSides> &sides;
  OpBuilder b;
  DenseMap<Value, SlotLowering> slots;
  /// The slots of each channel acquired and not committed yet.
  DenseMap<Value, int64_t> uncommitted;
  /// Lowered ops, erased once every one is lowered (slot values outlive the
  /// op that took them until their last user is lowered).
  SmallVector<Operation *> toErase;

  Value constant(Location loc, int64_t value) {
    return arith::ConstantIntOp::create(b, loc, value, 32);
  }

  /// How far this partition's position in a ring it consumes advances: its
  /// own replica count (consumer partitions of one channel may differ, as
  /// the sm_90a rotary warpgroup and its two consumers do).
  int64_t consumerStep() { return partition.getReplicas(); }

  /// `entry` advanced by `replicas` (the replica's next entry).
  Value advance(Location loc, Value entry, int64_t replicas) {
    return arith::AddIOp::create(b, loc, entry, constant(loc, replicas));
  }

  LogicalResult lowerBlock(Block &block, Positions &positions) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      LogicalResult result =
          TypeSwitch<Operation *, LogicalResult>(&op)
              .Case([&](AcquireOp o) { return lowerAcquire(o, positions); })
              .Case([&](CommitOp o) { return lowerCommit(o, positions); })
              .Case([&](CloseOp o) { return lowerClose(o, positions); })
              .Case([&](GetOp o) { return lowerGet(o, positions); })
              .Case([&](ReleaseOp o) { return lowerRelease(o); })
              .Case([&](TilePositionOp o) { return lowerTilePosition(o); })
              .Case([&](TileLoopOp o) { return lowerTileLoop(o, positions); })
              .Case([&](ConsumeOp o) { return lowerConsume(o, positions); })
              .Case([&](scf::ForOp o) { return lowerFor(o, positions); })
              .Default([&](Operation *other) { return checkNested(other); });
      if (failed(result))
        return failure();
    }
    return success();
  }

  /// The pass knows how to carry positions through tile loops, consume
  /// loops and scf.for loops only.
  LogicalResult checkNested(Operation *op) {
    if (op->getNumRegions() == 0)
      return success();
    Operation *nested = nullptr;
    op->walk([&](Operation *inner) {
      if (!nested && isProtocolOp(inner))
        nested = inner;
    });
    if (!nested)
      return success();
    return nested->emitOpError()
           << "is nested in '" << op->getName()
           << "', through which warpspec-lower-protocol cannot carry ring "
              "positions; channel protocol ops belong directly in a "
              "warpspec.partition, a warpspec.tile_loop, a warpspec.consume "
              "or an scf.for";
  }

  SlotLowering &slotOf(Value slot) { return slots[slot]; }

  LogicalResult lowerAcquire(AcquireOp op, Positions &positions) {
    Location loc = op.getLoc();
    Value channel = op.getChannel();
    b.setInsertionPoint(op);
    // The copies into the slot are those between the acquire and its commit
    // in the same block, as the recipes build them (the verifier made their
    // coordinates dominate the acquire).
    if (op.getL2Prefetch())
      for (Operation *next = op->getNextNode(); next && !isa<CommitOp>(next);
           next = next->getNextNode())
        if (auto load = dyn_cast<TmaLoadOp>(next);
            load && load.getDest().getDefiningOp() == op.getOperation())
          TmaPrefetchOp::create(
              b, load.getLoc(), load.getSource(), load.getRow(), load.getHead(),
              TypeAttr::get(load.getDest().getType()), load.getColOffsetAttr(),
              load.getPairHalvesAttr());
    // A producer position advances at the commit; a slot acquired while
    // earlier ones are not committed yet (committed in order, the verifier
    // checks) is the entry after theirs.
    Value entry = positions.lookup(channel);
    int64_t &held = uncommitted[channel];
    if (held)
      entry =
          advance(loc, entry, held * sides.lookup(channel).producerReplicas);
    ++held;
    auto ring = RingSlotOp::create(b, loc, channel, entry);
    WaitEmptyOp::create(b, loc, channel, ring.getStage(), ring.getPhase());
    // Announced before the copies are issued, so that the barrier's
    // transaction count never underflows.
    int64_t bytes = 0;
    for (Value buffer : op.getBuffers())
      for (Operation *user : buffer.getUsers())
        if (auto load = dyn_cast<TmaLoadOp>(user))
          bytes += load.getDest().getType().getSizeInBytes();
    if (bytes)
      ExpectTxOp::create(b, loc, channel, ring.getStage(),
                         b.getI64IntegerAttr(bytes));
    auto buffers = SlotBuffersOp::create(b, loc, channel, ring.getStage());
    op.getBuffers().replaceAllUsesWith(buffers.getBuffers());
    slots[op.getSlot()] = {channel, ring.getStage(), entry, Value()};
    toErase.push_back(op);
    return success();
  }

  LogicalResult lowerCommit(CommitOp op, Positions &positions) {
    Location loc = op.getLoc();
    SlotLowering &slot = slotOf(op.getSlot());
    b.setInsertionPoint(op);
    PublishOp::create(b, loc, slot.channel, slot.stage, op.getRow(),
                      op.getRows(), op.getHead(), op.getPosition());
    // The producer waits for its own copies into the slot (`landed`).
    if (op.getLanded()) {
      auto ring = RingSlotOp::create(b, loc, slot.channel, slot.entry);
      WaitFullOp::create(b, loc, slot.channel, ring.getStage(), ring.getPhase(),
                         /*landed=*/true);
    }
    positions[slot.channel] =
        advance(loc, slot.entry, sides.lookup(slot.channel).producerReplicas);
    --uncommitted[slot.channel];
    toErase.push_back(op);
    return success();
  }

  /// One record of -1 rows per consumer replica: each ends one loop.
  LogicalResult lowerClose(CloseOp op, Positions &positions) {
    Location loc = op.getLoc();
    Value channel = op.getChannel();
    const ChannelSides &side = sides.lookup(channel);
    b.setInsertionPoint(op);
    for (int64_t r = 0; r < side.consumerReplicas; ++r) {
      Value entry = positions.lookup(channel);
      auto ring = RingSlotOp::create(b, loc, channel, entry);
      WaitEmptyOp::create(b, loc, channel, ring.getStage(), ring.getPhase());
      PublishCloseOp::create(b, loc, channel, ring.getStage());
      positions[channel] = advance(loc, entry, side.producerReplicas);
    }
    toErase.push_back(op);
    return success();
  }

  LogicalResult lowerGet(GetOp op, Positions &positions) {
    Location loc = op.getLoc();
    Value channel = op.getChannel();
    b.setInsertionPoint(op);
    Value entry = positions.lookup(channel);
    auto ring = RingSlotOp::create(b, loc, channel, entry);
    WaitFullOp::create(b, loc, channel, ring.getStage(), ring.getPhase());
    auto record = ReadTileOp::create(b, loc, channel, ring.getStage());
    auto buffers = SlotBuffersOp::create(b, loc, channel, ring.getStage());
    op.getBuffers().replaceAllUsesWith(buffers.getBuffers());
    slots[op.getSlot()] = {channel, ring.getStage(), entry,
                           record.getPosition()};
    positions[channel] = advance(loc, entry, consumerStep());
    toErase.push_back(op);
    return success();
  }

  LogicalResult lowerRelease(ReleaseOp op) {
    SlotLowering &slot = slotOf(op.getSlot());
    b.setInsertionPoint(op);
    ArriveEmptyOp::create(b, op.getLoc(), slot.channel, slot.stage,
                          op.getAfterMma(), op.getAfterStores());
    toErase.push_back(op);
    return success();
  }

  LogicalResult lowerTilePosition(TilePositionOp op) {
    op.getPosition().replaceAllUsesWith(slotOf(op.getSlot()).position);
    toErase.push_back(op);
    return success();
  }

  /// The positions the body advances become iter_args of the loop.
  LogicalResult lowerTileLoop(TileLoopOp op, Positions &positions) {
    SmallVector<Value> carried = carriedChannels(op, positions);
    if (carried.empty()) {
      Positions inner = positions;
      return lowerBlock(op.getBody().front(), inner);
    }
    Location loc = op.getLoc();
    SmallVector<Value> inits = llvm::to_vector(op.getInits());
    for (Value channel : carried)
      inits.push_back(positions.lookup(channel));
    b.setInsertionPoint(op);
    auto loop = TileLoopOp::create(
        b, loc, ValueRange(inits).getTypes(), op.getCuSeqlens(),
        op.getNumHeads(), op.getNumTokens(), op.getSchedule(), inits,
        op.getBlockSizeAttr(), op.getContiguousAttr(), op.getPackedAttr());
    loop->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    loop.getBody().takeBody(op.getBody());
    Block &body = loop.getBody().front();
    Positions inner = positions;
    for (Value channel : carried)
      inner[channel] = body.addArgument(b.getI32Type(), loc);
    if (failed(lowerBlock(body, inner)))
      return failure();
    SmallVector<Value> next;
    auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
    if (yield)
      llvm::append_range(next, yield.getValues());
    for (Value channel : carried)
      next.push_back(inner.lookup(channel));
    if (yield)
      yield->erase();
    b.setInsertionPointToEnd(&body);
    YieldOp::create(b, loc, next);
    op.replaceAllUsesWith(loop.getResults().take_front(op.getNumResults()));
    for (auto [i, channel] : llvm::enumerate(carried))
      positions[channel] = loop.getResult(op.getNumResults() + i);
    op->erase();
    return success();
  }

  /// An scf.for (the grouped-query backward's loop over the query heads of
  /// a group): the positions its body advances become iter_args after the
  /// loop's own.
  LogicalResult lowerFor(scf::ForOp op, Positions &positions) {
    SmallVector<Value> carried = carriedChannels(op, positions);
    if (carried.empty()) {
      Positions inner = positions;
      return lowerBlock(*op.getBody(), inner);
    }
    Location loc = op.getLoc();
    SmallVector<Value> inits = llvm::to_vector(op.getInitArgs());
    for (Value channel : carried)
      inits.push_back(positions.lookup(channel));
    b.setInsertionPoint(op);
    auto loop = scf::ForOp::create(b, loc, op.getLowerBound(),
                                   op.getUpperBound(), op.getStep(), inits);
    Block &oldBody = *op.getBody();
    Block &body = *loop.getBody();
    for (auto [from, to] :
         llvm::zip(oldBody.getArguments(), body.getArguments()))
      from.replaceAllUsesWith(to);
    // Built with iter_args, the new body has no terminator yet: the old
    // body's yield moves in with the rest.
    body.getOperations().splice(body.end(), oldBody.getOperations());
    Positions inner = positions;
    unsigned first = 1 + op.getNumRegionIterArgs();
    for (auto [i, channel] : llvm::enumerate(carried))
      inner[channel] = body.getArgument(first + i);
    if (failed(lowerBlock(body, inner)))
      return failure();
    auto yield = cast<scf::YieldOp>(body.getTerminator());
    SmallVector<Value> next = llvm::to_vector(yield.getOperands());
    for (Value channel : carried)
      next.push_back(inner.lookup(channel));
    b.setInsertionPoint(yield);
    scf::YieldOp::create(b, loc, next);
    yield->erase();
    op.replaceAllUsesWith(loop.getResults().take_front(op.getNumResults()));
    for (auto [i, channel] : llvm::enumerate(carried))
      positions[channel] = loop.getResult(op.getNumResults() + i);
    op->erase();
    return success();
  }

  /// The consume loop: before each iteration, wait for the replica's next
  /// slot and read its record; leave on the record of -1 rows.
  LogicalResult lowerConsume(ConsumeOp op, Positions &positions) {
    Location loc = op.getLoc();
    Value channel = op.getChannel();
    Type i32 = b.getI32Type();
    SmallVector<Value> carried = carriedChannels(op, positions);
    b.setInsertionPoint(op);
    // The loop's own position comes last: [carried..., entry].
    SmallVector<Value> inits;
    for (Value c : carried)
      inits.push_back(positions.lookup(c));
    inits.push_back(ReplicaIdOp::create(b, loc));
    // Forwarded to the body: row, rows, head, position, stage, entry, then
    // the carried positions.
    SmallVector<Type> forwarded(6 + carried.size(), i32);
    auto loop = scf::WhileOp::create(b, loc, forwarded, inits);
    SmallVector<Location> initLocs(inits.size(), loc);
    Block *before = b.createBlock(&loop.getBefore(), {},
                                  ValueRange(inits).getTypes(), initLocs);
    Value entry = before->getArguments().back();
    auto ring = RingSlotOp::create(b, loc, channel, entry);
    WaitFullOp::create(b, loc, channel, ring.getStage(), ring.getPhase());
    auto record = ReadTileOp::create(b, loc, channel, ring.getStage());
    Value open = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                       record.getRows(), constant(loc, 0));
    SmallVector<Value> values = {record.getRow(),  record.getRows(),
                                 record.getHead(), record.getPosition(),
                                 ring.getStage(),  entry};
    llvm::append_range(values, before->getArguments().drop_back());
    scf::ConditionOp::create(b, loc, open, values);

    SmallVector<Location> forwardedLocs(forwarded.size(), loc);
    Block *after =
        b.createBlock(&loop.getAfter(), {}, forwarded, forwardedLocs);
    Value stage = after->getArgument(4);
    auto buffers = SlotBuffersOp::create(b, loc, channel, stage);
    Block &body = op.getBody().front();
    op.getRow().replaceAllUsesWith(after->getArgument(0));
    op.getRows().replaceAllUsesWith(after->getArgument(1));
    op.getHead().replaceAllUsesWith(after->getArgument(2));
    for (auto [arg, buffer] :
         llvm::zip(op.getBufferArgs(), buffers.getBuffers()))
      arg.replaceAllUsesWith(buffer);
    slots[op.getSlot()] = {channel, stage, after->getArgument(5),
                           after->getArgument(3)};
    after->getOperations().splice(after->end(), body.getOperations());
    toErase.push_back(op);
    Positions inner = positions;
    for (auto [i, c] : llvm::enumerate(carried))
      inner[c] = after->getArgument(6 + i);
    if (failed(lowerBlock(*after, inner)))
      return failure();
    b.setInsertionPointToEnd(after);
    SmallVector<Value> next;
    for (Value c : carried)
      next.push_back(inner.lookup(c));
    next.push_back(advance(loc, after->getArgument(5), consumerStep()));
    scf::YieldOp::create(b, loc, next);
    for (auto [i, c] : llvm::enumerate(carried))
      positions[c] = loop.getResult(6 + i);
    return success();
  }
};

/// The replicas of the partition that produces into each channel and of
/// those that consume it.
DenseMap<Value, ChannelSides> describeChannels(KernelOp kernel) {
  DenseMap<Value, ChannelSides> sides;
  for (PartitionOp partition : kernel.getPartitions())
    partition.walk([&](Operation *op) {
      if (isa<AcquireOp, CloseOp>(op))
        sides[positionedChannel(op)].producerReplicas = partition.getReplicas();
      else if (isa<ConsumeOp, GetOp>(op)) {
        Value channel = isa<ConsumeOp>(op)
                            ? cast<ConsumeOp>(op).getChannel()
                            : cast<GetOp>(op).getChannel();
        int64_t &replicas = sides[channel].consumerReplicas;
        replicas = std::max<int64_t>(replicas, partition.getReplicas());
      }
    });
  return sides;
}

struct WarpSpecLowerProtocolPass
    : warpspec::impl::WarpSpecLowerProtocolPassBase<WarpSpecLowerProtocolPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([](KernelOp kernel) {
      DenseMap<Value, ChannelSides> sides = describeChannels(kernel);
      for (PartitionOp partition : kernel.getPartitions())
        if (failed(PartitionLowering(partition, sides).run()))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
