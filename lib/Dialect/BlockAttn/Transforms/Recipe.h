//===- Recipe.h - the pieces every warpspec recipe is built of --*- C++ -*-===//
//
// A recipe builds the warpspec.kernel that implements a blockattn op on one
// chip, from the op's description (KernelSpec) and its plan (KernelPlan):
// Sm90aRecipe.cpp and Sm100aRecipe.cpp, one per chip. What they share, the
// kernel shell, the TMA producer and the rotary helpers, is here
// (Recipe.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_BLOCKATTN_TRANSFORMS_RECIPE_H
#define LIB_DIALECT_BLOCKATTN_TRANSFORMS_RECIPE_H

#include "KernelSpec.h"

#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::blockattn {

/// The recipes: each replaces nothing, it builds the warpspec.kernel for
/// `spec` at the builder's insertion point (the caller erases the op).
void buildSm90aKernel(OpBuilder &b, Location loc, const KernelSpec &spec,
                      const KernelPlan &plan);
void buildSm100aKernel(OpBuilder &b, Location loc, const KernelSpec &spec,
                       const KernelPlan &plan);

/// A [block, cols] shared-memory tile of the kernel's element type, in the
/// layout `chunkCols` (0: the width's own; loadedChunkCols for loaded tiles).
warpspec::BufferType tileBuffer(const KernelSpec &spec, int64_t cols,
                                int64_t chunkCols = 0);

/// A [query rows, cols] shared-memory tile: the rows one product holds
/// (KernelShape::queryTileRows; the block itself up to 64 tokens).
warpspec::BufferType queryBuffer(const KernelSpec &spec, int64_t cols,
                                 int64_t chunkCols = 0);

/// One tile the producer copies per work item: from `source`, starting
/// `rowOffset` rows into the block, into a buffer of `type`.
struct LoadedTile {
  Value source;
  warpspec::BufferType type;
  int64_t rowOffset;
};

/// The tiles of a load-ring slot, in slot order. Up to 64 tokens a block,
/// one [block, D] tile per tensor of `spec.loads`. A larger block's query
/// comes in 64-row halves (each the M of its own products), its keys and
/// values whole: q rows [0, 64), q rows [64, 128), k, v (and in the
/// backward dO rows [0, 64), dO rows [64, 128): an A operand like q).
SmallVector<LoadedTile> loadedTiles(const KernelSpec &spec);

/// A channel with no placement yet (the allocators fill it in).
Value createChannel(OpBuilder &b, Location loc, warpspec::ChannelType type,
                    StringRef name, int64_t depth);

/// The load ring ("qkv", or "qkvdo" for the backward): a slot holds the
/// tiles of loadedTiles(spec), in shared memory, and with `positionsInSlot`
/// the tile's positions after them (KernelPlan::positionsInSlot: a 1-D i32
/// buffer that the producer fills with warpspec.copy_positions).
Value createLoadRing(OpBuilder &b, Location loc, const KernelSpec &spec,
                     int64_t depth, bool positionsInSlot = false);

/// `spec` with the positions tensor replaced by the tile's positions in the
/// slot of `buffers` (a load ring's buffers), if that slot holds them; the
/// rotary ops then read them from shared memory.
KernelSpec withSlotPositions(const KernelSpec &spec, ValueRange buffers);

/// The column-pass backward's load ring (block size 128 above head dim 128,
/// both chips): a slot holds one outputChunkCols()-column chunk of each tile
/// of loadedTiles(spec), named as the load ring.
Value createChunkRing(OpBuilder &b, Location loc, const KernelSpec &spec,
                      int64_t depth);

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
                   Value slot);

/// Rotates shared-memory tiles (in place when `dests` is `sources`): the
/// tiles of a load-ring slot (loadedTiles' order, up to rotatedTiles'),
/// the query halves of a large block each at its own rows
/// (rotateQueryTiles), the other tiles at `at` (rotateKeyTiles).
void rotateTiles(OpBuilder &b, Location loc, const KernelSpec &spec,
                 ValueRange sources, ValueRange dests, const TileRows &at);

/// Whether the column-pass backward (KernelPlan::columnPasses), or the
/// grouped-query backward at block size 128 and head dim 128 (in passes over
/// 64-column chunks, KernelPlan::groupPasses), streams pair-complete chunks
/// of half-split rows: chunk j holds columns [32 j, 32 j + 32) and their
/// partners [D / 2 + 32 j, D / 2 + 32 j + 32), loaded as one box of two
/// pieces (warpspec.tma_load's pair_halves), so that it holds pairs 32 j to
/// 32 j + 31 whole as an interleaved chunk does; its gradient chunks come
/// out in that column order and are stored as two pieces (storePairHalves).
/// The grouped kernel's whole tiles are such chunks side by side, each
/// rotated as a part (rotateKeyTiles); at head dim 96 (its passes over
/// 32-column chunks) chunk j is columns [16 j, 16 j + 16) and their partners
/// [48 + 16 j, 64 + 16 j), pairs 16 j to 16 j + 15 (pairChunkCols).
bool pairHalfChunks(const KernelSpec &spec);

/// Whether the pair-complete chunks (pairHalfChunks, pairHalfRows) are
/// buffers of two 32-column pieces with the 64-byte swizzle (`chunk_cols =
/// 32`), loaded as two boxes of the ordinary map each (each box fills its
/// swizzle span; one rank-4 box of 64-byte rows under the 128-byte swizzle
/// lands padded on the hardware: docs/head-dims.md, "Pair-complete chunks
/// as 64-byte-swizzled pieces"): every half-split backward that loads them.
bool pairPieceChunks(const KernelSpec &spec);

/// The `chunk_cols` of the buffers the kernel's tiles of Q, K, V and dO are
/// loaded into: for pair-complete pieces (pairPieceChunks) the piece's
/// width, 32 (64-byte swizzle), or 16 (32-byte swizzle) at head dim 96,
/// whose pair-complete chunks are 32 columns; else 0 (the width's own
/// layout).
int64_t loadedChunkCols(const KernelSpec &spec);

/// The width of a pair-complete chunk (pairPieceChunks): two pieces of
/// loadedChunkCols, 64 columns, or 32 at head dim 96.
int64_t pairChunkCols(const KernelSpec &spec);

/// Whether the grouped-query backward above head dim 128 at blocks of up to
/// 64 tokens (KernelPlan::groupPasses) holds half-split rows in pair-complete
/// chunk order: its tiles of Q, K, V and dO are whole rows loaded as D / 64
/// boxes of two 32-column pieces (warpspec.tma_load's pair_halves), chunk j
/// columns [32 j, 32 j + 32) and their partners D / 2 on, so that pass j's
/// 64-column chunk of each gradient holds pairs 32 j to 32 j + 31 whole and
/// is turned back on its own (unrotatePassChunk) and stored as two pieces
/// (storePairHalves); each chunk is rotated as a half-split part
/// (rotateKeyTiles).
bool pairHalfRows(const KernelSpec &spec);

/// Stores gradient chunk `chunk` (2P columns in pairHalfChunks' order, P =
/// 32, or 16 at head dim 96) of `tile` at its two pieces' columns, P j and
/// D / 2 + P j, each through `staging` (P columns; null: from registers).
/// Returns the two stores.
SmallVector<warpspec::StoreOp, 2>
storePairHalves(OpBuilder &b, Location loc, const KernelSpec &spec, Value tile,
                Value dest, Value row, Value head, Value rows, Value staging,
                bool bulk, int64_t chunk);

/// Rotates in place a shared-memory tile that is a part of rows of the head
/// dim (warpspec.rotate with head_dim and pair_offset): a 64-column chunk
/// of interleaved rows, or of half-split rows in pairHalfChunks' order (the
/// first elements of its 32 pairs, then their partners: warpspec.rotate's
/// layout of a half-split part), whose first pair is `firstPair`. With
/// `passLoop` its passes are one loop that is not unrolled, each pass placing
/// the thread from its index pinned in the loop (warpspec.rotate's
/// pass_loop).
warpspec::RotateOp rotateColumnPart(OpBuilder &b, Location loc,
                                    const KernelSpec &spec, Value tile,
                                    const TileRows &at, int64_t firstPair,
                                    bool passLoop = false);

/// rotateTiles for tiles of whole blocks (k, v): every one from the block's
/// first row and position `at`.
void rotateKeyTiles(OpBuilder &b, Location loc, const KernelSpec &spec,
                    ValueRange sources, ValueRange dests, const TileRows &at);

/// rotateTiles for a block's query tiles (q): up to 64 tokens one tile at
/// `at`; a larger block's 64-row halves, half i at row and position +
/// 64 i.
void rotateQueryTiles(OpBuilder &b, Location loc, const KernelSpec &spec,
                      ValueRange sources, ValueRange dests, const TileRows &at);

/// Where 64-row half `i` of a large block is for the rotary embedding, to
/// turn its gradients back: its first row and valid rows (blockHalf) and
/// its position, the block's `position` + 64 i (a placeholder with a
/// positions tensor, which is read at the half's rows instead).
TileRows rotaryHalf(OpBuilder &b, Location loc, const KernelSpec &spec,
                    Value position, Value halfRow, Value halfRows, int64_t i);

/// `at` with its row and position pinned here (warpspec.pin): a loop that
/// rotates at the same rows every iteration (the grouped-query backward's
/// loop over the heads of a group) would otherwise have the rotary tables'
/// addresses derived from them hoisted out of it and held across it.
TileRows pinnedRows(OpBuilder &b, Location loc, const TileRows &at);

/// rotaryHalf of half `i` of the large block at `at`, from its row and
/// position pinned here (pinnedRows).
TileRows pinnedRotaryHalf(OpBuilder &b, Location loc, const KernelSpec &spec,
                          const TileRows &at, int64_t i);

/// The rotary warpgroup: takes each slot of the load ring `ring` as the TMA
/// fills it, rotates q and k (and v), and publishes them through `rotated`.
/// On sm_100a `rotated` is a second ring of buffers the MMA warp reads; on
/// sm_90a (KernelPlan::rotaryWarpgroup) it has no buffers and only signals
/// the consumers, which read the load ring's slot rotated in place (the
/// table reads then overlap the consumers' work on earlier tiles instead of
/// standing between a tile's arrival and its first wgmma). The load ring's
/// slot goes back to the producer once the rotary warpgroup and the
/// consumer have both released it. With `replicas` > 1 (sm_90a,
/// KernelPlan::rotaryReplicas) replica r takes entries r, r + replicas, ...
/// of both rings.
void buildRotaryPartition(OpBuilder &b, Location loc, const KernelSpec &spec,
                          Value ring, Value rotated, int64_t regs,
                          int64_t replicas = 1);

/// The angles of a [block, D] register tile's rotary pairs, read once per
/// tile, ahead of the products whose results they turn back (which hides
/// the table reads' latency) and shared by the tile's gradients. With
/// `rowPositions` (loadRowPositions), at the positions read there.
Value rotaryAngles(OpBuilder &b, Location loc, const KernelSpec &spec,
                   const TileRows &at, Value rowPositions = Value());

/// The positions of the rows of a 64-row tile whose first row is `row`
/// (warpspec.load_positions), for a later rotaryAngles.
Value loadRowPositions(OpBuilder &b, Location loc, const KernelSpec &spec,
                       Value row);

/// The gradient with respect to the un-rotated input from the gradient with
/// respect to the rotated one (the transposed rotation, in f32), with the
/// angles of a warpspec.rotary_angles or, if `angles` is null, read here.
Value unrotateGradient(OpBuilder &b, Location loc, const KernelSpec &spec,
                       Value grad, const TileRows &at, Value angles);

/// Above head dim 128 the outputs are made in 64-column chunks of the head
/// dim (KernelShape::outputChunkCols), and a gradient's rotary pairs may
/// span chunks: a group is a set of chunks that holds both columns of each
/// of its pairs, so that it can be turned back without the other chunks.
/// Interleaved: each chunk (pairs are adjacent columns). Half-split, D / 2
/// a multiple of the chunk width (D = 256): chunk j with chunk j + D / 128.
/// Otherwise (D = 192, whose halves split a chunk): all chunks at once.
struct RotationGroup {
  /// Chunk indices, in the order they are joined (warpspec.concat_columns).
  SmallVector<int64_t> chunks;
  /// The pair index of the joined tile's first pair (rotate_tile's
  /// pair_offset).
  int64_t firstPair = 0;
};
SmallVector<RotationGroup> rotationGroups(const KernelSpec &spec);

/// The gradient chunks of `group` (64 x C f32 register tiles, in the
/// group's order) turned back as unrotateGradient turns a whole gradient:
/// joined, turned by rotate_tile with head_dim and pair_offset (reading the
/// tables itself), and split again.
SmallVector<Value> unrotateChunks(OpBuilder &b, Location loc,
                                  const KernelSpec &spec, ValueRange chunks,
                                  const RotationGroup &group,
                                  const TileRows &at);

/// Chunk `pass` (columns [C pass, C pass + C), C = `grad`'s width) of a
/// gradient with respect to a rotated input, turned back on its own: the
/// grouped-query backward above head dim 128, and at block size 128 above
/// head dim 64 (C = 64 or 32), makes its gradients one such chunk a pass
/// (KernelPlan::groupPasses), and only an interleaved chunk, or a half-split
/// one in pairHalfRows' order, holds both columns of each of its pairs
/// (pairs C pass / 2 to C (pass + 1) / 2 - 1).
/// `grad` when `rotated` is false.
Value unrotatePassChunk(OpBuilder &b, Location loc, const KernelSpec &spec,
                        Value grad, int64_t pass, const TileRows &at,
                        bool rotated);

/// The tensors the kernel rotates, among the loaded tiles (q, k, v, ...).
SmallVector<Value> rotatedTiles(const KernelSpec &spec, ValueRange tiles);

/// Publishes a tile, with its position when the rotary embedding needs it.
void commitTile(OpBuilder &b, Location loc, const KernelSpec &spec, Value slot,
                Value row, Value rows, Value head, Value position);

/// Restricts `softmax` to each row's own block where blocks share a tile
/// (warpspec.softmax's `block`); the forward's and the backward's softmax
/// alike, so that P, and with it dS and every gradient, is zero across
/// blocks.
void maskToBlocks(warpspec::SoftmaxOp softmax, const KernelSpec &spec);

/// The block ends of a packed tile (KernelSpec::packsTiles), which travel in
/// the record of `slot`; null for the other kernels.
Value blockEnds(OpBuilder &b, Location loc, const KernelSpec &spec, Value slot);

/// maskToBlocks for a tile whose block ends are `ends` (blockEnds): a packed
/// tile's scores go through warpspec.mask_blocks before the softmax.
void maskToBlocks(OpBuilder &b, warpspec::SoftmaxOp softmax,
                  const KernelSpec &spec, Value ends);

/// Kernel-level values every recipe starts from.
struct KernelValues {
  Value numTokens, numHeads, scale;
};

/// Creates the `warpspec.kernel` for `chip` (with the plan's launch
/// attributes) and the values every recipe shares; leaves the builder in the
/// kernel's body, so callers hold an InsertionGuard.
KernelValues beginKernel(OpBuilder &b, Location loc, warpspec::Chip chip,
                         const KernelSpec &spec, const KernelPlan &plan);

/// The TMA producer partition shared by every recipe: walk the tiles, copy
/// the tiles of `spec.loads` into the ring `ring`.
void buildLoadPartition(OpBuilder &b, Location loc, const KernelSpec &spec,
                        const KernelValues &values, Value ring,
                        const KernelPlan &plan);

/// buildLoadPartition with a block's tiles (loadedTiles, in order) split
/// over consecutive `rings`: per tile, one slot of each ring in turn, with
/// as many tiles as its buffers, each committed with the tile's record (the
/// sm_90a block-128 backward's "qk" and "vdo", `large-block-rings=2`).
/// Closes the first ring, whose consume loops end the consumers.
void buildRingsLoadPartition(OpBuilder &b, Location loc, const KernelSpec &spec,
                             const KernelValues &values, ValueRange rings,
                             const KernelPlan &plan);

/// The grouped-query backward's TMA producer (docs/pipeline.md,
/// "Grouped-query attention"): the tile loop walks the k/v heads (its work
/// item is a block and a k/v head); per item K and V go into one slot of
/// `kv`, then Q and dO of each query head of the group, h = group * kvHead +
/// i in order, into one slot of `qdo` each (its record names h), the group
/// `plan.groupPasses` times over; at block size 128 a `qdo` slot holds Q's
/// two 64-row halves, then dO's. Call with `values.numHeads` the k/v heads
/// (groupedValues). With `opaqueHeadCount` the loop over the group's heads
/// runs to a count LLVM cannot fold (opaqueGroupEnd), so that it is not
/// unrolled with the passes around it.
void buildGroupedLoadPartition(OpBuilder &b, Location loc,
                               const KernelSpec &spec,
                               const KernelValues &values, Value kv, Value qdo,
                               const KernelPlan &plan,
                               bool opaqueHeadCount = false);

/// The producer of the sm_90a grouped-query backward at block size 128 above
/// head dim 128 (KernelPlan::groupChunkStages): per item, its record into a
/// slot of `kv` (a ring without buffers); then per pass c and query head
/// (the group `plan.groupPasses` times over), per query half its and K's
/// 64-column chunks, then dO's and V's, into slots of `chunks`, and chunk c
/// of Q's and dO's halves and of K into one slot of `qdo`. Closes `kv`.
void buildGroupedChunkLoadPartition(OpBuilder &b, Location loc,
                                    const KernelSpec &spec,
                                    const KernelValues &values, Value kv,
                                    Value chunks, Value qdo,
                                    const KernelPlan &plan);

/// The TMA producer of a load ring split by columns of the head dim
/// (KernelPlan::lowSlotCols): per tile, columns [0, lowCols) of q, k, v, dO
/// into one slot of `low` (its record is the tile's), then the rest into one
/// slot of `high` (warpspec.tma_load {col_offset}). Closes `low`.
void buildSplitLoadPartition(OpBuilder &b, Location loc,
                             const KernelSpec &spec,
                             const KernelValues &values, Value low, Value high,
                             int64_t lowCols, const KernelPlan &plan);

/// The producer of the sm_90a backward at block size 128 above head dim 128
/// (KernelPlan::columnPasses): per block, the block's record into a slot of
/// `blocks` (a ring without buffers), then the block's tiles (loadedTiles)
/// in `chunkCols`-column chunks into slots of `chunks`, in three passes: q
/// and k (for S), v and dO (for dP), q, k and dO (for the gradients).
///
/// With `rotated` (sm_90a rotary embeddings) every thread of the producer
/// warpgroup runs it (role rotary; its copies issued by thread 0): it waits
/// for each chunk slot it rotates to land (commit ... landed), rotates it in
/// place (rotateColumnPassChunk) and signals `rotated`, which the consumers
/// wait on before they read the slot.
void buildColumnPassLoadPartition(OpBuilder &b, Location loc,
                                  const KernelSpec &spec,
                                  const KernelValues &values, Value blocks,
                                  Value chunks, int64_t chunkCols,
                                  const KernelPlan &plan,
                                  Value rotated = Value());

/// Whether chunk slots of pass `pass` (1: q and k for S, 2: v and dO for dP,
/// 3: q, k and dO for the gradients) of the column-pass backward are
/// rotated: passes 1 and 3, and 2 with rotate_v.
bool rotatesColumnPass(const KernelSpec &spec, int64_t pass);

/// Rotates chunk `j` of a column-pass chunk slot `t` (loadedTiles order) of
/// pass `pass` in place with the angles of pairs 32 j on: query half i at
/// `queryAt[i]`, k (and v in pass 2) at `block` (buildColumnPassLoadPartition
/// on sm_90a, buildColumnPassRotaryPartition on sm_100a). With `passLoop`
/// each part is turned in a loop of passes (warpspec.rotate's pass_loop),
/// its buffer, row and position pinned at the rotation.
void rotateColumnPassChunk(OpBuilder &b, Location loc, const KernelSpec &spec,
                           ValueRange t, int64_t pass, int64_t j,
                           const TileRows &block, ArrayRef<TileRows> queryAt,
                           bool passLoop = false);

/// The rows and positions of a block's query halves for
/// rotateColumnPassChunk: half i at row and position + 64 i, with the
/// block's row count (a rotation turns every row of its tile; the rows past
/// the block are clamped into the tables).
SmallVector<TileRows> columnPassQueryRows(OpBuilder &b, Location loc,
                                          const KernelSpec &spec,
                                          const TileRows &block);

/// A shared-memory operand pinned at its use (warpspec.pin): where a ring
/// has one slot its tiles sit at fixed addresses, and LLVM would hoist the
/// descriptors and addresses derived from them out of the tile loop, where
/// they spill (the block-128 backwards of both chips).
Value pinned(OpBuilder &b, Location loc, Value buffer, Value anchor = Value());

/// Columns [col, col + cols) of a shared-memory tile, a warpspec.subview;
/// the tile itself where that is all of it. The column passes of the
/// grouped-query backward read their chunk of Q, dO and K through it
/// (KernelPlan::groupPasses).
Value columnsOf(OpBuilder &b, Location loc, Value tile, int64_t col,
                int64_t cols);

/// Rows `[row + 64 i, row + 64 i + 64)` of a block of `rows` valid rows
/// that starts at `row`: the first row and the valid rows of its 64-row
/// half `i` (none past a short block).
std::pair<Value, Value> blockHalf(OpBuilder &b, Location loc, Value row,
                                  Value rows, int64_t i, int64_t halfRows);

/// Where a half's per-row values (dlse) are read: at its first row `row`,
/// or at the block's `blockRow` when the half has no valid row (the second
/// half of a short block), whose row 0 may lie past T: warpspec.load_rows
/// reads row 0 for the rows it zeroes. `blockRow + min(rows, 1) (row -
/// blockRow)`, with the ops the kernel conversion takes.
Value rowsReadAt(OpBuilder &b, Location loc, Value blockRow, Value row,
                 Value rows);

/// `values` with the tile loop's heads set to k's (the k/v heads), for a
/// kernel whose work item is a block and a k/v head.
KernelValues groupedValues(OpBuilder &b, Location loc, const KernelSpec &spec,
                           KernelValues values);

/// The query head `i` of the group of k/v head `kvHead`.
Value groupQueryHead(OpBuilder &b, Location loc, const KernelSpec &spec,
                     Value kvHead, int64_t i);

/// The end of a loop over the group's query heads as an i32 that LLVM
/// cannot fold, G + min(kvHead, 0) (the k/v head is never negative): with a
/// constant count a loop of one trip (G = 2) is unrolled next to the first
/// head, and LLVM then hoisted the addresses of the heads' products or
/// rotations out of the item loop (ptxas spilled them).
Value opaqueGroupEnd(OpBuilder &b, Location loc, const KernelSpec &spec,
                     Value kvHead);

/// Builds `body` for the query heads `from`, ..., group - 1 of the group of
/// k/v head `kvHead`, in order, in an scf.for (warpspec-lower-protocol
/// carries the ring positions through it): one copy of the per-head code,
/// not G, so that nothing of one head stays live into the next. The body
/// gets the query head (i32).
void forEachGroupHead(OpBuilder &b, Location loc, const KernelSpec &spec,
                      Value kvHead, int64_t from,
                      function_ref<void(Value head)> body);

} // namespace mlir::blockattn

#endif // LIB_DIALECT_BLOCKATTN_TRANSFORMS_RECIPE_H
