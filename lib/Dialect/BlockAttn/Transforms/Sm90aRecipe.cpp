//===- Sm90aRecipe.cpp - the sm_90a (Hopper) warpspec recipes -------------===//
//
// The forward and the backward on sm_90a: a TMA producer warpgroup and
// consumer warpgroups that each run a whole tile with wgmma (docs/hopper.md).
//
//===----------------------------------------------------------------------===//

#include "Recipe.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::blockattn;
using namespace mlir::warpspec;

namespace {

/// What a consumer body works with: the tile's coordinates and buffers, the
/// scale, and the partition's scratch buffers.
struct ConsumerContext {
  Value slot; // the slot of the consumed ring the tiles are in
  Value row, rows, head;
  Value position;           // of the tile's first row (rotary embeddings)
  SmallVector<Value> tiles; // one per loaded tensor, in KernelSpec::loads order
  Value scale;
  Value pScratch;  // P (forward with p-operand=smem, backward)
  Value dsScratch; // dS (backward)
  // The second query half's P and dS (the backward at block size 128).
  Value pScratchHigh, dsScratchHigh;
  Value oStaging; // output staging (o-store=smem|tma)
  bool bulkStore = false;
  bool outputsInSlot = false; // KernelPlan::outputsInSlot
  // The rotary backward's angles, read once as the tile arrives
  // (KernelPlan::anglesPerTile); null when each product reads its own.
  Value angles;
  // KernelPlan::anglesAfterSoftmax: the angles are read after the softmax,
  // at the positions of the tile's rows read as it arrived (with a
  // positions tensor).
  bool anglesAfterSoftmax = false;
  Value rowPositions;
};

/// The compute partition's shell: `plan.numConsumers` consumer warpgroups
/// and the scratch buffers their tile bodies use (P, dS, the second query
/// half's P and dS at block size 128, and an output staging buffer
/// `stagingCols` wide); leaves `b` inside the partition (the caller guards its
/// insertion point).
ConsumerContext beginConsumer(OpBuilder &b, Location loc,
                              const KernelSpec &spec,
                              const KernelValues &values,
                              const KernelPlan &plan, bool needsPScratch,
                              bool needsDsScratch, int64_t stagingCols,
                              StringRef name = "compute") {
  MLIRContext *ctx = b.getContext();
  auto consumer = PartitionOp::create(
      b, loc, b.getStringAttr(name), RoleAttr::get(ctx, Role::compute),
      b.getI64IntegerAttr(4), b.getI64IntegerAttr(plan.registers.compute),
      b.getI64IntegerAttr(plan.numConsumers));
  if (plan.pinnedAddresses)
    consumer.setPinnedBases(true);
  b.setInsertionPointToStart(&createBody(consumer, {}, loc));
  ConsumerContext c;
  c.scale = values.scale;
  c.bulkStore = plan.bulkStore;
  c.outputsInSlot = plan.outputsInSlot;
  BufferType square = queryBuffer(spec, spec.tileRows());
  if (needsPScratch)
    c.pScratch = ScratchOp::create(b, loc, square, nullptr, nullptr);
  if (needsDsScratch)
    c.dsScratch = ScratchOp::create(b, loc, square, nullptr, nullptr);
  if (needsDsScratch && spec.numQueryTiles() > 1) {
    c.pScratchHigh = ScratchOp::create(b, loc, square, nullptr, nullptr);
    c.dsScratchHigh = ScratchOp::create(b, loc, square, nullptr, nullptr);
  }
  if (plan.stageOutput)
    c.oStaging = ScratchOp::create(b, loc, queryBuffer(spec, stagingCols),
                                   nullptr, nullptr);
  return c;
}

/// Stores an output tile as the plan says (staged, bulk or from registers),
/// staged in `staging` if given, else in the consumer's staging buffer.
StoreOp storeTile(OpBuilder &b, Location loc, const ConsumerContext &c,
                  Value tile, Value dest, Value divideBy,
                  Value staging = Value()) {
  return StoreOp::create(b, loc, tile, dest, c.row, c.head, c.rows, divideBy,
                         staging ? staging : c.oStaging,
                         c.bulkStore ? b.getUnitAttr() : nullptr);
}

/// Above head dim 128, `tile` as a whole-width warpspec.subview taken here:
/// the descriptors of the product that reads it are then computed here, not
/// at the top of the tile with those of S (at head dim 256 the backward's
/// dP descriptors alone are 64 registers, and ptxas spilled). Else `tile`.
Value viewHere(OpBuilder &b, Location loc, const KernelSpec &spec, Value tile) {
  if (spec.numOutputChunks() == 1)
    return tile;
  return SubviewOp::create(b, loc, tile.getType(), tile,
                           b.getI64IntegerAttr(0));
}

/// An output product whose N is the head dim, `a` x `b` (`transpose_a` as
/// warpspec.mma), made and stored in column chunks of the head dim
/// (KernelShape::outputChunkCols): chunk j is A times columns [jC, jC + C)
/// of `b`, stored at column jC as soon as it is done, so that one chunk's
/// accumulator is live at a time. `release`, if set, gives the slot back
/// after the last chunk's product (the last read of the slot).
///
/// With `unrotateAt` (a gradient with respect to a rotated input) the
/// chunks are made a rotation group at a time (rotationGroups): a group's
/// accumulators are held until its last chunk is made, turned back
/// together at the rows `unrotateAt`, and stored; one group is live at a
/// time (two chunks at D = 256 half-split, three at 192, one interleaved).
void storeOutputInChunks(OpBuilder &b, Location loc, const KernelSpec &spec,
                         const ConsumerContext &c, Value a, Value bTile,
                         bool transposeA, Value dest, Value row, Value rows,
                         Value divideBy, bool release,
                         const TileRows *unrotateAt = nullptr) {
  MLIRContext *ctx = b.getContext();
  int64_t cols = spec.outputChunkCols();
  int64_t m = isa<AccType>(a.getType())
                  ? cast<AccType>(a.getType()).getShape()[0]
                  : spec.queryTileRows();
  auto chunkType = AccType::get(ctx, {m, cols}, b.getF32Type());
  auto bType = cast<BufferType>(bTile.getType());
  BufferType bChunkType = bType.withShape({bType.getShape()[0], cols});
  SmallVector<RotationGroup> groups;
  if (unrotateAt)
    groups = rotationGroups(spec);
  else
    for (int64_t j = 0; j < spec.numOutputChunks(); ++j)
      groups.push_back({{j}, 0});
  for (auto [g, group] : llvm::enumerate(groups)) {
    SmallVector<Value> accs;
    for (auto [n, j] : llvm::enumerate(group.chunks)) {
      Value bChunk = SubviewOp::create(b, loc, bChunkType, bTile,
                                       b.getI64IntegerAttr(j * cols));
      // A buffer A (P or dS staged) is viewed here too, so that its
      // descriptors are not computed once for the whole kernel and held.
      Value aHere =
          isa<BufferType>(a.getType()) ? viewHere(b, loc, spec, a) : a;
      accs.push_back(MmaOp::create(b, loc, chunkType, aHere, bChunk, transposeA,
                                   /*transpose_b=*/false));
      if (release && g + 1 == groups.size() && n + 1 == group.chunks.size())
        ReleaseOp::create(b, loc, c.slot);
    }
    if (unrotateAt)
      accs = unrotateChunks(b, loc, spec, accs, group, *unrotateAt);
    for (auto [j, acc] : llvm::zip_equal(group.chunks, accs)) {
      auto store =
          StoreOp::create(b, loc, acc, dest, row, c.head, rows, divideBy,
                          c.oStaging, c.bulkStore ? b.getUnitAttr() : nullptr);
      store.setColOffsetAttr(b.getI64IntegerAttr(j * cols));
    }
  }
}

/// The sm_90a kernel shell (docs/hopper.md, "Warp roles"), shared by the
/// forward and the backward: one TMA producer warpgroup fills a ring with the
/// tiles of `spec.loads`, and `plan.numConsumers` consumer warpgroups each
/// own whole tiles, taking the slots round-robin; `body` builds what a
/// consumer does with one. The registers are the plan's.
void buildHopperKernel(
    OpBuilder &b, Location loc, const KernelSpec &spec, const KernelPlan &plan,
    bool needsPScratch, bool needsDsScratch,
    function_ref<void(OpBuilder &, ConsumerContext &)> body) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = beginKernel(b, loc, Chip::sm_90a, spec, plan);
  Value ring =
      createLoadRing(b, loc, spec, plan.numStages, plan.positionsInSlot);
  Type i32 = b.getI32Type();
  Value rotated;
  if (plan.rotaryWarpgroup)
    rotated = createChannel(
        b, loc, ChannelType::get(ctx, ArrayRef<Type>(), MemorySpace::smem),
        "rotated", plan.numStages);
  buildLoadPartition(b, loc, spec, values, ring, plan);
  if (rotated)
    buildRotaryPartition(b, loc, spec, ring, rotated, plan.registers.rotary,
                         plan.rotaryReplicas);

  // Consumers: each owns whole tiles, round-robin over the ring's slots.
  OpBuilder::InsertionGuard g(b);
  ConsumerContext c = beginConsumer(b, loc, spec, values, plan, needsPScratch,
                                    needsDsScratch, spec.outputChunkCols());
  auto consume = ConsumeOp::create(b, loc, ring);
  SmallVector<Type> argTypes = {SlotType::get(ctx), i32, i32, i32};
  llvm::append_range(argTypes,
                     cast<ChannelType>(ring.getType()).getBufferTypes());
  Block &consumeBody = createBody(consume, argTypes, loc);
  b.setInsertionPointToStart(&consumeBody);
  c.slot = consume.getSlot();
  c.row = consume.getRow();
  c.rows = consume.getRows();
  c.head = consume.getHead();
  // The tile's positions, if its slot holds them (plan.positionsInSlot),
  // are no tile: the rotary ops read them in place of the tensor.
  for (Value buffer : consume.getBufferArgs())
    if (!ChannelType::isRowBuffer(buffer.getType()))
      c.tiles.push_back(buffer);
  KernelSpec readSpec = withSlotPositions(spec, consume.getBufferArgs());
  // The backward turns its gradients back at the tile's position.
  if (spec.hasRotary() && (spec.backward || !rotated))
    c.position = tilePosition(b, loc, spec, c.slot);
  // Issued before the wait for the rotated signal, the table reads overlap
  // that wait and the tile's first products. With anglesAfterSoftmax only a
  // positions tensor is read here, and the tables after the softmax
  // (buildBackwardBody), so that they do not wait for the positions.
  c.anglesAfterSoftmax = plan.anglesAfterSoftmax;
  if (plan.anglesAfterSoftmax && spec.positions)
    c.rowPositions = loadRowPositions(b, loc, readSpec, c.row);
  else if (plan.anglesPerTile && !plan.anglesAfterSoftmax)
    c.angles = rotaryAngles(b, loc, readSpec, {c.row, c.rows, c.position});
  if (rotated) {
    // The rotary warpgroup has rotated the slot once this signal arrives;
    // the signal's slot carries nothing, so it goes back at once.
    auto signal = GetOp::create(b, loc, rotated);
    ReleaseOp::create(b, loc, signal.getSlot(), /*after_mma=*/false);
  } else if (spec.hasRotary()) {
    // q and k (and v) are rotated in place, in f32, before any product
    // reads them; the slot is this warpgroup's alone.
    SmallVector<Value> tiles = rotatedTiles(spec, c.tiles);
    rotateTiles(b, loc, spec, tiles, tiles, {c.row, c.rows, c.position});
  }
  body(b, c);
}

/// A causal softmax of query half `half` of a large block: its rows are the
/// block's tokens from 64 `half` on (its columns the block's from 0), so the
/// causal mask's rows are offset by that much. Nothing for the first half,
/// or without `causal`.
void setCausalRowOffset(OpBuilder &b, SoftmaxOp softmax, const KernelSpec &spec,
                        int64_t half) {
  if (spec.causal && half > 0)
    softmax.setRowOffsetAttr(b.getI64IntegerAttr(half * spec.queryTileRows()));
}

/// The forward per tile: S = Q K^T, P = softmax(S) (unnormalized), O = P V,
/// release, O / rowsum stored. A block of more than 64 tokens is computed in
/// 64-row query halves, each against all of the block's keys (S is 64 x
/// block): every row is still whole in one tile, so the softmax stays exact
/// with no rescaling, and the block's K and V are loaded once for both.
void buildForwardBody(OpBuilder &b, Location loc, const KernelSpec &spec,
                      ConsumerContext &c) {
  MLIRContext *ctx = b.getContext();
  int64_t halves = spec.numQueryTiles();
  Value k = c.tiles[halves], v = c.tiles[halves + 1];
  auto f32 = b.getF32Type();
  // M = 64 query rows a product, against all of the tile's keys (a block of
  // 128 in two query halves; smaller blocks share a 64-row tile, masked).
  int64_t m = spec.queryTileRows(), n = spec.tileRows();
  auto sType = AccType::get(ctx, {m, n}, f32);
  auto pType = AccType::get(ctx, {m, n}, spec.elementType);
  auto oType = AccType::get(ctx, {m, spec.headDim}, f32);
  auto rowsType = RowsType::get(ctx, m, f32);
  // Query rows `[row, row + rows)` of the block; every valid key (c.rows of
  // them) is a column of S.
  auto queryTile = [&](Value q, Value row, Value rows, bool last,
                       int64_t half) {
    Value s = MmaOp::create(b, loc, sType, q, k, /*transpose_a=*/false,
                            /*transpose_b=*/true);
    auto softmax = SoftmaxOp::create(b, loc, pType, rowsType,
                                     spec.lse ? rowsType : Type(), s, c.rows,
                                     /*valid_rows=*/Value(), c.scale,
                                     /*normalize=*/false, spec.causal,
                                     /*block=*/IntegerAttr());
    maskToBlocks(b, softmax, spec, blockEnds(b, loc, spec, c.slot));
    setCausalRowOffset(b, softmax, spec, half);
    Value pOperand = softmax.getProbs();
    if (c.pScratch) {
      WriteOp::create(b, loc, softmax.getProbs(), c.pScratch);
      pOperand = c.pScratch;
    }
    if (spec.numOutputChunks() > 1) {
      storeOutputInChunks(b, loc, spec, c, pOperand, v, /*transposeA=*/false,
                          spec.stores[0], row, rows, softmax.getRowSums(),
                          /*release=*/last);
      if (spec.lse)
        StoreRowsOp::create(b, loc, softmax.getLse(), spec.lse, row, c.head,
                            rows);
      return;
    }
    Value o = MmaOp::create(b, loc, oType, pOperand, v, false, false);
    if (last)
      ReleaseOp::create(b, loc, c.slot);
    StoreOp::create(b, loc, o, spec.stores[0], row, c.head, rows,
                    softmax.getRowSums(), c.oStaging,
                    c.bulkStore ? b.getUnitAttr() : nullptr);
    if (spec.lse)
      StoreRowsOp::create(b, loc, softmax.getLse(), spec.lse, row, c.head,
                          rows);
  };
  if (halves == 1) {
    queryTile(c.tiles[0], c.row, c.rows, /*last=*/true, /*half=*/0);
    return;
  }
  // Half i holds rows [64 i, 64 i + 64) of the block: min(64, rows - 64 i)
  // of them are valid (none past a short block: its stores write nothing).
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
  for (int64_t i = 0; i < halves; ++i) {
    Value row = c.row, rows = c.rows;
    if (i > 0) {
      Value offset = arith::ConstantIntOp::create(b, loc, i * m, 32);
      Value minusOffset = arith::ConstantIntOp::create(b, loc, -i * m, 32);
      row = arith::AddIOp::create(b, loc, c.row, offset);
      rows = arith::MaxSIOp::create(
          b, loc, arith::AddIOp::create(b, loc, c.rows, minusOffset), zero);
    }
    rows = arith::MinSIOp::create(b, loc, rows,
                                  arith::ConstantIntOp::create(b, loc, m, 32));
    queryTile(c.tiles[i], row, rows, /*last=*/i + 1 == halves, i);
  }
}

/// dS = scale P (dP - rowsum(P dP)), plus the dlse term when the backward
/// takes one (rows [row, row + rows) of it; with `pinRows` the thread's rows
/// derived where they are read, warpspec.load_rows `pinned_rows`).
Value scoreGradient(OpBuilder &b, Location loc, const KernelSpec &spec,
                    const ConsumerContext &c, RowsType rowsType, AccType dsType,
                    Value p, Value dp, Value row, Value rows,
                    bool pinRows = false) {
  Value dlse;
  if (spec.dlse) {
    auto read =
        LoadRowsOp::create(b, loc, rowsType, spec.dlse, row, c.head, rows);
    read.setPinnedRows(pinRows);
    dlse = read;
  }
  return SoftmaxGradOp::create(b, loc, dsType, p, dp, c.scale, dlse);
}

/// The backward per tile (docs/hopper.md, "The backward kernel"). Register
/// budget at D=128: three 64-register output accumulators do not fit next to
/// dS, so the outputs are computed and stored one after the other.
///   S  = Q K^T;  P = softmax(S), normalized, query rows past the tile zeroed
///   P -> shared memory (bf16), A operand of dV = P^T dO
///   dP = dO V^T
///   dS = scale P (dP - rowsum(P dP))   (scale folded in; O is never read)
///   dS -> shared memory, A operand of dK = dS^T Q; dS stays in registers
///   as the A operand of dQ = dS K.
void buildBackwardBody(OpBuilder &b, Location loc, const KernelSpec &spec,
                       ConsumerContext &c) {
  MLIRContext *ctx = b.getContext();
  Value q = c.tiles[0], k = c.tiles[1], v = c.tiles[2], dout = c.tiles[3];
  auto f32 = b.getF32Type();
  int64_t bs = spec.tileRows(); // tile rows: 64 for smaller blocks
  auto square32 = AccType::get(ctx, {bs, bs}, f32);
  auto square16 = AccType::get(ctx, {bs, bs}, spec.elementType);
  auto outType = AccType::get(ctx, {bs, spec.headDim}, f32);
  auto rowsType = RowsType::get(ctx, bs, f32);
  Value s = MmaOp::create(b, loc, square32, viewHere(b, loc, spec, q),
                          viewHere(b, loc, spec, k), false,
                          /*transpose_b=*/true);
  auto softmax = SoftmaxOp::create(b, loc, square32, rowsType, Type(), s,
                                   c.rows, /*valid_rows=*/c.rows, c.scale,
                                   /*normalize=*/true, spec.causal,
                                   /*block=*/IntegerAttr());
  maskToBlocks(b, softmax, spec, blockEnds(b, loc, spec, c.slot));
  Value p = softmax.getProbs();
  WriteOp::create(b, loc, p, c.pScratch);
  // KernelPlan::anglesAfterSoftmax: the positions read as the tile arrived
  // have come by now, so the table reads issue without waiting, a product
  // and dS before the first gradient turns back.
  if (c.anglesAfterSoftmax)
    c.angles =
        rotaryAngles(b, loc, spec, {c.row, c.rows, c.position}, c.rowPositions);
  Value dp = MmaOp::create(b, loc, square32, viewHere(b, loc, spec, dout),
                           viewHere(b, loc, spec, v), false, true);
  Value ds =
      scoreGradient(b, loc, spec, c, rowsType, square16, p, dp, c.row, c.rows);
  WriteOp::create(b, loc, ds, c.dsScratch);
  // One output accumulator at a time: each is stored before the next is
  // computed. The slot is held until the last product has read it.
  // With rotary embeddings q and k (and v) were rotated in the slot, so
  // the products give gradients with respect to the rotated tensors; each
  // is turned back in f32 before its single rounding.
  // Each gradient's angles are read just before the product that makes it,
  // so that the table reads overlap the product; one set shared by the
  // three products would stay live across two stores and spill at D = 128.
  // With KernelPlan::anglesPerTile one set, read as the tile arrived, serves
  // all three (its consumer has the registers to hold it).
  TileRows at{c.row, c.rows, c.position};
  Value angles = c.angles;
  auto readAngles = [&] {
    if (!c.angles)
      angles = rotaryAngles(b, loc, spec, at);
  };
  auto unrotate = [&](Value grad, bool rotated) {
    if (!rotated)
      return grad;
    return unrotateGradient(b, loc, spec, grad, at, angles);
  };
  if (spec.numOutputChunks() > 1) {
    // Above head dim 128: each output in column chunks of the head dim, one
    // chunk accumulator live at a time (with rotary embeddings, one
    // rotation group's). dQ reads dS from its scratch buffer (K-major), not
    // from registers, so that dS leaves the registers once it is staged
    // instead of living through the other products (the registers are short
    // at D = 256). The gradients turn back with table reads of their own:
    // angles for a whole row would take D / 2 more registers.
    const TileRows *rotated = spec.hasRotary() ? &at : nullptr;
    storeOutputInChunks(b, loc, spec, c, c.dsScratch, k, /*transposeA=*/false,
                        spec.stores[2], c.row, c.rows, Value(), false, rotated);
    storeOutputInChunks(b, loc, spec, c, c.pScratch, dout, /*transposeA=*/true,
                        spec.stores[0], c.row, c.rows, Value(), false,
                        spec.rotateV ? &at : nullptr);
    storeOutputInChunks(b, loc, spec, c, c.dsScratch, q, /*transposeA=*/true,
                        spec.stores[1], c.row, c.rows, Value(),
                        /*release=*/true, rotated);
    return;
  }
  if (spec.rotateV)
    readAngles();
  Value dvAcc = MmaOp::create(b, loc, outType, c.pScratch, dout,
                              /*transpose_a=*/true, false);
  // KernelPlan::outputsInSlot: dV goes out through v's buffer (last read by
  // dP) and dK through q's (last read by dK's product), so neither waits
  // for the store before it; the slot's release waits for both.
  storeTile(b, loc, c, unrotate(dvAcc, spec.rotateV), spec.stores[0], Value(),
            c.outputsInSlot ? v : Value());
  if (spec.hasRotary())
    readAngles();
  Value dkAcc = MmaOp::create(b, loc, outType, c.dsScratch, q, true, false);
  StoreOp dkStore =
      storeTile(b, loc, c, unrotate(dkAcc, spec.hasRotary()), spec.stores[1],
                Value(), c.outputsInSlot ? q : Value());
  if (c.outputsInSlot)
    dkStore.setPendingReadsAttr(b.getI64IntegerAttr(1));
  if (spec.hasRotary())
    readAngles();
  Value dqAcc = MmaOp::create(b, loc, outType, ds, k, false, false);
  if (!c.outputsInSlot)
    ReleaseOp::create(b, loc, c.slot);
  Value dq = unrotate(dqAcc, spec.hasRotary());
  // Released after dQ is turned back, not right after its product: by then
  // dK's bulk store has most likely read q's buffer, and the wait is free.
  if (c.outputsInSlot)
    ReleaseOp::create(b, loc, c.slot, /*after_mma=*/false,
                      /*after_stores=*/true);
  storeTile(b, loc, c, dq, spec.stores[2], Value());
}

/// A grouped-query backward consumer's item: its `warpspec.consume` of the
/// ring "kv" (K and V of a block and a k/v head), with the insertion point
/// in its body and the item's slot, row and rows in `c`. Returns the k/v
/// head and the K and V buffers.
std::tuple<Value, Value, Value> consumeGroupedItem(OpBuilder &b, Location loc,
                                                   const KernelSpec &spec,
                                                   Value kv,
                                                   ConsumerContext &c) {
  MLIRContext *ctx = b.getContext();
  BufferType tile = tileBuffer(spec, spec.headDim, loadedChunkCols(spec));
  auto consume = ConsumeOp::create(b, loc, kv);
  Type i32 = b.getI32Type();
  Block &body =
      createBody(consume, {SlotType::get(ctx), i32, i32, i32, tile, tile}, loc);
  b.setInsertionPointToStart(&body);
  c.slot = consume.getSlot();
  c.row = consume.getRow();
  c.rows = consume.getRows();
  return {consume.getHead(), consume.getBufferArgs()[0],
          consume.getBufferArgs()[1]};
}

/// consumeGroupedItem of a "kv" ring that carries the item's record alone
/// (KernelPlan::groupChunkStages): the slot, row and rows in `c`; returns
/// the k/v head.
Value consumeGroupedRecord(OpBuilder &b, Location loc, Value kv,
                           ConsumerContext &c) {
  MLIRContext *ctx = b.getContext();
  auto consume = ConsumeOp::create(b, loc, kv);
  Type i32 = b.getI32Type();
  b.setInsertionPointToStart(
      &createBody(consume, {SlotType::get(ctx), i32, i32, i32}, loc));
  c.slot = consume.getSlot();
  c.row = consume.getRow();
  c.rows = consume.getRows();
  return consume.getHead();
}

/// The rotary embedding of a grouped-query backward item (docs/rotary.md,
/// "Grouped-query backward"): the item's rows and position (read from its
/// "kv" slot, where the producer committed it), with K (and V with
/// rotate_v) rotated in place in that slot, once for the whole group. Call
/// right after consumeGroupedItem, by the one partition that rotates: a
/// slot rotated twice in place would be turned twice. Returns where the
/// item's rows are; nothing to do (and a null position) without rotary
/// embeddings.
TileRows rotateGroupedItem(OpBuilder &b, Location loc, const KernelSpec &spec,
                           ConsumerContext &c, Value kSlot, Value vSlot) {
  if (!spec.hasRotary())
    return {c.row, c.rows, Value()};
  c.position = tilePosition(b, loc, spec, c.slot);
  TileRows at{c.row, c.rows, c.position};
  SmallVector<Value> tiles = {kSlot};
  if (spec.rotateV)
    tiles.push_back(vSlot);
  rotateKeyTiles(b, loc, spec, tiles, tiles, at);
  return at;
}

/// A query head's Q, rotated in place in its "qdo" slot (each of the G query
/// heads of an item at the item's rows and positions; a 128-token block's
/// two 64-row halves `q`, the second at row and position + 64), before the
/// first product reads it; nothing without rotary embeddings.
void rotateGroupedQuery(OpBuilder &b, Location loc, const KernelSpec &spec,
                        const TileRows &at, ValueRange q) {
  if (!spec.hasRotary())
    return;
  rotateQueryTiles(b, loc, spec, q, q, at);
}

/// A gradient with respect to a rotated tensor turned back in f32 before
/// its single rounding (the tables read here, next to the store: angles
/// read ahead would be live across the products); `grad` when `rotated` is
/// false.
Value unrotateGrouped(OpBuilder &b, Location loc, const KernelSpec &spec,
                      const TileRows &at, Value grad, bool rotated) {
  if (!rotated)
    return grad;
  return unrotateGradient(b, loc, spec, grad, at, Value());
}

/// Whether the sm_90a grouped block-128 backward above head dim 128
/// (buildHopperGroupedLargeBlockChunks) is half-split with rotate_v
/// (docs/head-dims.md, "Session 26"): then its scores warpgroup turns
/// the chunks' half-split items in two runs (warpspec.rotate's split_items),
/// and at head dim 256 its accumulate warpgroups turn dV and dK back with
/// the tables indexed in 32 bits (warpspec.rotate_tile's narrow_index).
/// Without them ptxas spilled 8-100 bytes in every kernel measured.
bool splitsGroupedChunkItems(const KernelSpec &spec) {
  return spec.rotary == RotaryMode::half_split && spec.rotateV;
}

/// `grad`, with its rotate_tile's tables indexed in 32 bits if `narrow`
/// (warpspec.rotate_tile's narrow_index), and their row count computed from
/// counts pinned there if `pinRows` (pinned_table_rows).
Value narrowTableIndex(Value grad, bool narrow, bool pinRows) {
  if (auto rotate = grad.getDefiningOp<RotateTileOp>()) {
    rotate.setNarrowIndex(narrow && rotate.getCos());
    rotate.setPinnedTableRows(narrow && pinRows && rotate.getCos());
  }
  return grad;
}

/// unrotateGrouped of the sm_90a grouped block-128 backward's gradients:
/// above head dim 64 they are made in passes over column chunks
/// (KernelPlan::groupPasses), and pass `pass`'s chunk is turned back on its
/// own (unrotatePassChunk: an interleaved chunk holds whole pairs, and so
/// does a half-split one in pairHalfChunks' order).
Value unrotateGroupedChunk(OpBuilder &b, Location loc, const KernelSpec &spec,
                           const KernelPlan &plan, int64_t pass,
                           const TileRows &at, Value grad, bool rotated) {
  if (plan.groupPasses == 1)
    return unrotateGrouped(b, loc, spec, at, grad, rotated);
  return unrotatePassChunk(b, loc, spec, grad, pass, at, rotated);
}

/// dV and dK summed over the group of `kvHead`: `queryHead(head, dv, dk)`
/// for the first query head (null accumulators: its products start them),
/// then for the others in one `scf.for` whose iter_args are dV and dK (as
/// on sm_100a, G unrolled copies spill). Returns the group's dV and dK.
std::pair<Value, Value> accumulateOverGroup(
    OpBuilder &b, Location loc, const KernelSpec &spec, Value kvHead,
    function_ref<std::pair<Value, Value>(Value head, Value dv, Value dk)>
        queryHead,
    bool opaqueTripCount = false) {
  Value firstHead = groupQueryHead(b, loc, spec, kvHead, 0);
  auto [dvFirst, dkFirst] = queryHead(firstHead, Value(), Value());
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, value, 32);
  };
  // With `opaqueTripCount` a count LLVM cannot see (opaqueGroupEnd): at
  // G = 2 its one trip is not unrolled.
  Value upper = opaqueTripCount ? opaqueGroupEnd(b, loc, spec, kvHead)
                                : constant(spec.group);
  SmallVector<Value> inits = {dvFirst, dkFirst};
  auto loop =
      scf::ForOp::create(b, loc, constant(1), upper, constant(1), inits);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value head =
        arith::AddIOp::create(b, loc, firstHead, loop.getInductionVar());
    auto [dv, dk] = queryHead(head, loop.getRegionIterArgs()[0],
                              loop.getRegionIterArgs()[1]);
    SmallVector<Value> next = {dv, dk};
    scf::YieldOp::create(b, loc, next);
  }
  return {loop.getResult(0), loop.getResult(1)};
}

/// One query head's gradients in an sm_90a grouped-query consumer over some
/// columns of the head dim (`columns` picks them from a slot's tile; an
/// output chunk is `cols` wide), given the head's Q and dO in `qdoSlot`:
///   S = Q K^T, P (normalized) -> pScratch, dP = dO V^T, dS -> dsScratch
///   dV_c = P^T dO_c + dvIn, dK_c = dS^T Q_c + dkIn (null: the first head)
///   dQ_c = dS K_c once the qdo slot went back (dK's product is its last
///   read)
/// K, V and the scratch buffers are at the same address for the whole
/// group: their product descriptors would be hoisted out of the group loop
/// and held across it (ptxas spilled 4-84 bytes); pinned, they are
/// recomputed next to each product.
struct GroupedHeadGrads {
  Value dv, dk, dq;
};

GroupedHeadGrads
groupedHeadGradients(OpBuilder &b, Location loc, const KernelSpec &spec,
                     ConsumerContext &c, Value qdoSlot, Value q, Value dout,
                     Value kSlot, Value vSlot, Value dvIn, Value dkIn,
                     int64_t cols, function_ref<Value(Value)> columns) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  int64_t bs = spec.tileRows();
  auto square32 = AccType::get(ctx, {bs, bs}, f32);
  auto square16 = AccType::get(ctx, {bs, bs}, spec.elementType);
  auto outType = AccType::get(ctx, {bs, cols}, f32);
  auto rowsType = RowsType::get(ctx, bs, f32);
  Value k = PinOp::create(b, loc, kSlot);
  Value v = PinOp::create(b, loc, vSlot);
  Value pScratch = PinOp::create(b, loc, c.pScratch);
  Value dsScratch = PinOp::create(b, loc, c.dsScratch);
  Value s = MmaOp::create(b, loc, square32, q, k, false, /*transpose_b=*/true);
  auto softmax = SoftmaxOp::create(b, loc, square32, rowsType, Type(), s,
                                   c.rows, /*valid_rows=*/c.rows, c.scale,
                                   /*normalize=*/true, spec.causal,
                                   /*block=*/IntegerAttr());
  maskToBlocks(softmax, spec);
  Value p = softmax.getProbs();
  WriteOp::create(b, loc, p, pScratch);
  Value dp = MmaOp::create(b, loc, square32, dout, v, false, true);
  Value ds =
      scoreGradient(b, loc, spec, c, rowsType, square16, p, dp, c.row, c.rows);
  WriteOp::create(b, loc, ds, dsScratch);
  GroupedHeadGrads grads;
  grads.dv = MmaOp::create(b, loc, outType, pScratch, columns(dout),
                           /*transpose_a=*/true, false, dvIn);
  grads.dk =
      MmaOp::create(b, loc, outType, dsScratch, columns(q), true, false, dkIn);
  ReleaseOp::create(b, loc, qdoSlot);
  grads.dq =
      MmaOp::create(b, loc, outType, dsScratch, columns(k), false, false);
  return grads;
}

/// One consumer partition of the sm_90a grouped-query backward: it takes
/// the item's "kv" slot, then the G "qdo" slots in order, and per query head
/// computes
///   S = Q K^T, P (normalized) and dP = dO V^T, dS, as the plain backward
///   dV_c += P^T dO_c, dK_c += dS^T Q_c  (wgmma scale-d: the accumulators
///                                        are the wgmma's input; the first
///                                        head starts them)
///   dQ_c = dS K_c, A = dS read back from shared memory, stored to the head
/// where `_c` is its column part `part` of `plan.columnParts` (the whole
/// head dim when there is one), and after the G-th head stores dV_c and
/// dK_c once, to the k/v head.
/// Registers at D = 128 with one part: dK and dV (64 + 64 a thread) live
/// across the group next to S and dP (32 + 32) and dS; with K, V and the
/// scratch buffers pinned ptxas keeps the plain G = 2, 4 and 16 kernels in
/// the 256 registers but spills 4-144 bytes at G = 8, with causal or dlse,
/// and at block sizes 16 and 32 (CUDA 13.0). With two parts
/// (`num-consumers=2`) each consumer holds 32 + 32 of dK and dV, nothing
/// spills, and it recomputes S and dP (two of the head's seven products are
/// done twice): slower on the H200 (docs/pipeline.md). The two warpgroups
/// overlap each other's softmax with their
/// products. S and dP are dead once P and dS are in shared memory, before the
/// transient dQ is made, and dS is not kept in registers for dQ (as the plain
/// backward keeps it). The slot of "qdo" goes back once dK's product has read
/// Q; "kv" after the group. Each part is its own partition: replicas of one
/// take ring entries round-robin, and every part needs every entry.
void buildGroupedColumnConsumer(OpBuilder &b, Location loc,
                                const KernelSpec &spec, const KernelPlan &plan,
                                const KernelValues &values, Value kv, Value qdo,
                                int64_t part) {
  OpBuilder::InsertionGuard g(b);
  int64_t cols = spec.headDim / plan.columnParts;
  std::string name = part == 0 ? "compute" : "compute" + std::to_string(part);
  ConsumerContext c = beginConsumer(b, loc, spec, values, plan,
                                    /*needsPScratch=*/true,
                                    /*needsDsScratch=*/true, cols, name);
  auto [kvHead, kSlot, vSlot] = consumeGroupedItem(b, loc, spec, kv, c);
  // With rotary embeddings the one part (the plan refuses two) rotates K
  // (and V) in place once an item and each head's Q as it arrives.
  assert((!spec.hasRotary() || plan.columnParts == 1) &&
         "two column parts would both rotate the slots in place");
  TileRows at = rotateGroupedItem(b, loc, spec, c, kSlot, vSlot);

  // The part's columns of a slot's tile (the whole tile with one part).
  auto columns = [&](Value buffer) {
    return columnsOf(b, loc, buffer, part * cols, cols);
  };
  auto store = [&](Value acc, Value dest) {
    auto op =
        StoreOp::create(b, loc, acc, dest, c.row, c.head, c.rows, Value(),
                        c.oStaging, c.bulkStore ? b.getUnitAttr() : nullptr);
    if (plan.columnParts > 1)
      op.setColOffsetAttr(b.getI64IntegerAttr(part * cols));
  };
  // One query head: dV and dK start from the previous heads' (none for the
  // first).
  auto queryHead = [&](Value head, Value dvIn, Value dkIn) {
    c.head = head;
    auto qdoSlot = GetOp::create(b, loc, qdo);
    Value q = qdoSlot.getBuffers()[0], dout = qdoSlot.getBuffers()[1];
    rotateGroupedQuery(b, loc, spec, at, q);
    GroupedHeadGrads grads =
        groupedHeadGradients(b, loc, spec, c, qdoSlot.getSlot(), q, dout, kSlot,
                             vSlot, dvIn, dkIn, cols, columns);
    store(unrotateGrouped(b, loc, spec, at, grads.dq, spec.hasRotary()),
          spec.stores[2]);
    return std::make_pair(grads.dv, grads.dk);
  };
  auto [dvAcc, dkAcc] = accumulateOverGroup(b, loc, spec, kvHead, queryHead);
  // K and V are released after the group.
  ReleaseOp::create(b, loc, c.slot);
  c.head = kvHead;
  // The group's sums are turned back once (the rotation is linear and the
  // same for every query head of the item).
  store(unrotateGrouped(b, loc, spec, at, dvAcc, spec.rotateV), spec.stores[0]);
  store(unrotateGrouped(b, loc, spec, at, dkAcc, spec.hasRotary()),
        spec.stores[1]);
}

/// The consumer of the sm_90a grouped-query backward above head dim 128
/// (KernelPlan::groupPasses; docs/pipeline.md, "Grouped-query attention"):
/// dV and dK of the whole head dim (2 x 128 registers a thread at 256) do
/// not fit next to S and dP, so it takes the item's "kv" slot and makes the
/// item in D / 64 passes, pass j holding columns [64 j, 64 j + 64) of dV and
/// dK across the group. Per pass and query head (its "qdo" slot; the
/// producer streams the group once a pass):
///   S = Q K^T, P (normalized) and dP = dO V^T at full depth, dS
///   dV_j += P^T dO_j, dK_j += dS^T Q_j  (wgmma scale-d; the first head
///                                        starts them)
///   dQ_j = dS K_j, stored at column 64 j of the query head
/// and after the group stores dV_j and dK_j at column 64 j of the k/v head.
/// S and dP are recomputed every pass (the price of fitting: at 256 a head
/// costs 4 x (S + dP) + 12 chunk products against 2 + 12), the gradients
/// are each rounded once. Registers: dV_j, dK_j 32 + 32, S and dP 32 + 32,
/// dS 16, then dQ_j 32. "kv" goes back after the last pass.
void buildGroupedPassConsumer(OpBuilder &b, Location loc,
                              const KernelSpec &spec, const KernelPlan &plan,
                              const KernelValues &values, Value kv, Value qdo) {
  OpBuilder::InsertionGuard g(b);
  int64_t cols = spec.outputChunkCols();
  // Half-split rows in pair-complete chunks (pairHalfRows): each gradient
  // chunk is stored as two 32-column pieces, through a staging buffer of
  // their width.
  bool pieces = pairHalfRows(spec);
  ConsumerContext c =
      beginConsumer(b, loc, spec, values, plan,
                    /*needsPScratch=*/true,
                    /*needsDsScratch=*/true, pieces ? cols / 2 : cols);
  auto [kvHead, kSlot, vSlot] = consumeGroupedItem(b, loc, spec, kv, c);
  // With rotary embeddings K (and V) stay rotated in their slot for all the
  // passes; Q is loaded again every pass and rotated each time.
  TileRows at = rotateGroupedItem(b, loc, spec, c, kSlot, vSlot);

  for (int64_t pass = 0; pass < plan.groupPasses; ++pass) {
    int64_t col = pass * cols;
    // The pass's columns of a slot's tile.
    auto columns = [&](Value buffer) {
      return columnsOf(b, loc, buffer, col, cols);
    };
    auto store = [&](Value acc, Value dest) {
      if (pieces) {
        storePairHalves(b, loc, spec, acc, dest, c.row, c.head, c.rows,
                        c.oStaging, c.bulkStore, pass);
        return;
      }
      auto op =
          StoreOp::create(b, loc, acc, dest, c.row, c.head, c.rows, Value(),
                          c.oStaging, c.bulkStore ? b.getUnitAttr() : nullptr);
      op.setColOffsetAttr(b.getI64IntegerAttr(col));
    };
    auto queryHead = [&](Value head, Value dvIn, Value dkIn) {
      c.head = head;
      auto qdoSlot = GetOp::create(b, loc, qdo);
      Value q = qdoSlot.getBuffers()[0], dout = qdoSlot.getBuffers()[1];
      rotateGroupedQuery(b, loc, spec, at, q);
      GroupedHeadGrads grads =
          groupedHeadGradients(b, loc, spec, c, qdoSlot.getSlot(), q, dout,
                               kSlot, vSlot, dvIn, dkIn, cols, columns);
      store(
          unrotatePassChunk(b, loc, spec, grads.dq, pass, at, spec.hasRotary()),
          spec.stores[2]);
      return std::make_pair(grads.dv, grads.dk);
    };
    // With rotary embeddings at G = 2 the group's loop of one trip was
    // unrolled next to the first head, and LLVM held the Q rotation's
    // per-thread shared-memory and table addresses of all the item's
    // passes (ptxas spilled 4-52 bytes at head dim 256): the trip count is
    // hidden.
    auto [dvAcc, dkAcc] =
        accumulateOverGroup(b, loc, spec, kvHead, queryHead, spec.hasRotary());
    c.head = kvHead;
    // The group's sums of the pass's chunk are turned back once.
    store(unrotatePassChunk(b, loc, spec, dvAcc, pass, at, spec.rotateV),
          spec.stores[0]);
    store(unrotatePassChunk(b, loc, spec, dkAcc, pass, at, spec.hasRotary()),
          spec.stores[1]);
  }
  // K and V are released after the last pass.
  ReleaseOp::create(b, loc, c.slot);
}

/// The scores warpgroup of the pipelined grouped-query backward
/// (`group-roles=pipelined`): it takes the item's "kv" slot, then per query
/// head of the group its "qdo" slot, and computes
///   S = Q K^T, P = softmax(S) (normalized) -> the "pds" slot's P buffer
///   dP = dO V^T (the last read of Q and dO: its "qdo" slot goes back)
///   dS = scale P (dP - rowsum(P dP)) (+ dlse) -> the "pds" slot's dS buffer,
///   committed to the accumulate warpgroup
///   dQ = dS K, dS from registers, stored to the query head (not with
///   plan.dqInAccumulate: the accumulate warpgroup makes dQ)
/// and gives "kv" back after the group. Registers at D = 128: S/P 32 + dP 32
/// + dS 16, then dS 16 + dQ 64; no dK or dV.
void buildGroupedScoresConsumer(OpBuilder &b, Location loc,
                                const KernelSpec &spec, const KernelPlan &plan,
                                const KernelValues &values, Value kv, Value qdo,
                                Value pds) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard g(b);
  // Without dQ (pipelined-dq) it stores nothing: no staging buffer.
  KernelPlan scoresPlan = plan;
  scoresPlan.stageOutput &= !plan.dqInAccumulate;
  ConsumerContext c =
      beginConsumer(b, loc, spec, values, scoresPlan,
                    /*needsPScratch=*/false,
                    /*needsDsScratch=*/false, spec.headDim, "scores");
  auto [kvHead, kSlot, vSlot] = consumeGroupedItem(b, loc, spec, kv, c);
  // With rotary embeddings this warpgroup rotates K (and V) once an item and
  // each head's Q in place; the accumulate warpgroup reads Q (and K for dQ)
  // only after this head's "pds" commit, which follows the rotation.
  TileRows at = rotateGroupedItem(b, loc, spec, c, kSlot, vSlot);

  Type f32 = b.getF32Type();
  int64_t bs = spec.tileRows();
  auto square32 = AccType::get(ctx, {bs, bs}, f32);
  auto square16 = AccType::get(ctx, {bs, bs}, spec.elementType);
  auto outType = AccType::get(ctx, {bs, spec.headDim}, f32);
  auto rowsType = RowsType::get(ctx, bs, f32);
  forEachGroupHead(b, loc, spec, kvHead, 0, [&](Value head) {
    c.head = head;
    auto qdoSlot = GetOp::create(b, loc, qdo);
    Value q = qdoSlot.getBuffers()[0], dout = qdoSlot.getBuffers()[1];
    rotateGroupedQuery(b, loc, spec, at, q);
    // K and V are at the same address for the whole group: pinned, their
    // product descriptors are recomputed next to each product instead of
    // being hoisted out of the group loop and held across it.
    Value k = PinOp::create(b, loc, kSlot);
    Value v = PinOp::create(b, loc, vSlot);
    Value s =
        MmaOp::create(b, loc, square32, q, k, false, /*transpose_b=*/true);
    auto softmax = SoftmaxOp::create(b, loc, square32, rowsType, Type(), s,
                                     c.rows, /*valid_rows=*/c.rows, c.scale,
                                     /*normalize=*/true, spec.causal,
                                     /*block=*/IntegerAttr());
    maskToBlocks(softmax, spec);
    Value p = softmax.getProbs();
    // The slot is taken as late as possible: the accumulate warpgroup gives
    // it back after the head before last's dK.
    auto out = AcquireOp::create(b, loc, pds);
    WriteOp::create(b, loc, p, out.getBuffers()[0]);
    Value dp = MmaOp::create(b, loc, square32, dout, v, false, true);
    Value ds = scoreGradient(b, loc, spec, c, rowsType, square16, p, dp, c.row,
                             c.rows);
    ReleaseOp::create(b, loc, qdoSlot.getSlot());
    WriteOp::create(b, loc, ds, out.getBuffers()[1]);
    CommitOp::create(b, loc, out.getSlot(), c.row, c.rows, head);
    if (plan.dqInAccumulate)
      return;
    Value dq = MmaOp::create(b, loc, outType, ds, k, false, false);
    storeTile(b, loc, c,
              unrotateGrouped(b, loc, spec, at, dq, spec.hasRotary()),
              spec.stores[2], Value());
  });
  ReleaseOp::create(b, loc, c.slot);
}

/// The accumulate warpgroup of the pipelined grouped-query backward: it
/// takes the item's "kv" slot only for the item's record (it reads neither
/// K nor V, so it gives the slot back at once), then per query head the
/// head's "qdo" slot and the scores warpgroup's "pds" slot, and accumulates
///   dV += P^T dO, dK += dS^T Q  (wgmma scale-d; the first head starts them)
/// giving both slots back after dK; after the group it stores dV and dK
/// once, to the k/v head, from its registers (64 + 64 a thread at D = 128,
/// live across the group). With plan.dqInAccumulate (`pipelined-dq`) it
/// also makes dQ = dS K from the "pds" slot's dS and stores it (through a
/// staging buffer) before giving that slot back, holding "kv" through the
/// group for K: 3 x 64 accumulator registers at D = 128.
void buildGroupedAccumulateConsumer(OpBuilder &b, Location loc,
                                    const KernelSpec &spec,
                                    const KernelPlan &plan,
                                    const KernelValues &values, Value kv,
                                    Value qdo, Value pds) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard g(b);
  // Without dQ, two stores an item: from the registers, without a staging
  // buffer.
  KernelPlan accumulatePlan = plan;
  accumulatePlan.registers.compute = plan.accumulateRegisters;
  if (!plan.dqInAccumulate) {
    accumulatePlan.stageOutput = false;
    accumulatePlan.bulkStore = false;
  }
  ConsumerContext c =
      beginConsumer(b, loc, spec, values, accumulatePlan,
                    /*needsPScratch=*/false,
                    /*needsDsScratch=*/false, spec.headDim, "accumulate");
  Value kvHead, kSlot;
  std::tie(kvHead, kSlot, std::ignore) =
      consumeGroupedItem(b, loc, spec, kv, c);
  // With rotary embeddings it turns dV and dK (and dQ) back at the item's
  // position, read from the slot before it goes back; the scores warpgroup
  // rotates.
  TileRows at{c.row, c.rows, Value()};
  if (spec.hasRotary())
    at.position = tilePosition(b, loc, spec, c.slot);
  // It reads K only for dQ (pipelined-dq).
  if (!plan.dqInAccumulate)
    ReleaseOp::create(b, loc, c.slot);

  auto outType =
      AccType::get(ctx, {spec.tileRows(), spec.headDim}, b.getF32Type());
  auto queryHead = [&](Value head, Value dvIn, Value dkIn) {
    auto qdoSlot = GetOp::create(b, loc, qdo);
    Value q = qdoSlot.getBuffers()[0], dout = qdoSlot.getBuffers()[1];
    auto in = GetOp::create(b, loc, pds);
    Value p = in.getBuffers()[0], ds = in.getBuffers()[1];
    Value dv = MmaOp::create(b, loc, outType, p, dout, /*transpose_a=*/true,
                             false, dvIn);
    Value dk = MmaOp::create(b, loc, outType, ds, q, true, false, dkIn);
    ReleaseOp::create(b, loc, qdoSlot.getSlot());
    if (plan.dqInAccumulate) {
      // dQ = dS K from the slot's dS; K pinned (the same address for the
      // whole group) so that its descriptors are not held across the loop.
      Value k = PinOp::create(b, loc, kSlot);
      Value dq = MmaOp::create(b, loc, outType, ds, k, false, false);
      ReleaseOp::create(b, loc, in.getSlot());
      c.head = head;
      storeTile(b, loc, c,
                unrotateGrouped(b, loc, spec, at, dq, spec.hasRotary()),
                spec.stores[2], Value());
    } else {
      ReleaseOp::create(b, loc, in.getSlot());
    }
    return std::make_pair(dv, dk);
  };
  // At G = 2 the loop over the other heads has one trip; with a constant
  // count LLVM unrolled it next to the first head and ptxas spilled the
  // straight-line pair 28 bytes at head dim 128 under pipelined-dq (the
  // reason `auto` keeps G = 2 serial; not timed since). Its count hidden
  // (opaqueGroupEnd), nothing spills. Only there: the rotary kernels (whose
  // roles `auto` picks at G = 2 too) and other groups keep the constant, and
  // with it their PTX.
  bool hideTripCount = spec.group == 2 && !spec.hasRotary();
  auto [dvAcc, dkAcc] =
      accumulateOverGroup(b, loc, spec, kvHead, queryHead, hideTripCount);
  if (plan.dqInAccumulate)
    ReleaseOp::create(b, loc, c.slot);
  c.head = kvHead;
  storeTile(b, loc, c, unrotateGrouped(b, loc, spec, at, dvAcc, spec.rotateV),
            spec.stores[0], Value());
  storeTile(b, loc, c,
            unrotateGrouped(b, loc, spec, at, dkAcc, spec.hasRotary()),
            spec.stores[1], Value());
}

/// Hopper grouped-query backward (group > 1; docs/pipeline.md,
/// "Grouped-query attention"): dK and dV summed over the group in the
/// consumers' registers, inside one CTA, in a fixed order (deterministic, no
/// atomics, no second pass). The work item is a block and a k/v head: the
/// producer loads K and V once into the ring "kv" and Q, dO of each query
/// head of the group into the ring "qdo" (buildGroupedLoadPartition).
/// `plan.columnParts` consumer partitions each take every slot of both
/// rings and own one column part of dV, dK and dQ
/// (buildGroupedColumnConsumer). With plan.pipelinedRoles
/// (`group-roles=pipelined` or `pipelined-dq`) two warpgroups of different
/// roles take every slot of both rings instead: the scores warpgroup hands
/// each query head's P and dS through the ring "pds" (plan.pdsStages slots)
/// to the accumulate warpgroup, which sums dV and dK over the group, so that
/// one head's dV and dK products overlap the next head's S, softmax, dP, dS
/// and dQ. With rotary embeddings the partition that computes S (the one
/// column part, or the scores warpgroup) rotates K (and V) in place once an
/// item and each head's Q as it arrives (rotateGroupedItem,
/// rotateGroupedQuery); dQ is turned back per head, dK (and dV) once after
/// the group (docs/rotary.md, "Grouped-query backward").
void buildHopperGroupedBackward(OpBuilder &b, Location loc,
                                const KernelSpec &spec,
                                const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = groupedValues(
      b, loc, spec, beginKernel(b, loc, Chip::sm_90a, spec, plan));
  BufferType tile = tileBuffer(spec, spec.headDim, loadedChunkCols(spec));
  auto pair = ChannelType::get(ctx, {tile, tile}, MemorySpace::smem);
  Value kv = createChannel(b, loc, pair, "kv", plan.numStages);
  Value qdo = createChannel(b, loc, pair, "qdo", plan.groupStages);
  if (plan.pipelinedRoles) {
    BufferType square = queryBuffer(spec, spec.tileRows());
    Value pds = createChannel(
        b, loc, ChannelType::get(ctx, {square, square}, MemorySpace::smem),
        "pds", plan.pdsStages);
    buildGroupedLoadPartition(b, loc, spec, values, kv, qdo, plan);
    buildGroupedScoresConsumer(b, loc, spec, plan, values, kv, qdo, pds);
    buildGroupedAccumulateConsumer(b, loc, spec, plan, values, kv, qdo, pds);
    return;
  }
  buildGroupedLoadPartition(b, loc, spec, values, kv, qdo, plan);
  if (plan.groupPasses > 1) {
    buildGroupedPassConsumer(b, loc, spec, plan, values, kv, qdo);
    return;
  }
  for (int64_t part = 0; part < plan.columnParts; ++part)
    buildGroupedColumnConsumer(b, loc, spec, plan, values, kv, qdo, part);
}

/// The backward of a block larger than the 64-row MMA tile (block size 128,
/// docs/block-sizes.md): the work item is the whole block, its slot holds
/// q and dO in 64-row halves and k, v whole.
///   per query half i:  S_i = q_i k^T (64 x 128); P_i = softmax(S_i),
///     normalized (the whole row is in the tile: exact, no LSE);
///     dP_i = dO_i v^T; dS_i = scale P_i (dP_i - rowsum(P_i dP_i));
///     dQ_i = dS_i k (dS_i from registers, K = 128), stored at once;
///     P_i and dS_i to shared memory ([64, 128] each).
///   per key half j:    dV_j = sum_i P_i[:, 64 j:]^T dO_i and
///     dK_j = sum_i dS_i[:, 64 j:]^T q_i: column chunk j of each half's
///     scratch read MN-major, the second half's product accumulating onto
///     the first's (one chain: deterministic, no atomics).
/// With `causal` the second half's mask rows start at the block's row 64;
/// with dlse each half reads its rows' term; with rotary embeddings each
/// 64-row gradient is turned back at its own half's rows and positions.
/// Registers at D = 128: P 64 + dP 64 at the peak (as the forward's S and O),
/// then dS 32 + dQ 64, then one 64-register output at a time.
void buildLargeBlockBackwardBody(OpBuilder &b, Location loc,
                                 const KernelSpec &spec, ConsumerContext &c) {
  MLIRContext *ctx = b.getContext();
  int64_t halves = spec.numQueryTiles();
  assert(halves == 2 && "the scratch holds two query halves");
  ArrayRef<Value> tiles = c.tiles;
  ArrayRef<Value> q = tiles.take_front(halves);
  Value k = tiles[halves], v = tiles[halves + 1];
  ArrayRef<Value> dout = tiles.slice(halves + 2, halves);
  Value pScratch[] = {c.pScratch, c.pScratchHigh};
  Value dsScratch[] = {c.dsScratch, c.dsScratchHigh};
  auto f32 = b.getF32Type();
  int64_t m = spec.queryTileRows(), n = spec.tileRows();
  auto wide32 = AccType::get(ctx, {m, n}, f32);
  auto wide16 = AccType::get(ctx, {m, n}, spec.elementType);
  auto outType = AccType::get(ctx, {m, spec.headDim}, f32);
  auto rowsType = RowsType::get(ctx, m, f32);
  // Every buffer is pinned at its use (warpspec.pin): at one ring slot all
  // of them sit at fixed addresses, and the ~100 descriptors and store
  // addresses derived from them would be hoisted out of the tile loop.
  auto pin = [&](Value buffer) { return pinned(b, loc, buffer); };
  auto store = [&](Value tile, Value dest, Value row, Value rows) {
    StoreOp::create(b, loc, tile, dest, row, c.head, rows, Value(),
                    c.oStaging ? pin(c.oStaging) : Value(),
                    c.bulkStore ? b.getUnitAttr() : nullptr);
  };
  // With rotary embeddings q and k (and v) were rotated in the slot, so the
  // products give gradients with respect to the rotated tensors: each 64-row
  // gradient is turned back at its half's rows and positions (query half i
  // for dQ_i, key half j for dK_j and dV_j), reading the tables there.
  auto unrotate = [&](Value grad, bool rotated, int64_t half, Value row,
                      Value rows) {
    if (!rotated)
      return grad;
    TileRows at{row, rows, c.position};
    if (half > 0)
      at.position = arith::AddIOp::create(
          b, loc, c.position,
          arith::ConstantIntOp::create(b, loc, half * m, 32));
    return unrotateGradient(b, loc, spec, grad, at, Value());
  };
  for (int64_t i = 0; i < halves; ++i) {
    auto [row, rows] = blockHalf(b, loc, c.row, c.rows, i, m);
    Value s = MmaOp::create(b, loc, wide32, pin(q[i]), pin(k), false,
                            /*transpose_b=*/true);
    // Every valid key of the block is a column; query rows past the block's
    // valid rows are zeroed, so they add nothing to dV and dK.
    auto softmax = SoftmaxOp::create(b, loc, wide32, rowsType, Type(), s,
                                     c.rows, /*valid_rows=*/rows, c.scale,
                                     /*normalize=*/true, spec.causal,
                                     /*block=*/IntegerAttr());
    setCausalRowOffset(b, softmax, spec, i);
    Value p = softmax.getProbs();
    WriteOp::create(b, loc, p, pin(pScratch[i]));
    Value dp = MmaOp::create(b, loc, wide32, pin(dout[i]), pin(v), false, true);
    Value dlseRow = spec.dlse ? rowsReadAt(b, loc, c.row, row, rows) : Value();
    Value ds =
        scoreGradient(b, loc, spec, c, rowsType, wide16, p, dp, dlseRow, rows);
    WriteOp::create(b, loc, ds, pin(dsScratch[i]));
    Value dq = MmaOp::create(b, loc, outType, ds, pin(k), false, false);
    store(unrotate(dq, spec.hasRotary(), i, row, rows), spec.stores[2], row,
          rows);
  }
  // Key half j: its rows of dV and dK, each a sum over the query halves.
  auto keyHalfGradient = [&](ArrayRef<Value> scratch, ArrayRef<Value> operand,
                             int64_t j) {
    Value acc;
    for (int64_t i = 0; i < halves; ++i) {
      Value chunk =
          ColumnChunkOp::create(b, loc, queryBuffer(spec, m), pin(scratch[i]),
                                b.getI64IntegerAttr(j));
      acc = MmaOp::create(b, loc, outType, chunk, pin(operand[i]),
                          /*transpose_a=*/true, /*transpose_b=*/false, acc);
    }
    return acc;
  };
  for (int64_t j = 0; j < halves; ++j) {
    auto [row, rows] = blockHalf(b, loc, c.row, c.rows, j, m);
    Value dv = keyHalfGradient(pScratch, dout, j);
    store(unrotate(dv, spec.rotateV, j, row, rows), spec.stores[0], row, rows);
    Value dk = keyHalfGradient(dsScratch, q, j);
    // The slot is held until the last product has read it.
    if (j + 1 == halves)
      ReleaseOp::create(b, loc, c.slot);
    store(unrotate(dk, spec.hasRotary(), j, row, rows), spec.stores[1], row,
          rows);
  }
}

/// The load slot of the block-size-128 backward split in two rings of
/// `depth` slots (`large-block-rings=2`, docs/block-sizes.md): "qk", q's
/// two 64-row halves and k (what a block's S needs first, and dK last),
/// and "vdo", v and dO's halves (dP first, dV last); the same tiles in the
/// same order as createLoadRing's one ring (loadedTiles), so that
/// buildRingsLoadPartition fills them in turn.
SmallVector<Value, 2> createLargeBlockRings(OpBuilder &b, Location loc,
                                            const KernelSpec &spec,
                                            int64_t depth) {
  MLIRContext *ctx = b.getContext();
  SmallVector<Type> tiles;
  for (const LoadedTile &loaded : loadedTiles(spec))
    tiles.push_back(loaded.type);
  size_t qk = spec.numQueryTiles() + 1;
  auto ringOf = [&](ArrayRef<Type> types, StringRef name) {
    return createChannel(
        b, loc, ChannelType::get(ctx, types, MemorySpace::smem), name, depth);
  };
  return {ringOf(ArrayRef<Type>(tiles).take_front(qk), "qk"),
          ringOf(ArrayRef<Type>(tiles).drop_front(qk), "vdo")};
}

/// One of the two consumer partitions of the block-size-128 backward with
/// `large-block-consumers=2` (buildHopperLargeBlockHalves): consumer `half`
/// takes every slot of the load ring and
///   for query half `half`: S, P, dP, dS as buildLargeBlockBackwardBody; P
///     and dS written into its slot of `pds[half]` and committed; dQ = dS k
///     (dS from registers), stored;
///   for key half `half`: dV = sum_i P_i[:, 64 half:]^T dO_i and dK = sum_i
///     dS_i[:, 64 half:]^T q_i, P_1-half and dS_1-half read from the other
///     consumer's slot of `pds[1 - half]` (warpspec.get waits for its
///     commit); both slots go back after dK's product, the last read.
/// With `vdo` (`large-block-rings=2`) `ring` holds q's halves and k and
/// `vdo` v and dO's halves (taken before dP), and dK is made before dV:
/// the `ring` slot goes back after dK's product (the last read of q and k),
/// `vdo`'s and the other's P and dS after dV's (the last of v, dO and P).
/// The other consumer's P and dS are released after their last read, so this
/// consumer's next acquire of `pds[half]` (the next block's P) waits until
/// the other is done with this block's: the one-slot rings order the
/// scratch's reuse, and the commit's async-proxy fence and warpgroup barrier
/// make the writes visible to the other's wgmma.
void buildLargeBlockHalfConsumer(OpBuilder &b, Location loc,
                                 const KernelSpec &spec, const KernelPlan &plan,
                                 const KernelValues &values, Value ring,
                                 Value vdo, ArrayRef<Value> pds, int64_t half) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard g(b);
  int64_t halves = spec.numQueryTiles();
  std::string name = half == 0 ? "compute" : "compute" + std::to_string(half);
  ConsumerContext c =
      beginConsumer(b, loc, spec, values, plan,
                    /*needsPScratch=*/false,
                    /*needsDsScratch=*/false, spec.outputChunkCols(), name);
  auto consume = ConsumeOp::create(b, loc, ring);
  Type i32 = b.getI32Type();
  SmallVector<Type> argTypes = {SlotType::get(ctx), i32, i32, i32};
  llvm::append_range(argTypes,
                     cast<ChannelType>(ring.getType()).getBufferTypes());
  b.setInsertionPointToStart(&createBody(consume, argTypes, loc));
  c.slot = consume.getSlot();
  c.row = consume.getRow();
  c.rows = consume.getRows();
  c.head = consume.getHead();
  llvm::append_range(c.tiles, consume.getBufferArgs());
  ArrayRef<Value> tiles = c.tiles;
  ArrayRef<Value> q = tiles.take_front(halves);
  Value k = tiles[halves], v;
  SmallVector<Value, 2> dout;
  if (!vdo) {
    v = tiles[halves + 1];
    llvm::append_range(dout, tiles.slice(halves + 2, halves));
  }

  auto f32 = b.getF32Type();
  int64_t m = spec.queryTileRows(), n = spec.tileRows();
  auto wide32 = AccType::get(ctx, {m, n}, f32);
  auto wide16 = AccType::get(ctx, {m, n}, spec.elementType);
  auto outType = AccType::get(ctx, {m, spec.headDim}, f32);
  auto rowsType = RowsType::get(ctx, m, f32);
  // Pinned at each use, as in buildLargeBlockBackwardBody: one-slot rings
  // and scratch buffers sit at fixed addresses.
  auto pin = [&](Value buffer) { return pinned(b, loc, buffer); };
  auto store = [&](Value tile, Value dest, Value row, Value rows) {
    StoreOp::create(b, loc, tile, dest, row, c.head, rows, Value(),
                    c.oStaging ? pin(c.oStaging) : Value(),
                    c.bulkStore ? b.getUnitAttr() : nullptr);
  };

  // Query half `half`.
  auto [row, rows] = blockHalf(b, loc, c.row, c.rows, half, m);
  Value s = MmaOp::create(b, loc, wide32, pin(q[half]), pin(k), false,
                          /*transpose_b=*/true);
  auto softmax = SoftmaxOp::create(b, loc, wide32, rowsType, Type(), s, c.rows,
                                   /*valid_rows=*/rows, c.scale,
                                   /*normalize=*/true, spec.causal,
                                   /*block=*/IntegerAttr());
  setCausalRowOffset(b, softmax, spec, half);
  Value p = softmax.getProbs();
  // Acquired only now: the wait for the other consumer to be done with the
  // previous block's P and dS overlaps this block's S.
  auto mine = AcquireOp::create(b, loc, pds[half]);
  WriteOp::create(b, loc, p, pin(mine.getBuffers()[0]));
  // With two rings v and dO are waited for only now: their copies may land
  // during S and the softmax.
  GetOp vdoSlot;
  if (vdo) {
    vdoSlot = GetOp::create(b, loc, vdo);
    v = vdoSlot.getBuffers()[0];
    llvm::append_range(dout, vdoSlot.getBuffers().drop_front());
  }
  Value dp = MmaOp::create(b, loc, wide32, pin(dout[half]), pin(v), false,
                           /*transpose_b=*/true);
  Value dlseRow = spec.dlse ? rowsReadAt(b, loc, c.row, row, rows) : Value();
  Value ds =
      scoreGradient(b, loc, spec, c, rowsType, wide16, p, dp, dlseRow, rows);
  WriteOp::create(b, loc, ds, pin(mine.getBuffers()[1]));
  CommitOp::create(b, loc, mine.getSlot(), c.row, c.rows, c.head);
  Value dq = MmaOp::create(b, loc, outType, ds, pin(k), false, false);
  store(dq, spec.stores[2], row, rows);

  // Key half `half`: both query halves' P and dS, this consumer's own and
  // the other's.
  auto theirs = GetOp::create(b, loc, pds[1 - half]);
  Value pOf[2], dsOf[2];
  pOf[half] = mine.getBuffers()[0];
  dsOf[half] = mine.getBuffers()[1];
  pOf[1 - half] = theirs.getBuffers()[0];
  dsOf[1 - half] = theirs.getBuffers()[1];
  auto keyHalfGradient = [&](ArrayRef<Value> scratch, ArrayRef<Value> operand) {
    Value acc;
    for (int64_t i = 0; i < halves; ++i) {
      Value chunk =
          ColumnChunkOp::create(b, loc, queryBuffer(spec, m), pin(scratch[i]),
                                b.getI64IntegerAttr(half));
      acc = MmaOp::create(b, loc, outType, chunk, pin(operand[i]),
                          /*transpose_a=*/true, /*transpose_b=*/false, acc);
    }
    return acc;
  };
  auto [keyRow, keyRows] = blockHalf(b, loc, c.row, c.rows, half, m);
  if (vdo) {
    // q and k go back first, so that the next block's, which its S needs
    // first, load during this block's dV.
    Value dk = keyHalfGradient(dsOf, q);
    ReleaseOp::create(b, loc, c.slot);
    store(dk, spec.stores[1], keyRow, keyRows);
    Value dv = keyHalfGradient(pOf, dout);
    // dV's product is the last read of the other's P and of v and dO.
    ReleaseOp::create(b, loc, theirs.getSlot());
    ReleaseOp::create(b, loc, vdoSlot.getSlot());
    store(dv, spec.stores[0], keyRow, keyRows);
    return;
  }
  Value dv = keyHalfGradient(pOf, dout);
  store(dv, spec.stores[0], keyRow, keyRows);
  Value dk = keyHalfGradient(dsOf, q);
  // dK's product is the last read of the other's P and dS and of the slot.
  ReleaseOp::create(b, loc, theirs.getSlot());
  ReleaseOp::create(b, loc, c.slot);
  store(dk, spec.stores[1], keyRow, keyRows);
}

/// The sm_90a backward at block size 128 with one consumer warpgroup per
/// query half (`large-block-consumers=2`, docs/block-sizes.md "Two
/// consumers"): the producer fills the load ring as for one consumer; the
/// rings "pds0" and "pds1" (one slot of P and dS, [64, 128] each) carry
/// each consumer's half to the other (buildLargeBlockHalfConsumer). With
/// plan.largeBlockRings = 2 the load ring is two, "qk" and "vdo"
/// (createLargeBlockRings).
void buildHopperLargeBlockHalves(OpBuilder &b, Location loc,
                                 const KernelSpec &spec,
                                 const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = beginKernel(b, loc, Chip::sm_90a, spec, plan);
  SmallVector<Value, 2> rings;
  if (plan.largeBlockRings == 2)
    rings = createLargeBlockRings(b, loc, spec, plan.numStages);
  else
    rings.push_back(createLoadRing(b, loc, spec, plan.numStages));
  Value ring = rings.front();
  Value vdo = rings.size() > 1 ? rings[1] : Value();
  BufferType square = queryBuffer(spec, spec.tileRows());
  auto pdsType = ChannelType::get(ctx, {square, square}, MemorySpace::smem);
  SmallVector<Value, 2> pds;
  for (int64_t half = 0; half < spec.numQueryTiles(); ++half)
    pds.push_back(createChannel(b, loc, pdsType, "pds" + std::to_string(half),
                                /*depth=*/1));
  buildRingsLoadPartition(b, loc, spec, values, rings, plan);
  for (int64_t half = 0; half < spec.numQueryTiles(); ++half)
    buildLargeBlockHalfConsumer(b, loc, spec, plan, values, ring, vdo, pds,
                                half);
}

/// A query half's tile types in the grouped block-128 backward's scores
/// warpgroup (buildGroupedLargeBlockScoresConsumer,
/// buildGroupedChunkScoresConsumer): S and dP (f32) and P and dS (the
/// element type), 64 x 128; a pass's dQ chunk, 64 x `cols` f32; the
/// softmax's row statistics.
struct QueryHalfTypes {
  AccType wide32, wide16, dq;
  RowsType rows;
};

QueryHalfTypes queryHalfTypes(MLIRContext *ctx, const KernelSpec &spec,
                              int64_t cols) {
  auto f32 = Float32Type::get(ctx);
  int64_t m = spec.queryTileRows(), n = spec.tileRows();
  return {AccType::get(ctx, {m, n}, f32),
          AccType::get(ctx, {m, n}, spec.elementType),
          AccType::get(ctx, {m, cols}, f32), RowsType::get(ctx, m, f32)};
}

/// Opens the grouped block-128 backward's scores warpgroup (beginConsumer),
/// which stores dQ `cols` columns at a time; its staging buffer is as wide,
/// or half as wide for half-split pair-complete chunks (pairHalfChunks),
/// which are stored as two pieces (32 columns, or 16 at head dim 96: a
/// 16-column staging tile is 32-byte swizzled).
ConsumerContext beginGroupedScoresConsumer(OpBuilder &b, Location loc,
                                           const KernelSpec &spec,
                                           const KernelValues &values,
                                           const KernelPlan &plan,
                                           int64_t cols) {
  return beginConsumer(b, loc, spec, values, plan, /*needsPScratch=*/false,
                       /*needsDsScratch=*/false,
                       pairHalfChunks(spec) ? cols / 2 : cols, "scores");
}

/// The scores warpgroup of the sm_90a grouped-query backward at block size
/// 128 (buildHopperGroupedLargeBlock): it takes the item's "kv" slot, then per
/// query head its "qdo" slot, and for each query half i in turn
///   S_i = q_i K^T (64 x 128), P_i = softmax(S_i) -> the "pds" slot,
///   dP_i = dO_i V^T, dS_i -> the "pds" slot, dQ_i = dS_i K (dS_i from
///   registers), stored to the query head;
/// commits the head's P and dS of both halves to the accumulate warpgroups
/// and gives "qdo" back (dP_1 was its last read), "kv" after the group. No
/// accumulator lives across the group: the peak is the plain block-128
/// backward's (P 64 + dP 64).
/// With rotary embeddings (docs/rotary.md, "Grouped-query backward") it is
/// the one warpgroup that rotates: K (and V) in place in the "kv" slot once
/// an item (rotateGroupedItem), each head's Q halves in place in the "qdo"
/// slot before S_0 (rotateGroupedQuery), and it turns dQ_i back at query
/// half i's rows and position. The accumulate warpgroups read Q only after
/// the head's "pds" commit, which follows the rotation (its async-proxy
/// fence and barrier, then the mbarrier release they acquire); they read
/// neither K nor V.
void buildGroupedLargeBlockScoresConsumer(OpBuilder &b, Location loc,
                                          const KernelSpec &spec,
                                          const KernelPlan &plan,
                                          const KernelValues &values, Value kv,
                                          Value qdo, Value pds) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard g(b);
  int64_t halves = spec.numQueryTiles();
  int64_t cols = spec.headDim / plan.groupPasses;
  // Half-split chunks (pairHalfChunks: head dims 96 and 128) are stored as
  // two pieces of half the pass's columns.
  bool pieces = pairHalfChunks(spec);
  ConsumerContext c =
      beginGroupedScoresConsumer(b, loc, spec, values, plan, cols);
  auto [kvHead, kSlot, vSlot] = consumeGroupedItem(b, loc, spec, kv, c);
  TileRows at = rotateGroupedItem(b, loc, spec, c, kSlot, vSlot);
  int64_t m = spec.queryTileRows();
  QueryHalfTypes types = queryHalfTypes(ctx, spec, cols);
  auto pin = [&](Value buffer) { return pinned(b, loc, buffer); };
  // With rotary embeddings every head's rotations are at the item's rows
  // and position, pinned in the loop over the heads (pinnedRows): hoisted
  // out of it, the table addresses spilled the scores warpgroup 4-152
  // bytes. The halves' rows are then recomputed in the loop too, from the
  // pinned block row, instead of being held across it (4 bytes spilled at
  // head dim 32 with causal and dlse).
  SmallVector<std::pair<Value, Value>> halfRows;
  if (!spec.hasRotary())
    for (int64_t i = 0; i < halves; ++i)
      halfRows.push_back(blockHalf(b, loc, c.row, c.rows, i, m));
  // Above head dim 64 the group is taken once a pass (KernelPlan::
  // groupPasses): S and dP at full depth every pass, dQ's chunk of the pass.
  // With rotary embeddings K (and V) stay rotated in the "kv" slot through
  // the passes; Q is loaded again every pass and rotated each time, whole
  // (S reads its full depth), and each pass's dQ chunk is turned back on
  // its own: interleaved, or half-split at head dim 128 in pair-complete
  // chunks (pairHalfChunks; at 96 of two 16-column pieces, chunk_cols = 16).
  for (int64_t pass = 0; pass < plan.groupPasses; ++pass) {
    int64_t col = pass * cols;
    forEachGroupHead(b, loc, spec, kvHead, 0, [&](Value head) {
      c.head = head;
      auto qdoSlot = GetOp::create(b, loc, qdo);
      ValueRange t = qdoSlot.getBuffers();
      if (spec.hasRotary())
        rotateGroupedQuery(b, loc, spec, pinnedRows(b, loc, at),
                           t.take_front(halves));
      AcquireOp out;
      for (int64_t i = 0; i < halves; ++i) {
        auto [row, rows] = spec.hasRotary()
                               ? blockHalf(b, loc, PinOp::create(b, loc, c.row),
                                           PinOp::create(b, loc, c.rows), i, m)
                               : halfRows[i];
        Value s =
            MmaOp::create(b, loc, types.wide32, pin(t[i]), pin(kSlot), false,
                          /*transpose_b=*/true);
        auto softmax =
            SoftmaxOp::create(b, loc, types.wide32, types.rows, Type(), s,
                              c.rows, /*valid_rows=*/rows, c.scale,
                              /*normalize=*/true, spec.causal,
                              /*block=*/IntegerAttr());
        setCausalRowOffset(b, softmax, spec, i);
        Value p = softmax.getProbs();
        // Taken as late as possible: the accumulate warpgroups give the slot
        // back after the previous head's dK.
        if (i == 0)
          out = AcquireOp::create(b, loc, pds);
        WriteOp::create(b, loc, p, pin(out.getBuffers()[2 * i]));
        Value dp = MmaOp::create(b, loc, types.wide32, pin(t[halves + i]),
                                 pin(vSlot), false, /*transpose_b=*/true);
        if (i + 1 == halves)
          ReleaseOp::create(b, loc, qdoSlot.getSlot());
        Value dlseRow =
            spec.dlse ? rowsReadAt(b, loc, c.row, row, rows) : Value();
        Value ds = scoreGradient(b, loc, spec, c, types.rows, types.wide16, p,
                                 dp, dlseRow, rows);
        WriteOp::create(b, loc, ds, pin(out.getBuffers()[2 * i + 1]));
        if (i + 1 == halves)
          CommitOp::create(b, loc, out.getSlot(), c.row, c.rows, head);
        Value dq = MmaOp::create(b, loc, types.dq, ds,
                                 columnsOf(b, loc, pin(kSlot), col, cols),
                                 false, false);
        if (spec.hasRotary())
          dq = unrotateGroupedChunk(b, loc, spec, plan, pass,
                                    pinnedRotaryHalf(b, loc, spec, at, i), dq,
                                    /*rotated=*/true);
        // KernelPlan::pinnedAddresses (half-split): the copy-out's row steps
        // computed where each piece is stored.
        Value staging = c.oStaging ? pin(c.oStaging) : Value();
        if (pieces) {
          for (StoreOp op :
               storePairHalves(b, loc, spec, dq, spec.stores[2], row, head,
                               rows, staging, c.bulkStore, pass))
            op.setPinnedSteps(plan.pinnedAddresses && staging);
          continue;
        }
        auto store = StoreOp::create(b, loc, dq, spec.stores[2], row, head,
                                     rows, Value(), staging,
                                     c.bulkStore ? b.getUnitAttr() : nullptr);
        if (plan.groupPasses > 1)
          store.setColOffsetAttr(b.getI64IntegerAttr(col));
      }
    });
  }
  ReleaseOp::create(b, loc, c.slot);
}

/// The scores warpgroup of the sm_90a grouped-query backward at block size
/// 128 above head dim 128 (KernelPlan::groupChunkStages,
/// buildHopperGroupedLargeBlock): it takes the item's record from "kv" (given
/// back at once), then per pass c and query head, for each query half i in
/// turn
///   S_i = sum_j q_i,j K_j^T over the "chunks" slots of 64-column chunks j,
///   P_i = softmax(S_i) -> the "pds" slot,
///   dP_i = sum_j dO_i,j V_j^T over the next slots, dS_i -> the "pds" slot;
/// commits the head's P and dS of both halves to the accumulate warpgroups,
/// then takes the head's "qdo" slot (chunk c of Q, dO and K) and makes
///   dQ_i,c = dS_i K_c (dS_i read back from the "pds" slot)
/// for both halves, stored at column 64 c. S and dP are made every pass (D /
/// 64 times an item), as in the passes at head dim 128; the peak is the
/// block-128 backward's (P 64 + dP 64). With rotary embeddings (sm_90a,
/// docs/rotary.md) it rotates every chunk it reads in place as it lands
/// (each is streamed un-rotated) and turns each dQ chunk back on its own.
void buildGroupedChunkScoresConsumer(OpBuilder &b, Location loc,
                                     const KernelSpec &spec,
                                     const KernelPlan &plan,
                                     const KernelValues &values, Value kv,
                                     Value chunks, Value qdo, Value pds) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard g(b);
  int64_t halves = spec.numQueryTiles(), cols = 64;
  // Half-split chunks (pairHalfChunks) are stored as two 32-column pieces.
  bool pieces = pairHalfChunks(spec);
  ConsumerContext c =
      beginGroupedScoresConsumer(b, loc, spec, values, plan, cols);
  Value kvHead = consumeGroupedRecord(b, loc, kv, c);
  // With rotary embeddings the item's position is read from the record
  // before it goes back.
  TileRows at;
  if (spec.hasRotary()) {
    c.position = tilePosition(b, loc, spec, c.slot);
    at = {c.row, c.rows, c.position};
  }
  // The record is all the slot carries: back at once, so that the producer
  // announces the next item while this one runs.
  ReleaseOp::create(b, loc, c.slot);
  int64_t m = spec.queryTileRows();
  QueryHalfTypes types = queryHalfTypes(ctx, spec, cols);
  // Every slot of every ring is pinned at its use: "chunks" takes 4 D / 64
  // slots a query head, a whole number of its laps, so each chunk lands in
  // the same slot every head, at addresses LLVM would hoist with their
  // descriptors out of the loops (as buildColumnPassConsumer's fixedSlots).
  auto pin = [&](Value buffer) { return pinned(b, loc, buffer); };
  SmallVector<std::pair<Value, Value>> halfRows;
  for (int64_t i = 0; i < halves; ++i)
    halfRows.push_back(blockHalf(b, loc, c.row, c.rows, i, m));
  // Rotary embeddings (docs/rotary.md, "Grouped-query backward"): every
  // chunk comes from global memory un-rotated, each time it is streamed,
  // and is rotated in place once it lands, before any product reads it:
  // chunk j holds pairs 32 j to 32 j + 31 whole (interleaved, or half-split
  // in pairHalfChunks' order), a part of the rows at pair_offset 32 j. A
  // query half's chunk at its rows and position (+ 64 i), K's (V's with
  // rotate_v) at the item's. Each part is turned in a loop of passes that
  // places the thread from its index pinned in the loop, with the buffer,
  // rows and position pinned at the rotation (as the column-pass
  // backward's consumers: held from the partition's entry, those addresses
  // are what ptxas spilled).
  // Half-split with rotate_v (splitsGroupedChunkItems) each pass turns a
  // thread's 8 pairs in two runs of 4 (warpspec.rotate's split_items): V's
  // chunk is turned inside the dP loop next to P and dP, where whole items
  // spilled this warpgroup 4-44 bytes at its 176 registers.
  bool splitItems = splitsGroupedChunkItems(spec);
  auto rotatePart = [&](Value tile, const TileRows &rows, int64_t j) {
    rotateColumnPart(b, loc, spec, pin(tile), rows, j * cols / 2,
                     /*passLoop=*/true)
        .setSplitItems(splitItems);
  };
  // The operands of S (query half `i`'s chunk and K's) or of dP (V's with
  // rotate_v; dO is not rotated) in slot `t`, chunk `j`.
  auto rotateChunk = [&](ValueRange t, bool scores, int64_t i, int64_t j) {
    if (scores) {
      rotatePart(t[0], pinnedRotaryHalf(b, loc, spec, at, i), j);
      rotatePart(t[1], pinnedRows(b, loc, at), j);
    } else if (spec.rotateV) {
      rotatePart(t[1], pinnedRows(b, loc, at), j);
    }
  };
  // A product over the head dim, accumulated chunk by chunk from "chunks"
  // (a query half's chunk, then K's or V's), each slot given back after it.
  // The first chunk starts the accumulator; the others are one scf.for
  // whose iter_arg it is. With rotary embeddings each chunk's tiles are
  // rotated first (`rotate`: at pair 0 for the first chunk, through one
  // scf.if a chunk index for the others).
  auto chunkProduct = [&](Value acc, function_ref<void(ValueRange)> rotate) {
    auto slot = GetOp::create(b, loc, chunks);
    ValueRange t = slot.getBuffers();
    if (rotate)
      rotate(t);
    acc = MmaOp::create(b, loc, types.wide32, pin(t[0]), pin(t[1]), false,
                        /*transpose_b=*/true, acc);
    ReleaseOp::create(b, loc, slot.getSlot());
    return acc;
  };
  auto overChunks = [&](bool scores, int64_t i) -> Value {
    bool rotated = spec.hasRotary() && (scores || spec.rotateV);
    using Rotate = function_ref<void(ValueRange)>;
    auto rotateFirst = [&](ValueRange t) { rotateChunk(t, scores, i, 0); };
    Value first =
        chunkProduct(Value(), rotated ? Rotate(rotateFirst) : Rotate());
    auto i32 = [&](int64_t value) {
      return arith::ConstantIntOp::create(b, loc, value, 32);
    };
    // A count LLVM cannot fold (D / 64 + min(kvHead, 0), as
    // opaqueGroupEnd): a constant one is unrolled.
    Value end =
        arith::AddIOp::create(b, loc, i32(spec.headDim / cols),
                              arith::MinSIOp::create(b, loc, kvHead, i32(0)));
    auto loop =
        scf::ForOp::create(b, loc, i32(1), end, i32(1), ValueRange{first});
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    // The rotation's pair offset (32 j) is an attribute: one scf.if a
    // chunk on the loop's index (the kernel's scalar code is i32, which
    // scf.index_switch does not take), so that the loop stays rolled.
    auto rotateInLoop = [&](ValueRange t) {
      for (int64_t j = 1; j < spec.headDim / cols; ++j) {
        Value isChunk = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              loop.getInductionVar(), i32(j));
        auto ifChunk = scf::IfOp::create(b, loc, isChunk);
        OpBuilder::InsertionGuard inIf(b);
        b.setInsertionPointToStart(ifChunk.thenBlock());
        rotateChunk(t, scores, i, j);
      }
    };
    scf::YieldOp::create(
        b, loc,
        chunkProduct(loop.getRegionIterArgs()[0],
                     rotated ? Rotate(rotateInLoop) : Rotate()));
    return loop.getResult(0);
  };
  for (int64_t pass = 0; pass < plan.groupPasses; ++pass) {
    int64_t col = pass * cols;
    forEachGroupHead(b, loc, spec, kvHead, 0, [&](Value head) {
      c.head = head;
      AcquireOp out;
      for (int64_t i = 0; i < halves; ++i) {
        auto [row, rows] = halfRows[i];
        Value s = overChunks(/*scores=*/true, i);
        auto softmax =
            SoftmaxOp::create(b, loc, types.wide32, types.rows, Type(), s,
                              c.rows, /*valid_rows=*/rows, c.scale,
                              /*normalize=*/true, spec.causal,
                              /*block=*/IntegerAttr());
        setCausalRowOffset(b, softmax, spec, i);
        Value p = softmax.getProbs();
        // Taken as late as possible: the accumulate warpgroups give the slot
        // back after the previous head's dK.
        if (i == 0)
          out = AcquireOp::create(b, loc, pds);
        WriteOp::create(b, loc, p, pin(out.getBuffers()[2 * i]));
        Value dp = overChunks(/*scores=*/false, i);
        Value dlseRow =
            spec.dlse ? rowsReadAt(b, loc, c.row, row, rows) : Value();
        // KernelPlan::pinnedAddresses: dlse's row addresses derived where
        // they are read (held across the chunk loops, ptxas spilled one,
        // 4 bytes, with rotate_v at head dim 192, causal + dlse).
        Value ds = scoreGradient(b, loc, spec, c, types.rows, types.wide16, p,
                                 dp, dlseRow, rows, plan.pinnedAddresses);
        WriteOp::create(b, loc, ds, pin(out.getBuffers()[2 * i + 1]));
      }
      // With rotary embeddings the pass's chunks of Q's halves and of K in
      // the "qdo" slot are rotated before the head's "pds" commit: the
      // accumulate warpgroups read Q (for dK) only after they acquire it
      // (the rotation ends with an async-proxy fence and a barrier, the
      // commit is the mbarrier release they wait for), as at head dim 128.
      GetOp qdoSlot;
      if (spec.hasRotary()) {
        qdoSlot = GetOp::create(b, loc, qdo);
        ValueRange t = qdoSlot.getBuffers();
        for (int64_t i = 0; i < halves; ++i)
          rotatePart(t[i], pinnedRotaryHalf(b, loc, spec, at, i), pass);
        rotatePart(t[2 * halves], pinnedRows(b, loc, at), pass);
      }
      CommitOp::create(b, loc, out.getSlot(), c.row, c.rows, head);
      // The pass's chunk of K comes with the head's Q and dO chunks, after
      // every "chunks" slot of the head (the producer's order).
      if (!qdoSlot)
        qdoSlot = GetOp::create(b, loc, qdo);
      Value kChunk = qdoSlot.getBuffers()[2 * halves];
      for (int64_t i = 0; i < halves; ++i) {
        auto [row, rows] = halfRows[i];
        // dS_i read back from shared memory (K-major): the next half's S
        // and dP needed the registers.
        Value dq =
            MmaOp::create(b, loc, types.dq, pin(out.getBuffers()[2 * i + 1]),
                          pin(kChunk), false, false);
        if (i + 1 == halves)
          ReleaseOp::create(b, loc, qdoSlot.getSlot());
        // The pass's chunk of dQ, with respect to rotated q: turned back
        // on its own at query half i's rows (it holds pairs 32 pass on).
        if (spec.hasRotary())
          dq = unrotatePassChunk(b, loc, spec, dq, pass,
                                 pinnedRotaryHalf(b, loc, spec, at, i),
                                 /*rotated=*/true);
        // KernelPlan::pinnedAddresses: the copy-out's row steps computed
        // where each chunk is stored, not held from the partition's entry.
        Value staging = c.oStaging ? pin(c.oStaging) : Value();
        if (pieces) {
          for (StoreOp op :
               storePairHalves(b, loc, spec, dq, spec.stores[2], row, head,
                               rows, staging, c.bulkStore, pass))
            op.setPinnedSteps(plan.pinnedAddresses && staging);
          continue;
        }
        auto store = StoreOp::create(b, loc, dq, spec.stores[2], row, head,
                                     rows, Value(), staging,
                                     c.bulkStore ? b.getUnitAttr() : nullptr);
        store.setColOffsetAttr(b.getI64IntegerAttr(col));
        store.setPinnedSteps(plan.pinnedAddresses && staging);
      }
    });
  }
}

/// Accumulate warpgroup `half` of the sm_90a grouped-query backward at block
/// size 128 (buildHopperGroupedLargeBlock): it takes the item's "kv" slot for
/// its record only (given back at once), then per query head the head's "qdo"
/// and "pds" slots, and sums key half `half`'s
///   dV += sum_i P_i[:, 64 half:]^T dO_i, dK += sum_i dS_i[:, 64 half:]^T q_i
/// over the group in its registers (D / 2 + D / 2 a thread; the first head
/// starts them), giving both slots back after dK; after the group it stores
/// them once, to the k/v head, from its registers. With rotary embeddings it
/// turns dK (and dV with rotate_v) back first, at key half `half`'s rows and
/// position (the item's, read from the "kv" slot before it goes back, + 64
/// half): the rotation is linear and the same for every query head, so the
/// group's f32 sum is turned back once.
void buildGroupedLargeBlockAccumulateConsumer(
    OpBuilder &b, Location loc, const KernelSpec &spec, const KernelPlan &plan,
    const KernelValues &values, Value kv, Value qdo, Value pds, int64_t half) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard g(b);
  int64_t halves = spec.numQueryTiles();
  KernelPlan accumulatePlan = plan;
  accumulatePlan.registers.compute = half == 1 && plan.secondAccumulateRegisters
                                         ? plan.secondAccumulateRegisters
                                         : plan.accumulateRegisters;
  accumulatePlan.stageOutput = false;
  accumulatePlan.bulkStore = false;
  std::string name =
      half == 0 ? "accumulate" : "accumulate" + std::to_string(half);
  ConsumerContext c =
      beginConsumer(b, loc, spec, values, accumulatePlan,
                    /*needsPScratch=*/false,
                    /*needsDsScratch=*/false, spec.headDim, name);
  // An accumulate warpgroup's own budget may be the launch's (128: warpgroup
  // 1 of the interleaved rotary passes at head dim 128, warpgroup 0 of the
  // half-split ones): it still gets its setmaxnreg, without which ptxas
  // spilled it (KernelPlan::secondAccumulateRegisters).
  if (plan.secondAccumulateRegisters &&
      accumulatePlan.registers.compute ==
          warpspec::TargetLimits::launchRegisterCap(4 * 128, 1))
    cast<PartitionOp>(b.getInsertionBlock()->getParentOp())
        .setExplicitRegs(true);
  // Above head dim 128 "kv" carries the record alone and each "qdo" slot
  // the pass's 64-column chunks (KernelPlan::groupChunkStages).
  bool chunked = plan.groupChunkStages > 0;
  Value kvHead;
  if (chunked)
    kvHead = consumeGroupedRecord(b, loc, kv, c);
  else
    std::tie(kvHead, std::ignore, std::ignore) =
        consumeGroupedItem(b, loc, spec, kv, c);
  Value position =
      spec.hasRotary() ? tilePosition(b, loc, spec, c.slot) : Value();
  ReleaseOp::create(b, loc, c.slot);
  int64_t m = spec.queryTileRows();
  int64_t cols = spec.headDim / plan.groupPasses;
  auto outType = AccType::get(ctx, {m, cols}, b.getF32Type());
  auto pin = [&](Value buffer) { return pinned(b, loc, buffer); };
  // Pass j (one above head dim 64: KernelPlan::groupPasses) sums columns
  // [j C, j C + C) of dV and dK over the group and stores them.
  for (int64_t pass = 0; pass < plan.groupPasses; ++pass) {
    int64_t col = pass * cols;
    auto queryHead = [&](Value head, Value dvIn, Value dkIn) {
      auto qdoSlot = GetOp::create(b, loc, qdo);
      ValueRange t = qdoSlot.getBuffers();
      auto in = GetOp::create(b, loc, pds);
      ValueRange pdsBuffers = in.getBuffers();
      auto keyHalfGradient = [&](int64_t which, int64_t operandBase,
                                 Value acc) {
        for (int64_t i = 0; i < halves; ++i) {
          Value chunk = ColumnChunkOp::create(b, loc, queryBuffer(spec, m),
                                              pin(pdsBuffers[2 * i + which]),
                                              b.getI64IntegerAttr(half));
          Value operand = columnsOf(b, loc, pin(t[operandBase + i]),
                                    chunked ? 0 : col, cols);
          acc = MmaOp::create(b, loc, outType, chunk, operand,
                              /*transpose_a=*/true, /*transpose_b=*/false, acc);
        }
        return acc;
      };
      Value dv = keyHalfGradient(/*P*/ 0, /*dO*/ halves, dvIn);
      Value dk = keyHalfGradient(/*dS*/ 1, /*q*/ 0, dkIn);
      ReleaseOp::create(b, loc, in.getSlot());
      ReleaseOp::create(b, loc, qdoSlot.getSlot());
      return std::make_pair(dv, dk);
    };
    auto [dvAcc, dkAcc] = accumulateOverGroup(b, loc, spec, kvHead, queryHead);
    auto [row, rows] = blockHalf(b, loc, c.row, c.rows, half, m);
    TileRows at;
    if (spec.hasRotary())
      at = rotaryHalf(b, loc, spec, position, row, rows, half);
    for (auto [acc, dest, rotated] :
         {std::tuple{dvAcc, spec.stores[0], spec.rotateV},
          {dkAcc, spec.stores[1], spec.hasRotary()}}) {
      // Chunked, with rotate_v at head dim 256: the tables indexed in 32
      // bits (warpspec.rotate_tile's narrow_index). In 64 bits ptxas held
      // each table's base plus the thread's column in registers of their own
      // across the group and the passes and spilled them (half-split: 24
      // bytes in each accumulate warpgroup without a positions tensor;
      // interleaved at G = 2, the tables' parameters: 36 bytes until session
      // 28). At 192 (three passes, not four) the half-split ones spill
      // nothing without, and 16 bytes with. From G = 4 (the group a loop
      // here, not unrolled) the tables' row count held from the entry
      // spilled too (4 bytes each): computed at the use (pinned_table_rows);
      // at G = 2 that spilled 12 bytes each in the half-split kernels, and
      // without it the interleaved f16 causal + dlse one spilled 8.
      bool narrow = chunked && spec.rotateV && spec.headDim > 192;
      Value grad = narrowTableIndex(
          unrotateGroupedChunk(b, loc, spec, plan, pass, at, acc, rotated),
          narrow, spec.group >= 4 || spec.rotary == RotaryMode::interleaved);
      // Above head dim 128 with KernelPlan::pinnedAddresses the stores
      // derive the thread's rows where they store (pinned_steps): hoisted,
      // the four row addresses of dV and dK (a 64-bit pair each) were held
      // across the group and ptxas spilled them and the rotation's
      // parameters (interleaved pos_rv, 20-24 bytes).
      bool pinSteps = chunked && plan.pinnedAddresses;
      // Their column offsets added in 64 bits (wide_offsets): in 32 bits
      // ptxas spilled the item loop's counter of the interleaved pos_rv
      // kernels at 256 with G >= 4 (16 bytes); the half-split rotate_v
      // ones at 192 spill 48 bytes with them, and keep 32, but from
      // rotary_theta the other way round: in 32 bits the G = 2 ones spilled
      // 44 bytes (bf16 and f16, plain and causal + dlse), in 64 none of the
      // 32 at G = 2, 3, 4, 8 (session 28).
      bool wideOffsets = pinSteps && !(splitsGroupedChunkItems(spec) &&
                                       spec.headDim <= 192 && !spec.theta);
      // Half-split chunks (pairHalfChunks): two pieces of half the pass's
      // columns (32, or 16 at head dim 96).
      if (pairHalfChunks(spec)) {
        for (StoreOp op :
             storePairHalves(b, loc, spec, grad, dest, row, kvHead, rows,
                             Value(), /*bulk=*/false, pass)) {
          op.setPinnedSteps(pinSteps);
          op.setWideOffsets(wideOffsets);
        }
        continue;
      }
      auto store = StoreOp::create(b, loc, grad, dest, row, kvHead, rows,
                                   Value(), Value(), nullptr);
      if (plan.groupPasses > 1)
        store.setColOffsetAttr(b.getI64IntegerAttr(col));
      store.setPinnedSteps(pinSteps);
      store.setWideOffsets(wideOffsets);
    }
  }
}

/// The sm_90a grouped-query backward at block size 128 above head dim 128
/// (KernelPlan::groupChunkStages; docs/head-dims.md): "kv" carries the
/// item's record alone, "chunks" the 64-column chunks of a query half and K
/// (then dO's and V's) that S and dP are accumulated over, "qdo" a pass's
/// chunk of Q's and dO's halves and of K; the scores warpgroup
/// (buildGroupedChunkScoresConsumer) and the two accumulate warpgroups
/// (buildGroupedLargeBlockAccumulateConsumer, one chunk of dV and dK per
/// pass) as at head dim 128.
void buildHopperGroupedLargeBlockChunks(OpBuilder &b, Location loc,
                                        const KernelSpec &spec,
                                        const KernelPlan &plan,
                                        const KernelValues &values) {
  MLIRContext *ctx = b.getContext();
  int64_t cols = 64;
  BufferType tile = tileBuffer(spec, cols, loadedChunkCols(spec));
  BufferType half = queryBuffer(spec, cols, loadedChunkCols(spec));
  Value kv = createChannel(
      b, loc, ChannelType::get(ctx, ArrayRef<Type>(), MemorySpace::smem), "kv",
      plan.numStages);
  Value chunks = createChannel(
      b, loc, ChannelType::get(ctx, {half, tile}, MemorySpace::smem), "chunks",
      plan.groupChunkStages);
  Value qdo = createChannel(
      b, loc,
      ChannelType::get(ctx, {half, half, half, half, tile}, MemorySpace::smem),
      "qdo", plan.groupStages);
  BufferType square = queryBuffer(spec, spec.tileRows());
  Value pds =
      createChannel(b, loc,
                    ChannelType::get(ctx, {square, square, square, square},
                                     MemorySpace::smem),
                    "pds", plan.pdsStages);
  buildGroupedChunkLoadPartition(b, loc, spec, values, kv, chunks, qdo, plan);
  buildGroupedChunkScoresConsumer(b, loc, spec, plan, values, kv, chunks, qdo,
                                  pds);
  for (int64_t i = 0; i < spec.numQueryTiles(); ++i)
    buildGroupedLargeBlockAccumulateConsumer(b, loc, spec, plan, values, kv,
                                             qdo, pds, i);
}

/// The sm_90a grouped-query backward at block size 128 (docs/pipeline.md,
/// "Grouped-query attention"): the work item is a block and a k/v head, as
/// at block size 64 (buildHopperGroupedBackward), with the block-128
/// backward's halves: the producer loads K and V (128 rows) once into "kv"
/// and each query head's Q and dO in 64-row halves into "qdo"; a scores
/// warpgroup makes each head's P, dS (both query halves, into one slot of
/// the ring "pds") and dQ (buildGroupedLargeBlockScoresConsumer), and two
/// accumulate warpgroups, one per key half, sum dV and dK over the group in
/// their registers (buildGroupedLargeBlockAccumulateConsumer): the group's
/// accumulators (D x 128 keys, twice) are split between two warpgroups that
/// hold nothing else, so that the scores warpgroup keeps the plain block-128
/// backward's peak (P 64 + dP 64). Two consumers of one query and key half
/// each (as `large-block-consumers=2`), each holding its key half's dK and
/// dV next to P and dP, spilled 8 bytes at head dim 32 with dlse and 208 at
/// 64 (ptxas, CUDA 13.0). With rotary embeddings the scores warpgroup
/// rotates and turns dQ back, the accumulate warpgroups turn dK and dV back
/// (docs/rotary.md, "Grouped-query backward").
void buildHopperGroupedLargeBlock(OpBuilder &b, Location loc,
                                  const KernelSpec &spec,
                                  const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  assert(plan.pipelinedRoles && "a scores and two accumulate warpgroups");
  KernelValues values = groupedValues(
      b, loc, spec, beginKernel(b, loc, Chip::sm_90a, spec, plan));
  if (plan.groupChunkStages)
    return buildHopperGroupedLargeBlockChunks(b, loc, spec, plan, values);
  BufferType tile = tileBuffer(spec, spec.headDim, loadedChunkCols(spec));
  BufferType half = queryBuffer(spec, spec.headDim, loadedChunkCols(spec));
  Value kv = createChannel(
      b, loc, ChannelType::get(ctx, {tile, tile}, MemorySpace::smem), "kv",
      plan.numStages);
  Value qdo = createChannel(
      b, loc,
      ChannelType::get(ctx, {half, half, half, half}, MemorySpace::smem), "qdo",
      plan.groupStages);
  // One "pds" slot holds both halves' P and dS: P_0, dS_0, P_1, dS_1.
  BufferType square = queryBuffer(spec, spec.tileRows());
  Value pds =
      createChannel(b, loc,
                    ChannelType::get(ctx, {square, square, square, square},
                                     MemorySpace::smem),
                    "pds", plan.pdsStages);
  buildGroupedLoadPartition(b, loc, spec, values, kv, qdo, plan);
  buildGroupedLargeBlockScoresConsumer(b, loc, spec, plan, values, kv, qdo,
                                       pds);
  for (int64_t i = 0; i < spec.numQueryTiles(); ++i)
    buildGroupedLargeBlockAccumulateConsumer(b, loc, spec, plan, values, kv,
                                             qdo, pds, i);
}

/// Consumer `half` of the sm_90a grouped-query backward at block size 128
/// with `group-roles=query-halves` (buildHopperGroupedLargeBlockHalves): it
/// takes the item's "kv" slot, then, each pass j (KernelPlan::groupPasses;
/// chunk C = D / passes), per query head the head's "qdo" slot and
///   for query half `half`: S = q_half K^T (64 x 128), P -> its slot of
///     "pds<half>", dP = dO_half V^T, dS -> the slot, committed to the other
///     consumer; dQ's chunk j = dS K_j (dS from registers), stored;
///   for key half `half`: dV_j += sum_i P_i[:, 64 half:]^T dO_i,j and dK_j
///     += sum_i dS_i[:, 64 half:]^T q_i,j, its own P and dS from its slot,
///     the other's from "pds<1 - half>" (warpspec.get waits for its
///     commit), over the group in registers (`scf.for` iter_args, the first
///     head starting them); the other's slot and "qdo" go back after dK
///     (the last read of q and of the other's dS);
/// after the group it stores dV_j and dK_j once, at key half `half`'s rows.
/// As buildLargeBlockHalfConsumer, each commits its own P and dS before it
/// waits for the other's and gives the other's back before its next
/// acquire of its own: no cycle, and its own slot is rewritten only once
/// the other has read it. The accumulators (C / 2 + C / 2 a thread) live
/// next to S and dP (64 + 64).
void buildGroupedLargeBlockHalfConsumer(OpBuilder &b, Location loc,
                                        const KernelSpec &spec,
                                        const KernelPlan &plan,
                                        const KernelValues &values, Value kv,
                                        Value qdo, ArrayRef<Value> pds,
                                        int64_t half) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard g(b);
  int64_t halves = spec.numQueryTiles();
  int64_t cols = spec.headDim / plan.groupPasses;
  std::string name = half == 0 ? "compute" : "compute" + std::to_string(half);
  ConsumerContext c = beginConsumer(b, loc, spec, values, plan,
                                    /*needsPScratch=*/false,
                                    /*needsDsScratch=*/false, cols, name);
  auto [kvHead, kSlot, vSlot] = consumeGroupedItem(b, loc, spec, kv, c);
  auto f32 = b.getF32Type();
  int64_t m = spec.queryTileRows(), n = spec.tileRows();
  auto wide32 = AccType::get(ctx, {m, n}, f32);
  auto wide16 = AccType::get(ctx, {m, n}, spec.elementType);
  auto outType = AccType::get(ctx, {m, cols}, f32);
  auto rowsType = RowsType::get(ctx, m, f32);
  // Pinned at each use: the one-slot rings sit at fixed addresses, and
  // descriptors hoisted out of the group loop would be held across it.
  auto pin = [&](Value buffer) { return pinned(b, loc, buffer); };
  auto store = [&](Value tile, Value dest, Value row, Value head, Value rows,
                   int64_t col) {
    auto op = StoreOp::create(b, loc, tile, dest, row, head, rows, Value(),
                              c.oStaging ? pin(c.oStaging) : Value(),
                              c.bulkStore ? b.getUnitAttr() : nullptr);
    if (plan.groupPasses > 1)
      op.setColOffsetAttr(b.getI64IntegerAttr(col));
  };
  for (int64_t pass = 0; pass < plan.groupPasses; ++pass) {
    int64_t col = pass * cols;
    auto queryHead = [&](Value head, Value dvIn, Value dkIn) {
      c.head = head;
      // The item's rows pinned per head: the softmax's row and column masks
      // and the stores' addresses derived from them are the same for every
      // head, and LLVM hoisted them out of the group loop, where they were
      // held next to the accumulators (39 predicates, 20 64-bit addresses
      // live into the loop; ptxas spilled 248 bytes at head dim 64).
      Value blockRows =
          PinOp::create(b, loc, b.getI32Type(), c.rows, /*anchor=*/head);
      // Query half `half` and key half `half` are the same 64 rows.
      auto [row, rows] =
          blockHalf(b, loc, PinOp::create(b, loc, c.row), blockRows, half, m);
      auto qdoSlot = GetOp::create(b, loc, qdo);
      ValueRange t = qdoSlot.getBuffers();
      Value s = MmaOp::create(b, loc, wide32, pin(t[half]), pin(kSlot), false,
                              /*transpose_b=*/true);
      // P in 16 bits (32 registers a thread, not 64) while dP's product
      // runs: with the group's dV and dK next to it, f32 P and dP spilled
      // (ptxas, CUDA 13.0: 248 bytes at head dim 64 with 216 registers, 24
      // even at 256). dS then reads the P that dV's product reads.
      auto softmax = SoftmaxOp::create(b, loc, wide16, rowsType, Type(), s,
                                       blockRows, /*valid_rows=*/rows, c.scale,
                                       /*normalize=*/true, spec.causal,
                                       /*block=*/IntegerAttr());
      setCausalRowOffset(b, softmax, spec, half);
      // Its 64 column indices (a register each), the same for every head,
      // recomputed per head from the pinned rows rather than held.
      softmax.setPinColumns(true);
      Value p = softmax.getProbs();
      // Acquired only now: the wait for the other consumer to be done with
      // the previous head's P and dS overlaps this head's S.
      auto mine = AcquireOp::create(b, loc, pds[half]);
      WriteOp::create(b, loc, p, pin(mine.getBuffers()[0]));
      Value dp = MmaOp::create(b, loc, wide32, pin(t[halves + half]),
                               pin(vSlot), false, /*transpose_b=*/true);
      Value dlseRow =
          spec.dlse ? rowsReadAt(b, loc, c.row, row, rows) : Value();
      Value ds = scoreGradient(b, loc, spec, c, rowsType, wide16, p, dp,
                               dlseRow, rows);
      WriteOp::create(b, loc, ds, pin(mine.getBuffers()[1]));
      CommitOp::create(b, loc, mine.getSlot(), c.row, c.rows, head);
      Value dq =
          MmaOp::create(b, loc, outType, ds,
                        columnsOf(b, loc, pin(kSlot), col, cols), false, false);
      store(dq, spec.stores[2], row, head, rows, col);
      // Key half `half`: both query halves' P and dS, this consumer's own
      // and the other's.
      auto theirs = GetOp::create(b, loc, pds[1 - half]);
      Value pOf[2], dsOf[2];
      pOf[half] = mine.getBuffers()[0];
      dsOf[half] = mine.getBuffers()[1];
      pOf[1 - half] = theirs.getBuffers()[0];
      dsOf[1 - half] = theirs.getBuffers()[1];
      auto keyHalfGradient = [&](ArrayRef<Value> scratch, int64_t operandBase,
                                 Value acc) {
        for (int64_t i = 0; i < halves; ++i) {
          Value chunk =
              ColumnChunkOp::create(b, loc, queryBuffer(spec, m),
                                    pin(scratch[i]), b.getI64IntegerAttr(half));
          Value operand = columnsOf(b, loc, pin(t[operandBase + i]), col, cols);
          acc = MmaOp::create(b, loc, outType, chunk, operand,
                              /*transpose_a=*/true, /*transpose_b=*/false, acc);
        }
        return acc;
      };
      Value dv = keyHalfGradient(pOf, /*dO*/ halves, dvIn);
      Value dk = keyHalfGradient(dsOf, /*q*/ 0, dkIn);
      // dK's product is the last read of the other's P and dS and of the
      // head's Q and dO.
      ReleaseOp::create(b, loc, theirs.getSlot());
      ReleaseOp::create(b, loc, qdoSlot.getSlot());
      return std::make_pair(dv, dk);
    };
    auto [dvAcc, dkAcc] = accumulateOverGroup(b, loc, spec, kvHead, queryHead);
    auto [row, rows] = blockHalf(b, loc, c.row, c.rows, half, m);
    store(dvAcc, spec.stores[0], row, kvHead, rows, col);
    store(dkAcc, spec.stores[1], row, kvHead, rows, col);
  }
  ReleaseOp::create(b, loc, c.slot);
}

/// The sm_90a grouped-query backward at block size 128 with
/// `group-roles=query-halves` (docs/pipeline.md, "Grouped-query
/// attention"): the producer loads K and V (128 rows) once an item into
/// "kv" and each query head's Q and dO in 64-row halves into "qdo" (once a
/// pass), as for buildHopperGroupedLargeBlock; two consumers, one per query
/// half, each make their half's S, P, dP, dS and dQ of every head and one key
/// half's dV and dK over the group (buildGroupedLargeBlockHalfConsumer),
/// handing each other P and dS through the one-slot rings "pds0" and "pds1"
/// ([64, 128] P and dS each), as `large-block-consumers=2` does for one
/// query head. The scores chain that bounds buildHopperGroupedLargeBlock
/// (one warpgroup making both halves in series) runs on two warpgroups.
void buildHopperGroupedLargeBlockHalves(OpBuilder &b, Location loc,
                                        const KernelSpec &spec,
                                        const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = groupedValues(
      b, loc, spec, beginKernel(b, loc, Chip::sm_90a, spec, plan));
  BufferType tile = tileBuffer(spec, spec.headDim, loadedChunkCols(spec));
  BufferType half = queryBuffer(spec, spec.headDim, loadedChunkCols(spec));
  Value kv = createChannel(
      b, loc, ChannelType::get(ctx, {tile, tile}, MemorySpace::smem), "kv",
      plan.numStages);
  Value qdo = createChannel(
      b, loc,
      ChannelType::get(ctx, {half, half, half, half}, MemorySpace::smem), "qdo",
      plan.groupStages);
  BufferType square = queryBuffer(spec, spec.tileRows());
  auto pdsType = ChannelType::get(ctx, {square, square}, MemorySpace::smem);
  SmallVector<Value, 2> pds;
  for (int64_t i = 0; i < spec.numQueryTiles(); ++i)
    pds.push_back(createChannel(b, loc, pdsType, "pds" + std::to_string(i),
                                /*depth=*/1));
  buildGroupedLoadPartition(b, loc, spec, values, kv, qdo, plan);
  for (int64_t i = 0; i < spec.numQueryTiles(); ++i)
    buildGroupedLargeBlockHalfConsumer(b, loc, spec, plan, values, kv, qdo, pds,
                                       i);
}

/// One of the two consumer partitions of the sm_90a backward at block size
/// 128 above head dim 128 (KernelPlan::columnPasses,
/// buildHopperLargeBlockColumnPasses): consumer `half` takes every slot of
/// `blocks` (the block's record, given back at once) and of `chunks` (64
/// columns of q_0, q_1, k, v, dO_0, dO_1), and per block
///   first pass, chunk j: S += q_half,j k_j^T (64 x 128, accumulating over
///     the head dim), the chunk given back; P = softmax(S), into its slot of
///     `pds[half]`;
///   second pass, chunk j: dP += dO_half,j v_j^T; then dS, into the slot,
///     committed; the other half's P and dS from `pds[1 - half]`;
///   third pass, chunk j: dQ_j = dS k_j (dS from its slot), dV_j =
///     sum_i P_i[:, 64 half:]^T dO_i,j and dK_j = sum_i dS_i[:, 64 half:]^T
///     q_i,j (key half `half`), each stored at column 64 j as soon as made;
///     the other's P and dS go back after the last chunk's dK.
/// As buildLargeBlockHalfConsumer, each consumer commits its own P and dS
/// before it waits for the other's, and gives the other's back before its
/// next acquire of its own: no cycle.
void buildColumnPassConsumer(OpBuilder &b, Location loc, const KernelSpec &spec,
                             const KernelPlan &plan, const KernelValues &values,
                             Value blocks, Value chunks, ArrayRef<Value> pds,
                             ArrayRef<Value> rotated, int64_t half) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard g(b);
  int64_t halves = spec.numQueryTiles();
  std::string name = half == 0 ? "compute" : "compute" + std::to_string(half);
  // Half-split chunks (pairHalfChunks) are stored as two 32-column pieces,
  // each through a staging buffer of its width.
  bool pieces = pairHalfChunks(spec);
  KernelPlan consumerPlan = plan;
  if (half == 1 && plan.secondConsumerRegisters)
    consumerPlan.registers.compute = plan.secondConsumerRegisters;
  ConsumerContext c = beginConsumer(
      b, loc, spec, values, consumerPlan,
      /*needsPScratch=*/false,
      /*needsDsScratch=*/false,
      pieces ? spec.outputChunkCols() / 2 : spec.outputChunkCols(), name);
  auto consume = ConsumeOp::create(b, loc, blocks);
  Type i32 = b.getI32Type();
  b.setInsertionPointToStart(
      &createBody(consume, {SlotType::get(ctx), i32, i32, i32}, loc));
  c.slot = consume.getSlot();
  c.row = consume.getRow();
  c.rows = consume.getRows();
  c.head = consume.getHead();
  // The block's position (rotary embeddings) is read from the record before
  // it goes back.
  if (spec.hasRotary())
    c.position = tilePosition(b, loc, spec, c.slot);
  // The record is all the slot carries: back at once, so that the producer
  // announces the next block while this one runs.
  ReleaseOp::create(b, loc, c.slot);

  auto f32 = b.getF32Type();
  int64_t m = spec.queryTileRows(), n = spec.tileRows();
  int64_t cols = spec.outputChunkCols(), chunkCount = spec.numOutputChunks();
  auto wide32 = AccType::get(ctx, {m, n}, f32);
  auto wide16 = AccType::get(ctx, {m, n}, spec.elementType);
  auto chunkType = AccType::get(ctx, {m, cols}, f32);
  auto rowsType = RowsType::get(ctx, m, f32);
  // Pinned at each use: the scratch buffers sit at fixed addresses
  // (buildLargeBlockBackwardBody).
  auto pin = [&](Value buffer) { return pinned(b, loc, buffer); };
  auto store = [&](Value tile, Value dest, Value row, Value rows, int64_t col) {
    Value staging = c.oStaging ? pin(c.oStaging) : Value();
    if (pieces) {
      for (StoreOp op :
           storePairHalves(b, loc, spec, tile, dest, row, c.head, rows, staging,
                           c.bulkStore, col / spec.outputChunkCols()))
        op.setPinnedSteps(plan.pinnedAddresses && staging);
      return;
    }
    auto op = StoreOp::create(b, loc, tile, dest, row, c.head, rows, Value(),
                              staging, c.bulkStore ? b.getUnitAttr() : nullptr);
    op.setColOffsetAttr(b.getI64IntegerAttr(col));
    // KernelPlan::pinnedAddresses: the copy-out's row steps computed where
    // a partial tile stores, not held from the consumer's entry.
    op.setPinnedSteps(plan.pinnedAddresses && staging);
  };
  // A chunk slot's tiles, in loadedTiles order.
  auto qOf = [&](ValueRange t, int64_t i) { return t[i]; };
  auto kOf = [&](ValueRange t) { return t[halves]; };
  auto vOf = [&](ValueRange t) { return t[halves + 1]; };
  auto doOf = [&](ValueRange t, int64_t i) { return t[halves + 2 + i]; };

  auto [row, rows] = blockHalf(b, loc, c.row, c.rows, half, m);
  // With a whole number of ring rounds a block (three passes of
  // `chunkCount` slots: 12 at head dim 256) each chunk lands in the same
  // slot every block, at addresses LLVM would hoist out of the tile loop
  // with their descriptors (ptxas spilled 416 bytes at 256): pinned at
  // each use. At 192 (9 slots, two deep) they alternate, and pinning them
  // costs registers (12 bytes of spills).
  bool fixedSlots = 3 * chunkCount % plan.numStages == 0;
  auto pinFixed = [&](Value buffer) {
    return fixedSlots ? pin(buffer) : buffer;
  };
  // Rotary embeddings (a 64-column chunk holds pairs 32 j to 32 j + 31
  // whole: interleaved, or half-split in pairHalfChunks' order): query half
  // i's rows are the block's from
  // 64 i on, at position + 64 i; k's and v's are the block's. This
  // consumer's gradients (query half and key half `half`) are at `mineAt`.
  auto halfAt = [&](int64_t i) -> TileRows {
    if (i == 0)
      return {c.row, c.rows, c.position};
    auto [halfRow, halfRows] = blockHalf(b, loc, c.row, c.rows, i, m);
    Value offset = arith::ConstantIntOp::create(b, loc, i * m, 32);
    return {halfRow, halfRows,
            arith::AddIOp::create(b, loc, c.position, offset)};
  };
  TileRows mineAt;
  if (spec.hasRotary())
    mineAt = {row, rows, halfAt(half).position};
  // Chunk j of q's halves and k (passes 1 and 3; and v in pass 2 with
  // rotate_v) rotated in place before any product reads them: the producer
  // loaded them from global memory, un-rotated, for each pass.
  // With KernelPlan::producerRotates the producer warpgroup rotates them
  // and signals `rotated[0]` (no buffers) once a slot is: each consumer
  // waits for that signal (docs/head-dims.md, "The rotary backward at block
  // size 128 with the producer rotating (session 21)"). Otherwise both
  // consumers read the whole slot, so the work is split between them and
  // each waits for the other's before its products: consumer 0 turns k
  // (128 rows), consumer 1 the two query halves (64 each); in pass 2
  // consumer j % 2 turns v. Each signals through its own ring without
  // buffers, `rotated[half]`, and waits on the other's. Every part is
  // turned in a loop of passes that places the thread from its index pinned
  // in the loop (pass_loop; the query halves too): placed once, the
  // thread's row and table offsets were loop invariants LLVM held from the
  // consumer's entry, and ptxas spilled them (docs/head-dims.md, session
  // 20; the budgets in planSm90aLargeBlockColumnPasses).
  auto rotateChunk = [&](ValueRange t, int64_t pass, int64_t j) {
    if (!rotatesColumnPass(spec, pass))
      return;
    if (plan.producerRotates) {
      auto signal = GetOp::create(b, loc, rotated[0]);
      ReleaseOp::create(b, loc, signal.getSlot());
      return;
    }
    auto rotate = [&](Value tile, const TileRows &at) {
      rotateColumnPart(b, loc, spec, tile, at, j * cols / 2,
                       /*passLoop=*/true);
    };
    if (pass == 2) {
      if (j % 2 == half)
        rotate(vOf(t), halfAt(0));
    } else if (half == 0) {
      rotate(kOf(t), halfAt(0));
    } else {
      for (int64_t i = 0; i < halves; ++i)
        rotate(qOf(t, i), halfAt(i));
    }
    auto signal = AcquireOp::create(b, loc, rotated[half]);
    CommitOp::create(b, loc, signal.getSlot(), c.row, c.rows, c.head);
    auto other = GetOp::create(b, loc, rotated[1 - half]);
    ReleaseOp::create(b, loc, other.getSlot());
  };
  // A gradient chunk j with respect to a rotated input turned back (its
  // rotation group is the chunk alone: pairs 32 j on, interleaved or in
  // pairHalfChunks' order).
  auto unrotate = [&](Value grad, int64_t j, bool rotatedInput) -> Value {
    if (!rotatedInput)
      return grad;
    RotationGroup group{{j}, j * cols / 2};
    return unrotateChunks(b, loc, spec, {grad}, group, mineAt).front();
  };
  // A product over the head dim, accumulated chunk by chunk, each chunk's
  // slot given back after its product.
  auto overChunks = [&](int64_t pass,
                        function_ref<Value(ValueRange, Value)> product) {
    Value acc;
    for (int64_t j = 0; j < chunkCount; ++j) {
      auto slot = GetOp::create(b, loc, chunks);
      rotateChunk(slot.getBuffers(), pass, j);
      acc = product(slot.getBuffers(), acc);
      ReleaseOp::create(b, loc, slot.getSlot());
    }
    return acc;
  };
  // S first, its softmax, then dP: P 64 + dP 64 f32 registers at the peak
  // (S and dP accumulated together would add S's 64 through the softmax).
  Value s = overChunks(1, [&](ValueRange t, Value acc) -> Value {
    return MmaOp::create(b, loc, wide32, pinFixed(qOf(t, half)),
                         pinFixed(kOf(t)), false, /*transpose_b=*/true, acc);
  });
  auto softmax = SoftmaxOp::create(b, loc, wide32, rowsType, Type(), s, c.rows,
                                   /*valid_rows=*/rows, c.scale,
                                   /*normalize=*/true, spec.causal,
                                   /*block=*/IntegerAttr());
  setCausalRowOffset(b, softmax, spec, half);
  Value p = softmax.getProbs();
  // Acquired only now: the wait for the other consumer to be done with the
  // previous block's P and dS overlaps this block's S.
  auto mine = AcquireOp::create(b, loc, pds[half]);
  WriteOp::create(b, loc, p, pin(mine.getBuffers()[0]));
  // dlse is read before dP, away from the peak (P and dP): read next to
  // the gradient, its addresses spilled 8 bytes.
  Value dlse;
  if (spec.dlse)
    dlse =
        LoadRowsOp::create(b, loc, rowsType, spec.dlse,
                           rowsReadAt(b, loc, c.row, row, rows), c.head, rows);
  Value dp = overChunks(2, [&](ValueRange t, Value acc) -> Value {
    return MmaOp::create(b, loc, wide32, pinFixed(doOf(t, half)),
                         pinFixed(vOf(t)), false, /*transpose_b=*/true, acc);
  });
  Value ds = SoftmaxGradOp::create(b, loc, wide16, p, dp, c.scale, dlse);
  WriteOp::create(b, loc, ds, pin(mine.getBuffers()[1]));
  CommitOp::create(b, loc, mine.getSlot(), c.row, c.rows, c.head);

  auto theirs = GetOp::create(b, loc, pds[1 - half]);
  Value pOf[2], dsOf[2];
  pOf[half] = mine.getBuffers()[0];
  dsOf[half] = mine.getBuffers()[1];
  pOf[1 - half] = theirs.getBuffers()[0];
  dsOf[1 - half] = theirs.getBuffers()[1];
  // Key half `half` of a gradient: sum over the query halves i of column
  // chunk `half` of their P or dS (read MN-major) times their operand.
  auto keyHalfGradient = [&](ArrayRef<Value> scratch,
                             function_ref<Value(int64_t)> operand) {
    Value acc;
    for (int64_t i = 0; i < halves; ++i) {
      Value chunk =
          ColumnChunkOp::create(b, loc, queryBuffer(spec, m), pin(scratch[i]),
                                b.getI64IntegerAttr(half));
      acc = MmaOp::create(b, loc, chunkType, chunk, pin(operand(i)),
                          /*transpose_a=*/true, /*transpose_b=*/false, acc);
    }
    return acc;
  };
  for (int64_t j = 0; j < chunkCount; ++j) {
    auto slot = GetOp::create(b, loc, chunks);
    ValueRange t = slot.getBuffers();
    rotateChunk(t, 3, j);
    // dS read back from shared memory (K-major): held in registers through
    // the pass it would leave the consumer too few for the chunk products.
    Value dq = MmaOp::create(b, loc, chunkType, pin(dsOf[half]), pin(kOf(t)),
                             false, false);
    store(unrotate(dq, j, spec.hasRotary()), spec.stores[2], row, rows,
          j * cols);
    Value dv = keyHalfGradient(pOf, [&](int64_t i) { return doOf(t, i); });
    store(unrotate(dv, j, spec.rotateV), spec.stores[0], row, rows, j * cols);
    Value dk = keyHalfGradient(dsOf, [&](int64_t i) { return qOf(t, i); });
    // The last chunk's dK is the last read of the other's P and dS.
    if (j + 1 == chunkCount)
      ReleaseOp::create(b, loc, theirs.getSlot());
    ReleaseOp::create(b, loc, slot.getSlot());
    store(unrotate(dk, j, spec.hasRotary()), spec.stores[1], row, rows,
          j * cols);
  }
}

/// The sm_90a backward at block size 128 above head dim 128
/// (KernelPlan::columnPasses; docs/head-dims.md): a block's q, k, v and dO
/// (192 or 256 KiB) do not fit shared memory next to its P and dS, so the
/// producer streams them in 64-column chunks (slots of up to 64 KiB, two
/// deep): q and k for S, v and dO for dP, then q, k and dO again for the
/// gradients (the second read mostly from L2); one consumer per query half
/// (buildColumnPassConsumer), handing each other P and dS through "pds0"
/// and "pds1" as with large-block-consumers=2.
void buildHopperLargeBlockColumnPasses(OpBuilder &b, Location loc,
                                       const KernelSpec &spec,
                                       const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = beginKernel(b, loc, Chip::sm_90a, spec, plan);
  int64_t cols = spec.outputChunkCols();
  Value blocks = createChannel(
      b, loc, ChannelType::get(ctx, ArrayRef<Type>(), MemorySpace::smem),
      "blocks", /*depth=*/2);
  Value chunks = createChunkRing(b, loc, spec, plan.numStages);
  BufferType square = queryBuffer(spec, spec.tileRows());
  auto pdsType = ChannelType::get(ctx, {square, square}, MemorySpace::smem);
  SmallVector<Value, 2> pds;
  for (int64_t half = 0; half < spec.numQueryTiles(); ++half)
    pds.push_back(createChannel(b, loc, pdsType, "pds" + std::to_string(half),
                                /*depth=*/1));
  // With rotary embeddings the producer warpgroup rotates each chunk slot
  // in place and signals that it is through "rotated" (one signal slot per
  // chunk slot; KernelPlan::producerRotates, buildColumnPassLoadPartition),
  // or each consumer signals the other that its share of a chunk slot is
  // rotated (buildColumnPassConsumer).
  SmallVector<Value, 2> rotated;
  auto signals = ChannelType::get(ctx, ArrayRef<Type>(), MemorySpace::smem);
  if (plan.producerRotates)
    rotated.push_back(
        createChannel(b, loc, signals, "rotated", plan.numStages));
  else if (spec.hasRotary())
    for (int64_t half = 0; half < spec.numQueryTiles(); ++half)
      rotated.push_back(createChannel(
          b, loc, signals, "rotated" + std::to_string(half), /*depth=*/2));
  buildColumnPassLoadPartition(b, loc, spec, values, blocks, chunks, cols, plan,
                               plan.producerRotates ? rotated[0] : Value());
  for (int64_t half = 0; half < spec.numQueryTiles(); ++half)
    buildColumnPassConsumer(b, loc, spec, plan, values, blocks, chunks, pds,
                            rotated, half);
}

/// The chunks of the three gradients whose columns a part of a split slot
/// holds (buildHopperSplitBackward): for dQ = dS K, dV = P^T dO and
/// dK = dS^T Q in turn, each 64-column chunk of `part` (q, k, v, dO: columns
/// [firstCol, firstCol + width) of the head dim) is made and stored at its
/// column; `slot` goes back after the last product (its last read). The
/// stores take the staging buffers `staging` in turn, counting the tile's
/// chunks in `chunk`; with two, every chunk but the tile's first waits only
/// for the store before last (`pending_reads = 1`): the first's buffer may
/// be the previous tile's last one (9 chunks a tile at 192).
void storeSplitPartChunks(OpBuilder &b, Location loc, const KernelSpec &spec,
                          const ConsumerContext &c, ValueRange part,
                          int64_t firstCol, Value slot, ArrayRef<Value> staging,
                          int64_t &chunk) {
  MLIRContext *ctx = b.getContext();
  int64_t cols = spec.outputChunkCols();
  auto bType = cast<BufferType>(part[0].getType());
  int64_t chunks = bType.getShape()[1] / cols;
  auto chunkType = AccType::get(ctx, {spec.tileRows(), cols}, b.getF32Type());
  BufferType bChunkType = bType.withShape({bType.getShape()[0], cols});
  struct Product {
    Value a, b;
    bool transposeA;
    Value dest;
  };
  Product products[] = {{c.dsScratch, part[1], false, spec.stores[2]},
                        {c.pScratch, part[3], true, spec.stores[0]},
                        {c.dsScratch, part[0], true, spec.stores[1]}};
  for (const Product &product : products) {
    for (int64_t j = 0; j < chunks; ++j) {
      Value bChunk = SubviewOp::create(b, loc, bChunkType, product.b,
                                       b.getI64IntegerAttr(j * cols));
      // The staged A is viewed here too, so that its descriptors are not
      // computed once for the whole kernel and held (storeOutputInChunks).
      Value acc = MmaOp::create(b, loc, chunkType,
                                viewHere(b, loc, spec, product.a), bChunk,
                                product.transposeA, /*transpose_b=*/false);
      if (&product == &products[2] && j + 1 == chunks)
        ReleaseOp::create(b, loc, slot);
      Value buffer =
          staging.empty() ? Value() : staging[chunk % staging.size()];
      auto store = StoreOp::create(b, loc, acc, product.dest, c.row, c.head,
                                   c.rows, Value(), buffer,
                                   c.bulkStore ? b.getUnitAttr() : nullptr);
      store.setColOffsetAttr(b.getI64IntegerAttr(firstCol + j * cols));
      if (staging.size() > 1 && chunk > 0)
        store.setPendingReadsAttr(b.getI64IntegerAttr(1));
      ++chunk;
    }
  }
}

/// The sm_90a backward above head dim 128 with its load ring split by
/// columns of the head dim (`slot-parts=2`; docs/head-dims.md, "Half-depth
/// slots"): the tile's record and columns [0, L) of q, k, v, dO come in a
/// slot of "qkvdo" (two slots deep), columns [L, D) in a slot of
/// "qkvdo_hi" (KernelPlan::lowSlotCols, highStages). Per tile:
///   S = Q_lo K_lo^T (the high part may still arrive); S += Q_hi K_hi^T
///   P = softmax(S), staged; dP = dO_lo V_lo^T + dO_hi V_hi^T (wgmma
///   accumulating onto the first part's product); dS, staged
///   the high part's chunks of dQ, dV, dK, stored; "qkvdo_hi" released
///   the low part's chunks, stored; "qkvdo" released
/// so the next tile's high part loads during this tile's low-part products
/// and its low part during the whole tile. Registers as buildBackwardBody
/// at D > 128: S, then P and dP, then one 32-register chunk accumulator at a
/// time (no spills, with the producer at kSplitSlotProducerRegs:
/// docs/head-dims.md).
void buildHopperSplitBackward(OpBuilder &b, Location loc,
                              const KernelSpec &spec, const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = beginKernel(b, loc, Chip::sm_90a, spec, plan);
  int64_t lowCols = plan.lowSlotCols;
  auto slotOf = [&](int64_t cols) {
    SmallVector<Type> tiles(spec.loads.size(), tileBuffer(spec, cols));
    return ChannelType::get(ctx, tiles, MemorySpace::smem);
  };
  Value low = createChannel(b, loc, slotOf(lowCols), spec.loadRingName(),
                            plan.numStages);
  Value high = createChannel(b, loc, slotOf(spec.headDim - lowCols),
                             "qkvdo_hi", plan.highStages);
  buildSplitLoadPartition(b, loc, spec, values, low, high, lowCols, plan);

  OpBuilder::InsertionGuard g(b);
  ConsumerContext c = beginConsumer(b, loc, spec, values, plan,
                                    /*needsPScratch=*/true,
                                    /*needsDsScratch=*/true,
                                    spec.outputChunkCols());
  SmallVector<Value, 2> staging;
  if (c.oStaging)
    staging.push_back(c.oStaging);
  if (plan.stagingBuffers == 2)
    staging.push_back(
        ScratchOp::create(b, loc, c.oStaging.getType(), nullptr, nullptr));
  auto consume = ConsumeOp::create(b, loc, low);
  Type i32 = b.getI32Type();
  SmallVector<Type> argTypes = {SlotType::get(ctx), i32, i32, i32};
  argTypes.append(spec.loads.size(), tileBuffer(spec, lowCols));
  b.setInsertionPointToStart(&createBody(consume, argTypes, loc));
  c.slot = consume.getSlot();
  c.row = consume.getRow();
  c.rows = consume.getRows();
  c.head = consume.getHead();
  SmallVector<Value> lo(consume.getBufferArgs());

  auto f32 = b.getF32Type();
  int64_t bs = spec.tileRows();
  auto square32 = AccType::get(ctx, {bs, bs}, f32);
  auto square16 = AccType::get(ctx, {bs, bs}, spec.elementType);
  auto rowsType = RowsType::get(ctx, bs, f32);
  // q, k, v, dO in KernelSpec::loads order; each product's operands viewed
  // where it reads them (viewHere).
  auto view = [&](Value tile) { return viewHere(b, loc, spec, tile); };
  Value s = MmaOp::create(b, loc, square32, view(lo[0]), view(lo[1]), false,
                          /*transpose_b=*/true);
  auto highSlot = GetOp::create(b, loc, high);
  SmallVector<Value> hi(highSlot.getBuffers());
  s = MmaOp::create(b, loc, square32, view(hi[0]), view(hi[1]), false,
                    /*transpose_b=*/true, s);
  auto softmax = SoftmaxOp::create(b, loc, square32, rowsType, Type(), s,
                                   c.rows, /*valid_rows=*/c.rows, c.scale,
                                   /*normalize=*/true, spec.causal,
                                   /*block=*/IntegerAttr());
  maskToBlocks(b, softmax, spec, blockEnds(b, loc, spec, c.slot));
  Value p = softmax.getProbs();
  WriteOp::create(b, loc, p, c.pScratch);
  Value dp = MmaOp::create(b, loc, square32, view(lo[3]), view(lo[2]), false,
                           /*transpose_b=*/true);
  dp = MmaOp::create(b, loc, square32, view(hi[3]), view(hi[2]), false,
                     /*transpose_b=*/true, dp);
  Value ds =
      scoreGradient(b, loc, spec, c, rowsType, square16, p, dp, c.row, c.rows);
  WriteOp::create(b, loc, ds, c.dsScratch);
  int64_t chunk = 0;
  storeSplitPartChunks(b, loc, spec, c, hi, lowCols, highSlot.getSlot(),
                       staging, chunk);
  storeSplitPartChunks(b, loc, spec, c, lo, 0, c.slot, staging, chunk);
}

} // namespace

void blockattn::buildSm90aKernel(OpBuilder &b, Location loc,
                                 const KernelSpec &spec,
                                 const KernelPlan &plan) {
  bool backward = spec.backward;
  if (backward && spec.group > 1 && plan.groupedQueryHalves)
    return buildHopperGroupedLargeBlockHalves(b, loc, spec, plan);
  if (backward && spec.group > 1 && spec.numQueryTiles() > 1)
    return buildHopperGroupedLargeBlock(b, loc, spec, plan);
  if (backward && spec.group > 1)
    return buildHopperGroupedBackward(b, loc, spec, plan);
  if (plan.lowSlotCols > 0)
    return buildHopperSplitBackward(b, loc, spec, plan);
  if (plan.columnPasses)
    return buildHopperLargeBlockColumnPasses(b, loc, spec, plan);
  if (plan.largeBlockConsumers == 2)
    return buildHopperLargeBlockHalves(b, loc, spec, plan);
  bool pScratch = backward || plan.pFromSmem;
  buildHopperKernel(b, loc, spec, plan, pScratch,
                    /*needsDsScratch=*/backward,
                    [&](OpBuilder &b, ConsumerContext &c) {
                      if (backward && spec.numQueryTiles() > 1)
                        buildLargeBlockBackwardBody(b, loc, spec, c);
                      else if (backward)
                        buildBackwardBody(b, loc, spec, c);
                      else
                        buildForwardBody(b, loc, spec, c);
                    });
}
