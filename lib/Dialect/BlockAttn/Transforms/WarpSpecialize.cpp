//===- WarpSpecialize.cpp - blockattn to warpspec -------------------------===//
//
// blockattn-warp-specialize: replaces a blockattn kernel op with the
// warp-specialized warpspec.kernel that implements it on one chip. This is
// where the per-chip recipe lives (which roles, how many warps and registers,
// how deep the rings are); everything below it is shared machinery.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Dialect/BlockAttn/Transforms/Passes.h"

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnOps.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace mlir::blockattn {
#define GEN_PASS_DEF_BLOCKATTNWARPSPECIALIZEPASS
#include "blockattn/Dialect/BlockAttn/Transforms/Passes.h.inc"
} // namespace mlir::blockattn

using namespace mlir;
using namespace mlir::blockattn;
using namespace mlir::warpspec;

namespace {

/// Per-tile constants of the recipe.
constexpr int64_t kProducerRegs = 40;
constexpr int64_t kMaxStages = 8;
/// Bytes the allocator needs besides the buffers: the run-time alignment
/// slack of the dynamic shared memory base, which also holds the barriers
/// and tile records (see warpspec-allocate-smem).
constexpr int64_t kSmemReserve = 1024;
/// A chunked launch gives each CTA about this many bytes of loads: enough
/// that its start (barrier setup, the search for its first tile, the first
/// load's latency) is small against its work, few enough that the hardware
/// hands out tiles in order.
constexpr int64_t kChunkLoadBytes = 192 * 1024;

/// Everything the recipes need to know about the op being lowered.
struct KernelSpec {
  Operation *op;
  StringRef kind; // "forward" or "backward"
  int64_t blockSize;
  int64_t headDim;
  Type elementType;
  Value cuSeqlens;
  Value scale;          // run-time scale, or null
  double constantScale; // used when `scale` is null
  RotaryMode rotary;
  /// Rotary operands: tables (or theta), explicit positions, rotate v too.
  Value cos, sin, positions;
  std::optional<float> theta;
  bool rotateV = false;
  bool hasRotary() const { return rotary != RotaryMode::none; }
  /// The tile position travels with the tile unless positions are explicit.
  bool needsTilePosition() const { return hasRotary() && !positions; }
  /// Tensors loaded per tile (q, k, v[, do]) and stored per tile (o, or
  /// dv, dk, dq).
  SmallVector<Value> loads;
  SmallVector<Value> stores;
  int64_t elementBytes() const { return 2; }
  int64_t tileBytes(int64_t cols) const {
    return blockSize * cols * elementBytes();
  }
};

/// The tunables of the Hopper recipes, already validated.
struct HopperPlan {
  int64_t numStages;
  int64_t numConsumers;
  bool pFromSmem;
  bool stageOutput;
  bool bulkStore;
  bool contiguousSchedule;
  /// sm_100a with rotary embeddings: depth of the rotated-tile ring.
  int64_t rotaryDepth = 0;
  /// CTAs per SM, and the tiles of one CTA of a chunked launch (0: a
  /// persistent launch).
  int64_t ctasPerSm = 1;
  int64_t tilesPerCta = 0;
  /// The producer prefetches each tile into L2 before it waits for a slot.
  bool l2Prefetch = false;
};

/// The register budget of each of `replicas` replicated warpgroups next to
/// `single` unreplicated ones whose budgets add up to `otherRegs`: the
/// registers the CTA is launched with (see TargetLimits), which setmaxnreg
/// can only move between warpgroups, less the others', split evenly.
int64_t replicaRegs(int64_t single, int64_t otherRegs, int64_t replicas,
                    int64_t ctasPerSm) {
  int64_t warpgroups = single + replicas;
  int64_t pool =
      TargetLimits::launchRegisterCap(128 * warpgroups, ctasPerSm) * warpgroups;
  return std::min<int64_t>(256, (pool - otherRegs) / replicas / 8 * 8);
}

/// Names the function arguments the kernel's parameters come from, so that
/// the launch manifest can say which tensor each parameter is.
LogicalResult nameKernelArguments(func::FuncOp func, Operation *op,
                                  ArrayRef<std::pair<StringRef, Value>> named) {
  for (auto [name, value] : named) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &func.getBody().front())
      return op->emitOpError()
             << "operand '" << name
             << "' must be an argument of the enclosing function, since it "
                "becomes a kernel parameter";
    func.setArgAttr(arg.getArgNumber(), "blockattn.name",
                    StringAttr::get(func.getContext(), name));
  }
  return success();
}

/// The function must be exactly `op; return`: the kernel is the function.
LogicalResult checkKernelFunction(func::FuncOp func, Operation *op) {
  Block &body = func.getBody().front();
  if (op->getBlock() != &body || body.getOperations().size() != 2 ||
      func.getNumResults() != 0)
    return op->emitOpError()
           << "must be the only operation of a function with no results "
              "(the function becomes the kernel)";
  return success();
}

DictionaryAttr buildInfo(OpBuilder &b, const KernelSpec &spec) {
  SmallVector<NamedAttribute> entries = {
      b.getNamedAttr("kind", b.getStringAttr(spec.kind)),
      b.getNamedAttr("block_size", b.getI64IntegerAttr(spec.blockSize)),
      b.getNamedAttr("head_dim", b.getI64IntegerAttr(spec.headDim)),
      b.getNamedAttr("element_type", TypeAttr::get(spec.elementType)),
      b.getNamedAttr("rotary",
                     b.getStringAttr(stringifyRotaryMode(spec.rotary)))};
  if (!spec.scale)
    entries.push_back(b.getNamedAttr(
        "softmax_scale",
        b.getF32FloatAttr(static_cast<float>(spec.constantScale))));
  return b.getDictionaryAttr(entries);
}

BufferType tileBuffer(const KernelSpec &spec, int64_t cols) {
  return BufferType::get(spec.elementType.getContext(), {spec.blockSize, cols},
                         spec.elementType, MemorySpace::smem);
}

/// A channel with no placement yet (the allocators fill it in).
Value createChannel(OpBuilder &b, Location loc, ChannelType type,
                    StringRef name, int64_t depth) {
  return ChannelOp::create(b, loc, type, b.getStringAttr(name),
                           b.getI64IntegerAttr(depth), nullptr, nullptr,
                           nullptr, nullptr, nullptr);
}

/// Creates a single-block region op body and returns its block.
template <typename OpTy>
Block &createBody(OpTy op, TypeRange argTypes, Location loc) {
  Block &block = op.getBody().emplaceBlock();
  for (Type type : argTypes)
    block.addArgument(type, loc);
  return block;
}

/// Where a tile's rows are for the rotary embedding.
struct TileRows {
  Value row, rows, position;
};

/// Position of the tile's first row, or a placeholder with explicit
/// positions (the rotation then reads positions[row + r]).
Value tilePosition(OpBuilder &b, Location loc, const KernelSpec &spec,
                   Value slot) {
  if (spec.needsTilePosition())
    return TilePositionOp::create(b, loc, slot);
  return arith::ConstantIntOp::create(b, loc, 0, 32);
}

FloatAttr thetaAttr(OpBuilder &b, const KernelSpec &spec) {
  return spec.theta ? b.getF32FloatAttr(*spec.theta) : FloatAttr();
}

/// Rotates shared-memory tiles (in place when `dests` is `sources`).
void rotateTiles(OpBuilder &b, Location loc, const KernelSpec &spec,
                 ValueRange sources, ValueRange dests, const TileRows &at) {
  RotateOp::create(b, loc, sources, dests, at.rows, at.row, at.position,
                   spec.cos, spec.sin, spec.positions,
                   b.getBoolAttr(spec.rotary == RotaryMode::interleaved),
                   thetaAttr(b, spec));
}

/// The angles of a [block, D] register tile's rotary pairs, read once per
/// tile, ahead of the products whose results they turn back (which hides
/// the table reads' latency) and shared by the tile's gradients.
Value rotaryAngles(OpBuilder &b, Location loc, const KernelSpec &spec,
                   const TileRows &at) {
  auto type = AccType::get(b.getContext(), {spec.blockSize, spec.headDim},
                           b.getF32Type());
  return RotaryAnglesOp::create(
      b, loc, type, at.rows, at.row, at.position, spec.cos, spec.sin,
      spec.positions, b.getBoolAttr(spec.rotary == RotaryMode::interleaved),
      thetaAttr(b, spec));
}

/// The gradient with respect to the un-rotated input from the gradient with
/// respect to the rotated one (the transposed rotation, in f32), with the
/// angles of a warpspec.rotary_angles or, if `angles` is null, read here.
Value unrotateGradient(OpBuilder &b, Location loc, const KernelSpec &spec,
                       Value grad, const TileRows &at, Value angles) {
  bool readsTables = !angles;
  return RotateTileOp::create(
      b, loc, grad.getType(), grad, at.rows, at.row, at.position,
      readsTables ? spec.cos : Value(), readsTables ? spec.sin : Value(),
      readsTables ? spec.positions : Value(), angles,
      b.getBoolAttr(spec.rotary == RotaryMode::interleaved),
      readsTables ? thetaAttr(b, spec) : FloatAttr(), b.getUnitAttr());
}

/// The tensors the kernel rotates, among the loaded tiles (q, k, v, ...).
SmallVector<Value> rotatedTiles(const KernelSpec &spec, ValueRange tiles) {
  SmallVector<Value> rotated = {tiles[0], tiles[1]};
  if (spec.rotateV)
    rotated.push_back(tiles[2]);
  return rotated;
}

/// Publishes a tile, with its position when the rotary embedding needs it.
void commitTile(OpBuilder &b, Location loc, const KernelSpec &spec, Value slot,
                Value row, Value rows, Value head, Value position) {
  CommitOp::create(b, loc, slot, row, rows, head,
                   spec.needsTilePosition() ? position : Value());
}

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
  Value oStaging;  // output staging (o-store=smem|tma)
  bool bulkStore = false;
};

/// Stores an output tile as the plan says (staged, bulk or from registers).
void storeTile(OpBuilder &b, Location loc, const ConsumerContext &c, Value tile,
               Value dest, Value divideBy) {
  StoreOp::create(b, loc, tile, dest, c.row, c.head, c.rows, divideBy,
                  c.oStaging, c.bulkStore ? b.getUnitAttr() : nullptr);
}

/// Kernel-level values every recipe starts from.
struct KernelValues {
  Value numTokens, numHeads, scale;
};

KernelValues buildKernelValues(OpBuilder &b, Location loc,
                               const KernelSpec &spec) {
  Value first = spec.loads.front();
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  KernelValues values;
  values.numTokens = memref::DimOp::create(b, loc, first, c0);
  values.numHeads = memref::DimOp::create(b, loc, first, c1);
  values.scale = spec.scale;
  if (!values.scale)
    values.scale = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(static_cast<float>(spec.constantScale)));
  return values;
}

/// Creates the `warpspec.kernel` for `chip` (with the plan's launch
/// attributes) and the values every recipe shares; leaves the builder in the
/// kernel's body, so callers hold an InsertionGuard.
KernelValues beginKernel(OpBuilder &b, Location loc, StringRef chip,
                         const KernelSpec &spec, const HopperPlan &plan) {
  auto kernel = KernelOp::create(
      b, loc, b.getStringAttr(chip),
      /*smem_bytes=*/nullptr,
      /*tmem_columns=*/nullptr,
      /*tmem_base_offset=*/nullptr, buildInfo(b, spec),
      plan.ctasPerSm > 1 ? b.getI64IntegerAttr(plan.ctasPerSm) : nullptr,
      plan.tilesPerCta > 0 ? b.getI64IntegerAttr(plan.tilesPerCta) : nullptr);
  b.setInsertionPointToStart(&createBody(kernel, {}, loc));
  return buildKernelValues(b, loc, spec);
}

/// The TMA producer partition shared by every recipe: walk the tiles, copy
/// the tiles of `spec.loads` into the ring `ring`.
void buildLoadPartition(OpBuilder &b, Location loc, const KernelSpec &spec,
                        const KernelValues &values, Value ring,
                        const HopperPlan &plan, int64_t regs) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  auto producer = PartitionOp::create(
      b, loc, b.getStringAttr("load"), RoleAttr::get(ctx, Role::load),
      b.getI64IntegerAttr(4), b.getI64IntegerAttr(regs),
      b.getI64IntegerAttr(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&createBody(producer, {}, loc));
  auto loop =
      TileLoopOp::create(b, loc, spec.cuSeqlens, values.numHeads,
                         values.numTokens, b.getI64IntegerAttr(spec.blockSize),
                         plan.contiguousSchedule ? b.getUnitAttr() : nullptr);
  SmallVector<Type> loopArgs(spec.needsTilePosition() ? 4 : 3, i32);
  Block &loopBody = createBody(loop, loopArgs, loc);
  b.setInsertionPointToStart(&loopBody);
  Value row = loopBody.getArgument(0), rows = loopBody.getArgument(1),
        head = loopBody.getArgument(2);
  Value position = spec.needsTilePosition() ? loopBody.getArgument(3) : Value();
  auto acquire = AcquireOp::create(b, loc, ring);
  acquire.setL2Prefetch(plan.l2Prefetch);
  for (auto [source, buffer] : llvm::zip(spec.loads, acquire.getBuffers()))
    TmaLoadOp::create(b, loc, source, row, head, buffer);
  commitTile(b, loc, spec, acquire.getSlot(), row, rows, head, position);
  b.setInsertionPointAfter(loop);
  CloseOp::create(b, loc, ring);
}

/// The Hopper kernel shell (DESIGN.md, "Targets"), shared by the forward and
/// the backward: one TMA producer warpgroup fills a ring with the tiles of
/// `spec.loads`, and `numConsumers` consumer warpgroups each own whole tiles,
/// taking the slots round-robin; `body` builds what a consumer does with one.
///
/// Why these numbers: a 64x64 tile is memory-bound by ~7x (32 FLOP/byte
/// forward, ~40 backward), so the recipe is about keeping loads in flight
/// and stores out of the way. The producer needs few registers (40), which
/// leaves the consumers 232 each with two of them (the forward holds S 32 +
/// O 64 + P 16 accumulator registers at D=128; the backward at most one
/// 64-register output accumulator, dS and a few row values at a time).
void buildHopperKernel(
    OpBuilder &b, Location loc, const KernelSpec &spec, const HopperPlan &plan,
    bool needsPScratch, bool needsDsScratch,
    function_ref<void(OpBuilder &, ConsumerContext &)> body) {
  MLIRContext *ctx = b.getContext();
  // The CTA's register pool (its share of the SM's registers at launch)
  // less the producer's, split among the consumers.
  int64_t consumerRegs = replicaRegs(/*single=*/1, kProducerRegs,
                                     plan.numConsumers, plan.ctasPerSm);
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = beginKernel(b, loc, "sm_90a", spec, plan);
  BufferType tile = tileBuffer(spec, spec.headDim);
  SmallVector<Type> tiles(spec.loads.size(), tile);
  auto channelType = ChannelType::get(ctx, tiles, MemorySpace::smem);
  std::string channelName;
  for (Value load : spec.loads) {
    auto arg = cast<BlockArgument>(load);
    auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
    channelName +=
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "blockattn.name")
            .str();
  }
  Value ring = createChannel(b, loc, channelType, channelName, plan.numStages);
  Type i32 = b.getI32Type();
  buildLoadPartition(b, loc, spec, values, ring, plan, kProducerRegs);

  // Consumers: each owns whole tiles, round-robin over the ring's slots.
  auto consumer = PartitionOp::create(
      b, loc, b.getStringAttr("compute"), RoleAttr::get(ctx, Role::compute),
      b.getI64IntegerAttr(4), b.getI64IntegerAttr(consumerRegs),
      b.getI64IntegerAttr(plan.numConsumers));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&createBody(consumer, {}, loc));
  ConsumerContext c;
  c.scale = values.scale;
  c.bulkStore = plan.bulkStore;
  BufferType square = tileBuffer(spec, spec.blockSize);
  if (needsPScratch)
    c.pScratch = ScratchOp::create(b, loc, square, nullptr, nullptr);
  if (needsDsScratch)
    c.dsScratch = ScratchOp::create(b, loc, square, nullptr, nullptr);
  if (plan.stageOutput)
    c.oStaging = ScratchOp::create(b, loc, tile, nullptr, nullptr);
  auto consume = ConsumeOp::create(b, loc, ring);
  SmallVector<Type> argTypes = {SlotType::get(ctx), i32, i32, i32};
  argTypes.append(tiles);
  Block &consumeBody = createBody(consume, argTypes, loc);
  b.setInsertionPointToStart(&consumeBody);
  c.slot = consume.getSlot();
  c.row = consume.getRow();
  c.rows = consume.getRows();
  c.head = consume.getHead();
  llvm::append_range(c.tiles, consume.getBufferArgs());
  if (spec.hasRotary()) {
    // q and k (and v) are rotated in place, in f32, before any product
    // reads them; the slot is this warpgroup's alone.
    c.position = tilePosition(b, loc, spec, c.slot);
    SmallVector<Value> rotated = rotatedTiles(spec, c.tiles);
    rotateTiles(b, loc, spec, rotated, rotated, {c.row, c.rows, c.position});
  }
  body(b, c);
}

/// The forward per tile: S = Q K^T, P = softmax(S) (unnormalized), O = P V,
/// release, O / rowsum stored.
void buildForwardBody(OpBuilder &b, Location loc, const KernelSpec &spec,
                      ConsumerContext &c) {
  MLIRContext *ctx = b.getContext();
  Value q = c.tiles[0], k = c.tiles[1], v = c.tiles[2];
  auto f32 = b.getF32Type();
  int64_t bs = spec.blockSize;
  auto sType = AccType::get(ctx, {bs, bs}, f32);
  auto pType = AccType::get(ctx, {bs, bs}, spec.elementType);
  auto oType = AccType::get(ctx, {bs, spec.headDim}, f32);
  auto rowsType = RowsType::get(ctx, bs, f32);
  Value s = MmaOp::create(b, loc, sType, q, k, /*transpose_a=*/false,
                          /*transpose_b=*/true);
  auto softmax = SoftmaxOp::create(b, loc, pType, rowsType, s, c.rows,
                                   /*valid_rows=*/Value(), c.scale,
                                   /*normalize=*/false);
  Value pOperand = softmax.getProbs();
  if (c.pScratch) {
    WriteOp::create(b, loc, softmax.getProbs(), c.pScratch);
    pOperand = c.pScratch;
  }
  Value o = MmaOp::create(b, loc, oType, pOperand, v, false, false);
  ReleaseOp::create(b, loc, c.slot);
  storeTile(b, loc, c, o, spec.stores[0], softmax.getRowSums());
}

/// The backward per tile (DESIGN.md, "The algorithm"). Register budget at
/// D=128: three 64-register output accumulators do not fit next to dS, so
/// the outputs are computed and stored one after the other.
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
  int64_t bs = spec.blockSize;
  auto square32 = AccType::get(ctx, {bs, bs}, f32);
  auto square16 = AccType::get(ctx, {bs, bs}, spec.elementType);
  auto outType = AccType::get(ctx, {bs, spec.headDim}, f32);
  auto rowsType = RowsType::get(ctx, bs, f32);
  Value s = MmaOp::create(b, loc, square32, q, k, false, /*transpose_b=*/true);
  auto softmax = SoftmaxOp::create(b, loc, square32, rowsType, s, c.rows,
                                   /*valid_rows=*/c.rows, c.scale,
                                   /*normalize=*/true);
  Value p = softmax.getProbs();
  WriteOp::create(b, loc, p, c.pScratch);
  Value dp = MmaOp::create(b, loc, square32, dout, v, false, true);
  Value ds = SoftmaxGradOp::create(b, loc, square16, p, dp, c.scale);
  WriteOp::create(b, loc, ds, c.dsScratch);
  // One output accumulator at a time: each is stored before the next is
  // computed. The slot is held until the last product has read it.
  // With rotary embeddings q and k (and v) were rotated in the slot, so
  // the products give gradients with respect to the rotated tensors; each
  // is turned back in f32 before its single rounding.
  // Each gradient's angles are read just before the product that makes it,
  // so that the table reads overlap the product; one set shared by the
  // three products would stay live across two stores and spill at D = 128.
  TileRows at{c.row, c.rows, c.position};
  Value angles;
  auto readAngles = [&] { angles = rotaryAngles(b, loc, spec, at); };
  auto unrotate = [&](Value grad, bool rotated) {
    if (!rotated)
      return grad;
    return unrotateGradient(b, loc, spec, grad, at, angles);
  };
  if (spec.rotateV)
    readAngles();
  Value dvAcc = MmaOp::create(b, loc, outType, c.pScratch, dout,
                              /*transpose_a=*/true, false);
  storeTile(b, loc, c, unrotate(dvAcc, spec.rotateV), spec.stores[0], Value());
  if (spec.hasRotary())
    readAngles();
  Value dkAcc = MmaOp::create(b, loc, outType, c.dsScratch, q, true, false);
  storeTile(b, loc, c, unrotate(dkAcc, spec.hasRotary()), spec.stores[1],
            Value());
  if (spec.hasRotary())
    readAngles();
  Value dqAcc = MmaOp::create(b, loc, outType, ds, k, false, false);
  ReleaseOp::create(b, loc, c.slot);
  storeTile(b, loc, c, unrotate(dqAcc, spec.hasRotary()), spec.stores[2],
            Value());
}

/// Blackwell's rotary warpgroup: the MMA reads its operands from shared
/// memory with no thread in between, so one warpgroup rotates each slot's q
/// and k (and v) from the load ring `ring` into the ring `rotated`, which
/// the MMA warp reads beside `ring` (both release their slots of `ring`).
/// With it, the MMA warp also tracks the rotated ring (and the tile's
/// position in the backward): 56 registers instead of 40 (at 40 it spills).
constexpr int64_t kRotaryRegs = 56, kRotaryMmaRegs = 56;

Value createRotaryRing(OpBuilder &b, Location loc, const KernelSpec &spec,
                       int64_t depth) {
  SmallVector<Type> tiles(spec.rotateV ? 3 : 2, tileBuffer(spec, spec.headDim));
  return createChannel(
      b, loc, ChannelType::get(b.getContext(), tiles, MemorySpace::smem),
      "rotated", depth);
}

void buildRotaryPartition(OpBuilder &b, Location loc, const KernelSpec &spec,
                          Value ring, Value rotated) {
  MLIRContext *ctx = b.getContext();
  auto partition = PartitionOp::create(
      b, loc, b.getStringAttr("rotary"), RoleAttr::get(ctx, Role::rotary),
      b.getI64IntegerAttr(4), b.getI64IntegerAttr(kRotaryRegs),
      b.getI64IntegerAttr(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&createBody(partition, {}, loc));
  auto consume = ConsumeOp::create(b, loc, ring);
  Type i32 = b.getI32Type();
  SmallVector<Type> argTypes = {SlotType::get(ctx), i32, i32, i32};
  auto ringType = cast<ChannelType>(ring.getType());
  argTypes.append(ringType.getBufferTypes().begin(),
                  ringType.getBufferTypes().end());
  Block &body = createBody(consume, argTypes, loc);
  b.setInsertionPointToStart(&body);
  Value row = consume.getRow(), rows = consume.getRows(),
        head = consume.getHead();
  SmallVector<Value> sources = rotatedTiles(spec, consume.getBufferArgs());
  Value position = tilePosition(b, loc, spec, consume.getSlot());
  auto dests = AcquireOp::create(b, loc, rotated);
  rotateTiles(b, loc, spec, sources, dests.getBuffers(), {row, rows, position});
  CommitOp::create(b, loc, dests.getSlot(), row, rows, head);
  ReleaseOp::create(b, loc, consume.getSlot(), /*after_mma=*/false);
}

/// The MMA warp's operands: the rotated q, k (and v) when there are rotary
/// embeddings, else the loaded tiles. Returns the tiles to use, in order,
/// and sets `rotatedSlot` to the slot of the rotated ring they are in.
SmallVector<Value> mmaOperands(OpBuilder &b, Location loc,
                               const KernelSpec &spec, Value rotated,
                               ValueRange loaded, Value &rotatedSlot) {
  SmallVector<Value> operands(loaded.begin(), loaded.end());
  if (!spec.hasRotary())
    return operands;
  auto get = GetOp::create(b, loc, rotated);
  rotatedSlot = get.getSlot();
  for (auto [i, tile] : llvm::enumerate(get.getBuffers()))
    operands[i] = tile;
  return operands;
}

/// sm_100a budgets: the load warpgroup 40, the MMA warpgroup 40 (56 with
/// rotary embeddings: it also tracks the rotated ring and the tile
/// position), the rotary warpgroup 56, and the two replicated
/// softmax/compute warpgroups what the CTA's pool leaves.
struct BlackwellRegs {
  static constexpr int64_t kReplicas = 2;
  int64_t load = 40, mma = 40, rotary = 0, replicated = 0;
};

BlackwellRegs blackwellRegs(const KernelSpec &spec) {
  BlackwellRegs regs;
  if (spec.hasRotary()) {
    regs.mma = kRotaryMmaRegs;
    regs.rotary = kRotaryRegs;
  }
  regs.replicated =
      replicaRegs(spec.hasRotary() ? 3 : 2, regs.load + regs.mma + regs.rotary,
                  BlackwellRegs::kReplicas, /*ctasPerSm=*/1);
  return regs;
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
                     Value ring, Value rotated, BufferType tile, int64_t regs) {
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
  args.append(spec.loads.size(), tile);
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

/// The sm_100a softmax/compute replicas' loop over S, up to its body: their
/// output staging buffer, the tile coordinates and the S slot. The builder
/// is left in the body.
struct EpilogueLoop {
  Value staging, slot, row, rows, head, sBuffer;
};

EpilogueLoop beginEpilogueLoop(OpBuilder &b, Location loc, StringRef name,
                               int64_t regs, Value sCh, BufferType sBuf,
                               BufferType tile) {
  MLIRContext *ctx = b.getContext();
  auto partition = PartitionOp::create(
      b, loc, b.getStringAttr(name), RoleAttr::get(ctx, Role::softmax),
      b.getI64IntegerAttr(4), b.getI64IntegerAttr(regs),
      b.getI64IntegerAttr(BlackwellRegs::kReplicas));
  b.setInsertionPointToStart(&createBody(partition, {}, loc));
  EpilogueLoop loop;
  loop.staging = ScratchOp::create(b, loc, tile, nullptr, nullptr);
  auto consume = ConsumeOp::create(b, loc, sCh);
  Type i32 = b.getI32Type();
  Block &body =
      createBody(consume, {SlotType::get(ctx), i32, i32, i32, sBuf}, loc);
  b.setInsertionPointToStart(&body);
  loop.slot = consume.getSlot();
  loop.row = consume.getRow();
  loop.rows = consume.getRows();
  loop.head = consume.getHead();
  loop.sBuffer = consume.getBufferArgs()[0];
  return loop;
}

/// Blackwell forward (DESIGN.md, "Targets"; the tcgen05 recipe of
/// shared/reference/blackwell-tcgen05-encodings.md). Four warpgroups:
///   load     TMA of Q, K, V into the ring "qkv" (one thread issues)
///   mma      one thread issues tcgen05.mma: S = Q K^T into the tensor-memory
///            ring "s", then, once the softmax wrote P into "p", O = P V (A
///            from tensor memory) into the ring "o"; it gives the Q/K/V slot
///            and the P slot back when those MMAs complete (tcgen05.commit)
///   softmax  x2, taking tiles round-robin: S from tensor memory, exact
///            softmax in registers, P (bf16) back into tensor memory, then
///            O from tensor memory, divided by the row sums, staged and stored
/// Registers: 512 threads share 64K registers; the load and MMA warpgroups
/// need few (40 each: one thread works, and the schedule is scalar code), so
/// each softmax warpgroup gets 216 (S 32 + O 64 + P 16 registers at D=128).
/// Tensor memory: "s", "p" and "o" are two slots deep, so tile i+1's S is
/// computed while tile i is being normalized and stored; each pair of slots
/// shares columns at lane alignments 0 and 16 (M = 64 uses half the lanes):
/// 64 + 32 + D columns, 256 allocated at D = 128.
void buildBlackwellForward(OpBuilder &b, Location loc, const KernelSpec &spec,
                           const HopperPlan &plan) {
  MLIRContext *ctx = b.getContext();
  BlackwellRegs regs = blackwellRegs(spec);
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = beginKernel(b, loc, "sm_100a", spec, plan);

  int64_t bs = spec.blockSize;
  Type f32 = b.getF32Type();
  BufferType tile = tileBuffer(spec, spec.headDim);
  auto tmemTile = [&](int64_t cols, Type element) {
    return BufferType::get(ctx, {bs, cols}, element, MemorySpace::tmem);
  };
  BufferType sBuf = tmemTile(bs, f32), pBuf = tmemTile(bs, spec.elementType),
             oBuf = tmemTile(spec.headDim, f32);
  Value qkv = createChannel(
      b, loc, ChannelType::get(ctx, {tile, tile, tile}, MemorySpace::smem),
      "qkv", plan.numStages);
  Value sCh = createChannel(
      b, loc, ChannelType::get(ctx, {sBuf}, MemorySpace::tmem), "s", 2);
  Value pCh = createChannel(
      b, loc, ChannelType::get(ctx, {pBuf}, MemorySpace::tmem), "p", 2);
  Value oCh = createChannel(
      b, loc, ChannelType::get(ctx, {oBuf}, MemorySpace::tmem), "o", 2);
  Value rotated = spec.hasRotary()
                      ? createRotaryRing(b, loc, spec, plan.rotaryDepth)
                      : Value();

  buildLoadPartition(b, loc, spec, values, qkv, plan, regs.load);
  if (rotated)
    buildRotaryPartition(b, loc, spec, qkv, rotated);

  // MMA issuer.
  {
    OpBuilder::InsertionGuard g(b);
    MmaLoop loop = beginMmaLoop(b, loc, spec, qkv, rotated, tile, regs.mma);
    Value row = loop.row, rows = loop.rows, head = loop.head;
    Value q = loop.operands[0], k = loop.operands[1], v = loop.operands[2];
    auto s = AcquireOp::create(b, loc, sCh);
    MmaAsyncOp::create(b, loc, q, k, s.getBuffers()[0], /*transpose_a=*/false,
                       /*transpose_b=*/true);
    CommitOp::create(b, loc, s.getSlot(), row, rows, head);
    auto p = GetOp::create(b, loc, pCh);
    auto o = AcquireOp::create(b, loc, oCh);
    MmaAsyncOp::create(b, loc, p.getBuffers()[0], v, o.getBuffers()[0], false,
                       false);
    CommitOp::create(b, loc, o.getSlot(), row, rows, head);
    ReleaseOp::create(b, loc, p.getSlot(), /*after_mma=*/true);
    endMmaLoop(b, loc, loop, sCh);
  }

  // Softmax + epilogue warpgroups.
  {
    OpBuilder::InsertionGuard g(b);
    EpilogueLoop loop =
        beginEpilogueLoop(b, loc, "softmax", regs.replicated, sCh, sBuf, tile);
    Value row = loop.row, rows = loop.rows, head = loop.head,
          staging = loop.staging;
    auto sType = AccType::get(ctx, {bs, bs}, f32);
    auto pType = AccType::get(ctx, {bs, bs}, spec.elementType);
    auto oType = AccType::get(ctx, {bs, spec.headDim}, f32);
    Value sVal = TmemLoadOp::create(b, loc, sType, loop.sBuffer);
    ReleaseOp::create(b, loc, loop.slot, /*after_mma=*/false);
    auto sm = SoftmaxOp::create(b, loc, pType, RowsType::get(ctx, bs, f32),
                                sVal, rows, Value(), values.scale, false);
    auto p = AcquireOp::create(b, loc, pCh);
    TmemStoreOp::create(b, loc, sm.getProbs(), p.getBuffers()[0]);
    CommitOp::create(b, loc, p.getSlot(), row, rows, head);
    auto o = GetOp::create(b, loc, oCh);
    Value oVal = TmemLoadOp::create(b, loc, oType, o.getBuffers()[0]);
    ReleaseOp::create(b, loc, o.getSlot(), false);
    StoreOp::create(b, loc, oVal, spec.stores[0], row, head, rows,
                    sm.getRowSums(), staging,
                    plan.bulkStore ? b.getUnitAttr() : nullptr);
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
                            const HopperPlan &plan) {
  MLIRContext *ctx = b.getContext();
  BlackwellRegs regs = blackwellRegs(spec);
  OpBuilder::InsertionGuard guard(b);
  KernelValues values = beginKernel(b, loc, "sm_100a", spec, plan);

  int64_t bs = spec.blockSize, d = spec.headDim;
  Type f32 = b.getF32Type();
  BufferType tile = tileBuffer(spec, d);
  BufferType square = tileBuffer(spec, bs);
  auto tmemTile = [&](int64_t cols) {
    return BufferType::get(ctx, {bs, cols}, f32, MemorySpace::tmem);
  };
  auto tmemChannel = [&](StringRef name, int64_t cols) {
    return createChannel(
        b, loc, ChannelType::get(ctx, {tmemTile(cols)}, MemorySpace::tmem),
        name, 2);
  };
  Value qkvdo = createChannel(
      b, loc,
      ChannelType::get(ctx, {tile, tile, tile, tile}, MemorySpace::smem),
      "qkvdo", plan.numStages);
  Value sCh = tmemChannel("s", bs), dpCh = tmemChannel("dp", bs);
  Value dvCh = tmemChannel("dv", d), dkCh = tmemChannel("dk", d),
        dqCh = tmemChannel("dq", d);
  Value pdsCh = createChannel(
      b, loc, ChannelType::get(ctx, {square, square}, MemorySpace::smem), "pds",
      BlackwellRegs::kReplicas);
  Value rotated = spec.hasRotary()
                      ? createRotaryRing(b, loc, spec, plan.rotaryDepth)
                      : Value();

  buildLoadPartition(b, loc, spec, values, qkvdo, plan, regs.load);
  if (rotated)
    buildRotaryPartition(b, loc, spec, qkvdo, rotated);

  // MMA issuer.
  {
    OpBuilder::InsertionGuard g(b);
    MmaLoop loop = beginMmaLoop(b, loc, spec, qkvdo, rotated, tile, regs.mma);
    Value row = loop.row, rows = loop.rows, head = loop.head;
    ArrayRef<Value> operands = loop.operands;
    Value q = operands[0], k = operands[1], v = operands[2], dout = operands[3];
    // The epilogue turns the gradients back by the tile's position, which
    // travels with S.
    Value position = spec.needsTilePosition()
                         ? tilePosition(b, loc, spec, loop.slot)
                         : Value();
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
    product(dvCh, p, dout, true, false); // dV = P^T dO
    product(dkCh, ds, q, true, false);   // dK = dS^T Q
    product(dqCh, ds, k, false, false);  // dQ = dS K
    ReleaseOp::create(b, loc, pds.getSlot(), /*after_mma=*/true);
    endMmaLoop(b, loc, loop, sCh);
  }

  // Softmax gradient + epilogue warpgroups.
  {
    OpBuilder::InsertionGuard g(b);
    EpilogueLoop loop = beginEpilogueLoop(b, loc, "compute", regs.replicated,
                                          sCh, tmemTile(bs), tile);
    Value row = loop.row, rows = loop.rows, head = loop.head,
          staging = loop.staging;
    auto squareF32 = AccType::get(ctx, {bs, bs}, f32);
    auto squareOut = AccType::get(ctx, {bs, bs}, spec.elementType);
    auto outType = AccType::get(ctx, {bs, d}, f32);
    Value position =
        spec.hasRotary() ? tilePosition(b, loc, spec, loop.slot) : Value();
    Value s = TmemLoadOp::create(b, loc, squareF32, loop.sBuffer);
    ReleaseOp::create(b, loc, loop.slot, false);
    auto dpGet = GetOp::create(b, loc, dpCh);
    Value dp = TmemLoadOp::create(b, loc, squareF32, dpGet.getBuffers()[0]);
    ReleaseOp::create(b, loc, dpGet.getSlot(), false);
    auto sm = SoftmaxOp::create(b, loc, squareF32, RowsType::get(ctx, bs, f32),
                                s, rows, rows, values.scale, true);
    Value ds = SoftmaxGradOp::create(b, loc, squareOut, sm.getProbs(), dp,
                                     values.scale);
    auto pds = AcquireOp::create(b, loc, pdsCh);
    WriteOp::create(b, loc, sm.getProbs(), pds.getBuffers()[0]);
    WriteOp::create(b, loc, ds, pds.getBuffers()[1]);
    CommitOp::create(b, loc, pds.getSlot(), row, rows, head);
    // Gradients with respect to rotated tensors are turned back in f32
    // before their single rounding.
    // The gradients are turned back with table reads after each load from
    // tensor memory: reading the angles ahead (warpspec.rotary_angles, as
    // on sm_90a) needs 64 more registers at D = 128, and these warpgroups
    // have 160 (it spills).
    TileRows at{row, rows, position};
    auto drain = [&](Value channel, Value dest, bool rotatedInput) {
      auto get = GetOp::create(b, loc, channel);
      Value grad = TmemLoadOp::create(b, loc, outType, get.getBuffers()[0]);
      ReleaseOp::create(b, loc, get.getSlot(), false);
      if (rotatedInput)
        grad = unrotateGradient(b, loc, spec, grad, at, Value());
      StoreOp::create(b, loc, grad, dest, row, head, rows, Value(), staging,
                      plan.bulkStore ? b.getUnitAttr() : nullptr);
    };
    drain(dvCh, spec.stores[0], spec.rotateV);
    drain(dkCh, spec.stores[1], spec.hasRotary());
    drain(dqCh, spec.stores[2], spec.hasRotary());
  }
}

struct BlockAttnWarpSpecializePass
    : public blockattn::impl::BlockAttnWarpSpecializePassBase<
          BlockAttnWarpSpecializePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> kernels;
    func.walk([&](Operation *op) {
      if (isa<ForwardOp, BackwardOp>(op))
        kernels.push_back(op);
    });
    if (kernels.empty())
      return;
    if (chip != "sm_90a" && chip != "sm_100a") {
      func.emitError() << "blockattn-warp-specialize: unsupported chip '"
                       << chip << "'; supported chips: sm_90a, sm_100a";
      return signalPassFailure();
    }
    for (Operation *op : kernels)
      if (failed(lowerKernel(func, op)))
        return signalPassFailure();
  }

  LogicalResult lowerKernel(func::FuncOp func, Operation *op) {
    if (failed(checkKernelFunction(func, op)))
      return failure();
    FailureOr<KernelSpec> spec =
        TypeSwitch<Operation *, FailureOr<KernelSpec>>(op)
            .Case<ForwardOp, BackwardOp>(
                [&](auto typed) { return describe(func, typed); });
    if (failed(spec))
      return failure();
    bool backward = isa<BackwardOp>(op);
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (chip == "sm_100a") {
      FailureOr<HopperPlan> plan = blackwellPlan(op, *spec, backward);
      if (failed(plan))
        return failure();
      if (backward)
        buildBlackwellBackward(b, loc, *spec, *plan);
      else
        buildBlackwellForward(b, loc, *spec, *plan);
      op->erase();
      return success();
    }
    FailureOr<HopperPlan> plan = hopperPlan(op, *spec, backward);
    if (failed(plan))
      return failure();

    bool pScratch = backward || plan->pFromSmem;
    buildHopperKernel(b, loc, *spec, *plan, pScratch,
                      /*needsDsScratch=*/backward,
                      [&](OpBuilder &b, ConsumerContext &c) {
                        if (backward)
                          buildBackwardBody(b, loc, *spec, c);
                        else
                          buildForwardBody(b, loc, *spec, c);
                      });
    op->erase();
    return success();
  }

  FailureOr<KernelSpec> describe(func::FuncOp func, ForwardOp op) {
    SmallVector<std::pair<StringRef, Value>> named = {
        {"q", op.getQ()},
        {"k", op.getK()},
        {"v", op.getV()},
        {"o", op.getO()},
        {"cu_seqlens", op.getCuSeqlens()}};
    return describeCommon(func, op, "forward", named,
                          {op.getQ(), op.getK(), op.getV()}, {op.getO()});
  }

  FailureOr<KernelSpec> describe(func::FuncOp func, BackwardOp op) {
    SmallVector<std::pair<StringRef, Value>> named = {
        {"q", op.getQ()},   {"k", op.getK()},
        {"v", op.getV()},   {"do", op.getDout()},
        {"dq", op.getDq()}, {"dk", op.getDk()},
        {"dv", op.getDv()}, {"cu_seqlens", op.getCuSeqlens()}};
    return describeCommon(func, op, "backward", named,
                          {op.getQ(), op.getK(), op.getV(), op.getDout()},
                          {op.getDv(), op.getDk(), op.getDq()});
  }

  template <typename OpTy>
  FailureOr<KernelSpec>
  describeCommon(func::FuncOp func, OpTy op, StringRef kind,
                 SmallVector<std::pair<StringRef, Value>> named,
                 SmallVector<Value> loads, SmallVector<Value> stores) {
    if (op.getScale())
      named.push_back({"softmax_scale", op.getScale()});
    if (op.getRotaryCos()) {
      named.push_back({"cos", op.getRotaryCos()});
      named.push_back({"sin", op.getRotarySin()});
    }
    if (op.getPositions())
      named.push_back({"positions", op.getPositions()});
    if (failed(nameKernelArguments(func, op, named)))
      return failure();
    KernelSpec spec{op,
                    kind,
                    static_cast<int64_t>(op.getBlockSize()),
                    static_cast<int64_t>(op.getHeadDim()),
                    op.getElementType(),
                    op.getCuSeqlens(),
                    op.getScale(),
                    op.getEffectiveSoftmaxScale(),
                    op.getRotary(),
                    op.getRotaryCos(),
                    op.getRotarySin(),
                    op.getPositions(),
                    std::nullopt,
                    static_cast<bool>(op.getRotateV()),
                    loads,
                    stores};
    if (std::optional<APFloat> theta = op.getRotaryTheta())
      spec.theta = theta->convertToFloat();
    return spec;
  }

  /// The Blackwell recipe's ring depth: the deepest Q/K/V ring that fits
  /// next to the two softmax warpgroups' output staging buffers.
  FailureOr<HopperPlan> blackwellPlan(Operation *op, const KernelSpec &spec,
                                      bool backward) {
    if (oStore != "tma" && oStore != "smem") {
      op->emitOpError() << "o-store must be 'tma' or 'smem' on sm_100a (O "
                           "comes out of tensor memory into registers, then "
                           "through shared memory), got '"
                        << oStore << "'";
      return failure();
    }
    HopperPlan plan;
    int64_t slotBytes = spec.loads.size() * spec.tileBytes(spec.headDim);
    if (failed(resolveLaunch(op, slotBytes, /*hopper=*/false,
                             /*chunkedByDefault=*/false, plan)) ||
        failed(resolveL2Prefetch(op, /*byDefault=*/false, plan)))
      return failure();
    plan.numConsumers = 1; // the MMA warp takes every slot
    plan.pFromSmem = false;
    plan.stageOutput = true;
    plan.bulkStore = oStore == "tma";
    // Two output staging buffers, and the backward's two P/dS slots.
    int64_t scratch = 2 * spec.tileBytes(spec.headDim);
    if (backward)
      scratch += 2 * 2 * spec.tileBytes(spec.blockSize);
    int64_t budget =
        TargetLimits::maxSharedMemoryBytes - kSmemReserve - scratch;
    if (failed(checkNumStages(op)))
      return failure();
    // Rotary embeddings add the ring of rotated tiles: two slots deep when
    // the load ring still gets two, else one.
    int64_t rotatedSlotBytes =
        (spec.rotateV ? 3 : 2) * spec.tileBytes(spec.headDim);
    if (spec.hasRotary()) {
      plan.rotaryDepth =
          (budget - 2 * rotatedSlotBytes) / slotBytes >= 2 ? 2 : 1;
      budget -= plan.rotaryDepth * rotatedSlotBytes;
    }
    plan.numStages =
        numStages > 0 ? numStages : std::min(kMaxStages, budget / slotBytes);
    if (plan.numStages < 1) {
      op->emitOpError() << "no ring of " << spec.loads.size() << "-tile slots ("
                        << slotBytes << " bytes each) fits in shared memory";
      return failure();
    }
    return plan;
  }

  /// `num-stages` becomes the ring's depth, a count the allocator and the
  /// lowering multiply and loop over: it is bounded by the deepest ring
  /// whose barriers alone fit in shared memory.
  LogicalResult checkNumStages(Operation *op) {
    if (numStages >= 0 && numStages <= SlotState::maxDepth)
      return success();
    return op->emitOpError()
           << "num-stages must be 0 (the recipe picks) or in [1, "
           << SlotState::maxDepth << "] (the slots whose barriers and tile "
           << "records fit in shared memory), got "
           << static_cast<int64_t>(numStages);
  }

  /// The launch: how tiles are dealt (`schedule`), how many CTAs share an
  /// SM, and for a chunked launch how many tiles a CTA gets.
  ///
  /// Why chunked for the sm_90a forward: on the H200, a persistent grid
  /// reached 1.59-1.61 ms on seed (2026-11-29), and so did a persistent
  /// version of the straightforward Triton kernel (static or with an atomic
  /// tile counter), against 1.50 ms for that kernel as a plain grid of one
  /// program per tile. Two CTAs per SM, each with one consumer, a ring of
  /// two and four tiles, took ours to 1.53 ms; D=64 with eight tiles, to
  /// 0.787 against 0.846 ms. Fewer tiles per CTA expose each CTA's start
  /// (1 tile: 2.41 ms, 2: 1.69 ms at D=128). The plain backward gains too:
  /// three tiles a CTA at D=128 (a ring of one 64 KiB slot), six at D=64 (a
  /// ring of two): 2.93 against 3.01 ms and 1.48 against 1.51 ms persistent
  /// (seed, seed-d64, H200, 2026-11-29). With rotary embeddings it depends
  /// (see chunkedByDefaultFor).
  LogicalResult resolveLaunch(Operation *op, int64_t slotBytes, bool hopper,
                              bool chunkedByDefault, HopperPlan &plan) {
    if (schedule != "auto" && schedule != "strided" &&
        schedule != "contiguous" && schedule != "chunked")
      return op->emitOpError()
             << "schedule must be 'auto', 'strided', 'contiguous' or "
                "'chunked', got '"
             << schedule << "'";
    if (ctasPerSm < 0 || ctasPerSm > 4)
      return op->emitOpError() << "ctas-per-sm must be 0 (the recipe picks) "
                                  "or in [1, 4], got "
                               << static_cast<int64_t>(ctasPerSm);
    if (!hopper && ctasPerSm > 1)
      return op->emitOpError()
             << "ctas-per-sm above 1 is implemented for sm_90a only";
    if (tilesPerCta < 0 || tilesPerCta > std::numeric_limits<int32_t>::max())
      return op->emitOpError()
             << "tiles-per-cta must be 0 (the recipe picks) or in [1, "
             << std::numeric_limits<int32_t>::max() << "], got "
             << static_cast<int64_t>(tilesPerCta);
    bool chunked =
        schedule == "chunked" || (schedule == "auto" && chunkedByDefault);
    if (tilesPerCta > 0 && !chunked)
      return op->emitOpError()
             << "tiles-per-cta applies to a chunked launch; this one is "
                "persistent (schedule '"
             << schedule << "')";
    plan.contiguousSchedule = chunked || schedule == "contiguous";
    plan.ctasPerSm = ctasPerSm > 0 ? ctasPerSm : (chunked && hopper ? 2 : 1);
    if (chunked)
      plan.tilesPerCta =
          tilesPerCta > 0 ? tilesPerCta
                          : std::max<int64_t>(1, kChunkLoadBytes / slotBytes);
    return success();
  }

  /// Two consumer warpgroups hide one tile's math and stores behind the
  /// other's. The plain backward at head dim 64 does better with one of
  /// 256 registers and the deeper ring the freed scratch allows (6 slots
  /// instead of 4): on the H200, 1.525 against 1.593 ms (seed-d64,
  /// 2026-11-29); at head dim 128 one is no faster (3.036 against 3.014 ms)
  /// and with rotary embeddings much slower (the rotation's latency is no
  /// longer overlapped: 3.80 against 3.05 ms on the rope workload).
  static int64_t defaultConsumers(const KernelSpec &spec, bool backward) {
    return backward && spec.headDim <= 64 && !spec.hasRotary() ? 1 : 2;
  }

  /// `l2-prefetch`: the producer asks for each tile in L2 before it waits for
  /// a slot. Under `auto` only where it measured faster and was tested on
  /// the GPU (H200, 2026-11-29): the plain Hopper backward at head dim 64,
  /// chunked, whose two 32 KiB slots a CTA leave DRAM short of requests
  /// (1.452 against 1.477 ms on seed-d64). The rotary forwards at head dim
  /// 128 measured faster with it too (half-split 1.72 against 1.86 ms on
  /// seed) but their 40-register producers then spill 8-12 bytes, and with
  /// 48 registers the gain was gone; they stay off until that is settled.
  /// Elsewhere it made DRAM idle more, not less: the plain D=128 forward
  /// 1.594 against 1.516 ms, the D=128 backward 3.08 against 2.92.
  LogicalResult resolveL2Prefetch(Operation *op, bool byDefault,
                                  HopperPlan &plan) {
    if (l2Prefetch != "auto" && l2Prefetch != "on" && l2Prefetch != "off")
      return op->emitOpError()
             << "l2-prefetch must be 'auto', 'on' or 'off', got '" << l2Prefetch
             << "'";
    plan.l2Prefetch = l2Prefetch == "on" || (l2Prefetch == "auto" && byDefault);
    return success();
  }

  /// Which Hopper kernels launch chunked unless told otherwise: those
  /// without rotary embeddings, and the half-split rotary backward at head
  /// dim 128, whose rotation the second CTA on the SM hides as well as a
  /// second consumer would (H200, 2026-11-29: 3.61 against 3.81 ms on seed,
  /// 2.89 against 2.98 ms on rope). At head dim 64 that backward is faster
  /// persistent (1.96 against 2.06 ms on seed-d64), as are the rotary
  /// forward (1.50 against 1.60 ms on rope; 0.95 against 1.06 ms on
  /// seed-d64) and the interleaved rotary backward (3.28 against 3.32 ms;
  /// 2.23 against 2.31 ms at head dim 64), with two consumers.
  static bool chunkedByDefaultFor(const KernelSpec &spec, bool backward) {
    return !spec.hasRotary() || (backward && spec.headDim > 64 &&
                                 spec.rotary == RotaryMode::half_split);
  }

  FailureOr<HopperPlan> hopperPlan(Operation *op, const KernelSpec &spec,
                                   bool backward) {
    if (numConsumers < 0 || numConsumers > 3) {
      op->emitOpError() << "num-consumers must be 0 (the recipe picks), 1, 2 "
                           "or 3 (warpgroups of 128 threads next to the "
                           "producer), got "
                        << static_cast<int64_t>(numConsumers);
      return failure();
    }
    if (pOperand != "registers" && pOperand != "smem") {
      op->emitOpError() << "p-operand must be 'registers' or 'smem', got '"
                        << pOperand << "'";
      return failure();
    }
    if (oStore != "tma" && oStore != "smem" && oStore != "registers") {
      op->emitOpError() << "o-store must be 'tma', 'smem' or 'registers', "
                           "got '"
                        << oStore << "'";
      return failure();
    }
    HopperPlan plan;
    int64_t slotBytes = spec.loads.size() * spec.tileBytes(spec.headDim);
    bool chunkedByDefault =
        numConsumers <= 1 && chunkedByDefaultFor(spec, backward);
    if (failed(resolveLaunch(op, slotBytes, /*hopper=*/true, chunkedByDefault,
                             plan)))
      return failure();
    bool prefetchByDefault = backward && !spec.hasRotary() &&
                             spec.headDim <= 64 && plan.tilesPerCta > 0;
    if (failed(resolveL2Prefetch(op, prefetchByDefault, plan)))
      return failure();
    // Two CTAs per SM leave each 128 registers a thread at launch: one
    // consumer warpgroup (216 after setmaxnreg) next to the producer.
    plan.numConsumers = numConsumers > 0     ? numConsumers
                        : plan.ctasPerSm > 1 ? 1
                                             : defaultConsumers(spec, backward);
    plan.pFromSmem = pOperand == "smem";
    plan.stageOutput = oStore != "registers";
    plan.bulkStore = oStore == "tma";

    int64_t scratchPerConsumer = 0;
    if (backward || plan.pFromSmem)
      scratchPerConsumer += spec.tileBytes(spec.blockSize);
    if (backward)
      scratchPerConsumer += spec.tileBytes(spec.blockSize);
    if (plan.stageOutput)
      scratchPerConsumer += spec.tileBytes(spec.headDim);
    int64_t scratchBytes = plan.numConsumers * scratchPerConsumer;
    int64_t budget = TargetLimits::sharedMemoryBudget(plan.ctasPerSm) -
                     kSmemReserve - scratchBytes;
    // Consumers take slots round-robin, so the depth is a multiple of their
    // number (see the warpspec.kernel verifier).
    int64_t fits = std::min(kMaxStages, budget / slotBytes);
    fits -= fits % plan.numConsumers;
    if (failed(checkNumStages(op)))
      return failure();
    if (numStages % plan.numConsumers != 0) {
      op->emitOpError() << "num-stages must be a non-negative multiple of "
                           "num-consumers ("
                        << plan.numConsumers << "), got "
                        << static_cast<int64_t>(numStages);
      return failure();
    }
    plan.numStages = numStages > 0 ? numStages : fits;
    if (plan.numStages < 1) {
      op->emitOpError() << "no ring of " << spec.loads.size() << "-tile slots ("
                        << slotBytes << " bytes each, a multiple of "
                        << plan.numConsumers
                        << " slots) fits in shared memory next to "
                        << scratchBytes << " bytes of scratch";
      return failure();
    }
    return plan;
  }
};

} // namespace
