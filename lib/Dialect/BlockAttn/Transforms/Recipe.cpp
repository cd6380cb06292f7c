//===- Recipe.cpp - the pieces every warpspec recipe is built of ----------===//

#include "Recipe.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::blockattn;
using namespace mlir::warpspec;

namespace {

DictionaryAttr buildInfo(OpBuilder &b, const KernelSpec &spec) {
  SmallVector<NamedAttribute> entries = {
      b.getNamedAttr("kind", b.getStringAttr(spec.kind())),
      b.getNamedAttr("block_size", b.getI64IntegerAttr(spec.blockSize)),
      b.getNamedAttr("head_dim", b.getI64IntegerAttr(spec.headDim)),
      b.getNamedAttr("element_type", TypeAttr::get(spec.elementType)),
      b.getNamedAttr("rotary",
                     b.getStringAttr(stringifyRotaryMode(spec.rotary)))};
  if (spec.group > 1)
    entries.push_back(b.getNamedAttr("group", b.getI64IntegerAttr(spec.group)));
  // The launch counts tiles, not blocks, where blocks share a tile.
  if (spec.masksBlocks())
    entries.push_back(
        b.getNamedAttr("tile_rows", b.getI64IntegerAttr(spec.tileRows())));
  // Packed tiles: a work item is this many virtual blocks.
  if (spec.packsTiles())
    entries.push_back(
        b.getNamedAttr("blocks_per_tile",
                       b.getI64IntegerAttr(spec.tileRows() / spec.blockSize)));
  if (!spec.scale)
    entries.push_back(b.getNamedAttr(
        "softmax_scale",
        b.getF32FloatAttr(static_cast<float>(spec.constantScale))));
  // Only when set, so that the manifests of the other kernels stay as they
  // were.
  if (spec.causal)
    entries.push_back(b.getNamedAttr("causal", b.getUnitAttr()));
  if (spec.lse || spec.dlse)
    entries.push_back(b.getNamedAttr("lse", b.getUnitAttr()));
  return b.getDictionaryAttr(entries);
}

FloatAttr thetaAttr(OpBuilder &b, const KernelSpec &spec) {
  return spec.theta ? b.getF32FloatAttr(*spec.theta) : FloatAttr();
}

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

} // namespace

namespace mlir::blockattn {

BufferType tileBuffer(const KernelSpec &spec, int64_t cols, int64_t chunkCols) {
  return BufferType::get(spec.elementType.getContext(), {spec.tileRows(), cols},
                         spec.elementType, MemorySpace::smem, chunkCols);
}

BufferType queryBuffer(const KernelSpec &spec, int64_t cols,
                       int64_t chunkCols) {
  return BufferType::get(spec.elementType.getContext(),
                         {spec.queryTileRows(), cols}, spec.elementType,
                         MemorySpace::smem, chunkCols);
}

SmallVector<LoadedTile> loadedTiles(const KernelSpec &spec) {
  BufferType whole = tileBuffer(spec, spec.headDim);
  SmallVector<LoadedTile> tiles;
  if (spec.numQueryTiles() == 1) {
    for (Value source : spec.loads)
      tiles.push_back({source, whole, 0});
    return tiles;
  }
  BufferType half = queryBuffer(spec, spec.headDim);
  for (int64_t offset = 0; offset < spec.tileRows();
       offset += spec.queryTileRows())
    tiles.push_back({spec.loads[0], half, offset});
  for (Value source : ArrayRef<Value>(spec.loads).drop_front()) {
    // The backward's dO is an A operand (dP = dO V^T) like q: in halves too.
    if (spec.backward && source == spec.loads.back()) {
      for (int64_t offset = 0; offset < spec.tileRows();
           offset += spec.queryTileRows())
        tiles.push_back({source, half, offset});
      continue;
    }
    tiles.push_back({source, whole, 0});
  }
  return tiles;
}

/// A channel with no placement yet (the allocators fill it in).
Value createChannel(OpBuilder &b, Location loc, ChannelType type,
                    StringRef name, int64_t depth) {
  return ChannelOp::create(b, loc, type, b.getStringAttr(name),
                           b.getI64IntegerAttr(depth), nullptr, nullptr,
                           nullptr, nullptr, nullptr, nullptr);
}

Value createLoadRing(OpBuilder &b, Location loc, const KernelSpec &spec,
                     int64_t depth, bool positionsInSlot) {
  SmallVector<Type> tiles;
  for (const LoadedTile &loaded : loadedTiles(spec))
    tiles.push_back(loaded.type);
  if (positionsInSlot)
    tiles.push_back(BufferType::get(b.getContext(), {spec.tileRows()},
                                    b.getI32Type(), MemorySpace::smem));
  return createChannel(
      b, loc, ChannelType::get(b.getContext(), tiles, MemorySpace::smem),
      spec.loadRingName(), depth);
}

Value createChunkRing(OpBuilder &b, Location loc, const KernelSpec &spec,
                      int64_t depth) {
  int64_t cols = spec.outputChunkCols();
  // Half-split pair-complete chunks (pairHalfChunks) are two 32-column
  // pieces with the 64-byte swizzle, each its own TMA box: a box must fill
  // its swizzle span on the hardware (docs/head-dims.md, "Pair-complete
  // chunks as 64-byte-swizzled pieces").
  int64_t chunkCols = loadedChunkCols(spec);
  SmallVector<Type> tiles;
  for (const LoadedTile &tile : loadedTiles(spec))
    tiles.push_back(
        BufferType::get(b.getContext(), {tile.type.getShape()[0], cols},
                        spec.elementType, MemorySpace::smem, chunkCols));
  return createChannel(
      b, loc, ChannelType::get(b.getContext(), tiles, MemorySpace::smem),
      spec.loadRingName(), depth);
}

KernelSpec withSlotPositions(const KernelSpec &spec, ValueRange buffers) {
  KernelSpec local = spec;
  for (Value buffer : buffers)
    if (ChannelType::isRowBuffer(buffer.getType()))
      local.positions = buffer;
  return local;
}

/// Position of the tile's first row, or a placeholder with explicit
/// positions (the rotation then reads positions[row + r]).
Value tilePosition(OpBuilder &b, Location loc, const KernelSpec &spec,
                   Value slot) {
  if (spec.needsTilePosition())
    return TilePositionOp::create(b, loc, slot);
  return arith::ConstantIntOp::create(b, loc, 0, 32);
}

void buildRotaryPartition(OpBuilder &b, Location loc, const KernelSpec &spec,
                          Value ring, Value rotated, int64_t regs,
                          int64_t replicas) {
  MLIRContext *ctx = b.getContext();
  auto partition = PartitionOp::create(
      b, loc, b.getStringAttr("rotary"), RoleAttr::get(ctx, Role::rotary),
      b.getI64IntegerAttr(4), b.getI64IntegerAttr(regs),
      b.getI64IntegerAttr(replicas));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&createBody(partition, {}, loc));
  auto consume = ConsumeOp::create(b, loc, ring);
  Type i32 = b.getI32Type();
  SmallVector<Type> argTypes = {SlotType::get(ctx), i32, i32, i32};
  auto ringType = cast<ChannelType>(ring.getType());
  llvm::append_range(argTypes, ringType.getBufferTypes());
  b.setInsertionPointToStart(&createBody(consume, argTypes, loc));
  Value row = consume.getRow(), rows = consume.getRows(),
        head = consume.getHead();
  SmallVector<Value> sources = rotatedTiles(spec, consume.getBufferArgs());
  Value position = tilePosition(b, loc, spec, consume.getSlot());
  auto out = AcquireOp::create(b, loc, rotated);
  // A ring without buffers only signals: the rotation is in place.
  SmallVector<Value> dests = sources;
  if (!out.getBuffers().empty())
    dests.assign(out.getBuffers().begin(), out.getBuffers().end());
  rotateTiles(b, loc, withSlotPositions(spec, consume.getBufferArgs()), sources,
              dests, {row, rows, position});
  CommitOp::create(b, loc, out.getSlot(), row, rows, head);
  ReleaseOp::create(b, loc, consume.getSlot(), /*after_mma=*/false);
}

/// Rotates shared-memory tiles (in place when `dests` is `sources`), every
/// one at `at` (one warpspec.rotate).
/// Rotates tiles of pair-complete chunks (pairHalfRows, pairHalfChunks) chunk
/// by chunk: chunk j of C columns (pairChunkCols: 64, or 32 at head dim 96)
/// holds pairs C j / 2 to C j / 2 + C / 2 - 1 whole, first elements then
/// partners, which is warpspec.rotate's layout of a half-split part (its
/// first pair C j / 2).
static void rotatePairCompleteChunks(OpBuilder &b, Location loc,
                                     const KernelSpec &spec, ValueRange sources,
                                     ValueRange dests, const TileRows &at,
                                     bool passLoop) {
  const int64_t kChunk = pairChunkCols(spec);
  bool inPlace = llvm::equal(sources, dests);
  for (int64_t col = 0; col < spec.headDim; col += kChunk) {
    SmallVector<Value> from, to;
    for (Value tile : sources)
      from.push_back(columnsOf(b, loc, tile, col, kChunk));
    for (Value tile : dests)
      to.push_back(inPlace ? from[to.size()]
                           : columnsOf(b, loc, tile, col, kChunk));
    RotateOp::create(b, loc, from, to, at.rows, at.row, at.position, spec.cos,
                     spec.sin, spec.positions, b.getBoolAttr(false),
                     thetaAttr(b, spec), b.getI64IntegerAttr(spec.headDim),
                     b.getI64IntegerAttr(col / 2),
                     passLoop ? b.getUnitAttr() : UnitAttr());
  }
}

void rotateKeyTiles(OpBuilder &b, Location loc, const KernelSpec &spec,
                    ValueRange sources, ValueRange dests, const TileRows &at) {
  // Whole rows in pairHalfRows' order (the grouped backward above head dim
  // 128), each chunk turned in a loop of passes that recomputes its
  // addresses (pass_loop): unrolled, with the parts' per-thread addresses
  // held across the products, ptxas spilled the sm_90a consumer (8 bytes at
  // head dim 256, block 16, G = 4, causal + dlse, f16).
  if (pairHalfRows(spec))
    return rotatePairCompleteChunks(b, loc, spec, sources, dests, at,
                                    /*passLoop=*/true);
  // The grouped block-128 backward at head dim 128 (pairHalfChunks), its
  // chunks unrolled.
  if (spec.group > 1 && pairHalfChunks(spec))
    return rotatePairCompleteChunks(b, loc, spec, sources, dests, at,
                                    /*passLoop=*/false);
  auto rotate = RotateOp::create(
      b, loc, sources, dests, at.rows, at.row, at.position, spec.cos, spec.sin,
      spec.positions, b.getBoolAttr(spec.rotary == RotaryMode::interleaved),
      thetaAttr(b, spec), /*head_dim=*/IntegerAttr(),
      /*pair_offset=*/IntegerAttr(), /*pass_loop=*/UnitAttr());
  // The grouped-query backward above head dim 128 rotates K (and V) once an
  // item and Q every pass, whole rows of 192 or 256 columns: from theta
  // their passes are turned in a loop that is not unrolled (pass_loop).
  // Unrolled, ptxas computed the sines and cosines of many passes ahead of
  // their turns and spilled (the sm_90a consumer 188 bytes at 256, the
  // sm_100a softmax warpgroup 76-296 bytes; docs/rotary.md).
  if (spec.backward && spec.group > 1 && spec.theta &&
      spec.headDim > KernelShape::kMaxOutputCols)
    rotate.setPassLoop(true);
}

void rotateQueryTiles(OpBuilder &b, Location loc, const KernelSpec &spec,
                      ValueRange sources, ValueRange dests,
                      const TileRows &at) {
  if (spec.numQueryTiles() == 1) {
    rotateKeyTiles(b, loc, spec, sources, dests, at);
    return;
  }
  // A large block (loadedTiles): each query half at its own first row and
  // position. A rotation turns every row of its tile (the rows past the
  // block are clamped into the tables), so the halves' valid-row counts do
  // not matter here.
  for (int64_t i = 0; i < spec.numQueryTiles(); ++i) {
    TileRows half = at;
    if (i > 0) {
      Value offset =
          arith::ConstantIntOp::create(b, loc, i * spec.queryTileRows(), 32);
      half.row = arith::AddIOp::create(b, loc, at.row, offset);
      half.position = arith::AddIOp::create(b, loc, at.position, offset);
    }
    rotateKeyTiles(b, loc, spec, sources.slice(i, 1), dests.slice(i, 1), half);
  }
}

void rotateTiles(OpBuilder &b, Location loc, const KernelSpec &spec,
                 ValueRange sources, ValueRange dests, const TileRows &at) {
  if (spec.numQueryTiles() == 1) {
    rotateKeyTiles(b, loc, spec, sources, dests, at);
    return;
  }
  // A large block: the query halves (rotateQueryTiles), then the keys (and
  // values) from the block's first row.
  int64_t halves = spec.numQueryTiles();
  rotateQueryTiles(b, loc, spec, sources.take_front(halves),
                   dests.take_front(halves), at);
  rotateKeyTiles(b, loc, spec, sources.drop_front(halves),
                 dests.drop_front(halves), at);
}

TileRows rotaryHalf(OpBuilder &b, Location loc, const KernelSpec &spec,
                    Value position, Value halfRow, Value halfRows, int64_t i) {
  TileRows at{halfRow, halfRows, position};
  if (i > 0 && spec.needsTilePosition())
    at.position = arith::AddIOp::create(
        b, loc, position,
        arith::ConstantIntOp::create(b, loc, i * spec.queryTileRows(), 32));
  return at;
}

TileRows pinnedRows(OpBuilder &b, Location loc, const TileRows &at) {
  return {PinOp::create(b, loc, at.row), at.rows,
          PinOp::create(b, loc, at.position)};
}

TileRows pinnedRotaryHalf(OpBuilder &b, Location loc, const KernelSpec &spec,
                          const TileRows &at, int64_t i) {
  TileRows block = pinnedRows(b, loc, at);
  auto [row, rows] =
      blockHalf(b, loc, block.row, block.rows, i, spec.queryTileRows());
  return rotaryHalf(b, loc, spec, block.position, row, rows, i);
}

bool pairHalfChunks(const KernelSpec &spec) {
  if (!spec.backward || spec.rotary != RotaryMode::half_split ||
      spec.numQueryTiles() == 1)
    return false;
  // The grouped-query backward at block size 128 makes its gradients in
  // passes over 64-column chunks at head dim 128 (groupedLargeBlockPasses
  // in Plan.cpp), over 32-column ones at 96 (pairs of 16-column pieces,
  // chunk_cols = 16) and above 128 streams every input in 64-column chunks
  // (KernelPlan::groupChunkStages).
  if (spec.group > 1)
    return spec.headDim == 96 || spec.headDim == 128 ||
           spec.headDim > KernelShape::kMaxOutputCols;
  return spec.headDim > KernelShape::kMaxOutputCols;
}

bool pairPieceChunks(const KernelSpec &spec) {
  return pairHalfChunks(spec) || pairHalfRows(spec);
}

int64_t loadedChunkCols(const KernelSpec &spec) {
  if (!pairPieceChunks(spec))
    return 0;
  // Head dim 96's passes over 32-column chunks (pairHalfChunks) take
  // 16-column pieces, 32 bytes wide: the 32-byte swizzle's span.
  return spec.headDim % 64 == 0 ? 32 : 16;
}

int64_t pairChunkCols(const KernelSpec &spec) {
  return 2 * loadedChunkCols(spec);
}

bool pairHalfRows(const KernelSpec &spec) {
  return spec.backward && spec.rotary == RotaryMode::half_split &&
         spec.group > 1 && spec.numQueryTiles() == 1 &&
         spec.headDim > KernelShape::kMaxOutputCols;
}

SmallVector<StoreOp, 2> storePairHalves(OpBuilder &b, Location loc,
                                        const KernelSpec &spec, Value tile,
                                        Value dest, Value row, Value head,
                                        Value rows, Value staging, bool bulk,
                                        int64_t chunk) {
  SmallVector<StoreOp, 2> stores;
  auto type = cast<AccType>(tile.getType());
  int64_t piece = type.getShape()[1] / 2;
  auto pieceType = AccType::get(b.getContext(), {type.getShape()[0], piece},
                                type.getElementType());
  for (int64_t half = 0; half < 2; ++half) {
    Value columns = ExtractColumnsOp::create(b, loc, pieceType, tile,
                                             b.getI64IntegerAttr(half * piece));
    auto op = StoreOp::create(b, loc, columns, dest, row, head, rows, Value(),
                              staging, bulk ? b.getUnitAttr() : nullptr);
    op.setColOffsetAttr(
        b.getI64IntegerAttr(half * spec.headDim / 2 + chunk * piece));
    stores.push_back(op);
  }
  return stores;
}

RotateOp rotateColumnPart(OpBuilder &b, Location loc, const KernelSpec &spec,
                          Value tile, const TileRows &at, int64_t firstPair,
                          bool passLoop) {
  return RotateOp::create(
      b, loc, ValueRange{tile}, ValueRange{tile}, at.rows, at.row, at.position,
      spec.cos, spec.sin, spec.positions,
      b.getBoolAttr(spec.rotary == RotaryMode::interleaved), thetaAttr(b, spec),
      b.getI64IntegerAttr(spec.headDim), b.getI64IntegerAttr(firstPair),
      passLoop ? b.getUnitAttr() : UnitAttr());
}

/// The angles of a [block, D] register tile's rotary pairs, read once per
/// tile, ahead of the products whose results they turn back (which hides
/// the table reads' latency) and shared by the tile's gradients. With
/// `rowPositions` (a warpspec.load_positions), at the positions read there
/// instead of reading them here.
Value rotaryAngles(OpBuilder &b, Location loc, const KernelSpec &spec,
                   const TileRows &at, Value rowPositions) {
  auto type = AccType::get(b.getContext(), {spec.tileRows(), spec.headDim},
                           b.getF32Type());
  return RotaryAnglesOp::create(
      b, loc, type, at.rows, at.row, at.position, spec.cos, spec.sin,
      rowPositions ? Value() : spec.positions, rowPositions,
      b.getBoolAttr(spec.rotary == RotaryMode::interleaved),
      thetaAttr(b, spec));
}

/// The positions of a 64-row register tile's rows (warpspec.load_positions),
/// for a later rotaryAngles.
Value loadRowPositions(OpBuilder &b, Location loc, const KernelSpec &spec,
                       Value row) {
  auto type = RowsType::get(b.getContext(), spec.tileRows(), b.getI32Type());
  return LoadPositionsOp::create(b, loc, type, spec.positions, row);
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
      readsTables ? thetaAttr(b, spec) : FloatAttr(), b.getUnitAttr(),
      /*head_dim=*/IntegerAttr(), /*pair_offset=*/IntegerAttr());
}

SmallVector<RotationGroup> rotationGroups(const KernelSpec &spec) {
  int64_t cols = spec.outputChunkCols(), chunks = spec.numOutputChunks();
  SmallVector<RotationGroup> groups;
  if (spec.rotary == RotaryMode::interleaved) {
    for (int64_t j = 0; j < chunks; ++j)
      groups.push_back({{j}, j * cols / 2});
    return groups;
  }
  int64_t half = spec.headDim / 2;
  if (half % cols == 0) {
    // Chunk j's partners are chunk j + D / 2C, whole.
    for (int64_t j = 0; j < half / cols; ++j)
      groups.push_back({{j, j + half / cols}, j * cols});
    return groups;
  }
  RotationGroup all;
  for (int64_t j = 0; j < chunks; ++j)
    all.chunks.push_back(j);
  groups.push_back(all);
  return groups;
}

SmallVector<Value> unrotateChunks(OpBuilder &b, Location loc,
                                  const KernelSpec &spec, ValueRange chunks,
                                  const RotationGroup &group,
                                  const TileRows &at) {
  auto chunkType = cast<AccType>(chunks.front().getType());
  int64_t cols = chunkType.getShape()[1];
  auto rotateTile = [&](Value tile, int64_t firstPair) -> Value {
    auto rotate = RotateTileOp::create(
        b, loc, tile.getType(), tile, at.rows, at.row, at.position, spec.cos,
        spec.sin, spec.positions, Value(),
        b.getBoolAttr(spec.rotary == RotaryMode::interleaved),
        thetaAttr(b, spec), b.getUnitAttr(), /*head_dim=*/IntegerAttr(),
        /*pair_offset=*/IntegerAttr());
    // A part of the rows: their head dim and the part's first pair.
    if (cast<AccType>(tile.getType()).getShape()[1] != spec.headDim) {
      rotate.setHeadDimAttr(b.getI64IntegerAttr(spec.headDim));
      rotate.setPairOffsetAttr(b.getI64IntegerAttr(firstPair));
    }
    return rotate.getResult();
  };
  auto tileOf = [&](int64_t width) {
    return AccType::get(b.getContext(), {chunkType.getShape()[0], width},
                        chunkType.getElementType());
  };
  auto columns = [&](Value tile, int64_t offset, int64_t width) -> Value {
    return ExtractColumnsOp::create(b, loc, tileOf(width), tile,
                                    b.getI64IntegerAttr(offset));
  };
  auto concat = [&](ValueRange parts) -> Value {
    int64_t width = 0;
    for (Value part : parts)
      width += cast<AccType>(part.getType()).getShape()[1];
    return ConcatColumnsOp::create(b, loc, tileOf(width), parts);
  };
  if (chunks.size() == 1)
    return {rotateTile(chunks.front(), group.firstPair)};
  Value joined = concat(chunks);
  int64_t width = cols * static_cast<int64_t>(chunks.size());
  Value rotated;
  if (width <= 2 * cols) {
    rotated = rotateTile(joined, group.firstPair);
  } else {
    // Wider than two chunks (half-split at 192: the whole row), the row is
    // turned in parts of one chunk's width, C / 2 first elements and their
    // partners each, so that one part's angles are computed and used at a
    // time (from theta, the whole row's at once spilled 36 bytes in the
    // sm_100a softmax warpgroup), then put back in column order.
    int64_t half = width / 2, step = cols / 2;
    SmallVector<Value> firsts, seconds;
    for (int64_t offset = 0; offset < half; offset += step) {
      Value part = rotateTile(concat({columns(joined, offset, step),
                                      columns(joined, half + offset, step)}),
                              group.firstPair + offset);
      firsts.push_back(columns(part, 0, step));
      seconds.push_back(columns(part, step, step));
    }
    llvm::append_range(firsts, seconds);
    rotated = concat(firsts);
  }
  SmallVector<Value> parts;
  for (int64_t i = 0; i < static_cast<int64_t>(chunks.size()); ++i)
    parts.push_back(columns(rotated, i * cols, cols));
  return parts;
}

Value unrotatePassChunk(OpBuilder &b, Location loc, const KernelSpec &spec,
                        Value grad, int64_t pass, const TileRows &at,
                        bool rotated) {
  if (!rotated)
    return grad;
  // A pass's chunk holds pairs pass * C / 2 on whole: interleaved, or
  // half-split in pairHalfRows' or pairHalfChunks' order (the first
  // elements, then their partners: rotate_tile's layout of a half-split
  // part).
  assert((spec.rotary == RotaryMode::interleaved || pairHalfRows(spec) ||
          pairHalfChunks(spec)) &&
         "a half-split chunk holds one column of each of its pairs");
  int64_t cols = cast<AccType>(grad.getType()).getShape()[1];
  RotationGroup group{{pass}, pass * cols / 2};
  return unrotateChunks(b, loc, spec, grad, group, at).front();
}

/// The tensors the kernel rotates, among the loaded tiles (q, k, v, ...).
SmallVector<Value> rotatedTiles(const KernelSpec &spec, ValueRange tiles) {
  // The query halves of a large block (loadedTiles) come first.
  int64_t q = spec.numQueryTiles();
  SmallVector<Value> rotated(tiles.take_front(q + 1));
  if (spec.rotateV)
    rotated.push_back(tiles[q + 1]);
  return rotated;
}

void maskToBlocks(SoftmaxOp softmax, const KernelSpec &spec) {
  if (spec.masksBlocks())
    softmax.setBlock(static_cast<uint64_t>(spec.blockSize));
}

Value blockEnds(OpBuilder &b, Location loc, const KernelSpec &spec,
                Value slot) {
  if (!spec.packsTiles())
    return Value();
  return TilePositionOp::create(b, loc, slot);
}

void maskToBlocks(OpBuilder &b, SoftmaxOp softmax, const KernelSpec &spec,
                  Value ends) {
  if (!ends) {
    maskToBlocks(softmax, spec);
    return;
  }
  OpBuilder::InsertionGuard g(b);
  // The ends may be read right after the softmax was built.
  Operation *def = ends.getDefiningOp();
  if (def && def->getBlock() == softmax->getBlock() &&
      softmax->isBeforeInBlock(def))
    def->moveBefore(softmax);
  b.setInsertionPoint(softmax);
  Value masked =
      MaskBlocksOp::create(b, softmax.getLoc(), softmax.getScores(), ends,
                           b.getI64IntegerAttr(spec.blockSize));
  softmax.getScoresMutable().assign(masked);
}

/// Publishes a tile, with its position when the rotary embedding needs it.
void commitTile(OpBuilder &b, Location loc, const KernelSpec &spec, Value slot,
                Value row, Value rows, Value head, Value position) {
  CommitOp::create(b, loc, slot, row, rows, head,
                   spec.needsTilePosition() || spec.packsTiles() ? position
                                                                 : Value());
}
/// Creates the `warpspec.kernel` for `chip` (with the plan's launch
/// attributes) and the values every recipe shares; leaves the builder in the
/// kernel's body, so callers hold an InsertionGuard.
KernelValues beginKernel(OpBuilder &b, Location loc, Chip chip,
                         const KernelSpec &spec, const KernelPlan &plan) {
  auto kernel = KernelOp::create(
      b, loc, ChipAttr::get(b.getContext(), chip),
      /*smem_bytes=*/nullptr,
      /*tmem_columns=*/nullptr,
      /*tmem_base_offset=*/nullptr, buildInfo(b, spec),
      plan.ctasPerSm > 1 ? b.getI64IntegerAttr(plan.ctasPerSm) : nullptr,
      plan.tilesPerCta > 0 ? b.getI64IntegerAttr(plan.tilesPerCta) : nullptr,
      /*trace_records=*/nullptr);
  b.setInsertionPointToStart(&createBody(kernel, {}, loc));
  return buildKernelValues(b, loc, spec);
}

/// The kernel function's argument for a dynamic schedule's counters
/// (warpspec::kScheduleName), appended to `func` once.
static FailureOr<Value> scheduleArgument(func::FuncOp func, Location loc) {
  for (BlockArgument arg : func.getArguments())
    if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      "blockattn.name");
        name && name.getValue() == warpspec::kScheduleName)
      return Value(arg);
  Builder b(func.getContext());
  auto type = MemRefType::get({warpspec::kScheduleWords}, b.getI32Type());
  unsigned position = func.getNumArguments();
  auto attrs = b.getDictionaryAttr(b.getNamedAttr(
      "blockattn.name", b.getStringAttr(warpspec::kScheduleName)));
  if (failed(func.insertArgument(position, type, attrs, loc)))
    return failure();
  return Value(func.getArgument(position));
}

/// The load partition's shell: the producer warpgroup (one, four warps,
/// `plan.registers.load`) and its tile loop, whose body takes
/// `numLoopArgs` i32 arguments (row, rows, head[, position]); leaves `b` at
/// the start of that body (the caller guards its insertion point).
static TileLoopOp
beginLoadTileLoop(OpBuilder &b, Location loc, const KernelSpec &spec,
                  const KernelValues &values, const KernelPlan &plan,
                  unsigned numLoopArgs, Role role = Role::load) {
  MLIRContext *ctx = b.getContext();
  auto producer = PartitionOp::create(
      b, loc, b.getStringAttr("load"), RoleAttr::get(ctx, role),
      b.getI64IntegerAttr(4), b.getI64IntegerAttr(plan.registers.load),
      b.getI64IntegerAttr(1));
  if (plan.pinnedAddresses)
    producer.setPinnedBases(true);
  b.setInsertionPointToStart(&createBody(producer, {}, loc));
  auto loop =
      TileLoopOp::create(b, loc, spec.cuSeqlens, values.numHeads,
                         values.numTokens, b.getI64IntegerAttr(spec.tileRows()),
                         plan.contiguousSchedule ? b.getUnitAttr() : nullptr);
  if (plan.dynamicSchedule) {
    // The function's arguments are the kernel's parameters; a dynamic
    // schedule adds its counters to them.
    auto func = producer->getParentOfType<func::FuncOp>();
    FailureOr<Value> schedule = scheduleArgument(func, loc);
    // insertArgument fails only for a function without a body, and the
    // recipe builds into this function's body.
    assert(succeeded(schedule) && "a function with a body takes arguments");
    loop.getScheduleMutable().assign(*schedule);
  }
  if (spec.packsTiles()) {
    loop.setBlockSize(spec.blockSize);
    loop.setPacked(spec.tileRows() / spec.blockSize);
  }
  SmallVector<Type> loopArgs(numLoopArgs, b.getI32Type());
  b.setInsertionPointToStart(&createBody(loop, loopArgs, loc));
  return loop;
}

/// The TMA producer partition shared by every recipe: walk the tiles, copy
/// the tiles of `spec.loads` into the ring `ring`.
void buildLoadPartition(OpBuilder &b, Location loc, const KernelSpec &spec,
                        const KernelValues &values, Value ring,
                        const KernelPlan &plan) {
  buildRingsLoadPartition(b, loc, spec, values, ValueRange{ring}, plan);
}

void buildRingsLoadPartition(OpBuilder &b, Location loc, const KernelSpec &spec,
                             const KernelValues &values, ValueRange rings,
                             const KernelPlan &plan) {
  OpBuilder::InsertionGuard g(b);
  // The fourth argument: the position, or a packed tile's block ends.
  bool fourth = spec.needsTilePosition() || spec.packsTiles();
  TileLoopOp loop =
      beginLoadTileLoop(b, loc, spec, values, plan, fourth ? 4 : 3);
  Block &loopBody = loop.getBody().front();
  Value row = loopBody.getArgument(0), rows = loopBody.getArgument(1),
        head = loopBody.getArgument(2);
  Value position = fourth ? loopBody.getArgument(3) : Value();
  // Grouped-query attention: the loop walks the query heads and k, v are
  // read at the query head's k/v head. The G query heads of a group are
  // consecutive work items, which consecutive CTAs take at the same time, so
  // all but the first of the group's reads of a k/v tile hit L2
  // (docs/pipeline.md, "Grouped-query attention").
  Value kvHead = head;
  if (spec.group > 1)
    kvHead = arith::DivUIOp::create(
        b, loc, head, arith::ConstantIntOp::create(b, loc, spec.group, 32));
  auto tileRowOf = [&](const auto &tile) -> Value {
    if (!tile.rowOffset)
      return row;
    return arith::AddIOp::create(
        b, loc, row, arith::ConstantIntOp::create(b, loc, tile.rowOffset, 32));
  };
  // The L2 prefetch, issued at the acquire, needs every copy's coordinates
  // before it (a large block's second query half starts 64 rows in).
  SmallVector<LoadedTile> tiles = loadedTiles(spec);
  SmallVector<Value> earlyRows;
  if (plan.l2Prefetch)
    for (const auto &tile : tiles)
      earlyRows.push_back(tileRowOf(tile));
  size_t next = 0;
  for (Value ring : rings) {
    auto acquire = AcquireOp::create(b, loc, ring);
    acquire.setL2Prefetch(plan.l2Prefetch);
    for (Value buffer : acquire.getBuffers()) {
      // The tile's positions (createLoadRing's positionsInSlot).
      if (ChannelType::isRowBuffer(buffer.getType())) {
        CopyPositionsOp::create(b, loc, spec.positions, row, buffer);
        continue;
      }
      const LoadedTile &tile = tiles[next];
      Value tileRow = earlyRows.empty() ? tileRowOf(tile) : earlyRows[next];
      ++next;
      bool kvSide =
          tile.source == spec.loads[1] || tile.source == spec.loads[2];
      TmaLoadOp::create(b, loc, tile.source, tileRow, kvSide ? kvHead : head,
                        buffer);
    }
    commitTile(b, loc, spec, acquire.getSlot(), row, rows, head, position);
  }
  assert(next == tiles.size() && "the rings hold the slot's tiles");
  b.setInsertionPointAfter(loop);
  CloseOp::create(b, loc, rings.front());
}

Value pinned(OpBuilder &b, Location loc, Value buffer, Value anchor) {
  if (anchor)
    return PinOp::create(b, loc, buffer.getType(), buffer, anchor);
  return PinOp::create(b, loc, buffer.getType(), buffer);
}

Value columnsOf(OpBuilder &b, Location loc, Value tile, int64_t col,
                int64_t cols) {
  auto type = cast<BufferType>(tile.getType());
  if (col == 0 && cols == type.getShape()[1])
    return tile;
  // The view keeps the tile's layout (pair-complete pieces, chunk_cols).
  BufferType view = type.withShape({type.getShape()[0], cols});
  return SubviewOp::create(b, loc, view, tile, b.getI64IntegerAttr(col));
}

std::pair<Value, Value> blockHalf(OpBuilder &b, Location loc, Value row,
                                  Value rows, int64_t i, int64_t halfRows) {
  Value half = arith::ConstantIntOp::create(b, loc, halfRows, 32);
  if (i == 0)
    return {row, arith::MinSIOp::create(b, loc, rows, half)};
  Value offset = arith::ConstantIntOp::create(b, loc, i * halfRows, 32);
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
  Value left = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, rows, offset), zero);
  return {arith::AddIOp::create(b, loc, row, offset),
          arith::MinSIOp::create(b, loc, left, half)};
}

Value rowsReadAt(OpBuilder &b, Location loc, Value blockRow, Value row,
                 Value rows) {
  if (row == blockRow)
    return row;
  Value one = arith::ConstantIntOp::create(b, loc, 1, 32);
  Value any = arith::MinSIOp::create(b, loc, rows, one);
  Value offset = arith::SubIOp::create(b, loc, row, blockRow);
  return arith::AddIOp::create(b, loc, blockRow,
                               arith::MulIOp::create(b, loc, any, offset));
}

KernelValues groupedValues(OpBuilder &b, Location loc, const KernelSpec &spec,
                           KernelValues values) {
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  values.numHeads = memref::DimOp::create(b, loc, spec.loads[1], c1);
  return values;
}

Value groupQueryHead(OpBuilder &b, Location loc, const KernelSpec &spec,
                     Value kvHead, int64_t i) {
  Value first = arith::MulIOp::create(
      b, loc, kvHead, arith::ConstantIntOp::create(b, loc, spec.group, 32));
  if (i == 0)
    return first;
  return arith::AddIOp::create(b, loc, first,
                               arith::ConstantIntOp::create(b, loc, i, 32));
}

Value opaqueGroupEnd(OpBuilder &b, Location loc, const KernelSpec &spec,
                     Value kvHead) {
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
  Value nonPositive = arith::MinSIOp::create(b, loc, kvHead, zero);
  Value group = arith::ConstantIntOp::create(b, loc, spec.group, 32);
  return arith::AddIOp::create(b, loc, group, nonPositive);
}

void forEachGroupHead(OpBuilder &b, Location loc, const KernelSpec &spec,
                      Value kvHead, int64_t from,
                      function_ref<void(Value head)> body) {
  if (from >= spec.group)
    return;
  // i32 bounds: the kernel's scalar code is i32 (convert-warpspec-to-nvvm
  // lowers this loop as it stands).
  auto i32 = [&](int64_t value) {
    return arith::ConstantIntOp::create(b, loc, value, 32);
  };
  auto loop = scf::ForOp::create(b, loc, i32(from), i32(spec.group), i32(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(arith::AddIOp::create(b, loc, groupQueryHead(b, loc, spec, kvHead, 0),
                             loop.getInductionVar()));
}

void buildGroupedLoadPartition(OpBuilder &b, Location loc,
                               const KernelSpec &spec,
                               const KernelValues &values, Value kv, Value qdo,
                               const KernelPlan &plan, bool opaqueHeadCount) {
  OpBuilder::InsertionGuard g(b);
  // With rotary embeddings from the sequence (no positions tensor) the
  // item's position, the tile loop's fourth argument, travels with K and V:
  // every query head of the item has the same rows, so one copy serves the
  // whole group (the consumers read it from the "kv" slot).
  bool position = spec.needsTilePosition();
  TileLoopOp loop =
      beginLoadTileLoop(b, loc, spec, values, plan, position ? 4 : 3);
  Block &loopBody = loop.getBody().front();
  Value row = loopBody.getArgument(0), rows = loopBody.getArgument(1),
        kvHead = loopBody.getArgument(2);
  // Each slot's copies stand between its acquire and its commit (the
  // protocol's expect_tx counts them there). A copy reads `rowOffset` rows
  // into the block.
  auto load = [&](Value channel, ArrayRef<std::pair<Value, int64_t>> sources,
                  Value head, Value tilePosition) {
    auto acquire = AcquireOp::create(b, loc, channel);
    acquire.setL2Prefetch(plan.l2Prefetch);
    for (auto [source, buffer] : llvm::zip(sources, acquire.getBuffers())) {
      Value tileRow = row;
      if (source.second)
        tileRow = arith::AddIOp::create(
            b, loc, row,
            arith::ConstantIntOp::create(b, loc, source.second, 32));
      auto copy =
          TmaLoadOp::create(b, loc, source.first, tileRow, head, buffer);
      // Half-split rows in pair-complete chunks (above head dim 128, and at
      // block size 128 at head dim 128; every tensor, so that S and dP,
      // invariant under the same column order of both operands, are
      // unchanged).
      if (pairHalfRows(spec) || pairHalfChunks(spec))
        copy.setPairHalves(true);
    }
    CommitOp::create(b, loc, acquire.getSlot(), row, rows, head, tilePosition);
  };
  load(kv, {{spec.loads[1], 0}, {spec.loads[2], 0}}, kvHead,
       position ? loopBody.getArgument(3) : Value());
  // A block of more than 64 tokens: Q and dO in 64-row halves (each the M
  // of its products), as loadedTiles has them; K and V whole.
  SmallVector<std::pair<Value, int64_t>> queryTiles;
  for (Value source : {spec.loads[0], spec.loads[3]})
    for (int64_t offset = 0; offset < spec.tileRows();
         offset += spec.queryTileRows())
      queryTiles.push_back({source, offset});
  auto loadGroup = [&] {
    if (!opaqueHeadCount) {
      forEachGroupHead(b, loc, spec, kvHead, 0, [&](Value head) {
        load(qdo, queryTiles, head, Value());
      });
      return;
    }
    auto heads =
        scf::ForOp::create(b, loc, arith::ConstantIntOp::create(b, loc, 0, 32),
                           opaqueGroupEnd(b, loc, spec, kvHead),
                           arith::ConstantIntOp::create(b, loc, 1, 32));
    OpBuilder::InsertionGuard inHeads(b);
    b.setInsertionPoint(heads.getBody()->getTerminator());
    load(qdo, queryTiles,
         arith::AddIOp::create(b, loc, groupQueryHead(b, loc, spec, kvHead, 0),
                               heads.getInductionVar()),
         Value());
  };
  if (plan.groupPasses == 1) {
    loadGroup();
  } else {
    // Above head dim 128 the consumers make an item in passes over column
    // chunks (KernelPlan::groupPasses), each reading every query head's
    // whole Q and dO again: the group's tiles once a pass (K and V stay in
    // their slot for the item). One scf.for over the passes: unrolled, the
    // copies' addresses of every pass were held at once and ptxas spilled
    // the producer (168 bytes at head dim 256, 48 registers).
    auto i32 = [&](int64_t value) {
      return arith::ConstantIntOp::create(b, loc, value, 32);
    };
    auto passes =
        scf::ForOp::create(b, loc, i32(0), i32(plan.groupPasses), i32(1));
    OpBuilder::InsertionGuard inPasses(b);
    b.setInsertionPoint(passes.getBody()->getTerminator());
    loadGroup();
  }
  b.setInsertionPointAfter(loop);
  CloseOp::create(b, loc, kv);
}

void buildGroupedChunkLoadPartition(OpBuilder &b, Location loc,
                                    const KernelSpec &spec,
                                    const KernelValues &values, Value kv,
                                    Value chunks, Value qdo,
                                    const KernelPlan &plan) {
  OpBuilder::InsertionGuard g(b);
  // With rotary embeddings from the sequence (no positions tensor) the
  // record carries the item's position, the tile loop's fourth argument:
  // the consumers rotate the chunks and turn the gradients back at it.
  bool position = spec.needsTilePosition();
  TileLoopOp loop =
      beginLoadTileLoop(b, loc, spec, values, plan, position ? 4 : 3);
  Block &loopBody = loop.getBody().front();
  Value row = loopBody.getArgument(0), rows = loopBody.getArgument(1),
        kvHead = loopBody.getArgument(2);
  auto record = AcquireOp::create(b, loc, kv);
  CommitOp::create(b, loc, record.getSlot(), row, rows, kvHead,
                   position ? loopBody.getArgument(3) : Value());
  Value q = spec.loads[0], k = spec.loads[1], v = spec.loads[2],
        dout = spec.loads[3];
  int64_t m = spec.queryTileRows(), cols = 64;
  // One slot: each (source, k/v source?, row offset) copied at column `col`
  // (the protocol's expect_tx counts the copies between acquire and commit).
  struct Copy {
    Value source;
    bool keys;
    int64_t rowOffset;
  };
  auto load = [&](Value channel, ArrayRef<Copy> copies, Value head,
                  int64_t col) {
    auto acquire = AcquireOp::create(b, loc, channel);
    for (auto [copy, buffer] : llvm::zip_equal(copies, acquire.getBuffers())) {
      Value tileRow = row;
      if (copy.rowOffset)
        tileRow = arith::AddIOp::create(
            b, loc, row,
            arith::ConstantIntOp::create(b, loc, copy.rowOffset, 32));
      auto tma = TmaLoadOp::create(b, loc, copy.source, tileRow,
                                   copy.keys ? kvHead : head, buffer);
      tma.setColOffsetAttr(b.getI64IntegerAttr(col));
      // Half-split rows in pair-complete chunks (pairHalfChunks): chunk
      // col / 64 holds pairs col / 2 on whole, in every tensor, so that S
      // and dP (the same column order on both operands) are unchanged.
      if (pairHalfChunks(spec))
        tma.setPairHalves(true);
    }
    CommitOp::create(b, loc, acquire.getSlot(), row, rows, head);
  };
  // Pass c (unrolled: the column offsets are the copies' constants), query
  // head h of the group (one scf.for): per query half i, its and K's chunks
  // j (for S), then dO's and V's (for dP); then the pass's chunk c of Q's
  // and dO's halves and K (the gradients' operands) into "qdo".
  for (int64_t pass = 0; pass < plan.groupPasses; ++pass)
    forEachGroupHead(b, loc, spec, kvHead, 0, [&](Value head) {
      for (int64_t i = 0; i < spec.numQueryTiles(); ++i)
        for (auto [query, key] : {std::pair{q, k}, {dout, v}})
          for (int64_t col = 0; col < spec.headDim; col += cols)
            load(chunks, {{query, false, i * m}, {key, true, 0}}, head, col);
      load(qdo,
           {{q, false, 0},
            {q, false, m},
            {dout, false, 0},
            {dout, false, m},
            {k, true, 0}},
           head, pass * cols);
    });
  b.setInsertionPointAfter(loop);
  CloseOp::create(b, loc, kv);
}

void buildSplitLoadPartition(OpBuilder &b, Location loc,
                             const KernelSpec &spec,
                             const KernelValues &values, Value low, Value high,
                             int64_t lowCols, const KernelPlan &plan) {
  OpBuilder::InsertionGuard g(b);
  TileLoopOp loop = beginLoadTileLoop(b, loc, spec, values, plan, 3);
  Block &loopBody = loop.getBody().front();
  Value row = loopBody.getArgument(0), rows = loopBody.getArgument(1),
        head = loopBody.getArgument(2);
  // Each slot's copies stand between its acquire and its commit (the
  // protocol's expect_tx counts them there).
  auto load = [&](Value channel, int64_t colOffset) {
    auto acquire = AcquireOp::create(b, loc, channel);
    for (auto [source, buffer] : llvm::zip(spec.loads, acquire.getBuffers())) {
      auto copy = TmaLoadOp::create(b, loc, source, row, head, buffer);
      copy.setColOffsetAttr(b.getI64IntegerAttr(colOffset));
    }
    CommitOp::create(b, loc, acquire.getSlot(), row, rows, head);
  };
  load(low, 0);
  load(high, lowCols);
  b.setInsertionPointAfter(loop);
  CloseOp::create(b, loc, low);
}

bool rotatesColumnPass(const KernelSpec &spec, int64_t pass) {
  return spec.hasRotary() && (pass != 2 || spec.rotateV);
}

SmallVector<TileRows> columnPassQueryRows(OpBuilder &b, Location loc,
                                          const KernelSpec &spec,
                                          const TileRows &block) {
  SmallVector<TileRows> queryAt;
  for (int64_t i = 0; i < spec.numQueryTiles(); ++i) {
    TileRows half = block;
    if (i > 0) {
      Value offset =
          arith::ConstantIntOp::create(b, loc, i * spec.queryTileRows(), 32);
      half.row = arith::AddIOp::create(b, loc, block.row, offset);
      half.position = arith::AddIOp::create(b, loc, block.position, offset);
    }
    queryAt.push_back(half);
  }
  return queryAt;
}

void rotateColumnPassChunk(OpBuilder &b, Location loc, const KernelSpec &spec,
                           ValueRange t, int64_t pass, int64_t j,
                           const TileRows &block, ArrayRef<TileRows> queryAt,
                           bool passLoop) {
  int64_t halves = spec.numQueryTiles();
  int64_t firstPair = j * spec.outputChunkCols() / 2;
  // In loops of passes (the sm_90a producer) the buffer, row and position
  // are pinned at each rotation, so that LLVM does not hold their table
  // and shared-memory offsets from the partition's entry (as the consumers'
  // rotations needed, session 20).
  auto rotate = [&](Value tile, const TileRows &at) {
    if (passLoop)
      rotateColumnPart(b, loc, spec, pinned(b, loc, tile),
                       pinnedRows(b, loc, at), firstPair, passLoop);
    else
      rotateColumnPart(b, loc, spec, tile, at, firstPair, passLoop);
  };
  if (pass == 2 && spec.rotateV) {
    rotate(t[halves + 1], block);
  } else if (pass != 2) {
    for (int64_t i = 0; i < halves; ++i)
      rotate(t[i], queryAt[i]);
    rotate(t[halves], block);
  }
}

void buildColumnPassLoadPartition(OpBuilder &b, Location loc,
                                  const KernelSpec &spec,
                                  const KernelValues &values, Value blocks,
                                  Value chunks, int64_t chunkCols,
                                  const KernelPlan &plan, Value rotated) {
  OpBuilder::InsertionGuard g(b);
  // With rotary embeddings the record carries the block's position.
  bool position = spec.needsTilePosition();
  TileLoopOp loop =
      beginLoadTileLoop(b, loc, spec, values, plan, position ? 4 : 3,
                        rotated ? Role::rotary : Role::load);
  Block &loopBody = loop.getBody().front();
  Value row = loopBody.getArgument(0), rows = loopBody.getArgument(1),
        head = loopBody.getArgument(2);
  auto record = AcquireOp::create(b, loc, blocks);
  commitTile(b, loc, spec, record.getSlot(), row, rows, head,
             position ? loopBody.getArgument(3) : Value());
  // The rotations' rows and positions (with a positions tensor the
  // rotation reads positions[row + r], the position is a placeholder).
  TileRows block;
  SmallVector<TileRows> queryAt;
  if (rotated) {
    block = {row, rows,
             position
                 ? loopBody.getArgument(3)
                 : arith::ConstantIntOp::create(b, loc, 0, 32).getResult()};
    queryAt = columnPassQueryRows(b, loc, spec, block);
  }
  SmallVector<LoadedTile> tiles = loadedTiles(spec);
  SmallVector<Value> tileRows;
  for (const LoadedTile &tile : tiles)
    tileRows.push_back(
        tile.rowOffset ? arith::AddIOp::create(b, loc, row,
                                               arith::ConstantIntOp::create(
                                                   b, loc, tile.rowOffset, 32))
                             .getResult()
                       : row);
  // Three passes over the columns, each slot holding the tiles its pass
  // reads (the protocol's expect_tx counts the copies that are there): q and
  // k for S, v and dO for dP, then q, k and dO for the gradients.
  Value q = spec.loads[0], k = spec.loads[1], v = spec.loads[2],
        dout = spec.loads[3];
  SmallVector<Value> passes[] = {{q, k}, {v, dout}, {q, k, dout}};
  for (auto [passIndex, pass] : llvm::enumerate(passes))
    for (int64_t col = 0; col < spec.headDim; col += chunkCols) {
      auto acquire = AcquireOp::create(b, loc, chunks);
      for (auto [index, tile] : llvm::enumerate(tiles)) {
        if (!llvm::is_contained(pass, tile.source))
          continue;
        auto copy = TmaLoadOp::create(b, loc, tile.source, tileRows[index],
                                      head, acquire.getBuffers()[index]);
        copy.setColOffsetAttr(b.getI64IntegerAttr(col));
        // Half-split: chunk col / 64 made of the two pieces that hold its
        // pairs whole (every tensor, so that S and dP, invariant under the
        // same column order of both operands, are unchanged).
        if (pairHalfChunks(spec))
          copy.setPairHalves(true);
      }
      auto commit =
          CommitOp::create(b, loc, acquire.getSlot(), row, rows, head);
      int64_t passNumber = passIndex + 1;
      if (!rotated || !rotatesColumnPass(spec, passNumber))
        continue;
      // Rotated in place once landed; the fence.proxy.async of the signal's
      // commit makes the writes visible to the consumers' wgmma.
      commit.setLanded(true);
      rotateColumnPassChunk(b, loc, spec, acquire.getBuffers(), passNumber,
                            col / chunkCols, block, queryAt, /*passLoop=*/true);
      auto signal = AcquireOp::create(b, loc, rotated);
      CommitOp::create(b, loc, signal.getSlot(), row, rows, head);
    }
  b.setInsertionPointAfter(loop);
  CloseOp::create(b, loc, blocks);
}
} // namespace mlir::blockattn
