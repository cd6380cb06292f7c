//===- Sm100aRecipe.cpp - the sm_100a (Blackwell) warpspec recipes --------===//
//
// The forward and the backward on sm_100a: a TMA producer, a warpgroup
// whose one thread issues tcgen05.mma into tensor memory, optionally a
// rotary warpgroup, and two softmax warpgroups (docs/blackwell.md).
//
//===----------------------------------------------------------------------===//

#include "Recipe.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::blockattn;
using namespace mlir::warpspec;

namespace {

/// An f32 tensor-memory tile of `rows` x `cols` (an accumulator).
BufferType tmemF32Tile(MLIRContext *ctx, int64_t rows, int64_t cols) {
  return BufferType::get(ctx, {rows, cols}, Float32Type::get(ctx),
                         MemorySpace::tmem);
}

/// A two-slot ring of one tmemF32Tile: how the backwards hand S, dP and the
/// gradients from the MMA warp to the softmax warpgroups.
Value createTmemRing(OpBuilder &b, Location loc, StringRef name, int64_t rows,
                     int64_t cols) {
  MLIRContext *ctx = b.getContext();
  return createChannel(b, loc,
                       ChannelType::get(ctx, {tmemF32Tile(ctx, rows, cols)},
                                        MemorySpace::tmem),
                       name, 2);
}

/// Blackwell's rotary warpgroup: the MMA reads its operands from shared
/// memory with no thread in between, so one warpgroup rotates each slot's q
/// and k (and v) from the load ring `ring` into the ring `rotated`, which
/// the MMA warp reads beside `ring` (both release their slots of `ring`).
/// With it, the MMA warp also tracks the rotated ring (and the tile's
/// position in the backward), so the plan gives it more registers.
///
/// Above head dim 128 the ring is a signal without buffers and the rotary
/// warpgroup rotates the load ring's slot in place, as the sm_90a one does:
/// a slot of q, k, v, dO is 128 KiB at 256, and a rotated ring of 64 KiB
/// (96 with rotate_v) next to it and the backward's P, dS and staging
/// buffers does not fit. The MMA warp reads no tile of the slot before the
/// signal arrives, and both still give the load slot back, so the producer
/// refills it only after the last MMA that reads it.
Value createRotaryRing(OpBuilder &b, Location loc, const KernelSpec &spec,
                       int64_t depth) {
  if (spec.headDim > KernelShape::kMaxOutputCols)
    return createChannel(
        b, loc,
        ChannelType::get(b.getContext(), ArrayRef<Type>(), MemorySpace::smem),
        "rotated", depth);
  // The rotated tiles are the first loaded ones (rotatedTiles): q (its
  // halves in a large block), k, and v with rotate_v.
  SmallVector<Type> tiles;
  for (const LoadedTile &loaded : loadedTiles(spec))
    tiles.push_back(loaded.type);
  tiles.resize(spec.numQueryTiles() + (spec.rotateV ? 2 : 1));
  return createChannel(
      b, loc, ChannelType::get(b.getContext(), tiles, MemorySpace::smem),
      "rotated", depth);
}

/// The MMA warp's operands: the rotated q, k (and v) when there are rotary
/// embeddings, else the loaded tiles. Returns the tiles to use, in order,
/// and sets `rotatedSlot` to the slot of the rotated ring they are in.
SmallVector<Value> mmaOperands(OpBuilder &b, Location loc,
                               const KernelSpec &spec, Value rotated,
                               ValueRange loaded, Value &rotatedSlot) {
  SmallVector<Value> operands(loaded.begin(), loaded.end());
  // The grouped backward rotates in place and passes no ring here.
  if (!rotated)
    return operands;
  auto get = GetOp::create(b, loc, rotated);
  rotatedSlot = get.getSlot();
  for (auto [i, tile] : llvm::enumerate(get.getBuffers()))
    operands[i] = tile;
  return operands;
}

/// The sm_100a MMA warpgroup's loop over the load ring, up to its body: the
/// tile coordinates and the MMA operands (the rotated tiles where there are
/// rotary embeddings). The builder is left in the body.
struct MmaLoop {
  ConsumeOp consume;
  Value slot, row, rows, head;
  SmallVector<Value> operands;
  Value rotatedSlot; // the slot of the rotated ring, with rotary embeddings
};

MmaLoop beginMmaLoop(OpBuilder &b, Location loc, const KernelSpec &spec,
                     Value ring, Value rotated, int64_t regs) {
  MLIRContext *ctx = b.getContext();
  auto mma =
      PartitionOp::create(b, loc, b.getStringAttr("mma"),
                          RoleAttr::get(ctx, Role::mma), b.getI64IntegerAttr(4),
                          b.getI64IntegerAttr(regs), b.getI64IntegerAttr(1));
  b.setInsertionPointToStart(&createBody(mma, {}, loc));
  MmaLoop loop;
  loop.consume = ConsumeOp::create(b, loc, ring);
  Type i32 = b.getI32Type();
  SmallVector<Type> args = {SlotType::get(ctx), i32, i32, i32};
  llvm::append_range(args, cast<ChannelType>(ring.getType()).getBufferTypes());
  Block &body = createBody(loop.consume, args, loc);
  b.setInsertionPointToStart(&body);
  loop.slot = loop.consume.getSlot();
  loop.row = loop.consume.getRow();
  loop.rows = loop.consume.getRows();
  loop.head = loop.consume.getHead();
  loop.operands = mmaOperands(b, loc, spec, rotated,
                              loop.consume.getBufferArgs(), loop.rotatedSlot);
  return loop;
}

/// Ends an MMA loop body: gives the rotated and loaded slots back once the
/// MMAs that read them complete, then closes `first` (the channel the
/// loop's first product goes to) after the loop.
void endMmaLoop(OpBuilder &b, Location loc, const MmaLoop &loop, Value first) {
  if (loop.rotatedSlot)
    ReleaseOp::create(b, loc, loop.rotatedSlot, /*after_mma=*/true);
  ReleaseOp::create(b, loc, loop.slot, /*after_mma=*/true);
  b.setInsertionPointAfter(loop.consume);
  CloseOp::create(b, loc, first);
}

/// The loop of the softmax replicas (which also store the outputs) over
/// `ring` (S's, or a ring of records whose slots carry `buffers`, if any) up
/// to its body: their output staging buffer of type `tile`, the record and
/// the slot's buffers (sBuffer the first). The builder is left in the body.
struct SoftmaxLoop {
  PartitionOp partition;
  Value staging, slot, row, rows, head, sBuffer;
  ValueRange buffers;
};

SoftmaxLoop beginSoftmaxLoop(OpBuilder &b, Location loc, const KernelPlan &plan,
                             Value ring, ArrayRef<Type> buffers,
                             BufferType tile) {
  MLIRContext *ctx = b.getContext();
  auto partition = PartitionOp::create(
      b, loc, b.getStringAttr("softmax"), RoleAttr::get(ctx, Role::softmax),
      b.getI64IntegerAttr(4), b.getI64IntegerAttr(plan.registers.compute),
      b.getI64IntegerAttr(plan.softmaxReplicas));
  b.setInsertionPointToStart(&createBody(partition, {}, loc));
  SoftmaxLoop loop;
  loop.partition = partition;
  loop.staging = ScratchOp::create(b, loc, tile, nullptr, nullptr);
  auto consume = ConsumeOp::create(b, loc, ring);
  Type i32 = b.getI32Type();
  SmallVector<Type> args = {SlotType::get(ctx), i32, i32, i32};
  llvm::append_range(args, buffers);
  b.setInsertionPointToStart(&createBody(consume, args, loc));
  loop.slot = consume.getSlot();
  loop.row = consume.getRow();
  loop.rows = consume.getRows();
  loop.head = consume.getHead();
  loop.buffers = consume.getBufferArgs();
  if (!buffers.empty())
    loop.sBuffer = loop.buffers[0];
  return loop;
}

/// Above head dim 128: O (whole in tensor memory) is read, divided and
/// stored in column chunks of the head dim (KernelShape::outputChunkCols),
/// so that the softmax warpgroup holds one chunk's registers and one
/// chunk-wide staging buffer; the O slot goes back after the last read.
void drainOutputInChunks(OpBuilder &b, Location loc, const KernelSpec &spec,
                         const KernelPlan &plan, GetOp o, Value dest, Value row,
                         Value rows, Value head, Value divideBy,
                         Value staging) {
  MLIRContext *ctx = b.getContext();
  int64_t m = spec.queryTileRows(), cols = spec.outputChunkCols();
  Type f32 = b.getF32Type();
  auto chunkBuf = BufferType::get(ctx, {m, cols}, f32, MemorySpace::tmem);
  auto chunkType = AccType::get(ctx, {m, cols}, f32);
  for (int64_t j = 0; j < spec.numOutputChunks(); ++j) {
    Value view = SubviewOp::create(b, loc, chunkBuf, o.getBuffers()[0],
                                   b.getI64IntegerAttr(j * cols));
    Value chunk = TmemLoadOp::create(b, loc, chunkType, view);
    if (j + 1 == spec.numOutputChunks())
      ReleaseOp::create(b, loc, o.getSlot(), /*after_mma=*/false);
    auto store =
        StoreOp::create(b, loc, chunk, dest, row, head, rows, divideBy, staging,
                        plan.bulkStore ? b.getUnitAttr() : nullptr);
    store.setColOffsetAttr(b.getI64IntegerAttr(j * cols));
  }
}

/// Whether the forward's one softmax warpgroup takes both query halves of
/// a 128-token block (the rotary forward at block size 128, Plan.cpp's
/// largeBlockRotaryForward): the MMA warp then commits each S with its
/// half as the record's position, which a tile of one sequence (rotary
/// tiles are never packed: blockEnds) leaves unused.
bool halvesInRecord(const KernelSpec &spec, const KernelPlan &plan) {
  bool inRecord =
      spec.numQueryTiles() > 1 && plan.softmaxReplicas < spec.numQueryTiles();
  assert((!inRecord || !spec.packsTiles()) &&
         "a packed tile's record position holds its block ends");
  return inRecord;
}

/// The query half of the S tile the softmax warpgroup holds at block size
/// 128: its replica id (replica r always has half r), or the half that the
/// S record names (halvesInRecord), read by the caller before the S slot
/// goes back.
Value queryHalf(OpBuilder &b, Location loc, Value recordHalf) {
  return recordHalf ? recordHalf : ReplicaIdOp::create(b, loc);
}

/// The rows a softmax replica stores: at block size 128 the query half h
/// (queryHalf) has rows [64 h, 64 h + 64) of the block, min(64, max(0,
/// rows - 64 h)) of them valid; else the block's.
std::pair<Value, Value> replicaHalfRows(OpBuilder &b, Location loc,
                                        const KernelSpec &spec, Value row,
                                        Value rows, Value recordHalf) {
  if (spec.numQueryTiles() == 1)
    return {row, rows};
  Value m = arith::ConstantIntOp::create(b, loc, spec.queryTileRows(), 32);
  Value offset =
      arith::MulIOp::create(b, loc, queryHalf(b, loc, recordHalf), m);
  Value halfRows = arith::MinSIOp::create(
      b, loc,
      arith::MaxSIOp::create(b, loc,
                             arith::SubIOp::create(b, loc, rows, offset),
                             arith::ConstantIntOp::create(b, loc, 0, 32)),
      m);
  return {arith::AddIOp::create(b, loc, row, offset), halfRows};
}

/// A causal softmax of a large block's query half on sm_100a: the replicas
/// run one body and replica r has half r (replicaHalfRows), whose rows are
/// the block's tokens from 64 r on while its columns start at the block's
/// token 0. The mask's rows are offset by 64 r, a run-time value
/// (`dynamic_row_offset`; sm_90a's consumer knows its half at compile time
/// and sets `row_offset`). `offset` is 64 r, computed before the softmax.
/// Nothing without `causal` or below block size 128.
void setReplicaCausalRowOffset(SoftmaxOp softmax, const KernelSpec &spec,
                               Value offset) {
  if (!spec.causal || spec.numQueryTiles() == 1)
    return;
  assert(offset && "the replica's row offset");
  softmax.getDynamicRowOffsetMutable().assign(offset);
}

/// An entry of a tensor-memory ring read into registers as `type`, its slot
/// given back at once (the value is in registers).
Value takeTmem(OpBuilder &b, Location loc, Value channel, Type type) {
  auto get = GetOp::create(b, loc, channel);
  Value value = TmemLoadOp::create(b, loc, type, get.getBuffers()[0]);
  ReleaseOp::create(b, loc, get.getSlot(), /*after_mma=*/false);
  return value;
}

/// The end of every backward softmax step: dS from the softmax's P and dP
/// (with dlse where the kernel takes it, else null), then P and dS written
/// to a slot of the `pds` ring for the MMA warp, committed with the record
/// (row, rows, head).
void commitProbsAndGrads(OpBuilder &b, Location loc, const KernelSpec &spec,
                         Value scale, SoftmaxOp sm, Value dp, Value dlse,
                         Value pdsCh, Value row, Value rows, Value head,
                         bool pinSlot = false) {
  Value probs = sm.getProbs();
  auto gradType =
      AccType::get(b.getContext(), cast<AccType>(probs.getType()).getShape(),
                   spec.elementType);
  Value ds = SoftmaxGradOp::create(b, loc, gradType, probs, dp, scale, dlse);
  auto pds = AcquireOp::create(b, loc, pdsCh);
  auto slotBuffer = [&](int64_t i) {
    Value buffer = pds.getBuffers()[i];
    return pinSlot ? pinned(b, loc, buffer, head) : buffer;
  };
  WriteOp::create(b, loc, probs, slotBuffer(0));
  WriteOp::create(b, loc, ds, slotBuffer(1));
  CommitOp::create(b, loc, pds.getSlot(), row, rows, head);
}

/// The backward's softmax step of one tile (and query head): P from S, dS
/// from P and dP (with dlse when the kernel takes it), both written to a slot
/// of the `pds` ring for the MMA warpgroup, committed with the tile's record.
void writeProbsAndGrads(OpBuilder &b, Location loc, const KernelSpec &spec,
                        Value scale, Value s, Value dp, Value row, Value rows,
                        Value head, Value pdsCh, Value ends = Value()) {
  MLIRContext *ctx = b.getContext();
  int64_t bs = spec.tileRows();
  Type f32 = b.getF32Type();
  auto squareF32 = AccType::get(ctx, {bs, bs}, f32);
  auto rowsType = RowsType::get(ctx, bs, f32);
  auto sm = SoftmaxOp::create(b, loc, squareF32, rowsType, Type(), s, rows,
                              rows, scale, true, spec.causal,
                              /*block=*/IntegerAttr());
  maskToBlocks(b, sm, spec, ends);
  Value dlse;
  if (spec.dlse)
    dlse = LoadRowsOp::create(b, loc, rowsType, spec.dlse, row, head, rows);
  commitProbsAndGrads(b, loc, spec, scale, sm, dp, dlse, pdsCh, row, rows,
                      head);
}

/// Blackwell forward (docs/blackwell.md, "Warp roles"). Four warpgroups:
///   load     TMA of Q, K, V into the ring "qkv" (one thread issues)
///   mma      one thread issues tcgen05.mma: S = Q K^T into the tensor-memory
///            ring "s", then, once the softmax wrote P into "p", O = P V (A
///            from tensor memory) into the ring "o"; it gives the Q/K/V slot
///            and the P slot back when those MMAs complete (tcgen05.commit)
///   softmax  x2, taking tiles round-robin: S from tensor memory, exact
///            softmax in registers, P (bf16) back into tensor memory, then
///            O from tensor memory, divided by the row sums, staged and stored
///            (x1 for the rotary forward at block size 128, which takes both
///            query halves: halvesInRecord)
/// Registers: 512 threads share 64K registers; the load and MMA warpgroups
/// need few (40 each: one thread works, and the schedule is scalar code), so
/// each softmax warpgroup gets 216 (S 32 + O 64 + P 16 registers at D=128).
/// Tensor memory: "s", "p" and "o" are two slots deep, so tile i+1's S is
/// computed while tile i is being normalized and stored; each pair of slots
/// shares columns at lane alignments 0 and 16 (M = 64 uses half the lanes):
/// 64 + 32 + D columns, 256 allocated at D = 128.
void buildBlackwellForward(OpBuilder &b, Location loc, const KernelSpec &spec,
                           const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = beginKernel(b, loc, Chip::sm_100a, spec, plan);

  // M = 64 query rows a product, against all of the tile's keys (a block of
  // 128 in two query halves; smaller blocks share a 64-row tile, masked:
  // docs/block-sizes.md).
  int64_t m = spec.queryTileRows(), n = spec.tileRows();
  int64_t halves = spec.numQueryTiles();
  Type f32 = b.getF32Type();
  BufferType staging = queryBuffer(spec, spec.outputChunkCols());
  auto tmemTile = [&](int64_t cols, Type element) {
    return BufferType::get(ctx, {m, cols}, element, MemorySpace::tmem);
  };
  BufferType sBuf = tmemTile(n, f32), pBuf = tmemTile(n, spec.elementType),
             oBuf = tmemTile(spec.headDim, f32);
  Value qkv = createLoadRing(b, loc, spec, plan.numStages);
  Value sCh = createChannel(
      b, loc, ChannelType::get(ctx, {sBuf}, MemorySpace::tmem), "s", 2);
  Value pCh = createChannel(
      b, loc, ChannelType::get(ctx, {pBuf}, MemorySpace::tmem), "p", 2);
  Value oCh = createChannel(
      b, loc, ChannelType::get(ctx, {oBuf}, MemorySpace::tmem), "o", 2);
  Value rotated = spec.hasRotary()
                      ? createRotaryRing(b, loc, spec, plan.rotaryDepth)
                      : Value();

  buildLoadPartition(b, loc, spec, values, qkv, plan);
  if (rotated)
    buildRotaryPartition(b, loc, spec, qkv, rotated, plan.registers.rotary);

  // MMA issuer: per query half, S, then O once its P is in. Each product's
  // record names the block (row, valid rows, head). The next S is issued
  // after this O, so the P it leads to (the other softmax replica's, in the
  // same tensor-memory columns at the other lane alignment) is written only
  // once this O, which completes first, has read its P.
  {
    OpBuilder::InsertionGuard g(b);
    MmaLoop loop = beginMmaLoop(b, loc, spec, qkv, rotated, plan.registers.mma);
    Value row = loop.row, rows = loop.rows, head = loop.head;
    Value k = loop.operands[halves], v = loop.operands[halves + 1];
    for (int64_t i = 0; i < halves; ++i) {
      auto s = AcquireOp::create(b, loc, sCh);
      MmaAsyncOp::create(b, loc, loop.operands[i], k, s.getBuffers()[0],
                         /*transpose_a=*/false, /*transpose_b=*/true);
      // A packed tile's block ends travel on to the softmax with S; with
      // one softmax warpgroup for both halves, the half (halvesInRecord).
      Value position = halvesInRecord(spec, plan)
                           ? Value(arith::ConstantIntOp::create(b, loc, i, 32))
                           : blockEnds(b, loc, spec, loop.slot);
      CommitOp::create(b, loc, s.getSlot(), row, rows, head, position);
      auto p = GetOp::create(b, loc, pCh);
      auto o = AcquireOp::create(b, loc, oCh);
      MmaAsyncOp::create(b, loc, p.getBuffers()[0], v, o.getBuffers()[0], false,
                         false);
      CommitOp::create(b, loc, o.getSlot(), row, rows, head);
      ReleaseOp::create(b, loc, p.getSlot(), /*after_mma=*/true);
    }
    endMmaLoop(b, loc, loop, sCh);
  }

  // Softmax + epilogue warpgroups.
  {
    OpBuilder::InsertionGuard g(b);
    SoftmaxLoop loop = beginSoftmaxLoop(b, loc, plan, sCh, sBuf, staging);
    Value row = loop.row, rows = loop.rows, head = loop.head;
    Value ends = blockEnds(b, loc, spec, loop.slot);
    // Read before the S slot goes back, as the block ends are.
    Value recordHalf = halvesInRecord(spec, plan)
                           ? Value(TilePositionOp::create(b, loc, loop.slot))
                           : Value();
    auto sType = AccType::get(ctx, {m, n}, f32);
    auto pType = AccType::get(ctx, {m, n}, spec.elementType);
    auto oType = AccType::get(ctx, {m, spec.headDim}, f32);
    Value sVal = TmemLoadOp::create(b, loc, sType, loop.sBuffer);
    ReleaseOp::create(b, loc, loop.slot, /*after_mma=*/false);
    auto rowsType = RowsType::get(ctx, m, f32);
    // Causal at block size 128: replica r's rows start at the block's token
    // 64 r (setReplicaCausalRowOffset). Made only then, so that the other
    // kernels' IR is unchanged; the stores below compute it again (CSE
    // folds the two).
    Value causalOffset;
    if (spec.causal && halves > 1)
      causalOffset =
          arith::MulIOp::create(b, loc, queryHalf(b, loc, recordHalf),
                                arith::ConstantIntOp::create(b, loc, m, 32));
    auto sm =
        SoftmaxOp::create(b, loc, pType, rowsType, spec.lse ? rowsType : Type(),
                          sVal, rows, Value(), values.scale, false, spec.causal,
                          /*block=*/IntegerAttr());
    maskToBlocks(b, sm, spec, ends);
    setReplicaCausalRowOffset(sm, spec, causalOffset);
    auto p = AcquireOp::create(b, loc, pCh);
    TmemStoreOp::create(b, loc, sm.getProbs(), p.getBuffers()[0]);
    CommitOp::create(b, loc, p.getSlot(), row, rows, head);
    auto o = GetOp::create(b, loc, oCh);
    if (spec.numOutputChunks() > 1) {
      // At block size 128 replica r stores query half r's rows (as below).
      auto [chunkRow, chunkRows] =
          replicaHalfRows(b, loc, spec, row, rows, recordHalf);
      drainOutputInChunks(b, loc, spec, plan, o, spec.stores[0], chunkRow,
                          chunkRows, head, sm.getRowSums(), loop.staging);
      if (spec.lse)
        StoreRowsOp::create(b, loc, sm.getLse(), spec.lse, chunkRow, head,
                            chunkRows);
      return;
    }
    Value oVal = TmemLoadOp::create(b, loc, oType, o.getBuffers()[0]);
    ReleaseOp::create(b, loc, o.getSlot(), false);
    // The replicas take the S tiles round-robin and a block issues one per
    // query half, as many as there are replicas (the plan checks): replica
    // r always has half r, rows [64 r, 64 r + 64) of the block; or the one
    // replica has the half its S record names.
    Value storeRow = row, storeRows = rows;
    if (halves > 1) {
      Value half = queryHalf(b, loc, recordHalf);
      Value offset = arith::MulIOp::create(
          b, loc, half, arith::ConstantIntOp::create(b, loc, m, 32));
      storeRow = arith::AddIOp::create(b, loc, row, offset);
      storeRows = arith::MinSIOp::create(
          b, loc,
          arith::MaxSIOp::create(b, loc,
                                 arith::SubIOp::create(b, loc, rows, offset),
                                 arith::ConstantIntOp::create(b, loc, 0, 32)),
          arith::ConstantIntOp::create(b, loc, m, 32));
    }
    StoreOp::create(b, loc, oVal, spec.stores[0], storeRow, head, storeRows,
                    sm.getRowSums(), loop.staging,
                    plan.bulkStore ? b.getUnitAttr() : nullptr);
    if (spec.lse)
      StoreRowsOp::create(b, loc, sm.getLse(), spec.lse, storeRow, head,
                          storeRows);
  }
}

/// Blackwell backward: the forward's four warpgroups, with five
/// tensor-memory accumulators per tile.
///   load     TMA of Q, K, V, dO into the ring "qkvdo"
///   mma      S = Q K^T and dP = dO V^T into tensor memory; once a compute
///            warpgroup staged P and dS (bf16) in shared memory ("pds"):
///            dV = P^T dO, dK = dS^T Q, dQ = dS K (A read MN-major for the
///            transposes), each into its own tensor-memory ring
///   compute  x2, tiles round-robin: S and dP from tensor memory, P
///            (normalized, query rows past the tile zeroed) and
///            dS = scale P (dP - rowsum(P dP)) in registers, both to shared
///            memory; then dV, dK, dQ from tensor memory, staged and stored
/// Tensor memory, two slots per ring sharing columns at lane alignments 0
/// and 16: S 64 + dP 64 + dV, dK, dQ 3 x D columns = 512 at D = 128 (the
/// whole tensor memory, which warpspec-allocate-tmem checks), 320 -> 512 at
/// D = 64. No logsumexp, no O, no preprocessing, no atomics.
void buildBlackwellBackward(OpBuilder &b, Location loc, const KernelSpec &spec,
                            const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = beginKernel(b, loc, Chip::sm_100a, spec, plan);

  int64_t bs = spec.tileRows(), d = spec.headDim; // bs: tile rows
  Type f32 = b.getF32Type();
  BufferType tile = tileBuffer(spec, d);
  // Above head dim 128 the gradients' rings are one chunk wide
  // (KernelShape::outputChunkCols) and every gradient takes one slot per
  // chunk: S 64 + dP 64 + 3 x 64 columns whatever the head dim.
  int64_t chunkCols = spec.outputChunkCols(), chunks = spec.numOutputChunks();
  BufferType chunkStaging = tileBuffer(spec, chunkCols);
  BufferType square = tileBuffer(spec, bs);
  auto tmemChannel = [&](StringRef name, int64_t cols) {
    return createTmemRing(b, loc, name, bs, cols);
  };
  Value qkvdo = createChannel(
      b, loc,
      ChannelType::get(ctx, {tile, tile, tile, tile}, MemorySpace::smem),
      spec.loadRingName(), plan.numStages);
  Value sCh = tmemChannel("s", bs), dpCh = tmemChannel("dp", bs);
  Value dvCh = tmemChannel("dv", chunkCols),
        dkCh = tmemChannel("dk", chunkCols),
        dqCh = tmemChannel("dq", chunkCols);
  Value pdsCh = createChannel(
      b, loc, ChannelType::get(ctx, {square, square}, MemorySpace::smem), "pds",
      plan.softmaxReplicas);
  Value rotated = spec.hasRotary()
                      ? createRotaryRing(b, loc, spec, plan.rotaryDepth)
                      : Value();

  buildLoadPartition(b, loc, spec, values, qkvdo, plan);
  if (rotated)
    buildRotaryPartition(b, loc, spec, qkvdo, rotated, plan.registers.rotary);

  // MMA issuer.
  {
    OpBuilder::InsertionGuard g(b);
    MmaLoop loop =
        beginMmaLoop(b, loc, spec, qkvdo, rotated, plan.registers.mma);
    Value row = loop.row, rows = loop.rows, head = loop.head;
    ArrayRef<Value> operands = loop.operands;
    Value q = operands[0], k = operands[1], v = operands[2], dout = operands[3];
    // The epilogue turns the gradients back by the tile's position, which
    // travels with S.
    Value position = spec.needsTilePosition()
                         ? tilePosition(b, loc, spec, loop.slot)
                         : blockEnds(b, loc, spec, loop.slot);
    auto product = [&](Value channel, Value a, Value bOperand, bool ta,
                       bool tb) {
      auto dest = AcquireOp::create(b, loc, channel);
      MmaAsyncOp::create(b, loc, a, bOperand, dest.getBuffers()[0], ta, tb);
      commitTile(b, loc, spec, dest.getSlot(), row, rows, head,
                 channel == sCh ? position : Value());
    };
    product(sCh, q, k, false, true);     // S  = Q K^T
    product(dpCh, dout, v, false, true); // dP = dO V^T
    auto pds = GetOp::create(b, loc, pdsCh);
    Value p = pds.getBuffers()[0], ds = pds.getBuffers()[1];
    if (chunks > 1) {
      // Chunk j of each gradient from columns [jC, jC + C) of dO, Q, K.
      auto chunk = [&](Value tileValue, int64_t j) -> Value {
        auto type = cast<BufferType>(tileValue.getType());
        return SubviewOp::create(
            b, loc, type.withShape({type.getShape()[0], chunkCols}), tileValue,
            b.getI64IntegerAttr(j * chunkCols));
      };
      if (spec.hasRotary()) {
        // A rotation group's chunks of one gradient follow each other in its
        // ring, so that the softmax warpgroup turns each gradient's group
        // back as soon as it holds it, holding one group of one gradient at
        // a time (rotationGroups).
        for (const RotationGroup &group : rotationGroups(spec)) {
          for (int64_t j : group.chunks)
            product(dvCh, p, chunk(dout, j), true, false);
          for (int64_t j : group.chunks)
            product(dkCh, ds, chunk(q, j), true, false);
          for (int64_t j : group.chunks)
            product(dqCh, ds, chunk(k, j), false, false);
        }
      } else {
        for (int64_t j = 0; j < chunks; ++j) {
          product(dvCh, p, chunk(dout, j), true, false);
          product(dkCh, ds, chunk(q, j), true, false);
          product(dqCh, ds, chunk(k, j), false, false);
        }
      }
    } else {
      product(dvCh, p, dout, true, false); // dV = P^T dO
      product(dkCh, ds, q, true, false);   // dK = dS^T Q
      product(dqCh, ds, k, false, false);  // dQ = dS K
    }
    ReleaseOp::create(b, loc, pds.getSlot(), /*after_mma=*/true);
    endMmaLoop(b, loc, loop, sCh);
  }

  // Softmax gradient + epilogue warpgroups.
  {
    OpBuilder::InsertionGuard g(b);
    SoftmaxLoop loop = beginSoftmaxLoop(b, loc, plan, sCh, tmemF32Tile(ctx, bs, bs),
                                        chunks > 1 ? chunkStaging : tile);
    Value row = loop.row, rows = loop.rows, head = loop.head,
          staging = loop.staging;
    auto squareF32 = AccType::get(ctx, {bs, bs}, f32);
    auto outType = AccType::get(ctx, {bs, d}, f32);
    Value position =
        spec.hasRotary() ? tilePosition(b, loc, spec, loop.slot) : Value();
    Value ends = blockEnds(b, loc, spec, loop.slot);
    Value s = TmemLoadOp::create(b, loc, squareF32, loop.sBuffer);
    ReleaseOp::create(b, loc, loop.slot, false);
    Value dp = takeTmem(b, loc, dpCh, squareF32);
    writeProbsAndGrads(b, loc, spec, values.scale, s, dp, row, rows, head,
                       pdsCh, ends);
    // Gradients with respect to rotated tensors are turned back in f32
    // before their single rounding.
    // The gradients are turned back with table reads after each load from
    // tensor memory: reading the angles ahead (warpspec.rotary_angles, as
    // on sm_90a) needs 64 more registers at D = 128 (it spilled when these
    // warpgroups had 160; the one warpgroup of the D = 128 backward now has
    // 256, not tried).
    TileRows at{row, rows, position};
    auto drain = [&](Value channel, Value dest, bool rotatedInput) {
      Value grad = takeTmem(b, loc, channel, outType);
      if (rotatedInput)
        grad = unrotateGradient(b, loc, spec, grad, at, Value());
      StoreOp::create(b, loc, grad, dest, row, head, rows, Value(), staging,
                      plan.bulkStore ? b.getUnitAttr() : nullptr);
    };
    if (chunks > 1 && spec.hasRotary()) {
      // In the MMA warp's order: per rotation group, each gradient's chunks
      // of the group, loaded (each slot given back at once), turned back
      // together if the gradient's input was rotated, and stored.
      auto chunkType = AccType::get(ctx, {bs, chunkCols}, f32);
      auto drainGroup = [&](Value channel, Value dest,
                            const RotationGroup &group, bool rotatedInput) {
        SmallVector<Value> grads;
        for (size_t n = 0; n < group.chunks.size(); ++n) {
          auto get = GetOp::create(b, loc, channel);
          grads.push_back(
              TmemLoadOp::create(b, loc, chunkType, get.getBuffers()[0]));
          ReleaseOp::create(b, loc, get.getSlot(), false);
        }
        if (rotatedInput)
          grads = unrotateChunks(b, loc, spec, grads, group, at);
        for (auto [j, grad] : llvm::zip_equal(group.chunks, grads)) {
          auto store = StoreOp::create(
              b, loc, grad, dest, row, head, rows, Value(), staging,
              plan.bulkStore ? b.getUnitAttr() : nullptr);
          store.setColOffsetAttr(b.getI64IntegerAttr(j * chunkCols));
        }
      };
      for (const RotationGroup &group : rotationGroups(spec)) {
        drainGroup(dvCh, spec.stores[0], group, spec.rotateV);
        drainGroup(dkCh, spec.stores[1], group, true);
        drainGroup(dqCh, spec.stores[2], group, true);
      }
      return;
    }
    if (chunks > 1) {
      // In the MMA warp's order (without rotary embeddings).
      auto chunkType = AccType::get(ctx, {bs, chunkCols}, f32);
      for (int64_t j = 0; j < chunks; ++j) {
        for (auto [channel, dest] : {std::pair{dvCh, spec.stores[0]},
                                     {dkCh, spec.stores[1]},
                                     {dqCh, spec.stores[2]}}) {
          Value grad = takeTmem(b, loc, channel, chunkType);
          auto store = StoreOp::create(
              b, loc, grad, dest, row, head, rows, Value(), staging,
              plan.bulkStore ? b.getUnitAttr() : nullptr);
          store.setColOffsetAttr(b.getI64IntegerAttr(j * chunkCols));
        }
      }
      return;
    }
    drain(dvCh, spec.stores[0], spec.rotateV);
    drain(dkCh, spec.stores[1], spec.hasRotary());
    drain(dqCh, spec.stores[2], spec.hasRotary());
  }
}

/// The signal ring of a grouped backward between its softmax warpgroup and
/// its MMA warp, as {items, rotated} (one of them null): without rotary
/// embeddings "items" (each item's record, two deep); with them "rotated",
/// one signal an item's K (and V) and one a query head's Q, as deep as "kv"
/// and "qdo" together so that the softmax warpgroup, which then takes the
/// items from "kv" itself, never waits for the MMA warp to take a signal.
std::pair<Value, Value> createGroupedSignals(OpBuilder &b, Location loc,
                                             const KernelSpec &spec,
                                             const KernelPlan &plan) {
  auto signals =
      ChannelType::get(b.getContext(), ArrayRef<Type>(), MemorySpace::smem);
  if (spec.hasRotary())
    return {Value(), createChannel(b, loc, signals, "rotated",
                                   plan.numStages + plan.groupStages)};
  return {createChannel(b, loc, signals, "items", 2), Value()};
}

/// Waits for the softmax warpgroup's signal that the tiles the MMA warp
/// reads next are rotated (buildBlackwellGroupedBackward); the signal
/// carries nothing, so its slot goes back at once. Nothing without rotary
/// embeddings.
void awaitRotated(OpBuilder &b, Location loc, Value rotated) {
  if (!rotated)
    return;
  auto signal = GetOp::create(b, loc, rotated);
  ReleaseOp::create(b, loc, signal.getSlot(), /*after_mma=*/false);
}

/// Rotates `tiles` in place at `at` and signals it through `rotated` (an
/// entry with the item's record), for awaitRotated: K (and V), or with
/// `queries` a query head's Q (a 128-token block's two halves, each at its
/// own rows: rotateQueryTiles). With `passLoop` every tile is turned in a
/// loop of passes that is not unrolled (warpspec.rotate's pass_loop).
void rotateAndSignal(OpBuilder &b, Location loc, const KernelSpec &spec,
                     ArrayRef<Value> tiles, const TileRows &at, Value head,
                     Value rotated, bool queries, bool passLoop = false) {
  auto signal = AcquireOp::create(b, loc, rotated);
  SmallVector<Value> inPlace(tiles);
  if (queries)
    rotateQueryTiles(b, loc, spec, inPlace, inPlace, at);
  else
    rotateKeyTiles(b, loc, spec, inPlace, inPlace, at);
  auto commit =
      CommitOp::create(b, loc, signal.getSlot(), at.row, at.rows, head);
  if (passLoop)
    for (Operation *op = signal->getNextNode(); op != commit;
         op = op->getNextNode())
      if (auto rotate = dyn_cast<RotateOp>(op))
        rotate.setPassLoop(true);
}

/// The rings of the sm_100a grouped backward at blocks of up to 64 tokens
/// (buildBlackwellGroupedBackward, buildBlackwellGroupedPasses), in the
/// order both allocate them: "kv" and "qdo" (K, V once an item; Q, dO a
/// query head), the signal ring between the softmax warpgroup and the MMA
/// warp (createGroupedSignals), the tensor-memory rings of S, dP and of the
/// gradients' `gradCols` columns (the whole head dim, or a pass's chunk),
/// and "pds" (P, dS to the MMA warp).
struct GroupedRings {
  Value kv, qdo, items, rotated, s, dp, dv, dk, dq, pds;
};

GroupedRings createGroupedRings(OpBuilder &b, Location loc,
                                const KernelSpec &spec, const KernelPlan &plan,
                                int64_t gradCols) {
  MLIRContext *ctx = b.getContext();
  int64_t bs = spec.tileRows();
  BufferType tile = tileBuffer(spec, spec.headDim, loadedChunkCols(spec));
  BufferType square = tileBuffer(spec, bs);
  auto tmemChannel = [&](StringRef name, int64_t cols) {
    return createTmemRing(b, loc, name, bs, cols);
  };
  GroupedRings r;
  auto pair = ChannelType::get(ctx, {tile, tile}, MemorySpace::smem);
  r.kv = createChannel(b, loc, pair, "kv", plan.numStages);
  r.qdo = createChannel(b, loc, pair, "qdo", plan.groupStages);
  std::tie(r.items, r.rotated) = createGroupedSignals(b, loc, spec, plan);
  r.s = tmemChannel("s", bs);
  r.dp = tmemChannel("dp", bs);
  r.dv = tmemChannel("dv", gradCols);
  r.dk = tmemChannel("dk", gradCols);
  r.dq = tmemChannel("dq", gradCols);
  r.pds = createChannel(
      b, loc, ChannelType::get(ctx, {square, square}, MemorySpace::smem), "pds",
      plan.softmaxReplicas);
  return r;
}

/// The MMA warp's products for one query head of a grouped item at blocks
/// of up to 64 tokens: S = Q K^T and dP = dO V^T at full depth, then with P
/// and dS from "pds" dV += P^T dO and dK += dS^T Q into the group's `dv` and
/// `dk` slots (the first head overwrites them: enable-input-d) and dQ = dS K,
/// the gradients over columns [col, col + cols) of dO, Q and K (all of them
/// without passes: columnsOf is then the tile itself).
void issueGroupedHeadProducts(OpBuilder &b, Location loc,
                              const GroupedRings &rings, Value k, Value v,
                              Value row, Value rows, Value head, AcquireOp dv,
                              AcquireOp dk, bool first, int64_t col,
                              int64_t cols) {
  auto chunk = [&](Value tileValue) {
    return columnsOf(b, loc, tileValue, col, cols);
  };
  auto qdoSlot = GetOp::create(b, loc, rings.qdo);
  Value q = qdoSlot.getBuffers()[0], dout = qdoSlot.getBuffers()[1];
  awaitRotated(b, loc, rings.rotated);
  auto product = [&](Value channel, Value a, Value bOperand, bool ta, bool tb) {
    auto dest = AcquireOp::create(b, loc, channel);
    MmaAsyncOp::create(b, loc, a, bOperand, dest.getBuffers()[0], ta, tb);
    CommitOp::create(b, loc, dest.getSlot(), row, rows, head);
  };
  auto accumulate = [&](AcquireOp dest, Value a, Value bOperand) {
    auto mma = MmaAsyncOp::create(b, loc, a, bOperand, dest.getBuffers()[0],
                                  /*transpose_a=*/true, false);
    mma.setAccumulate(!first);
  };
  product(rings.s, q, k, false, true);     // S  = Q K^T
  product(rings.dp, dout, v, false, true); // dP = dO V^T
  auto pds = GetOp::create(b, loc, rings.pds);
  Value p = pds.getBuffers()[0], ds = pds.getBuffers()[1];
  accumulate(dv, p, chunk(dout));                // dV += P^T dO
  accumulate(dk, ds, chunk(q));                  // dK += dS^T Q
  product(rings.dq, ds, chunk(k), false, false); // dQ  = dS K
  ReleaseOp::create(b, loc, pds.getSlot(), /*after_mma=*/true);
  ReleaseOp::create(b, loc, qdoSlot.getSlot(), /*after_mma=*/true);
}

/// Blackwell grouped-query backward (group > 1; docs/pipeline.md,
/// "Grouped-query attention"): dK and dV summed over the group in tensor
/// memory, inside one CTA, in a fixed order (deterministic, no atomics, no
/// second pass). The work item is a block and a k/v head:
///   load     K, V into the ring "kv" once per item; Q, dO of each of the G
///            query heads into the ring "qdo" (buildGroupedLoadPartition)
///   mma      per query head, the backward's five products; dV = P^T dO and
///            dK = dS^T Q go into the same tensor-memory slots for the whole
///            group (the first head overwrites, the others accumulate:
///            enable-input-d), and are published once, after the G-th head
///   softmax  one warpgroup that takes whole items (the signal ring "items"
///            has one slot per item): per query head S and dP from tensor
///            memory, P and dS to shared memory, dQ stored to the query
///            head; then dV and dK stored once to the k/v head
/// One softmax warpgroup, not two: replicas take ring entries round-robin,
/// and a group's G consecutive entries of "s" would be split between them
/// while only one could drain the item's dK and dV. The tensor memory is
/// the plain backward's (S 64 + dP 64 + dV, dK, dQ 3 x D columns).
///
/// With rotary embeddings (docs/rotary.md, "Grouped-query backward") the
/// softmax warpgroup takes the items from "kv" itself (no "items" ring:
/// the slot's record has the item's rows and position), rotates K (and V
/// with rotate_v) in place once an item and each query head's Q in place
/// in its "qdo" slot before that head's S, signalling each rotation through
/// the ring "rotated" (no buffers), which the MMA warp waits on before it
/// reads the tiles; it turns dQ back per query head and the group's dV and
/// dK once. Not a fourth, rotary warpgroup as in the plain rotary backward:
/// the three warpgroups' 504 registers a thread (producer 96, MMA 152,
/// softmax 256) leave none for it, and every split that made room spilled
/// (ptxas, CUDA 13.0: 8-184 bytes at head dim 128).
void buildBlackwellGroupedBackward(OpBuilder &b, Location loc,
                                   const KernelSpec &spec,
                                   const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = groupedValues(
      b, loc, spec, beginKernel(b, loc, Chip::sm_100a, spec, plan));

  int64_t bs = spec.tileRows(), d = spec.headDim;
  Type f32 = b.getF32Type();
  BufferType tile = tileBuffer(spec, d, loadedChunkCols(spec));
  bool rotary = spec.hasRotary();
  GroupedRings rings = createGroupedRings(b, loc, spec, plan, d);
  Value kv = rings.kv, qdo = rings.qdo, items = rings.items,
        rotated = rings.rotated;
  Value sCh = rings.s, dpCh = rings.dp, dvCh = rings.dv, dkCh = rings.dk,
        dqCh = rings.dq, pdsCh = rings.pds;

  buildGroupedLoadPartition(b, loc, spec, values, kv, qdo, plan);

  // MMA issuer: per item, the G query heads in order.
  {
    OpBuilder::InsertionGuard g(b);
    MmaLoop loop = beginMmaLoop(b, loc, spec, kv, Value(), plan.registers.mma);
    Value row = loop.row, rows = loop.rows, kvHead = loop.head;
    Value k = loop.operands[0], v = loop.operands[1];
    if (items) {
      auto item = AcquireOp::create(b, loc, items);
      CommitOp::create(b, loc, item.getSlot(), row, rows, kvHead);
    }
    awaitRotated(b, loc, rotated);
    auto dv = AcquireOp::create(b, loc, dvCh);
    auto dk = AcquireOp::create(b, loc, dkCh);
    // Head 0 starts dV and dK, the others (one loop) add to them.
    auto queryHead = [&](Value head, bool first) {
      issueGroupedHeadProducts(b, loc, rings, k, v, row, rows, head, dv, dk,
                               first, /*col=*/0, d);
    };
    queryHead(groupQueryHead(b, loc, spec, kvHead, 0), /*first=*/true);
    forEachGroupHead(b, loc, spec, kvHead, 1,
                     [&](Value head) { queryHead(head, /*first=*/false); });
    CommitOp::create(b, loc, dv.getSlot(), row, rows, kvHead);
    CommitOp::create(b, loc, dk.getSlot(), row, rows, kvHead);
    if (items) {
      endMmaLoop(b, loc, loop, items);
    } else {
      // The softmax warpgroup's loop is over "kv", which the producer
      // closes: nothing to close here.
      ReleaseOp::create(b, loc, loop.slot, /*after_mma=*/true);
    }
  }

  // Softmax gradient + epilogue warpgroup, one item at a time.
  {
    OpBuilder::InsertionGuard g(b);
    SmallVector<Type> keyTiles;
    if (rotary)
      keyTiles = {tile, tile};
    SoftmaxLoop loop =
        beginSoftmaxLoop(b, loc, plan, rotary ? kv : items, keyTiles, tile);
    Value staging = loop.staging;
    Value row = loop.row, rows = loop.rows, kvHead = loop.head;
    TileRows at{row, rows,
                rotary ? tilePosition(b, loc, spec, loop.slot) : Value()};
    if (rotary) {
      SmallVector<Value> keys = {loop.buffers[0]};
      if (spec.rotateV)
        keys.push_back(loop.buffers[1]);
      rotateAndSignal(b, loc, spec, keys, at, kvHead, rotated,
                      /*queries=*/false);
    }
    ReleaseOp::create(b, loc, loop.slot, /*after_mma=*/false);
    auto squareF32 = AccType::get(ctx, {bs, bs}, f32);
    auto outType = AccType::get(ctx, {bs, d}, f32);
    // Gradients with respect to rotated tensors are turned back in f32
    // before their single rounding, with table reads after each load from
    // tensor memory (as the plain backward's drain).
    auto drain = [&](Value channel, Value dest, Value head, bool rotatedInput) {
      Value grad = takeTmem(b, loc, channel, outType);
      if (rotatedInput)
        grad = unrotateGradient(b, loc, spec, grad, at, Value());
      StoreOp::create(b, loc, grad, dest, row, head, rows, Value(), staging,
                      plan.bulkStore ? b.getUnitAttr() : nullptr);
    };
    // S and dP of a query head from tensor memory; P and dS to the MMA warp.
    auto scoresOf = [&](Value head) {
      Value s = takeTmem(b, loc, sCh, squareF32);
      Value dp = takeTmem(b, loc, dpCh, squareF32);
      writeProbsAndGrads(b, loc, spec, values.scale, s, dp, row, rows, head,
                         pdsCh);
    };
    if (!rotary) {
      forEachGroupHead(b, loc, spec, kvHead, 0, [&](Value head) {
        scoresOf(head);
        drain(dqCh, spec.stores[2], head, /*rotatedInput=*/false);
      });
    } else {
      // Q of a head, rotated in its "qdo" slot before the MMA warp's S reads
      // it; the MMA warp holds the slot until its products complete.
      auto rotateQuery = [&](Value head) {
        auto qdoSlot = GetOp::create(b, loc, qdo);
        rotateAndSignal(b, loc, spec, {qdoSlot.getBuffers()[0]}, at, head,
                        rotated, /*queries=*/true);
        ReleaseOp::create(b, loc, qdoSlot.getSlot(), /*after_mma=*/false);
      };
      // The next head's Q is rotated as soon as this head's P and dS are
      // handed over, before this head's dQ is drained: the rotation then
      // overlaps the MMA warp's dV, dK and dQ products of this head instead
      // of standing between them and the next head's S. Heads 0 .. G - 2
      // in one scf.for (as forEachGroupHead), the last one after it.
      Value first = groupQueryHead(b, loc, spec, kvHead, 0);
      rotateQuery(first);
      auto i32 = [&](int64_t value) -> Value {
        return arith::ConstantIntOp::create(b, loc, value, 32);
      };
      auto loop =
          scf::ForOp::create(b, loc, i32(0), i32(spec.group - 1), i32(1));
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(loop.getBody()->getTerminator());
        Value head =
            arith::AddIOp::create(b, loc, first, loop.getInductionVar());
        scoresOf(head);
        rotateQuery(arith::AddIOp::create(b, loc, head, i32(1)));
        drain(dqCh, spec.stores[2], head, /*rotatedInput=*/true);
      }
      Value last = groupQueryHead(b, loc, spec, kvHead, spec.group - 1);
      scoresOf(last);
      drain(dqCh, spec.stores[2], last, /*rotatedInput=*/true);
    }
    drain(dvCh, spec.stores[0], kvHead, spec.rotateV);
    drain(dkCh, spec.stores[1], kvHead, rotary);
  }
}

/// Blackwell grouped-query backward above head dim 128
/// (KernelPlan::groupPasses; docs/pipeline.md, "Grouped-query attention"):
/// dV and dK of the whole head dim summed over the group would take 2 D
/// columns of tensor memory next to S, dP and dQ (704 at 192), so an item is
/// made in D / 64 passes, pass j summing columns [64 j, 64 j + 64) of dV and
/// dK over the group in one 64-column slot each:
///   load     K, V into "kv" once an item; Q, dO of the G query heads into
///            "qdo", the group once a pass (buildGroupedLoadPartition)
///   mma      per pass and query head: S = Q K^T and dP = dO V^T at full
///            depth, then dV_j += P^T dO_j, dK_j += dS^T Q_j (the first head
///            overwrites: enable-input-d) and dQ_j = dS K_j, B a 64-column
///            subview of dO, Q, K; dV_j and dK_j published after the group
///   softmax  one warpgroup taking whole items ("items"): per pass and query
///            head S and dP from tensor memory, P and dS to shared memory
///            (recomputed every pass), dQ_j stored at column 64 j of the
///            query head; then dV_j and dK_j at column 64 j of the k/v head
/// Tensor memory: S 64 + dP 64 + dV, dK, dQ one chunk each (3 x 64): 320
/// columns at either head dim. The staging buffer is one chunk wide.
void buildBlackwellGroupedPasses(OpBuilder &b, Location loc,
                                 const KernelSpec &spec,
                                 const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = groupedValues(
      b, loc, spec, beginKernel(b, loc, Chip::sm_100a, spec, plan));

  int64_t bs = spec.tileRows(), d = spec.headDim;
  int64_t cols = spec.outputChunkCols();
  Type f32 = b.getF32Type();
  BufferType tile = tileBuffer(spec, d, loadedChunkCols(spec));
  bool rotary = spec.hasRotary();
  // With rotary embeddings the softmax warpgroup takes the items from "kv"
  // and signals each rotation through "rotated", as at head dims up to 128
  // (buildBlackwellGroupedBackward): K (and V) once an item, Q of each query
  // head every pass (the producer loads it again every pass).
  GroupedRings rings = createGroupedRings(b, loc, spec, plan, cols);
  Value kv = rings.kv, qdo = rings.qdo, items = rings.items,
        rotated = rings.rotated;
  Value sCh = rings.s, dpCh = rings.dp, dvCh = rings.dv, dkCh = rings.dk,
        dqCh = rings.dq, pdsCh = rings.pds;

  buildGroupedLoadPartition(b, loc, spec, values, kv, qdo, plan);

  // MMA issuer: per item and pass, the G query heads in order.
  {
    OpBuilder::InsertionGuard g(b);
    MmaLoop loop = beginMmaLoop(b, loc, spec, kv, Value(), plan.registers.mma);
    Value row = loop.row, rows = loop.rows, kvHead = loop.head;
    Value k = loop.operands[0], v = loop.operands[1];
    if (items) {
      auto item = AcquireOp::create(b, loc, items);
      CommitOp::create(b, loc, item.getSlot(), row, rows, kvHead);
    }
    awaitRotated(b, loc, rotated);
    for (int64_t pass = 0; pass < plan.groupPasses; ++pass) {
      int64_t col = pass * cols;
      auto dv = AcquireOp::create(b, loc, dvCh);
      auto dk = AcquireOp::create(b, loc, dkCh);
      // Head 0 starts dV_j and dK_j, the others (one loop) add to them.
      auto queryHead = [&](Value head, bool first) {
        issueGroupedHeadProducts(b, loc, rings, k, v, row, rows, head, dv, dk,
                                 first, col, cols);
      };
      Value firstHead = groupQueryHead(b, loc, spec, kvHead, 0);
      queryHead(firstHead, /*first=*/true);
      // The other heads in one scf.for whose trip count LLVM cannot see
      // (opaqueGroupEnd): with a constant count the loop of one trip
      // (G = 2) is unrolled, an item's ring positions are then the same
      // every item, and LLVM hoisted the barrier and descriptor addresses
      // of all its products out of the item loop (ptxas spilled the MMA
      // warpgroup 0.5-1.8 KB at head dims 192 and 256). min(rows, 0) did
      // not do: LLVM knows the rows are not negative.
      auto i32 = [&](int64_t value) -> Value {
        return arith::ConstantIntOp::create(b, loc, value, 32);
      };
      Value upper = opaqueGroupEnd(b, loc, spec, kvHead);
      auto others = scf::ForOp::create(b, loc, i32(1), upper, i32(1));
      {
        OpBuilder::InsertionGuard inLoop(b);
        b.setInsertionPoint(others.getBody()->getTerminator());
        queryHead(
            arith::AddIOp::create(b, loc, firstHead, others.getInductionVar()),
            /*first=*/false);
      }
      CommitOp::create(b, loc, dv.getSlot(), row, rows, kvHead);
      CommitOp::create(b, loc, dk.getSlot(), row, rows, kvHead);
    }
    if (items) {
      endMmaLoop(b, loc, loop, items);
    } else {
      // The softmax warpgroup's loop is over "kv", which the producer
      // closes: nothing to close here.
      ReleaseOp::create(b, loc, loop.slot, /*after_mma=*/true);
    }
  }

  // Softmax gradient + epilogue warpgroup, one item at a time.
  {
    OpBuilder::InsertionGuard g(b);
    SmallVector<Type> keyTiles;
    if (rotary)
      keyTiles = {tile, tile};
    // Half-split rows in pair-complete chunks (pairHalfRows): each gradient
    // chunk is stored as two 32-column pieces, through a staging buffer of
    // their width.
    bool pieces = pairHalfRows(spec);
    SoftmaxLoop loop =
        beginSoftmaxLoop(b, loc, plan, rotary ? kv : items, keyTiles,
                         tileBuffer(spec, pieces ? cols / 2 : cols));
    Value staging = loop.staging;
    Value row = loop.row, rows = loop.rows, kvHead = loop.head;
    TileRows at{row, rows,
                rotary ? tilePosition(b, loc, spec, loop.slot) : Value()};
    if (rotary) {
      SmallVector<Value> keys = {loop.buffers[0]};
      if (spec.rotateV)
        keys.push_back(loop.buffers[1]);
      rotateAndSignal(b, loc, spec, keys, at, kvHead, rotated,
                      /*queries=*/false);
    }
    ReleaseOp::create(b, loc, loop.slot, /*after_mma=*/false);
    auto squareF32 = AccType::get(ctx, {bs, bs}, f32);
    auto chunkType = AccType::get(ctx, {bs, cols}, f32);
    for (int64_t pass = 0; pass < plan.groupPasses; ++pass) {
      int64_t col = pass * cols;
      // Gradients with respect to rotated tensors are turned back in f32
      // before their single rounding, the pass's chunk on its own
      // (unrotatePassChunk).
      auto drain = [&](Value channel, Value dest, Value head,
                       bool rotatedInput) {
        Value grad = unrotatePassChunk(b, loc, spec,
                                       takeTmem(b, loc, channel, chunkType),
                                       pass, at, rotatedInput);
        if (pieces) {
          storePairHalves(b, loc, spec, grad, dest, row, head, rows, staging,
                          plan.bulkStore, pass);
          return;
        }
        auto store = StoreOp::create(
            b, loc, grad, dest, row, head, rows, Value(), staging,
            plan.bulkStore ? b.getUnitAttr() : nullptr);
        store.setColOffsetAttr(b.getI64IntegerAttr(col));
      };
      forEachGroupHead(b, loc, spec, kvHead, 0, [&](Value head) {
        if (rotary) {
          // Q of the head, rotated in its "qdo" slot before the MMA warp's S
          // reads it; the MMA warp holds the slot until its products
          // complete.
          auto qdoSlot = GetOp::create(b, loc, qdo);
          rotateAndSignal(b, loc, spec, {qdoSlot.getBuffers()[0]}, at, head,
                          rotated, /*queries=*/true);
          ReleaseOp::create(b, loc, qdoSlot.getSlot(), /*after_mma=*/false);
        }
        Value s = takeTmem(b, loc, sCh, squareF32);
        Value dp = takeTmem(b, loc, dpCh, squareF32);
        writeProbsAndGrads(b, loc, spec, values.scale, s, dp, row, rows, head,
                           pdsCh);
        drain(dqCh, spec.stores[2], head, rotary);
      });
      drain(dvCh, spec.stores[0], kvHead, spec.rotateV);
      drain(dkCh, spec.stores[1], kvHead, rotary);
    }
  }
}

/// The query half (and key half) of a 128-token block that softmax replica
/// r handles: its first row, row + 64 r, its valid rows,
/// min(64, max(0, rows - 64 r)), and its offset in the block, 64 r.
struct ReplicaHalf {
  Value row, rows, offset;
};

ReplicaHalf replicaHalf(OpBuilder &b, Location loc, Value row, Value rows,
                        int64_t halfRows) {
  Value offset =
      arith::MulIOp::create(b, loc, ReplicaIdOp::create(b, loc),
                            arith::ConstantIntOp::create(b, loc, halfRows, 32));
  Value left = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, rows, offset),
      arith::ConstantIntOp::create(b, loc, 0, 32));
  return {arith::AddIOp::create(b, loc, row, offset),
          arith::MinSIOp::create(
              b, loc, left, arith::ConstantIntOp::create(b, loc, halfRows, 32)),
          offset};
}

/// The query halves' P and dS as the MMA warp holds them: the "pds" slots
/// (given back after the last dK) and their buffers.
struct HalfScratch {
  SmallVector<Value> p, ds, slots;
};

/// dQ_i = dS_i k into `dqCh` for `halves` query halves, committed with (row,
/// rows, head), as each half's P and dS arrive in `pdsCh` (operands pinned
/// after `anchor`, if any). Returns the halves' P and dS.
HalfScratch issueHalfDq(OpBuilder &b, Location loc, int64_t halves, Value k,
                        Value dqCh, Value pdsCh, Value row, Value rows,
                        Value head, Value anchor) {
  HalfScratch scratch;
  for (int64_t i = 0; i < halves; ++i) {
    auto pds = GetOp::create(b, loc, pdsCh);
    scratch.slots.push_back(pds.getSlot());
    scratch.p.push_back(pds.getBuffers()[0]);
    scratch.ds.push_back(pds.getBuffers()[1]);
    auto dest = AcquireOp::create(b, loc, dqCh);
    MmaAsyncOp::create(b, loc, pinned(b, loc, scratch.ds[i], anchor),
                       pinned(b, loc, k, anchor), dest.getBuffers()[0],
                       /*transpose_a=*/false, /*transpose_b=*/false); // dQ_i
    CommitOp::create(b, loc, dest.getSlot(), row, rows, head);
  }
  return scratch;
}

/// The score products of a 128-token block for one query head, committed
/// with (row, rows, head): per query half i, S_i = q_i k^T into `sCh` and
/// dP_i = dO_i v^T into `dpCh`; then, as each half's P and dS arrive in
/// `pdsCh`, dQ_i = dS_i k into `dqCh`. Returns the halves' P and dS.
HalfScratch issueHalfScoreProducts(
    OpBuilder &b, Location loc, ArrayRef<Value> q, ArrayRef<Value> dout,
    Value k, Value v, Value sCh, Value dpCh, Value dqCh, Value pdsCh, Value row,
    Value rows, Value head, Value kOfDq = Value(), Value anchor = Value()) {
  auto product = [&](Value channel, Value a, Value bOperand, bool ta, bool tb) {
    auto dest = AcquireOp::create(b, loc, channel);
    MmaAsyncOp::create(b, loc, pinned(b, loc, a, anchor),
                       pinned(b, loc, bOperand, anchor), dest.getBuffers()[0],
                       ta, tb);
    CommitOp::create(b, loc, dest.getSlot(), row, rows, head);
  };
  for (auto [qHalf, doHalf] : llvm::zip_equal(q, dout)) {
    product(sCh, qHalf, k, false, true);   // S_i  = q_i K^T
    product(dpCh, doHalf, v, false, true); // dP_i = dO_i V^T
  }
  return issueHalfDq(b, loc, q.size(), kOfDq ? kOfDq : k, dqCh, pdsCh, row,
                     rows, head, anchor);
}

/// The sm_100a grouped block-128 backward's S and dP of one query head
/// above head dim 128 (KernelPlan::groupChunkStages): per query half i,
/// S_i = sum_j q_i,j K_j^T over the "chunks" slots of its 64-column chunks
/// j, then dP_i = sum_j dO_i,j V_j^T over the next ones (the producer's
/// order, buildGroupedChunkLoadPartition), each accumulated in tensor memory
/// (the first chunk overwrites, enable-input-d after it) and committed with
/// (row, rows, head); each chunk slot goes back once the MMA that reads it
/// completes. The chunks after the first are one scf.for whose trip count,
/// D / 64 + min(kvHead, 0) - 1, LLVM cannot fold (as the sm_90a scores
/// warpgroup's: a constant one is unrolled), every slot pinned after the
/// head: "chunks" takes a whole number of its laps a head, so each chunk
/// lands in the same slot every head, at addresses LLVM would hoist.
/// With rotary embeddings (`rotated`, buildGroupedChunkRotaryPartition) each
/// chunk slot the rotary warpgroup rotates (S's; dP's with rotate_v) is read
/// only after its signal (awaitRotated); null adds nothing.
void issueChunkedScores(OpBuilder &b, Location loc, const KernelSpec &spec,
                        Value chunks, Value sCh, Value dpCh, Value row,
                        Value rows, Value head, Value kvHead, Value rotated) {
  auto i32 = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, value, 32);
  };
  auto overChunks = [&](Value channel) {
    auto dest = AcquireOp::create(b, loc, channel);
    bool rotatedChunks = channel == sCh || spec.rotateV;
    auto chunk = [&](bool accumulate) {
      auto slot = GetOp::create(b, loc, chunks);
      if (rotatedChunks)
        awaitRotated(b, loc, rotated);
      ValueRange t = slot.getBuffers();
      Value a = pinned(b, loc, t[0], head);
      Value bOperand = pinned(b, loc, t[1], head);
      auto mma = MmaAsyncOp::create(b, loc, a, bOperand, dest.getBuffers()[0],
                                    /*transpose_a=*/false,
                                    /*transpose_b=*/true);
      mma.setAccumulate(accumulate);
      ReleaseOp::create(b, loc, slot.getSlot(), /*after_mma=*/true);
    };
    chunk(/*accumulate=*/false);
    Value end =
        arith::AddIOp::create(b, loc, i32(spec.headDim / 64),
                              arith::MinSIOp::create(b, loc, kvHead, i32(0)));
    auto loop = scf::ForOp::create(b, loc, i32(1), end, i32(1));
    {
      OpBuilder::InsertionGuard inLoop(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      chunk(/*accumulate=*/true);
    }
    CommitOp::create(b, loc, dest.getSlot(), row, rows, head);
  };
  for (int64_t i = 0; i < spec.numQueryTiles(); ++i) {
    overChunks(sCh);  // S_i  = sum_j q_i,j K_j^T
    overChunks(dpCh); // dP_i = sum_j dO_i,j V_j^T
  }
}

/// Key half j of dV (or dK) into a slot of `channel`, committed with (row,
/// rows, head): sum_i scratch_i[:, 64 j:]^T operand_i over the query halves
/// i, A the column chunk j of a half's [64, 128] P (dS) read MN-major. The
/// first product overwrites the slot unless `accumulate` (the grouped
/// backward's heads after the first), the others accumulate
/// (enable-input-d).
void issueKeyHalfSum(OpBuilder &b, Location loc, const KernelSpec &spec,
                     Value channel, ArrayRef<Value> scratch,
                     ArrayRef<Value> operand, int64_t j, bool accumulate,
                     Value row, Value rows, Value head,
                     Value anchor = Value()) {
  BufferType chunkType = queryBuffer(spec, spec.queryTileRows());
  auto dest = AcquireOp::create(b, loc, channel);
  for (auto [i, half] : llvm::enumerate(scratch)) {
    Value chunk =
        ColumnChunkOp::create(b, loc, chunkType, pinned(b, loc, half, anchor),
                              b.getI64IntegerAttr(j));
    auto mma = MmaAsyncOp::create(
        b, loc, chunk, pinned(b, loc, operand[i], anchor), dest.getBuffers()[0],
        /*transpose_a=*/true, false);
    mma.setAccumulate(accumulate || i > 0);
  }
  CommitOp::create(b, loc, dest.getSlot(), row, rows, head);
}

/// The MMA warp's products of a 128-token block's backward, in the order
/// the softmax warpgroups drain them (buildBlackwellLargeBlockBackward):
/// per query half i, S_i = q_i k^T into "s" and dP_i = dO_i v^T into "dp";
/// as each half's P and dS arrive in "pds" (both slots held until the last
/// dK), dQ_i = dS_i k into "dq"; then dV_0, dV_1 and dK_0, dK_1 into "dkv",
/// dV_j = sum_i P_i[:, 64 j:]^T dO_i and dK_j = sum_i dS_i[:, 64 j:]^T q_i:
/// two products each, A the column chunk j of a half's [64, 128] P or dS
/// read MN-major, the second with enable-input-d (`accumulate`). Every
/// product is committed with the block's record.
void issueLargeBlockBackwardProducts(OpBuilder &b, Location loc,
                                     const KernelSpec &spec,
                                     const MmaLoop &loop, Value sCh, Value dpCh,
                                     Value dqCh, Value dkvCh, Value pdsCh) {
  int64_t halves = spec.numQueryTiles();
  Value row = loop.row, rows = loop.rows, head = loop.head;
  ArrayRef<Value> tiles = loop.operands;
  ArrayRef<Value> q = tiles.take_front(halves);
  ArrayRef<Value> dout = tiles.slice(halves + 2, halves);
  HalfScratch scratch =
      issueHalfScoreProducts(b, loc, q, dout, tiles[halves], tiles[halves + 1],
                             sCh, dpCh, dqCh, pdsCh, row, rows, head);
  for (int64_t j = 0; j < halves; ++j) // dV_j = sum_i P_i[:, 64 j:]^T dO_i
    issueKeyHalfSum(b, loc, spec, dkvCh, scratch.p, dout, j,
                    /*accumulate=*/false, row, rows, head);
  for (int64_t j = 0; j < halves; ++j) // dK_j = sum_i dS_i[:, 64 j:]^T q_i
    issueKeyHalfSum(b, loc, spec, dkvCh, scratch.ds, q, j,
                    /*accumulate=*/false, row, rows, head);
  for (Value slot : scratch.slots)
    ReleaseOp::create(b, loc, slot, /*after_mma=*/true);
}

/// The softmax step of query half r of a 128-token block on sm_100a
/// (softmax replica r): S_r and dP_r
/// from tensor memory, P_r (normalized over the block's valid keys, rows
/// past the half's valid rows zeroed) and dS_r into a slot of `pdsCh`,
/// committed with the block's record. Returns the half's rows
/// (buildBlackwellLargeBlockBackward, buildBlackwellLargeBlockColumnPasses).
ReplicaHalf writeHalfProbsAndGrads(OpBuilder &b, Location loc,
                                   const KernelSpec &spec,
                                   const KernelValues &values,
                                   const SoftmaxLoop &loop, Value dpCh,
                                   Value pdsCh) {
  MLIRContext *ctx = b.getContext();
  int64_t m = spec.queryTileRows(), n = spec.tileRows();
  Type f32 = b.getF32Type();
  Value blockRows = loop.rows, head = loop.head;
  ReplicaHalf half = replicaHalf(b, loc, loop.row, blockRows, m);
  auto wideF32 = AccType::get(ctx, {m, n}, f32);
  Value s = TmemLoadOp::create(b, loc, wideF32, loop.sBuffer);
  ReleaseOp::create(b, loc, loop.slot, false);
  Value dp = takeTmem(b, loc, dpCh, wideF32);
  // Every valid key of the block is a column (exact softmax, no LSE);
  // query rows past the half's valid rows are zeroed, so they add nothing
  // to dV and dK. Causal: the half's rows are the block's tokens from
  // 64 r (setReplicaCausalRowOffset).
  auto rowsType = RowsType::get(ctx, m, f32);
  auto sm = SoftmaxOp::create(b, loc, wideF32, rowsType, Type(), s, blockRows,
                              half.rows, values.scale,
                              /*normalize=*/true, spec.causal,
                              /*block=*/IntegerAttr());
  setReplicaCausalRowOffset(sm, spec, half.offset);
  // dlse of the half's rows. load_rows reads its first row even where it
  // zeroes every row, and an empty second half's row + 64 may lie past
  // the tokens: such a half reads at the block's row,
  // row + min(rows_r, 1) * 64 r (sm_90a's rowsReadAt).
  Value dlse;
  if (spec.dlse) {
    Value any = arith::MinSIOp::create(
        b, loc, half.rows, arith::ConstantIntOp::create(b, loc, 1, 32));
    Value at = arith::AddIOp::create(
        b, loc, loop.row, arith::MulIOp::create(b, loc, any, half.offset));
    dlse = LoadRowsOp::create(b, loc, rowsType, spec.dlse, at, head, half.rows);
  }
  commitProbsAndGrads(b, loc, spec, values.scale, sm, dp, dlse, pdsCh, loop.row,
                      blockRows, head);
  return half;
}

/// Blackwell backward of a 128-token block (docs/block-sizes.md, "The
/// backward at 128 on sm_100a"): the work item is the whole block, its slot
/// holds q and dO in 64-row halves and k, v whole (loadedTiles).
///   mma      per query half i: S_i = q_i k^T and dP_i = dO_i v^T (64 x 128
///            each) into "s" and "dp"; as each half's P and dS arrive in
///            the "pds" ring (one slot per half, both held until the last
///            dK), dQ_i = dS_i k (K = 128) into "dq"; then dV_0, dV_1 and
///            dK_0, dK_1 into the one ring "dkv", with dV_j = sum_i
///            P_i[:, 64 j:]^T dO_i and dK_j = sum_i dS_i[:, 64 j:]^T q_i:
///            two products each, A the column chunk j of a half's [64, 128]
///            P or dS read MN-major, the second with enable-input-d
///            (`accumulate`)
///   softmax  x2: replica r takes query half r (the s, dp and dq entries
///            of a block alternate between the replicas) and key half r
///            (dkv's entries are dV_0, dV_1, dK_0, dK_1): S_r and dP_r from
///            tensor memory, P_r (normalized, rows past the half zeroed)
///            and dS_r to shared memory, then dQ_r, dV_r, dK_r stored at
///            row + 64 r
/// Tensor memory, two slots per ring at lane alignments 0 and 16 (slot r:
/// replica r's): S 128 + dP 128 + dQ D + dV/dK D columns, 512 at D = 128.
/// dV and dK share a ring: the MMA warp writes dK_0 into slot 0 once
/// replica 0 has read dV_0 out (the ring's own protocol).
void buildBlackwellLargeBlockBackward(OpBuilder &b, Location loc,
                                      const KernelSpec &spec,
                                      const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = beginKernel(b, loc, Chip::sm_100a, spec, plan);

  int64_t m = spec.queryTileRows(), n = spec.tileRows(), d = spec.headDim;
  assert(spec.numQueryTiles() == plan.softmaxReplicas &&
         "replica r takes half r");
  Type f32 = b.getF32Type();
  auto tmemChannel = [&](StringRef name, int64_t cols) {
    return createTmemRing(b, loc, name, m, cols);
  };
  Value qkvdo = createLoadRing(b, loc, spec, plan.numStages);
  Value sCh = tmemChannel("s", n), dpCh = tmemChannel("dp", n);
  Value dqCh = tmemChannel("dq", d), dkvCh = tmemChannel("dkv", d);
  BufferType wide = queryBuffer(spec, n);
  Value pdsCh = createChannel(
      b, loc, ChannelType::get(ctx, {wide, wide}, MemorySpace::smem), "pds",
      plan.softmaxReplicas);

  buildLoadPartition(b, loc, spec, values, qkvdo, plan);

  // MMA issuer.
  {
    OpBuilder::InsertionGuard g(b);
    MmaLoop loop =
        beginMmaLoop(b, loc, spec, qkvdo, Value(), plan.registers.mma);
    issueLargeBlockBackwardProducts(b, loc, spec, loop, sCh, dpCh, dqCh, dkvCh,
                                    pdsCh);
    endMmaLoop(b, loc, loop, sCh);
  }

  // Softmax gradient + epilogue warpgroups, replica r on half r.
  {
    OpBuilder::InsertionGuard g(b);
    SoftmaxLoop loop = beginSoftmaxLoop(
        b, loc, plan, sCh, BufferType::get(ctx, {m, n}, f32, MemorySpace::tmem),
        queryBuffer(spec, d));
    ReplicaHalf half =
        writeHalfProbsAndGrads(b, loc, spec, values, loop, dpCh, pdsCh);
    // dQ of query half r, then dV and dK of key half r: the same rows.
    auto outType = AccType::get(ctx, {m, d}, f32);
    for (auto [channel, dest] : {std::pair{dqCh, spec.stores[2]},
                                 {dkvCh, spec.stores[0]},
                                 {dkvCh, spec.stores[1]}}) {
      Value grad = takeTmem(b, loc, channel, outType);
      StoreOp::create(b, loc, grad, dest, half.row, loop.head, half.rows,
                      Value(), loop.staging,
                      plan.bulkStore ? b.getUnitAttr() : nullptr);
    }
  }
}

/// The rotary warpgroup's partition (four warps, plan.registers.rotary) and
/// its consume of the records channel `records` (row, rows, head), the
/// builder left inside the consume's body.
ConsumeOp openRotaryPartition(OpBuilder &b, Location loc,
                              const KernelPlan &plan, Value records) {
  MLIRContext *ctx = b.getContext();
  auto partition = PartitionOp::create(
      b, loc, b.getStringAttr("rotary"), RoleAttr::get(ctx, Role::rotary),
      b.getI64IntegerAttr(4), b.getI64IntegerAttr(plan.registers.rotary),
      b.getI64IntegerAttr(1));
  b.setInsertionPointToStart(&createBody(partition, {}, loc));
  auto consume = ConsumeOp::create(b, loc, records);
  Type i32 = b.getI32Type();
  b.setInsertionPointToStart(
      &createBody(consume, {SlotType::get(ctx), i32, i32, i32}, loc));
  return consume;
}

/// The rotary warpgroup of the sm_100a grouped block-128 backward above
/// head dim 128 with rotary embeddings (buildBlackwellGroupedLargeBlock with
/// KernelPlan::groupChunkStages; docs/head-dims.md): the MMA warp reads its
/// operands from shared memory with no thread in between, and every chunk
/// comes from global memory un-rotated each time it is streamed, so this
/// warpgroup, between the producer and the MMA warp, takes every slot of
/// "chunks" and "qdo" in the producer's order (buildGroupedChunkLoadPartition)
/// and rotates it in place:
///   per pass c, query head, query half i:
///     chunks j: (q_i,j, K_j)   q_i,j at half i's rows and position + 64 i,
///                              K_j at the item's, pairs 32 j on
///     chunks j: (dO_i,j, V_j)  V_j with rotate_v (the slot taken either way)
///   "qdo": q_0,c q_1,c K_c rotated at pairs 32 c (dO_c not)
/// signalling each slot it rotated through `rotated` (no buffers) before it
/// gives the slot back; the producer refills a slot once the MMA warp has
/// released it too. Chunk j holds pairs 32 j to 32 j + 31 whole (interleaved,
/// or half-split loaded pair-complete as two 32-column pieces:
/// pairHalfChunks), so each chunk is a part of the rows at pair_offset 32 j
/// (rotateColumnPart), turned in a loop of passes with its buffer, rows and
/// position pinned at the rotation. The chunks after the first are one
/// scf.for to D / 64 + min(kvHead, 0) (a count LLVM cannot fold, as the MMA
/// warp's), the pair offset (an attribute) chosen by one scf.if a chunk
/// index (the sm_90a scores warpgroup's form).
void buildGroupedChunkRotaryPartition(OpBuilder &b, Location loc,
                                      const KernelSpec &spec,
                                      const KernelPlan &plan, Value kv,
                                      Value chunks, Value qdo, Value rotated) {
  OpBuilder::InsertionGuard g(b);
  ConsumeOp consume = openRotaryPartition(b, loc, plan, kv);
  Value row = consume.getRow(), rows = consume.getRows(),
        kvHead = consume.getHead();
  // The item's position is read from the record before it goes back.
  TileRows at{row, rows, tilePosition(b, loc, spec, consume.getSlot())};
  ReleaseOp::create(b, loc, consume.getSlot(), /*after_mma=*/false);
  int64_t halves = spec.numQueryTiles(), cols = 64;
  int64_t chunkCount = spec.headDim / cols;
  auto i32 = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, value, 32);
  };
  auto rotatePart = [&](Value tile, const TileRows &tileRows, int64_t j) {
    rotateColumnPart(b, loc, spec, pinned(b, loc, tile), tileRows, j * cols / 2,
                     /*passLoop=*/true);
  };
  auto signal = [&](Value head) {
    auto entry = AcquireOp::create(b, loc, rotated);
    CommitOp::create(b, loc, entry.getSlot(), row, rows, head);
  };
  // A query half's chunks for S (`scores`: its chunk and K's) or for dP (V's
  // with rotate_v; dO is not rotated), every slot taken: the first at pair
  // 0, the others in the loop (its scf.ifs one fewer than the chunks: four
  // became a jump table, brx.idx, at head dim 256).
  auto overChunks = [&](bool scores, int64_t i, Value head) {
    bool rotates = scores || spec.rotateV;
    auto rotateChunk = [&](ValueRange t, int64_t j) {
      if (scores)
        rotatePart(t[0], pinnedRotaryHalf(b, loc, spec, at, i), j);
      rotatePart(t[1], pinnedRows(b, loc, at), j);
    };
    auto chunk = [&](function_ref<void(ValueRange)> rotate) {
      auto slot = GetOp::create(b, loc, chunks);
      if (rotates) {
        rotate(slot.getBuffers());
        signal(head);
      }
      ReleaseOp::create(b, loc, slot.getSlot(), /*after_mma=*/false);
    };
    chunk([&](ValueRange t) { rotateChunk(t, 0); });
    auto loop = scf::ForOp::create(
        b, loc, i32(1),
        arith::AddIOp::create(b, loc, i32(chunkCount),
                              arith::MinSIOp::create(b, loc, kvHead, i32(0))),
        i32(1));
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    chunk([&](ValueRange t) {
      for (int64_t j = 1; j < chunkCount; ++j) {
        Value isChunk = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              loop.getInductionVar(), i32(j));
        auto ifChunk = scf::IfOp::create(b, loc, isChunk);
        OpBuilder::InsertionGuard inIf(b);
        b.setInsertionPointToStart(ifChunk.thenBlock());
        rotateChunk(t, j);
      }
    });
  };
  for (int64_t pass = 0; pass < plan.groupPasses; ++pass)
    forEachGroupHead(b, loc, spec, kvHead, 0, [&](Value head) {
      for (int64_t i = 0; i < halves; ++i) {
        overChunks(/*scores=*/true, i, head);
        overChunks(/*scores=*/false, i, head);
      }
      // The pass's chunks of Q's halves and of K, read by the MMA warp's dK
      // and dQ products.
      auto qdoSlot = GetOp::create(b, loc, qdo);
      ValueRange t = qdoSlot.getBuffers();
      for (int64_t i = 0; i < halves; ++i)
        rotatePart(t[i], pinnedRotaryHalf(b, loc, spec, at, i), pass);
      rotatePart(t[2 * halves], pinnedRows(b, loc, at), pass);
      signal(head);
      ReleaseOp::create(b, loc, qdoSlot.getSlot(), /*after_mma=*/false);
    });
}

/// Blackwell grouped-query backward at block size 128 (docs/pipeline.md,
/// "Grouped-query attention"; docs/block-sizes.md): the grouped backward's
/// work item (a block and a k/v head; buildBlackwellGroupedBackward) with the
/// block-128 backward's split (buildBlackwellLargeBlockBackward):
///   load     K, V (128 rows) into "kv" once an item; Q and dO of each query
///            head in 64-row halves into "qdo" (buildGroupedLoadPartition)
///   mma      per query head, per query half i: S_i, dP_i into "s", "dp";
///            as P_i, dS_i arrive in "pds", dQ_i = dS_i K into "dq"; then
///            dV_j += sum_i P_i[:, 64 j:]^T dO_i and dK_j += sum_i
///            dS_i[:, 64 j:]^T q_i into slot j of the rings "dv" and "dk",
///            committed every head (two entries a head: entry 2h + j is
///            always slot j, so the sum stays in its columns): the first
///            head's first product overwrites, every other one accumulates
///            (enable-input-d). One slot of a ring is acquired at a time
///            (the protocol's rule), so the slots are not held across the
///            group
///   softmax  x2: replica r takes query half r and key half r (each ring's
///            entries alternate between the replicas: an item is announced
///            twice in "items", once to each): per query head S_r and dP_r
///            from tensor memory, P_r and dS_r to shared memory, dQ_r stored
///            to the query head; the "dv" and "dk" entries of every head but
///            the last given back unread, the last head's dV_r and dK_r
///            stored once to the k/v head
/// Tensor memory (two 64-lane slots per ring, slot r replica r's): S 128 +
/// dP 128 + dQ D + dV D + dK D columns: 448 at head dim 64; at 96 and 128
/// (544, 640) it does not fit, so the item is made in passes over column
/// chunks of the head dim (KernelPlan::groupPasses, groups of 3 and more;
/// a group of 2 spilled and is refused in blockattn-warp-specialize).
///
/// With rotary embeddings (docs/rotary.md, "Grouped-query backward") as
/// buildBlackwellGroupedBackward: the softmax warpgroup takes the items from
/// "kv" (no "items" ring), rotates K (and V) in place once an item and each
/// head's Q halves in its "qdo" slot (the second at row and position + 64),
/// signalling each through "rotated", which the MMA warp waits on before it
/// reads them; it turns dQ_i back per head at query half i's rows, and the
/// group's dV_j, dK_j at key half j's. In passes (interleaved, or half-split
/// at head dim 128 in pair-complete chunks: pairHalfChunks) K stays rotated
/// through the passes, Q is rotated again every pass, both in a loop of
/// passes (pass_loop), and each pass's chunk is turned back on its own.
/// Whether the producer of the grouped block-128 passes runs its loop over
/// the heads to an opaque count (buildGroupedLoadPartition): head dim 96's
/// half-split pieces (six boxes a tile) from G = 4. There LLVM unrolled the
/// constant loops over the passes and the heads into 3 G straight loads,
/// and ptxas (CUDA 13.0) spilled the producer 8 bytes at its 120 at G = 4
/// (the pool of 504 leaves no more: 128 / 120 / 256 spilled the MMA warp).
/// At G = 2 and 3 the constant count stays: at G = 2 the opaque loop spilled
/// the MMA warp 4 bytes (session 25).
bool opaqueProducerHeads(const KernelSpec &spec) {
  return loadedChunkCols(spec) == 16 && spec.group >= 4;
}

void buildBlackwellGroupedLargeBlock(OpBuilder &b, Location loc,
                                     const KernelSpec &spec,
                                     const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = groupedValues(
      b, loc, spec, beginKernel(b, loc, Chip::sm_100a, spec, plan));

  int64_t m = spec.queryTileRows(), n = spec.tileRows(), d = spec.headDim;
  int64_t halves = spec.numQueryTiles();
  // Columns of dQ, dV and dK a pass makes (KernelPlan::groupPasses): the
  // head dim up to 64, else a 64- or 32-column chunk.
  int64_t cols = d / plan.groupPasses;
  assert(plan.softmaxReplicas == 1 && "one softmax warpgroup, both halves");
  Type f32 = b.getF32Type();
  auto tmemChannel = [&](StringRef name, int64_t cols) {
    return createTmemRing(b, loc, name, m, cols);
  };
  // Above head dim 128 (KernelPlan::groupChunkStages) "kv" carries the
  // item's record alone, "chunks" the 64-column chunks of a query half and
  // K (or dO's and V's) that S and dP are accumulated over, and "qdo" a
  // pass's chunk of Q's and dO's halves and of K.
  bool chunked = plan.groupChunkStages > 0;
  BufferType tile = tileBuffer(spec, chunked ? cols : d, loadedChunkCols(spec));
  BufferType half =
      queryBuffer(spec, chunked ? cols : d, loadedChunkCols(spec));
  SmallVector<Type> kvTiles, qdoTiles = {half, half, half, half};
  if (chunked)
    qdoTiles.push_back(tile);
  else
    kvTiles = {tile, tile};
  Value kv =
      createChannel(b, loc, ChannelType::get(ctx, kvTiles, MemorySpace::smem),
                    "kv", plan.numStages);
  Value chunks;
  if (chunked)
    chunks = createChannel(
        b, loc, ChannelType::get(ctx, {half, tile}, MemorySpace::smem),
        "chunks", plan.groupChunkStages);
  Value qdo =
      createChannel(b, loc, ChannelType::get(ctx, qdoTiles, MemorySpace::smem),
                    "qdo", plan.groupStages);
  bool rotary = spec.hasRotary();
  // With rotary embeddings the softmax warpgroup takes the items from "kv"
  // itself and signals each rotation (an item's K and V, a head's Q) through
  // "rotated", as the grouped block-64 backward does. In chunks a rotary
  // warpgroup rotates every streamed slot and signals it
  // (buildGroupedChunkRotaryPartition), a signal a slot of "chunks" or "qdo".
  Value items, rotated;
  if (chunked && rotary)
    rotated = createChannel(
        b, loc, ChannelType::get(ctx, ArrayRef<Type>(), MemorySpace::smem),
        "rotated", plan.rotaryDepth);
  else
    std::tie(items, rotated) = createGroupedSignals(b, loc, spec, plan);
  Value sCh = tmemChannel("s", n), dpCh = tmemChannel("dp", n);
  Value dqCh = tmemChannel("dq", cols), dvCh = tmemChannel("dv", cols),
        dkCh = tmemChannel("dk", cols);
  BufferType wide = queryBuffer(spec, n);
  Value pdsCh = createChannel(
      b, loc, ChannelType::get(ctx, {wide, wide}, MemorySpace::smem), "pds",
      halves);

  if (chunked)
    buildGroupedChunkLoadPartition(b, loc, spec, values, kv, chunks, qdo, plan);
  else
    buildGroupedLoadPartition(b, loc, spec, values, kv, qdo, plan,
                              opaqueProducerHeads(spec));
  if (chunked && rotary)
    buildGroupedChunkRotaryPartition(b, loc, spec, plan, kv, chunks, qdo,
                                     rotated);

  // MMA issuer: per item, the G query heads in order.
  {
    OpBuilder::InsertionGuard g(b);
    MmaLoop loop = beginMmaLoop(b, loc, spec, kv, Value(), plan.registers.mma);
    // Beside the rotary warpgroup (four warpgroups) the MMA warp's budget is
    // the launch's 128: it still gets its setmaxnreg, without which ptxas
    // (CUDA 13.0) spilled the kernel 392-572 bytes.
    if (chunked && rotary &&
        plan.registers.mma == TargetLimits::launchRegisterCap(4 * 128, 1))
      cast<PartitionOp>(loop.consume->getParentOp()).setExplicitRegs(true);
    Value row = loop.row, rows = loop.rows, kvHead = loop.head;
    Value k, v;
    if (!chunked) {
      k = loop.operands[0];
      v = loop.operands[1];
    }
    // Every operand pinned at its use (pinned): K, V and the scratch sit at
    // the same addresses for the whole group.
    if (items) {
      auto item = AcquireOp::create(b, loc, items);
      CommitOp::create(b, loc, item.getSlot(), row, rows, kvHead);
    }
    // The item's K (and V), rotated once for the group (in chunks every
    // chunk slot is signalled instead).
    if (!chunked)
      awaitRotated(b, loc, rotated);
    // Pass j makes columns [j C, j C + C) of the gradients from the same
    // columns of Q, dO and K; S and dP at full depth every pass.
    for (int64_t pass = 0; pass < plan.groupPasses; ++pass) {
      int64_t col = pass * cols;
      auto queryHead = [&](Value head, bool first) {
        // In chunks the head's S and dP come first, over "chunks": its "qdo"
        // slot comes after them (the producer's order, buildGroupedChunkLoad
        // Partition; taken first, the MMA warp would wait on it while the
        // producer waits on a full "chunks").
        if (chunked)
          issueChunkedScores(b, loc, spec, chunks, sCh, dpCh, row, rows, head,
                             kvHead, rotated);
        auto qdoSlot = GetOp::create(b, loc, qdo);
        awaitRotated(b, loc, rotated);
        ValueRange t = qdoSlot.getBuffers();
        SmallVector<Value> q(t.take_front(halves)),
            dout(t.slice(halves, halves));
        HalfScratch scratch;
        // In passes every operand is pinned after the query head (PinOp's
        // anchor): K, V, Q and dO sit in one-slot rings at fixed addresses,
        // and ptxas, which sees through a plain pin, hoisted the descriptors
        // of all their chunks out of the loops (the MMA warp spilled at 256
        // registers at G = 2 and needed 224 at G = 4; anchored, 128-144).
        Value anchor = plan.groupPasses > 1 ? head : Value();
        if (chunked) {
          // The slot holds the pass's chunks: dQ_i,c = dS_i K_c.
          scratch = issueHalfDq(b, loc, halves, t.back(), dqCh, pdsCh, row,
                                rows, head, /*anchor=*/head);
        } else if (plan.groupPasses == 1) {
          scratch = issueHalfScoreProducts(b, loc, q, dout, k, v, sCh, dpCh,
                                           dqCh, pdsCh, row, rows, head);
        } else {
          auto chunkOf = [&](Value tile) {
            return columnsOf(b, loc, pinned(b, loc, tile, head), col, cols);
          };
          scratch = issueHalfScoreProducts(b, loc, q, dout, k, v, sCh, dpCh,
                                           dqCh, pdsCh, row, rows, head,
                                           chunkOf(k), /*anchor=*/head);
          for (Value &tile : q)
            tile = chunkOf(tile);
          for (Value &tile : dout)
            tile = chunkOf(tile);
        }
        // Key half j's sum goes into the ring's slot j every head: each head
        // announces two entries of "dv" (and of "dk"), so entry 2h + j is
        // always slot j, whose columns nothing else writes. The replicas give
        // the entries of the group's other heads back unread, and the first
        // head's first product overwrites the slot.
        for (int64_t j = 0; j < halves;
             ++j) // dV_j += sum_i P_i[:, 64 j:]^T dO_i
          issueKeyHalfSum(b, loc, spec, dvCh, scratch.p, dout, j,
                          /*accumulate=*/!first, row, rows, kvHead, anchor);
        for (int64_t j = 0; j < halves;
             ++j) // dK_j += sum_i dS_i[:, 64 j:]^T q_i
          issueKeyHalfSum(b, loc, spec, dkCh, scratch.ds, q, j,
                          /*accumulate=*/!first, row, rows, kvHead, anchor);
        for (Value slot : scratch.slots)
          ReleaseOp::create(b, loc, slot, /*after_mma=*/true);
        ReleaseOp::create(b, loc, qdoSlot.getSlot(), /*after_mma=*/true);
      };
      Value firstHead = groupQueryHead(b, loc, spec, kvHead, 0);
      queryHead(firstHead, /*first=*/true);
      auto later = [&](Value head) { queryHead(head, /*first=*/false); };
      if (plan.groupPasses > 1) {
        // In passes the loop over the other heads runs to a pinned G (a trip
        // count LLVM cannot see, so it neither unrolls the loop nor hoists
        // an item's ring positions out of it; opaqueGroupEnd's min(kvHead, 0)
        // let LLVM bound the count and turn G = 2's one trip into a branch).
        // A plain pin is an empty asm that ptxas sees through: at G = 2 it
        // read the loop's one trip and laid both passes' four heads out in
        // one straight run (the item loop the MMA warp's only backward
        // branch), values of later heads computed early and spilled (316
        // bytes at head dim 128, 75 STL at 144 registers; at G = 3 it keeps
        // both head loops and spills nothing). Pinned after the k/v head,
        // G + min(kvHead, 0), the count is opaque to ptxas too (groups of 3
        // and more keep the plain pin: their PTX unchanged).
        auto i32 = [&](int64_t value) -> Value {
          return arith::ConstantIntOp::create(b, loc, value, 32);
        };
        Value upper =
            spec.group == 2
                ? PinOp::create(b, loc, b.getI32Type(), i32(spec.group), kvHead)
                      .getResult()
                : PinOp::create(b, loc, i32(spec.group)).getResult();
        auto others = scf::ForOp::create(b, loc, i32(1), upper, i32(1));
        OpBuilder::InsertionGuard inLoop(b);
        b.setInsertionPoint(others.getBody()->getTerminator());
        later(
            arith::AddIOp::create(b, loc, firstHead, others.getInductionVar()));
      } else {
        forEachGroupHead(b, loc, spec, kvHead, 1, later);
      }
    }
    if (items) {
      endMmaLoop(b, loc, loop, items);
    } else {
      // The softmax warpgroup's loop is over "kv", which the producer
      // closes: nothing to close here.
      ReleaseOp::create(b, loc, loop.slot, /*after_mma=*/true);
    }
  }

  // The softmax gradient + epilogue warpgroup, both halves in turn.
  {
    OpBuilder::InsertionGuard g(b);
    // With rotary embeddings the warpgroup takes the items from "kv" itself:
    // K and V (rotated here), or in chunks the record alone.
    SmallVector<Type> keyTiles;
    if (rotary && !chunked)
      keyTiles = {tile, tile};
    // Half-split chunks (pairHalfChunks: head dims 96 and 128) are stored as
    // two pieces (16 or 32 columns), each through a staging buffer of its
    // width.
    bool pieces = pairHalfChunks(spec);
    SoftmaxLoop item =
        beginSoftmaxLoop(b, loc, plan, rotary ? kv : items, keyTiles,
                         queryBuffer(spec, pieces ? cols / 2 : cols));
    Value staging = item.staging;
    // Above head dim 128 with half-split pairs and dlse the warpgroup is
    // one register short of its 224 (four warpgroups share the pool): ptxas
    // (CUDA 13.0) spilled the item loop's "kv" position (4-8 bytes). With
    // its shared-memory addresses derived from pinned bases at each use
    // (pinned_bases) LLVM holds none of the swizzled offsets and barrier
    // addresses it hoisted out of the item loop, and nothing spills
    // (session 25).
    if (chunked && rotary && spec.rotary == RotaryMode::half_split && spec.dlse)
      item.partition.setPinnedBases(true);
    Value blockRow = item.row, blockRows = item.rows, kvHead = item.head;
    // With rotary embeddings K (and V) of the item's 128 rows, rotated in
    // place once for the group.
    TileRows at{blockRow, blockRows,
                rotary ? tilePosition(b, loc, spec, item.slot) : Value()};
    if (rotary && !chunked) {
      SmallVector<Value> keys = {item.buffers[0]};
      if (spec.rotateV)
        keys.push_back(item.buffers[1]);
      rotateAndSignal(b, loc, spec, keys, at, kvHead, rotated,
                      /*queries=*/false, /*passLoop=*/plan.groupPasses > 1);
    }
    ReleaseOp::create(b, loc, item.slot, /*after_mma=*/false);
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIntOp::create(b, loc, value, 32);
    };
    // Half i: rows [64 i, 64 i + 64) of the block, min(64, max(0, rows -
    // 64 i)) of them valid; its per-row values (dlse) are read at the
    // block's row when it has none (its first row may lie past the tokens).
    struct Half {
      Value row, rows, readRow;
    };
    auto halfAt = [&](int64_t i, Value blockRow, Value blockRows) {
      Half h;
      Value offset = constant(i * m);
      Value left = arith::MaxSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, blockRows, offset),
          constant(0));
      h.rows = arith::MinSIOp::create(b, loc, left, constant(m));
      h.row = i == 0
                  ? blockRow
                  : arith::AddIOp::create(b, loc, blockRow, offset).getResult();
      Value any = arith::MinSIOp::create(b, loc, h.rows, constant(1));
      h.readRow = i == 0 ? blockRow
                         : arith::AddIOp::create(
                               b, loc, blockRow,
                               arith::MulIOp::create(b, loc, any, offset))
                               .getResult();
      return h;
    };
    // Computed once an item; with rotary embeddings (whose rotations and
    // ring positions take the softmax warpgroup's last registers: ptxas
    // spilled it 20-28 bytes at G = 4 with these held across the loop over
    // the heads) recomputed at each use from the pinned block row.
    bool pinHalves = rotary || plan.groupPasses > 1;
    SmallVector<Half> halvesOfItem;
    if (!pinHalves)
      for (int64_t i = 0; i < halves; ++i)
        halvesOfItem.push_back(halfAt(i, blockRow, blockRows));
    auto halfOf = [&](int64_t i) {
      if (!pinHalves)
        return halvesOfItem[i];
      return halfAt(i, PinOp::create(b, loc, blockRow),
                    PinOp::create(b, loc, blockRows));
    };
    auto wideF32 = AccType::get(ctx, {m, n}, f32);
    auto outType = AccType::get(ctx, {m, cols}, f32);
    auto rowsType = RowsType::get(ctx, m, f32);
    // The first column of the pass's chunk (KernelPlan::groupPasses).
    int64_t col = 0;
    // Gradients with respect to rotated tensors are turned back in f32, at
    // their half's rows and position, before their single rounding; those
    // are the same for every head, pinned at each use (pinnedRotaryHalf:
    // hoisted out of the loop over the heads, the table addresses spilled
    // the softmax warpgroup 8-212 bytes).
    // In passes (head dims 96 and 128 interleaved, 128 half-split in
    // pair-complete chunks: pairHalfChunks) the pass's chunk is
    // turned back on its own (unrotatePassChunk: such a chunk holds whole
    // pairs).
    auto drain = [&](Value channel, Value dest, Value head, int64_t i,
                     bool rotatedInput) {
      Value grad = takeTmem(b, loc, channel, outType);
      Half half = halfOf(i);
      if (rotatedInput && plan.groupPasses == 1)
        grad = unrotateGradient(b, loc, spec, grad,
                                pinnedRotaryHalf(b, loc, spec, at, i), Value());
      else if (rotatedInput)
        grad = unrotatePassChunk(b, loc, spec, grad, col / cols,
                                 pinnedRotaryHalf(b, loc, spec, at, i),
                                 /*rotated=*/true);
      SmallVector<StoreOp, 2> stores;
      if (pieces) {
        stores =
            storePairHalves(b, loc, spec, grad, dest, half.row, head, half.rows,
                            staging, plan.bulkStore, col / cols);
      } else {
        auto store = StoreOp::create(
            b, loc, grad, dest, half.row, head, half.rows, Value(), staging,
            plan.bulkStore ? b.getUnitAttr() : nullptr);
        if (plan.groupPasses > 1)
          store.setColOffsetAttr(b.getI64IntegerAttr(col));
        stores.push_back(store);
      }
      // With rotary embeddings in passes the warpgroup is at its registers'
      // limit: the copy-out's addresses of dQ, dV and dK, hoisted out of
      // the loops, spilled it 8 bytes at head dim 96 (pinned_steps).
      if (rotary && plan.groupPasses > 1)
        for (StoreOp store : stores)
          store.setPinnedSteps(true);
    };
    // A head's entries of "dv" and "dk" before the last: the sums so far,
    // given back unread once the head's products into them are done.
    auto skip = [&](Value channel) {
      auto get = GetOp::create(b, loc, channel);
      ReleaseOp::create(b, loc, get.getSlot(), false);
    };
    // Per query half, in the MMA warp's order: S_i and dP_i from tensor
    // memory, P_i and dS_i to it through "pds"; then (drainDq) dQ_0, dQ_1.
    auto scoresOf = [&](Value head) {
      for (int64_t i = 0; i < halves; ++i) {
        // dlse is read first, before S and dP are in registers (read next to
        // the gradient, ptxas spilled 12 bytes at head dim 64).
        Half half = halfOf(i);
        Value dlse;
        if (spec.dlse)
          dlse = LoadRowsOp::create(b, loc, rowsType, spec.dlse, half.readRow,
                                    head, half.rows);
        Value s = takeTmem(b, loc, sCh, wideF32);
        Value dp = takeTmem(b, loc, dpCh, wideF32);
        // Every valid key of the block is a column, the half's rows past
        // its valid rows zeroed; causal: the half's rows are the block's
        // tokens from 64 i.
        auto sm = SoftmaxOp::create(b, loc, wideF32, rowsType, Type(), s,
                                    blockRows, half.rows, values.scale,
                                    /*normalize=*/true, spec.causal,
                                    /*block=*/IntegerAttr());
        if (spec.causal && i > 0)
          sm.setRowOffsetAttr(b.getI64IntegerAttr(i * m));
        commitProbsAndGrads(b, loc, spec, values.scale, sm, dp, dlse, pdsCh,
                            blockRow, blockRows, head,
                            /*pinSlot=*/plan.groupPasses > 1);
      }
    };
    auto drainDq = [&](Value head) {
      for (int64_t i = 0; i < halves; ++i)
        drain(dqCh, spec.stores[2], head, i, rotary);
    };
    // With rotary embeddings, a head's Q halves rotated in its "qdo" slot
    // before the MMA warp's S_0 reads them (the MMA warp holds the slot
    // until its products complete). Nothing without.
    auto rotateQuery = [&](Value head) {
      if (!rotary || chunked)
        return;
      auto qdoSlot = GetOp::create(b, loc, qdo);
      SmallVector<Value> q(qdoSlot.getBuffers().take_front(halves));
      rotateAndSignal(b, loc, spec, q, pinnedRows(b, loc, at), head, rotated,
                      /*queries=*/true, /*passLoop=*/plan.groupPasses > 1);
      ReleaseOp::create(b, loc, qdoSlot.getSlot(), /*after_mma=*/false);
    };
    // Heads 0 .. G - 2 in one scf.for (as forEachGroupHead), the last one
    // after it, with the group's sums. The next head's Q is rotated as soon
    // as this head's P and dS are handed over, before this head's dQ is
    // drained, so that it overlaps the MMA warp's dQ, dV and dK products of
    // this head (as the grouped block-64 backward).
    // Per pass (the MMA warp's order; `col` is the pass's first column).
    for (int64_t pass = 0; pass < plan.groupPasses; ++pass) {
      col = pass * cols;
      Value first = groupQueryHead(b, loc, spec, kvHead, 0);
      rotateQuery(first);
      // Above head dim 128 (in chunks) the loop runs to G - 1 pinned after
      // the k/v head (PinOp's anchor), a count neither LLVM nor ptxas can
      // read. With the constant, LLVM turned G = 3's two trips into a loop
      // on a flag and computed ring positions and per-head addresses from
      // the count around it, and ptxas (CUDA 13.0) spilled this warpgroup
      // at its 256 registers in every G = 3 kernel at 256 (20-100 bytes)
      // and with dlse at 192 (8), and with dlse at 256 at G = 4 and 8 too
      // (24; the SASS's spill stores all after this warpgroup's setmaxnreg);
      // opaque, none of the 64 spills. The passes over half-split
      // pair-complete chunks at 96 and 128 (pairHalfChunks) pin it too: with
      // the constant, LLVM carried per-head addresses through the loop in
      // induction variables, and ptxas spilled this warpgroup with causal
      // blocks and dlse at G = 4 and 8 (28 bytes at 128, 40-88 at 96: the
      // barrier addresses of its rings, held in uniform registers, moved to
      // and spilled from its 256; session 25). (The other passes at 96 and
      // 128 keep the constant: their PTX unchanged.) With dlse too: at head
      // dim 64 with causal blocks, G = 4 and 8, LLVM carried the heads' dlse
      // row addresses through the loop, and ptxas spilled three of their
      // words (12 bytes) once the softmax's ex2 became one instruction
      // (session 39).
      Value headsBeforeLast = constant(spec.group - 1);
      if (chunked || pieces || spec.dlse)
        headsBeforeLast =
            PinOp::create(b, loc, b.getI32Type(), headsBeforeLast, kvHead);
      auto loop =
          scf::ForOp::create(b, loc, constant(0), headsBeforeLast, constant(1));
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(loop.getBody()->getTerminator());
        Value head =
            arith::AddIOp::create(b, loc, first, loop.getInductionVar());
        scoresOf(head);
        if (rotary)
          rotateQuery(arith::AddIOp::create(b, loc, head, constant(1)));
        drainDq(head);
        for (Value channel : {dvCh, dkCh})
          for (int64_t j = 0; j < halves; ++j)
            skip(channel);
      }
      Value last = groupQueryHead(b, loc, spec, kvHead, spec.group - 1);
      scoresOf(last);
      drainDq(last);
      for (int64_t j = 0; j < halves; ++j)
        drain(dvCh, spec.stores[0], kvHead, j, spec.rotateV);
      for (int64_t j = 0; j < halves; ++j)
        drain(dkCh, spec.stores[1], kvHead, j, rotary);
    }
  }
}

/// The softmax warpgroup of a 128-token block that takes both query halves
/// (the block-128 rotary backward and its column-pass form above head dim
/// 128): half h's first row, valid rows and rotary position (a placeholder
/// with a positions tensor, read at the half's rows then), then per half
/// S_h and dP_h from tensor memory into P_h and dS_h in "pds". Every valid
/// key of the block is a column; query rows past a half's valid rows are
/// zeroed, so they add nothing to dV and dK. Returns the halves' rows.
SmallVector<TileRows> commitBothHalves(OpBuilder &b, Location loc,
                                       const KernelSpec &spec, Value scale,
                                       Value row, Value blockRows, Value head,
                                       Value position, Value sCh, Value dpCh,
                                       Value pdsCh) {
  MLIRContext *ctx = b.getContext();
  int64_t m = spec.queryTileRows(), n = spec.tileRows();
  int64_t halves = spec.numQueryTiles();
  Type f32 = b.getF32Type();
  SmallVector<TileRows> half;
  for (int64_t h = 0; h < halves; ++h) {
    auto [halfRow, halfRows] = blockHalf(b, loc, row, blockRows, h, m);
    half.push_back(rotaryHalf(b, loc, spec, position, halfRow, halfRows, h));
  }
  auto wideF32 = AccType::get(ctx, {m, n}, f32);
  auto rowsType = RowsType::get(ctx, m, f32);
  for (int64_t h = 0; h < halves; ++h) {
    Value s = takeTmem(b, loc, sCh, wideF32);
    Value dp = takeTmem(b, loc, dpCh, wideF32);
    auto sm = SoftmaxOp::create(b, loc, wideF32, rowsType, Type(), s, blockRows,
                                half[h].rows, scale,
                                /*normalize=*/true, spec.causal,
                                /*block=*/IntegerAttr());
    if (spec.causal && h > 0)
      sm.setRowOffsetAttr(b.getI64IntegerAttr(h * m));
    Value dlse;
    if (spec.dlse)
      dlse =
          LoadRowsOp::create(b, loc, rowsType, spec.dlse,
                             rowsReadAt(b, loc, row, half[h].row, half[h].rows),
                             head, half[h].rows);
    commitProbsAndGrads(b, loc, spec, scale, sm, dp, dlse, pdsCh, row,
                        blockRows, head);
  }
  return half;
}

/// Blackwell rotary backward of a 128-token block (docs/block-sizes.md,
/// "The rotary backward at 128 on sm_100a"): the plain block-128 backward's
/// slot, products and tensor memory (buildBlackwellLargeBlockBackward), a
/// rotary warpgroup, and one softmax warpgroup that takes both halves of
/// every block in turn (Plan.cpp, largeBlockRotaryBackward):
///   load     TMA of q's and dO's 64-row halves, k and v (128 rows)
///   rotary   turns q's halves (the second at row and position + 64), k and
///            with rotate_v v in the load ring's slot, in place, and signals
///            the MMA warp through "rotated" (no buffers: a ring of rotated
///            tiles does not fit next to the slot and both halves' P and dS)
///   mma      once the slot is rotated: the block's record (with its
///            position) into "blocks", then the plain kernel's products
///            (issueLargeBlockBackwardProducts)
///   softmax  x1, a block at a time from "blocks": per query half h, S_h
///            and dP_h from tensor memory, P_h and dS_h to "pds"; then dQ_0,
///            dQ_1, dV_0, dV_1, dK_0, dK_1 from tensor memory (the MMA warp's
///            order), each 64-row gradient with respect to a rotated input
///            turned back in f32 at its own half's rows and positions (query
///            half h for dQ_h, key half j for dV_j and dK_j) before its single
///            rounding, staged and stored
/// With one softmax warpgroup each half is a constant: the causal mask's
/// `row_offset(64)` and dlse read per half as on sm_90a (rowsReadAt).
void buildBlackwellLargeBlockRotaryBackward(OpBuilder &b, Location loc,
                                            const KernelSpec &spec,
                                            const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = beginKernel(b, loc, Chip::sm_100a, spec, plan);

  int64_t m = spec.queryTileRows(), n = spec.tileRows(), d = spec.headDim;
  int64_t halves = spec.numQueryTiles();
  assert(plan.softmaxReplicas == 1 &&
         "one softmax warpgroup takes both halves");
  Type f32 = b.getF32Type();
  auto tmemChannel = [&](StringRef name, int64_t cols) {
    return createTmemRing(b, loc, name, m, cols);
  };
  Value qkvdo = createLoadRing(b, loc, spec, plan.numStages);
  auto signals = ChannelType::get(ctx, ArrayRef<Type>(), MemorySpace::smem);
  Value rotated = createChannel(b, loc, signals, "rotated", plan.rotaryDepth);
  Value blocks = createChannel(b, loc, signals, "blocks", 2);
  Value sCh = tmemChannel("s", n), dpCh = tmemChannel("dp", n);
  Value dqCh = tmemChannel("dq", d), dkvCh = tmemChannel("dkv", d);
  BufferType wide = queryBuffer(spec, n);
  // One slot per query half: the MMA warp holds both until the last dK.
  Value pdsCh = createChannel(
      b, loc, ChannelType::get(ctx, {wide, wide}, MemorySpace::smem), "pds",
      halves);

  buildLoadPartition(b, loc, spec, values, qkvdo, plan);
  buildRotaryPartition(b, loc, spec, qkvdo, rotated, plan.registers.rotary);

  // MMA issuer: the block's record to the softmax warpgroup, then the
  // products, every operand read once the rotary warpgroup's signal came.
  {
    OpBuilder::InsertionGuard g(b);
    MmaLoop loop =
        beginMmaLoop(b, loc, spec, qkvdo, rotated, plan.registers.mma);
    auto block = AcquireOp::create(b, loc, blocks);
    commitTile(b, loc, spec, block.getSlot(), loop.row, loop.rows, loop.head,
               tilePosition(b, loc, spec, loop.slot));
    issueLargeBlockBackwardProducts(b, loc, spec, loop, sCh, dpCh, dqCh, dkvCh,
                                    pdsCh);
    endMmaLoop(b, loc, loop, blocks);
  }

  // Softmax gradient + epilogue warpgroup, both halves of a block.
  {
    OpBuilder::InsertionGuard g(b);
    SoftmaxLoop loop =
        beginSoftmaxLoop(b, loc, plan, blocks, {}, queryBuffer(spec, d));
    Value staging = loop.staging;
    Value row = loop.row, blockRows = loop.rows, head = loop.head;
    Value position = tilePosition(b, loc, spec, loop.slot);
    ReleaseOp::create(b, loc, loop.slot, /*after_mma=*/false);
    SmallVector<TileRows> half =
        commitBothHalves(b, loc, spec, values.scale, row, blockRows, head,
                         position, sCh, dpCh, pdsCh);
    auto outType = AccType::get(ctx, {m, d}, f32);
    auto drain = [&](Value channel, Value dest, bool rotatedInput,
                     const TileRows &at) {
      Value grad = takeTmem(b, loc, channel, outType);
      if (rotatedInput)
        grad = unrotateGradient(b, loc, spec, grad, at, Value());
      StoreOp::create(b, loc, grad, dest, at.row, head, at.rows, Value(),
                      staging, plan.bulkStore ? b.getUnitAttr() : nullptr);
    };
    for (int64_t h = 0; h < halves; ++h)
      drain(dqCh, spec.stores[2], /*rotatedInput=*/true, half[h]);
    for (int64_t j = 0; j < halves; ++j)
      drain(dkvCh, spec.stores[0], spec.rotateV, half[j]);
    for (int64_t j = 0; j < halves; ++j)
      drain(dkvCh, spec.stores[1], /*rotatedInput=*/true, half[j]);
  }
}

/// The MMA warp of the backward at block size 128 above head dim 128
/// (buildBlackwellLargeBlockColumnPasses): per block from "blocks" (given
/// back at once), passes 1 and 2 accumulate both halves' S and dP over the
/// chunk slots of `chunks`, pass 3 makes the gradients' chunks. With rotary
/// embeddings (buildBlackwellLargeBlockRotaryColumnPasses) each chunk slot
/// the rotary warpgroup rotates is read only after its signal in `rotated`
/// (awaitRotated; null without rotary embeddings, which then add nothing),
/// and the softmax warpgroup loops over "blocks" itself, so "s" is not
/// closed.
void buildColumnPassMma(OpBuilder &b, Location loc, const KernelSpec &spec,
                        const KernelPlan &plan, Value blocks, Value chunks,
                        Value rotated, Value sCh, Value dpCh, Value dqCh,
                        Value dvCh, Value dkCh, Value pdsCh) {
  OpBuilder::InsertionGuard g(b);
  int64_t halves = spec.numQueryTiles();
  int64_t chunkCount = spec.numOutputChunks();
  MmaLoop loop =
      beginMmaLoop(b, loc, spec, blocks, Value(), plan.registers.mma);
  Value row = loop.row, rows = loop.rows, head = loop.head;
  // The record is all the slot carries: back at once, so that the
  // producer announces the next block while this one runs.
  ReleaseOp::create(b, loc, loop.slot, /*after_mma=*/false);
  // The signal ring of a pass's chunk slots, if the rotary warpgroup
  // rotates them: q and k in passes 1 and 3, v in pass 2 with rotate_v.
  auto rotatedIn = [&](int64_t pass) {
    return pass != 2 || spec.rotateV ? rotated : Value();
  };
  // Every operand is pinned at its use (pinned).
  auto pin = [&](Value buffer) { return pinned(b, loc, buffer); };
  // A chunk slot's tiles, in loadedTiles order.
  auto qOf = [&](ValueRange t, int64_t i) { return t[i]; };
  auto kOf = [&](ValueRange t) { return t[halves]; };
  auto vOf = [&](ValueRange t) { return t[halves + 1]; };
  auto doOf = [&](ValueRange t, int64_t i) { return t[halves + 2 + i]; };
  // The chunks [from, chunkCount) of a pass, in an scf.for: the MMA
  // warp's products do not depend on the chunk's column (the slot holds
  // it), and unrolled, LLVM kept the addresses and descriptors of a
  // block's 12 chunk slots and 56 products live across the block loop in
  // the one MMA thread (ptxas spilled 900 bytes at 168 registers).
  auto forChunks = [&](int64_t from, function_ref<void()> body) {
    if (chunkCount - from == 1)
      return body();
    auto i32 = [&](int64_t value) -> Value {
      return arith::ConstantIntOp::create(b, loc, value, 32);
    };
    auto loop = scf::ForOp::create(b, loc, i32(from), i32(chunkCount), i32(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    body();
  };
  // Both halves' products over the head dim, each accumulated in its own
  // slot of `channel` (the two held at once), each chunk slot given back
  // once the MMAs that read it complete; the first chunk overwrites.
  auto overChunks =
      [&](int64_t pass, Value channel,
          function_ref<std::pair<Value, Value>(ValueRange, int64_t)> operands) {
        SmallVector<AcquireOp> dests;
        for (int64_t i = 0; i < halves; ++i)
          dests.push_back(AcquireOp::create(b, loc, channel));
        auto chunk = [&](bool accumulate) {
          auto slot = GetOp::create(b, loc, chunks);
          awaitRotated(b, loc, rotatedIn(pass));
          for (int64_t i = 0; i < halves; ++i) {
            auto [a, bOperand] = operands(slot.getBuffers(), i);
            auto mma = MmaAsyncOp::create(b, loc, pin(a), pin(bOperand),
                                          dests[i].getBuffers()[0],
                                          /*transpose_a=*/false,
                                          /*transpose_b=*/true);
            mma.setAccumulate(accumulate);
          }
          ReleaseOp::create(b, loc, slot.getSlot(), /*after_mma=*/true);
        };
        chunk(/*accumulate=*/false);
        forChunks(1, [&] { chunk(/*accumulate=*/true); });
        for (AcquireOp dest : dests)
          CommitOp::create(b, loc, dest.getSlot(), row, rows, head);
      };
  overChunks(1, sCh, [&](ValueRange t, int64_t i) {
    return std::pair{qOf(t, i), kOf(t)}; // S_i += q_i,j k_j^T
  });
  overChunks(2, dpCh, [&](ValueRange t, int64_t i) {
    return std::pair{doOf(t, i), vOf(t)}; // dP_i += dO_i,j v_j^T
  });
  SmallVector<Value> p, ds, pdsSlots;
  for (int64_t i = 0; i < halves; ++i) {
    auto pds = GetOp::create(b, loc, pdsCh);
    pdsSlots.push_back(pds.getSlot());
    p.push_back(pds.getBuffers()[0]);
    ds.push_back(pds.getBuffers()[1]);
  }
  forChunks(0, [&] {
    auto slot = GetOp::create(b, loc, chunks);
    awaitRotated(b, loc, rotatedIn(3));
    ValueRange t = slot.getBuffers();
    for (int64_t i = 0; i < halves; ++i) {
      auto dest = AcquireOp::create(b, loc, dqCh);
      MmaAsyncOp::create(b, loc, pin(ds[i]), pin(kOf(t)), dest.getBuffers()[0],
                         false, false); // dS_i k_j
      CommitOp::create(b, loc, dest.getSlot(), row, rows, head);
    }
    // Key half h of chunk j of dV (dK): the query halves' products.
    SmallVector<Value> qChunks, doChunks;
    for (int64_t i = 0; i < halves; ++i) {
      qChunks.push_back(qOf(t, i));
      doChunks.push_back(doOf(t, i));
    }
    for (int64_t h = 0; h < halves; ++h)
      issueKeyHalfSum(b, loc, spec, dvCh, p, doChunks, h,
                      /*accumulate=*/false, row, rows, head);
    for (int64_t h = 0; h < halves; ++h)
      issueKeyHalfSum(b, loc, spec, dkCh, ds, qChunks, h,
                      /*accumulate=*/false, row, rows, head);
    ReleaseOp::create(b, loc, slot.getSlot(), /*after_mma=*/true);
  });
  for (Value slot : pdsSlots)
    ReleaseOp::create(b, loc, slot, /*after_mma=*/true);
  b.setInsertionPointAfter(loop.consume);
  if (!rotated)
    CloseOp::create(b, loc, sCh);
}

/// Blackwell backward of a 128-token block above head dim 128
/// (KernelPlan::columnPasses; docs/head-dims.md, "The sm_100a backward at
/// block size 128"): the block's q, k, v and dO (192 / 256 KiB) do not fit
/// shared memory next to its P and dS, so the producer streams them in
/// 64-column chunk slots in three passes, as on sm_90a
/// (buildColumnPassLoadPartition; the record of each block in "blocks").
///   mma      pass 1, chunk j: S_i += q_i,j k_j^T for both query halves i,
///            into two slots of "s" held at once (accumulated over the head
///            dim in tensor memory, enable-input-d after the first chunk);
///            pass 2: dP_i += dO_i,j v_j^T into "dp" likewise; once both
///            halves' P and dS arrive in "pds": pass 3, chunk j: dQ_i,j =
///            dS_i k_j into "dq", then dV_h,j = sum_i P_i[:, 64 h:]^T dO_i,j
///            into "dv" and dK_h,j = sum_i dS_i[:, 64 h:]^T q_i,j into "dk"
///            (h = 0, 1: key halves); each chunk slot goes back after the
///            MMAs that read it
///   softmax  x2: replica r takes query half r of "s" and "dp" and, in pass
///            3, dQ_r,j, dV_r,j and dK_r,j of each chunk j (each ring's
///            entries alternate between the halves), stored at row + 64 r
///            and column 64 j through one 64 x 64 staging buffer
/// Tensor memory (slot r at lane alignment 16 r): S 128 + dP 128 + dQ, dV,
/// dK 64 each = 448 columns (512 allocated).
void buildBlackwellLargeBlockColumnPasses(OpBuilder &b, Location loc,
                                          const KernelSpec &spec,
                                          const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = beginKernel(b, loc, Chip::sm_100a, spec, plan);

  int64_t m = spec.queryTileRows(), n = spec.tileRows();
  int64_t cols = spec.outputChunkCols(), chunkCount = spec.numOutputChunks();
  assert(spec.numQueryTiles() == plan.softmaxReplicas &&
         "replica r takes half r");
  Type f32 = b.getF32Type();
  Value blocks = createChannel(
      b, loc, ChannelType::get(ctx, ArrayRef<Type>(), MemorySpace::smem),
      "blocks", /*depth=*/2);
  Value chunks = createChunkRing(b, loc, spec, plan.numStages);
  auto tmemChannel = [&](StringRef name, int64_t width) {
    return createTmemRing(b, loc, name, m, width);
  };
  Value sCh = tmemChannel("s", n), dpCh = tmemChannel("dp", n);
  Value dqCh = tmemChannel("dq", cols), dvCh = tmemChannel("dv", cols),
        dkCh = tmemChannel("dk", cols);
  BufferType wide = queryBuffer(spec, n);
  Value pdsCh = createChannel(
      b, loc, ChannelType::get(ctx, {wide, wide}, MemorySpace::smem), "pds",
      plan.softmaxReplicas);

  buildColumnPassLoadPartition(b, loc, spec, values, blocks, chunks, cols,
                               plan);
  buildColumnPassMma(b, loc, spec, plan, blocks, chunks, /*rotated=*/Value(),
                     sCh, dpCh, dqCh, dvCh, dkCh, pdsCh);

  // Softmax gradient + epilogue warpgroups, replica r on half r.
  {
    OpBuilder::InsertionGuard g(b);
    SoftmaxLoop loop = beginSoftmaxLoop(
        b, loc, plan, sCh, BufferType::get(ctx, {m, n}, f32, MemorySpace::tmem),
        queryBuffer(spec, cols));
    ReplicaHalf half =
        writeHalfProbsAndGrads(b, loc, spec, values, loop, dpCh, pdsCh);
    // Chunk j of dQ of query half r, then of dV and dK of key half r: the
    // same rows, column 64 j.
    auto chunkType = AccType::get(ctx, {m, cols}, f32);
    for (int64_t j = 0; j < chunkCount; ++j) {
      for (auto [channel, dest] : {std::pair{dqCh, spec.stores[2]},
                                   {dvCh, spec.stores[0]},
                                   {dkCh, spec.stores[1]}}) {
        Value grad = takeTmem(b, loc, channel, chunkType);
        auto store = StoreOp::create(
            b, loc, grad, dest, half.row, loop.head, half.rows, Value(),
            loop.staging, plan.bulkStore ? b.getUnitAttr() : nullptr);
        store.setColOffsetAttr(b.getI64IntegerAttr(j * cols));
      }
    }
  }
}

/// The rotary warpgroup of buildBlackwellLargeBlockRotaryColumnPasses: per
/// block from "blocks" (its record carries the block's position), every
/// chunk slot of the three passes in the producer's order; chunk j of q's
/// halves and k (passes 1 and 3; v in pass 2 with rotate_v) is rotated in
/// place with the angles of pairs 32 j on (interleaved: a 64-column chunk
/// holds whole pairs, rotateColumnPart), query half i at row and position +
/// 64 i, k and v at the block's; each rotated slot is signalled through
/// `rotated` (no buffers) before the slot goes back. The slot still goes
/// back to the producer only once the MMA warp has released it too.
void buildColumnPassRotaryPartition(OpBuilder &b, Location loc,
                                    const KernelSpec &spec,
                                    const KernelPlan &plan, Value blocks,
                                    Value chunks, Value rotated) {
  OpBuilder::InsertionGuard g(b);
  ConsumeOp consume = openRotaryPartition(b, loc, plan, blocks);
  Value row = consume.getRow(), rows = consume.getRows(),
        head = consume.getHead();
  Value position = tilePosition(b, loc, spec, consume.getSlot());
  ReleaseOp::create(b, loc, consume.getSlot(), /*after_mma=*/false);
  TileRows block{row, rows, position};
  // Query half i: a rotation turns every row of its tile (the rows past the
  // block are clamped into the tables), so its rows are the block's
  // (rotateQueryTiles).
  SmallVector<TileRows> queryAt = columnPassQueryRows(b, loc, spec, block);
  for (int64_t pass = 1; pass <= 3; ++pass) {
    for (int64_t j = 0; j < spec.numOutputChunks(); ++j) {
      auto slot = GetOp::create(b, loc, chunks);
      rotateColumnPassChunk(b, loc, spec, slot.getBuffers(), pass, j, block,
                            queryAt);
      if (rotatesColumnPass(spec, pass)) {
        auto signal = AcquireOp::create(b, loc, rotated);
        CommitOp::create(b, loc, signal.getSlot(), row, rows, head);
      }
      ReleaseOp::create(b, loc, slot.getSlot(), /*after_mma=*/false);
    }
  }
}

/// Blackwell rotary backward of a 128-token block above head dim 128,
/// interleaved pairs (docs/head-dims.md, "The interleaved rotary backward
/// at block size 128 on sm_100a"): the column-pass backward's producer,
/// chunk ring, MMA warp and tensor memory
/// (buildBlackwellLargeBlockColumnPasses) with the block-128 rotary
/// backward's split of the rest (buildBlackwellLargeBlockRotaryBackward):
///   load     the block's record (with its position) into "blocks", then
///            64-column chunk slots of q's halves, k, v and dO's halves in
///            three passes (buildColumnPassLoadPartition)
///   rotary   rotates each chunk slot in place and signals "rotated"
///            (buildColumnPassRotaryPartition)
///   mma      the column-pass products, each rotated chunk slot read after
///            its signal (buildColumnPassMma)
///   softmax  x1, a block at a time from "blocks": per query half h, S_h
///            and dP_h from tensor memory, P_h and dS_h to "pds"; then per
///            chunk j, dQ_0,j, dQ_1,j, dV_0,j, dV_1,j, dK_0,j, dK_1,j (the
///            MMA warp's order), each chunk of a gradient with respect to a
///            rotated input turned back in f32 at its half's rows and
///            position + 64 h with the angles of pairs 32 j on (rotate_tile
///            inverse, head_dim and pair_offset), then stored at column 64 j
/// One softmax warpgroup, as in the block-128 rotary backward: two beside
/// the rotary warpgroup would keep too few registers for a half's S and dP
/// (Plan.cpp, planSm100aLargeBlockColumnPasses).
void buildBlackwellLargeBlockRotaryColumnPasses(OpBuilder &b, Location loc,
                                                const KernelSpec &spec,
                                                const KernelPlan &plan) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = beginKernel(b, loc, Chip::sm_100a, spec, plan);

  int64_t m = spec.queryTileRows(), n = spec.tileRows();
  int64_t halves = spec.numQueryTiles();
  int64_t cols = spec.outputChunkCols(), chunkCount = spec.numOutputChunks();
  assert(plan.softmaxReplicas == 1 &&
         (spec.rotary == RotaryMode::interleaved || pairHalfChunks(spec)) &&
         "one softmax warpgroup; a chunk holds whole pairs");
  // Half-split chunks (pairHalfChunks) are stored as two 32-column pieces,
  // through a staging buffer of their width.
  bool pieces = pairHalfChunks(spec);
  Type f32 = b.getF32Type();
  auto signals = ChannelType::get(ctx, ArrayRef<Type>(), MemorySpace::smem);
  Value blocks = createChannel(b, loc, signals, "blocks", /*depth=*/2);
  Value chunks = createChunkRing(b, loc, spec, plan.numStages);
  Value rotated = createChannel(b, loc, signals, "rotated", plan.rotaryDepth);
  auto tmemChannel = [&](StringRef name, int64_t width) {
    return createTmemRing(b, loc, name, m, width);
  };
  Value sCh = tmemChannel("s", n), dpCh = tmemChannel("dp", n);
  Value dqCh = tmemChannel("dq", cols), dvCh = tmemChannel("dv", cols),
        dkCh = tmemChannel("dk", cols);
  BufferType wide = queryBuffer(spec, n);
  // One slot per query half: the MMA warp holds both through pass 3.
  Value pdsCh = createChannel(
      b, loc, ChannelType::get(ctx, {wide, wide}, MemorySpace::smem), "pds",
      halves);

  buildColumnPassLoadPartition(b, loc, spec, values, blocks, chunks, cols,
                               plan);
  buildColumnPassRotaryPartition(b, loc, spec, plan, blocks, chunks, rotated);
  buildColumnPassMma(b, loc, spec, plan, blocks, chunks, rotated, sCh, dpCh,
                     dqCh, dvCh, dkCh, pdsCh);

  // Softmax gradient + epilogue warpgroup, both halves of a block.
  OpBuilder::InsertionGuard g(b);
  SoftmaxLoop loop = beginSoftmaxLoop(
      b, loc, plan, blocks, {}, queryBuffer(spec, pieces ? cols / 2 : cols));
  Value row = loop.row, blockRows = loop.rows, head = loop.head;
  Value position = tilePosition(b, loc, spec, loop.slot);
  ReleaseOp::create(b, loc, loop.slot, /*after_mma=*/false);
  SmallVector<TileRows> half =
      commitBothHalves(b, loc, spec, values.scale, row, blockRows, head,
                       position, sCh, dpCh, pdsCh);
  // Chunk j of a gradient: its rotation group is the chunk alone, pairs
  // 32 j on (interleaved, or half-split in pairHalfChunks' order).
  auto chunkType = AccType::get(ctx, {m, cols}, f32);
  auto drain = [&](Value channel, Value dest, bool rotatedInput, int64_t j,
                   const TileRows &at) {
    Value grad = takeTmem(b, loc, channel, chunkType);
    if (rotatedInput)
      grad = unrotateChunks(b, loc, spec, {grad},
                            RotationGroup{{j}, j * cols / 2}, at)
                 .front();
    if (pieces) {
      storePairHalves(b, loc, spec, grad, dest, at.row, head, at.rows,
                      loop.staging, plan.bulkStore, j);
      return;
    }
    auto store = StoreOp::create(b, loc, grad, dest, at.row, head, at.rows,
                                 Value(), loop.staging,
                                 plan.bulkStore ? b.getUnitAttr() : nullptr);
    store.setColOffsetAttr(b.getI64IntegerAttr(j * cols));
  };
  for (int64_t j = 0; j < chunkCount; ++j) {
    for (int64_t h = 0; h < halves; ++h)
      drain(dqCh, spec.stores[2], /*rotatedInput=*/true, j, half[h]);
    for (int64_t h = 0; h < halves; ++h)
      drain(dvCh, spec.stores[0], spec.rotateV, j, half[h]);
    for (int64_t h = 0; h < halves; ++h)
      drain(dkCh, spec.stores[1], /*rotatedInput=*/true, j, half[h]);
  }
}

} // namespace

void blockattn::buildSm100aKernel(OpBuilder &b, Location loc,
                                  const KernelSpec &spec,
                                  const KernelPlan &plan) {
  if (spec.backward && spec.group > 1 && spec.numQueryTiles() > 1)
    buildBlackwellGroupedLargeBlock(b, loc, spec, plan);
  else if (spec.backward && spec.group > 1 && plan.groupPasses > 1)
    buildBlackwellGroupedPasses(b, loc, spec, plan);
  else if (spec.backward && spec.group > 1)
    buildBlackwellGroupedBackward(b, loc, spec, plan);
  else if (spec.backward && plan.columnPasses && spec.hasRotary())
    buildBlackwellLargeBlockRotaryColumnPasses(b, loc, spec, plan);
  else if (spec.backward && plan.columnPasses)
    buildBlackwellLargeBlockColumnPasses(b, loc, spec, plan);
  else if (spec.backward && spec.numQueryTiles() > 1 && spec.hasRotary())
    buildBlackwellLargeBlockRotaryBackward(b, loc, spec, plan);
  else if (spec.backward && spec.numQueryTiles() > 1)
    buildBlackwellLargeBlockBackward(b, loc, spec, plan);
  else if (spec.backward)
    buildBlackwellBackward(b, loc, spec, plan);
  else
    buildBlackwellForward(b, loc, spec, plan);
}
