//===- Rotary.cpp - rotary embeddings of shared-memory and register tiles -===//
//
// warpspec.rotate turns the 16-bit tiles a TMA wrote into shared memory (the
// 128-byte swizzle layout) in place or into other tiles; warpspec.rotate_tile
// turns an f32 register tile (the inverse rotation of the backward's
// epilogue). Both compute in f32 and round once.
//
// Angles come from f32 tables [max_position, D/2] (cos, sin) or from a base
// theta: pair i of position p turns by p * theta^(-2i/D) (f32), reduced into
// [-pi, pi] (Cody-Waite, two terms) before sin.approx/cos.approx, whose
// absolute error there is about 2^-20.9 (PTX ISA, "sin", "cos"). The f32
// angle itself is off by up to p * 2^-23 relative (as in any f32 RoPE).
//
// Positions are clamped into the table: the Python API validates them, and
// the clamp keeps a bad position from reading outside the table.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "blockattn/Conversion/WarpSpecToNVVM/WarpSpecToNVVM.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "blockattn/Conversion/WarpSpecToNVVM/Descriptors.h"

using namespace mlir;
using namespace mlir::blockattn;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

using Pred = LLVM::ICmpPredicate;
namespace nvdesc = mlir::blockattn::nvdesc;

namespace {

/// Where the angles of a rotate or rotate_tile come from, bound to the
/// kernel's parameters.
struct AngleSource {
  int64_t headDim = 0;
  /// The index of the tile's first pair among its rows' pairs (a tile that
  /// is part of wider rows: warpspec.rotate_tile's pair_offset).
  int64_t firstPair = 0;
  /// Angles from theta at positions pinned where they are computed
  /// (KernelBuilder::pinRegisters). Angles from theta are pure arithmetic on
  /// the position: unpinned, LLVM computed the angles of every part of a row
  /// (rotate_tile with head_dim) together, ahead of the turns, and those of
  /// dK for dQ too (the same rows), which spilled the sm_100a softmax
  /// warpgroup at head dim 192 (36 bytes). With the position pinned at the
  /// start of a part's rotation and its results at the end, each part
  /// computes its angles after the previous part's turns.
  bool pinPositions = false;
  /// Table elements indexed in 32 bits (warpspec.rotate_tile's
  /// narrow_index).
  bool narrowIndex = false;
  bool interleaved = false;
  bool inverse = false;
  std::optional<double> theta;
  // Tables: base pointers, row stride (elements, i64) and row count (i32).
  Value cos, sin, tableStride, tableRows;
  // Explicit positions: base pointer and length (i32); or the tile's own,
  // in shared memory (a slot's buffer that warpspec.copy_positions filled).
  Value positions, numPositions, tilePositions;
  // The tile: first global row, first row's position.
  Value row, position;
};

/// `positions` is the op's positions operand as converted (a slot's buffer:
/// its shared-memory pointer).
template <typename OpTy>
FailureOr<AngleSource> bindAngles(KernelBuilder &e, OpTy op, Value row,
                                  Value position, Value positions,
                                  int64_t headDim, bool inverse) {
  AngleSource a;
  a.headDim = headDim;
  a.interleaved = op.getInterleaved();
  a.inverse = inverse;
  if (std::optional<APFloat> theta = op.getTheta())
    a.theta = theta->convertToDouble();
  if (op.getCos()) {
    ArgParams cos = ArgParams::of(op.getCos());
    ArgParams sin = ArgParams::of(op.getSin());
    Value cosRows = rowCount(e, op.getCos()),
          sinRows = rowCount(e, op.getSin());
    if (!cos.pointer || !sin.pointer || cos.strides.size() != 2 ||
        !cos.strides[0] || !cosRows || !sinRows)
      return op.emitOpError() << "rotary tables must be kernel parameters";
    a.cos = cos.pointer;
    a.sin = sin.pointer;
    // Both tables are read at cos' row stride (the verifier makes them
    // contiguous rows of D/2; the Python API passes them contiguous).
    a.tableStride = cos.strides[0];
    // The smaller row count, so that neither table is read past its end.
    // With rotate_tile's pinned_table_rows from the counts pinned here:
    // hoisted to the partition's entry, ptxas spilled it (the sm_90a grouped
    // block-128 backward's accumulate warpgroups at head dim 256, G = 4, 4
    // bytes each).
    if constexpr (std::is_same_v<OpTy, RotateTileOp>) {
      if (op.getPinnedTableRows()) {
        SmallVector<Value> counts = e.pinRegisters({cosRows, sinRows});
        cosRows = counts[0];
        sinRows = counts[1];
      }
    }
    a.tableRows = LLVM::UMinOp::create(e.b, e.loc, cosRows, sinRows);
  }
  if (op.getPositions() && isa<BufferType>(op.getPositions().getType())) {
    a.tilePositions = positions;
  } else if (op.getPositions()) {
    ArgParams params = ArgParams::of(op.getPositions());
    a.numPositions = rowCount(e, op.getPositions());
    if (!params.pointer || !a.numPositions)
      return op.emitOpError() << "positions must be a kernel parameter";
    a.positions = params.pointer;
  }
  a.row = e.asI32(row);
  a.position = e.asI32(position);
  return a;
}

/// positions[row + r] (i32), the token clamped into the tensor of
/// `numPositions` (like the position itself: never read past its end).
Value readPosition(KernelBuilder &e, Value positions, Value numPositions,
                   Value row, Value r) {
  return e.load(e.i32T(), positionAddress(e, positions, numPositions, row, r),
                4);
}

/// Row `r`'s position in the tile's positions in shared memory.
Value readTilePosition(KernelBuilder &e, Value tilePositions, Value r) {
  Value ptr = LLVM::GEPOp::create(e.b, e.loc, e.smemPtrT(), e.i32T(),
                                  tilePositions, ValueRange{r});
  return e.load(e.i32T(), ptr, 4);
}

/// Position `p` (i32) clamped into the table (theta: at least 0).
Value clampPosition(KernelBuilder &e, const AngleSource &a, Value p) {
  if (a.tableRows)
    p = LLVM::SMinOp::create(e.b, e.loc, p, e.sub(a.tableRows, e.i32(1)));
  return LLVM::SMaxOp::create(e.b, e.loc, p, e.i32(0));
}

/// The position of tile row `r` (i32), clamped into the table.
Value positionOf(KernelBuilder &e, const AngleSource &a, Value r) {
  Value p = a.tilePositions ? readTilePosition(e, a.tilePositions, r)
            : a.positions
                ? readPosition(e, a.positions, a.numPositions, a.row, r)
                : e.add(a.position, r);
  return clampPosition(e, a, p);
}

Value callIntrinsic(KernelBuilder &e, StringRef name, Value x) {
  return LLVM::CallIntrinsicOp::create(e.b, e.loc, e.f32T(),
                                       e.b.getStringAttr(name), ValueRange{x})
      .getResult(0);
}

/// cos and sin of the angle `p * freq`, reduced into [-pi, pi] (Cody-Waite,
/// 2pi split in two f32 terms) for sin.approx/cos.approx.
std::pair<Value, Value> sinCos(KernelBuilder &e, Value angle) {
  constexpr double kTwoPi = 6.283185307179586;
  const float twoPiHi = static_cast<float>(kTwoPi);
  const double twoPiLo = kTwoPi - static_cast<double>(twoPiHi);
  Value k = LLVM::RoundEvenOp::create(
      e.b, e.loc, LLVM::FMulOp::create(e.b, e.loc, angle, e.f32(1.0 / kTwoPi)));
  Value negK = LLVM::FNegOp::create(e.b, e.loc, k);
  Value r = LLVM::FMAOp::create(e.b, e.loc, negK, e.f32(twoPiHi), angle);
  r = LLVM::FMAOp::create(e.b, e.loc, negK, e.f32(twoPiLo), r);
  return {callIntrinsic(e, "llvm.nvvm.cos.approx.f", r),
          callIntrinsic(e, "llvm.nvvm.sin.approx.f", r)};
}

/// cos and sin of pairs `base + offset + j`, j < `count`, at position `p`
/// (i32); `base` is a run-time i32, `offset` a constant. The sines are
/// negated for the inverse.
///
/// From theta, the frequency of pair i is theta^(-2i/D) =
/// exp2(base * c) * exp2((offset + j) * c) with c = -2 log2(theta) / D: one
/// run-time exp2 per thread, times constants. Computing each pair's
/// frequency whole would give LLVM one loop-invariant value per pair to
/// hoist out of the tile loop, where they spill.
std::pair<SmallVector<Value>, SmallVector<Value>>
loadAngles(KernelBuilder &e, const AngleSource &a, Value p, Value base,
           int64_t offset, int64_t count) {
  SmallVector<Value> cosines, sines;
  if (a.theta) {
    double c = -2.0 * std::log2(*a.theta) / a.headDim;
    Value baseFreq = LLVM::Exp2Op::create(
        e.b, e.loc,
        LLVM::FMulOp::create(e.b, e.loc,
                             LLVM::UIToFPOp::create(e.b, e.loc, e.f32T(), base),
                             e.f32(c)));
    Value scaled = LLVM::FMulOp::create(
        e.b, e.loc, LLVM::SIToFPOp::create(e.b, e.loc, e.f32T(), p), baseFreq);
    for (int64_t j = 0; j < count; ++j) {
      Value angle = LLVM::FMulOp::create(e.b, e.loc, scaled,
                                         e.f32(std::exp2((offset + j) * c)));
      auto [cosine, sine] = sinCos(e, angle);
      cosines.push_back(cosine);
      sines.push_back(sine);
    }
  } else {
    // narrowIndex: row x stride + column in 32 bits, widened after the sum
    // (warpspec.rotate_tile's narrow_index).
    Value element =
        a.narrowIndex
            ? e.zext64(e.add(e.mul(p, LLVM::TruncOp::create(
                                          e.b, e.loc, e.i32T(), a.tableStride)),
                             base))
            : e.add(e.mul(e.zext64(p), a.tableStride), e.zext64(base));
    // Runs of 4 (2) pairs start at multiples of 4 (2) of contiguous tables
    // of D/2 f32 rows, D a multiple of 16: 16-byte (8-byte) aligned loads.
    int64_t width = count % 4 == 0 ? 4 : count % 2 == 0 ? 2 : 1;
    Type vec = VectorType::get({width}, e.f32T());
    for (auto [table, out] : {std::pair{a.cos, &cosines}, {a.sin, &sines}}) {
      Value row = LLVM::GEPOp::create(e.b, e.loc, e.globalPtrT(), e.f32T(),
                                      table, ValueRange{element});
      for (int64_t j = 0; j < count; j += width) {
        Value ptr = LLVM::GEPOp::create(
            e.b, e.loc, e.globalPtrT(), e.f32T(), row,
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(offset + j)});
        Value loaded = e.load(width == 1 ? e.f32T() : vec, ptr, 4 * width);
        for (int64_t k = 0; k < width; ++k)
          out->push_back(width == 1 ? loaded
                                    : Value(LLVM::ExtractElementOp::create(
                                          e.b, e.loc, loaded, e.i32(k))));
      }
    }
  }
  if (a.inverse)
    for (Value &s : sines)
      s = LLVM::FNegOp::create(e.b, e.loc, s);
  return {cosines, sines};
}

/// Loop metadata that keeps LLVM from unrolling the loop; the NVPTX backend
/// then marks it `.pragma "nounroll"` for ptxas.
LLVM::LoopAnnotationAttr noUnroll(MLIRContext *ctx) {
  auto unroll = LLVM::LoopUnrollAttr::get(
      ctx, /*disable=*/BoolAttr::get(ctx, true), /*count=*/{},
      /*runtimeDisable=*/{}, /*full=*/{}, /*followupUnrolled=*/{},
      /*followupRemainder=*/{}, /*followupAll=*/{});
  return LLVM::LoopAnnotationAttr::get(
      ctx, /*disableNonforced=*/{}, /*vectorize=*/{}, /*interleave=*/{}, unroll,
      /*unrollAndJam=*/{}, /*licm=*/{}, /*distribute=*/{},
      /*pipeline=*/{}, /*peeled=*/{}, /*unswitch=*/{}, /*mustProgress=*/{},
      /*isVectorized=*/{}, /*startLoc=*/{}, /*endLoc=*/{},
      /*parallelAccesses=*/{});
}

/// (x, y) turned by the angle: (x c - y s, y c + x s).
std::pair<Value, Value> turn(KernelBuilder &e, Value x, Value y, Value c,
                             Value s) {
  Value ys = LLVM::FMulOp::create(e.b, e.loc, y, s);
  Value xs = LLVM::FMulOp::create(e.b, e.loc, x, s);
  Value newX = LLVM::FMAOp::create(e.b, e.loc, x, c,
                                   LLVM::FNegOp::create(e.b, e.loc, ys));
  Value newY = LLVM::FMAOp::create(e.b, e.loc, y, c, xs);
  return {newX, newY};
}

/// The 8 elements of a 16-byte unit (4 x i32 of packed 16-bit pairs), or
/// the 4 of half a unit (2 x i32), as f32.
SmallVector<Value> unpackUnit(KernelBuilder &e, Type elementType, Value unit) {
  SmallVector<Value> values;
  auto pair = VectorType::get({2}, elementType);
  int64_t words = cast<VectorType>(unit.getType()).getNumElements();
  for (int64_t w = 0; w < words; ++w) {
    Value word = LLVM::ExtractElementOp::create(e.b, e.loc, unit, e.i32(w));
    Value halves = LLVM::BitcastOp::create(e.b, e.loc, pair, word);
    Value wide = LLVM::FPExtOp::create(e.b, e.loc,
                                       VectorType::get({2}, e.f32T()), halves);
    for (int64_t h = 0; h < 2; ++h)
      values.push_back(
          LLVM::ExtractElementOp::create(e.b, e.loc, wide, e.i32(h)));
  }
  return values;
}

Value packUnit(KernelBuilder &e, Type elementType, ArrayRef<Value> values) {
  int64_t words = static_cast<int64_t>(values.size()) / 2;
  Type vec = VectorType::get({words}, e.i32T());
  Value unit = LLVM::UndefOp::create(e.b, e.loc, vec);
  for (int64_t w = 0; w < words; ++w)
    unit = LLVM::InsertElementOp::create(
        e.b, e.loc, unit,
        e.packPair(elementType, values[2 * w], values[2 * w + 1]), e.i32(w));
  return unit;
}

} // namespace

/// Work split: a work item is one 16-byte unit of a row (interleaved: its 4
/// pairs) or, half-split, a unit of the first half and its partner unit
/// D/2 columns on (8 pairs). Consecutive threads take consecutive items of a
/// row, so table reads are coalesced; a pass of the replica covers a
/// multiple of 8 rows, so a thread's units and swizzle phase are the same
/// in every pass and its addresses are one base plus constants.
namespace {

/// The lowerings of this file run as members of a KernelBuilder (its helpers
/// unqualified).
struct RotaryBuilder : KernelBuilder {
  RotaryBuilder(ConversionPatternRewriter &rewriter, Operation *op)
      : KernelBuilder(rewriter, op), rewriter(rewriter) {}
  ConversionPatternRewriter &rewriter;
  LogicalResult lower(RotateOp op, RotateOp::Adaptor adaptor);
  LogicalResult lower(RotaryAnglesOp op, ArrayRef<ValueRange> operands);
  LogicalResult lower(LoadPositionsOp op, ArrayRef<ValueRange> operands);
  LogicalResult lower(RotateTileOp op, ArrayRef<ValueRange> adaptor);
};

struct RotateLowering : ConvertOpToLLVMPattern<RotateOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(RotateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return RotaryBuilder(rewriter, op).lower(op, adaptor);
  }
};

struct RotaryAnglesLowering : ConvertOpToLLVMPattern<RotaryAnglesOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(RotaryAnglesOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return RotaryBuilder(rewriter, op).lower(op, adaptor.getOperands());
  }
};

struct LoadPositionsLowering : ConvertOpToLLVMPattern<LoadPositionsOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(LoadPositionsOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return RotaryBuilder(rewriter, op).lower(op, adaptor.getOperands());
  }
};

struct RotateTileLowering : ConvertOpToLLVMPattern<RotateTileOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(RotateTileOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return RotaryBuilder(rewriter, op).lower(op, adaptor.getOperands());
  }
};

} // namespace

LogicalResult RotaryBuilder::lower(RotateOp op, RotateOp::Adaptor adaptor) {
  auto type = cast<BufferType>(op.getSources().front().getType());
  int64_t tileRows = type.getShape()[0], d = type.getShape()[1];
  Type elementType = type.getElementType();
  // A tile that is a part of wider rows (head_dim, pair_offset) turns its
  // pairs by the angles of pairs pair_offset on of rows of head_dim; its
  // own layout is that of a tile of its width (a half-split unit's partner
  // d / 2 columns on, in the tile).
  FailureOr<AngleSource> angles =
      bindAngles(*this, op, adaptor.getRow(), adaptor.getPosition(),
                 adaptor.getPositions(), op.getRowHeadDim(),
                 /*inverse=*/false);
  if (failed(angles))
    return failure();
  const int64_t pairOffset = op.getFirstPair();
  // A part of wider rows is one of several rotations of the same rows (the
  // sm_90a column-pass backward turns each 64-column chunk of q and k, at
  // the same positions, in every pass): with the rows' first row and
  // position pinned here, each computes its table addresses itself
  // (unpinned, LLVM computed them once a block and held them across the
  // chunks' products, and ptxas spilled the consumers).
  if (op.getHeadDim()) {
    SmallVector<Value> at = pinRegisters({angles->row, angles->position});
    angles->row = at[0];
    angles->position = at[1];
  }
  SmallVector<Value> sources(adaptor.getSources()), dests(adaptor.getDests());

  // The tile's layout (nvdesc::SwizzledTile): 128-byte rows and phase
  // row % 8, or with the 64-byte swizzle (head dims 32, 96, and the
  // half-split pair-complete chunks of chunk_cols = 32, whose partner unit
  // is in the second piece) 64-byte rows and phase (row / 2) % 4, or with
  // the 32-byte swizzle (chunk_cols = 16: head dim 96's pair-complete
  // chunks, the partner unit again in the second piece) 32-byte rows and
  // phase (row / 4) % 2.
  nvdesc::SwizzledTile geometry{tileRows, d, type.getChunkCols()};
  const int64_t rowBytes = geometry.rowBytes();
  constexpr int64_t kUnitElems = 8;
  const int64_t kUnitsPerChunkRow = rowBytes / 16;
  int64_t unitsPerRow = d / kUnitElems;
  int64_t replica = replicaThreads();
  // An item is two units, the second half a row on: a half-split unit and
  // its partner; interleaved rows of more than replica / 8 units (head dims
  // 192, 256: 24 or 32 units, which 128 threads cannot take in passes of
  // whole 8-row periods), two units turned each on its own. Else one unit.
  bool twoUnits = !angles->interleaved || unitsPerRow * 8 > replica;
  int64_t itemsPerRow = twoUnits ? unitsPerRow / 2 : unitsPerRow;
  int64_t pairsPerUnit = angles->interleaved ? kUnitElems / 2 : kUnitElems;
  int64_t pairsPerItem =
      angles->interleaved && twoUnits ? 2 * pairsPerUnit : pairsPerUnit;
  // Where the replica's threads do not divide into passes of whole 8-row
  // periods (head dim 96: 6 or 12 items a row), the largest number that
  // does takes the items and the others idle.
  int64_t threads = replica - replica % (itemsPerRow * 8);
  if (threads == 0 || threads % itemsPerRow != 0 ||
      (threads / itemsPerRow) % 8 != 0 ||
      tileRows % (threads / itemsPerRow) != 0)
    return op.emitOpError() << "cannot split a " << tileRows << "x" << d
                            << " tile over " << threads << " threads";
  int64_t rowsPerPass = threads / itemsPerRow;

  Value t = threadInReplica();
  Value rowBase, firstPair, firstOffset, partnerOffset;
  auto unitOffset = [&](Value unit) {
    Value chunk = udiv(unit, i32(kUnitsPerChunkRow));
    Value phase = swizzlePhase(geometry.chunkCols(), rowBase);
    Value physical = LLVM::XOrOp::create(
        b, loc, urem(unit, i32(kUnitsPerChunkRow)), phase);
    return add(add(mul(chunk, i32(tileRows * rowBytes)),
                   mul(rowBase, i32(rowBytes))),
               mul(physical, i32(16)));
  };
  // The thread's first row, the item's (first) unit, its partner and the
  // pairs they hold.
  auto placeThread = [&](Value thread) {
    rowBase = udiv(thread, i32(itemsPerRow));
    Value item = urem(thread, i32(itemsPerRow));
    Value partnerUnit = add(item, i32(unitsPerRow / 2));
    firstPair = mul(item, i32(pairsPerUnit));
    firstOffset = unitOffset(item);
    partnerOffset = twoUnits ? unitOffset(partnerUnit) : Value();
  };
  placeThread(t);
  Type vec = VectorType::get({4}, i32T());
  // Every row is rotated, the rows past `rows` too (their positions are
  // clamped like any other): a destination then holds finite values in all
  // rows (the products read whole tiles and mask what is past the tile),
  // and with no branch the table loads of all passes are issued before any
  // of them is waited for (one L2 round trip per tile, not one per pass).
  // As many passes' tables are loaded ahead as the partition's registers
  // allow (2 per pair; about 40 go to everything else): all of them in a
  // 232-register warpgroup, one at a time in a 56-register one.
  int64_t passes = tileRows / rowsPerPass;
  int64_t ahead = std::clamp<int64_t>(
      (partition.getNumRegs() - 40) / (2 * pairsPerItem), 1, passes);
  // From theta nothing is read: computing the angles of passes ahead hides
  // no latency and holds their registers. Above head dim 128 one pass ahead
  // (ptxas spilled the sm_100a rotary warpgroup of 96 registers, three
  // passes ahead, 4-512 bytes; of 88 with one ahead, nothing). Head dims up
  // to 128 keep their kernels.
  if (angles->theta && op.getRowHeadDim() > 128)
    ahead = 1;
  // A part of wider rows (the sm_90a column-pass backward's chunks) is
  // turned next to accumulators the consumer holds (S through the first
  // pass, P and dP through the second): one pass ahead (all of them, ptxas
  // spilled 16 bytes in the interleaved kernel at head dim 256; one, 4).
  if (op.getHeadDim())
    ahead = 1;
  // A block of 128 rows (k, and v with rotate_v, of a block-128 kernel)
  // from theta above head dim 128 is turned in a loop of passes that is not
  // unrolled (`.pragma "nounroll"`). The angles are arithmetic on the
  // position only, and so free to move: unrolled (32 passes of q halves and
  // k in one block), ptxas scheduled them across passes and spilled, the
  // sm_90a consumer (156-288 bytes at 256 without a positions tensor; the
  // SASS has its STL among the rotation's MUFU.SIN) and the sm_100a rotary
  // warpgroup (8-1568 bytes), though the PTX computes each pass's angles
  // next to its turns, and pinning k's row and position changed nothing. In
  // the loop no pass's angles can be computed ahead of it. The query halves
  // (64 rows) stay unrolled; other kernels keep their PTX. A tile marked
  // pass_loop is turned in the same loop (the grouped-query backward's K, V
  // and each pass's Q from theta above head dim 128: unrolled, ptxas spilled
  // the sm_90a consumer and the sm_100a softmax warpgroup 72-296 bytes, the
  // STL among the MUFU.SIN of K's rotation).
  //
  // So is a block of 128 rows that is a part of wider rows (k, and v with
  // rotate_v, of the column-pass backward's 64-column chunks), from tables
  // too: on sm_90a it is turned next to the accumulators the consumer holds
  // (S through the first pass, P and dP through the second): unrolled, ptxas
  // spilled the consumers 100-304 bytes with rotate_v and 4-48 without; in
  // the loop 20-112 and 4-44 (not none: docs/head-dims.md). The query
  // halves (64 rows) stay unrolled there too: in this loop the kernels
  // without rotate_v spilled more (84 bytes at head dim 256). Since session
  // 20 the sm_90a consumers mark every part pass_loop (the query halves
  // too), which also places the thread in each pass: 27 of its 64 kernels
  // spill nothing.
  bool passLoop =
      op.getPassLoop() ||
      (tileRows > 64 && ((angles->theta && d > 128) || op.getHeadDim()));
  SmallVector<std::pair<SmallVector<Value>, SmallVector<Value>>> tables;
  // Turns `count` half-split pairs of each source's unit and its partner
  // (`words` 32-bit words of each, at `at(base, offset)`) into the dests.
  auto turnHalfSplitUnits = [&](function_ref<Value(Value, Value)> at,
                                int64_t words, ArrayRef<Value> cosines,
                                ArrayRef<Value> sines, int64_t count) {
    Type vecT = VectorType::get({words}, i32T());
    int64_t bytes = 4 * words;
    for (auto [source, dest] : llvm::zip(sources, dests)) {
      SmallVector<Value> first = unpackUnit(
          *this, elementType, load(vecT, at(source, firstOffset), bytes));
      SmallVector<Value> second = unpackUnit(
          *this, elementType, load(vecT, at(source, partnerOffset), bytes));
      for (int64_t j = 0; j < count; ++j)
        std::tie(first[j], second[j]) =
            turn(*this, first[j], second[j], cosines[j], sines[j]);
      store(packUnit(*this, elementType, second), at(dest, partnerOffset),
            bytes);
      store(packUnit(*this, elementType, first), at(dest, firstOffset), bytes);
    }
  };
  // A loop over the passes that is not unrolled; `body` gets the pass's
  // first row (relative to the thread's). With `pinThread` each pass places
  // the thread itself, from its index pinned in the loop.
  auto passLoopOf = [&](bool pinThread, function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, i32(0), i32(passes), i32(1));
    loop->setAttr("loop_annotation", noUnroll(ctx));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    if (pinThread)
      placeThread(pinRegisters({t}).front());
    body(mul(loop.getInductionVar(), i32(rowsPerPass)));
  };
  auto rotateTile = [&] {
    auto loadPassAt = [&](Value passRows) {
      Value p = positionOf(*this, *angles, add(rowBase, passRows));
      tables.push_back(
          loadAngles(*this, *angles, p, firstPair, pairOffset, pairsPerUnit));
      // The second unit of a wide interleaved item: pairs D / 4 on.
      if (angles->interleaved && twoUnits) {
        auto [cosines, sines] = loadAngles(
            *this, *angles, p, firstPair,
            pairOffset + unitsPerRow / 2 * pairsPerUnit, pairsPerUnit);
        llvm::append_range(tables.back().first, cosines);
        llvm::append_range(tables.back().second, sines);
      }
    };
    auto loadPass = [&](int64_t pass) { loadPassAt(i32(pass * rowsPerPass)); };
    // The turns of pass `pass` (its angles in tables[pass]), whose rows are
    // `passBytes` on from the thread's first row (a GEP argument: a constant,
    // or the loop's run-time offset).
    auto turnPass = [&](int64_t pass, LLVM::GEPArg passBytes) {
      auto at = [&](Value base, Value offset) {
        Value ptr = LLVM::GEPOp::create(b, loc, smemPtrT(), b.getI8Type(), base,
                                        ValueRange{offset});
        return LLVM::GEPOp::create(b, loc, smemPtrT(), b.getI8Type(), ptr,
                                   ArrayRef<LLVM::GEPArg>{passBytes});
      };
      auto &[cosines, sines] = tables[pass];
      if (!angles->interleaved) {
        turnHalfSplitUnits(at, /*words=*/4, cosines, sines, pairsPerItem);
        return;
      }
      for (auto [source, dest] : llvm::zip(sources, dests)) {
        SmallVector<Value> first = unpackUnit(
            *this, elementType, load(vec, at(source, firstOffset), 16));
        for (int64_t j = 0; j < pairsPerUnit; ++j)
          std::tie(first[2 * j], first[2 * j + 1]) =
              turn(*this, first[2 * j], first[2 * j + 1], cosines[j], sines[j]);
        if (twoUnits) {
          SmallVector<Value> second = unpackUnit(
              *this, elementType, load(vec, at(source, partnerOffset), 16));
          for (int64_t j = 0; j < pairsPerUnit; ++j)
            std::tie(second[2 * j], second[2 * j + 1]) =
                turn(*this, second[2 * j], second[2 * j + 1],
                     cosines[pairsPerUnit + j], sines[pairsPerUnit + j]);
          store(packUnit(*this, elementType, second), at(dest, partnerOffset),
                16);
        }
        store(packUnit(*this, elementType, first), at(dest, firstOffset), 16);
      }
    };
    // split_items (half-split, pass_loop): each pass turns the thread's
    // item in two runs of half its pairs, in a loop that is not unrolled,
    // 8 bytes of the unit and of its partner and half the angles at a time.
    if (op.getSplitItems()) {
      passLoopOf(/*pinThread=*/true, [&](Value passRows) {
        Value passBytes = mul(passRows, i32(rowBytes));
        Value p = positionOf(*this, *angles, add(rowBase, passRows));
        auto inner = scf::ForOp::create(b, loc, i32(0), i32(2), i32(1));
        inner->setAttr("loop_annotation", noUnroll(ctx));
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(inner.getBody()->getTerminator());
        Value h = inner.getInductionVar();
        int64_t half = pairsPerItem / 2;
        auto [cosines, sines] =
            loadAngles(*this, *angles, p, add(firstPair, mul(h, i32(half))),
                       pairOffset, half);
        Value hBytes = mul(h, i32(2 * half));
        auto at = [&](Value base, Value offset) -> Value {
          Value ptr = LLVM::GEPOp::create(b, loc, smemPtrT(), b.getI8Type(),
                                          base, ValueRange{offset});
          ptr = LLVM::GEPOp::create(b, loc, smemPtrT(), b.getI8Type(), ptr,
                                    ValueRange{passBytes});
          return LLVM::GEPOp::create(b, loc, smemPtrT(), b.getI8Type(), ptr,
                                     ValueRange{hBytes});
        };
        turnHalfSplitUnits(at, /*words=*/2, cosines, sines, half);
      });
      return;
    }
    if (passLoop) {
      // Marked pass_loop, each pass computes the thread's addresses and
      // frequencies itself, from its thread index pinned in the loop:
      // computed once, LLVM hoisted them out of the kernel's loops and held
      // them next to everything else (ptxas spilled the sm_100a softmax
      // warpgroup of the grouped backward 12 bytes at head dim 256, G = 2).
      passLoopOf(op.getPassLoop(), [&](Value passRows) {
        loadPassAt(passRows);
        turnPass(0, mul(passRows, i32(rowBytes)));
      });
      return;
    }
    for (int64_t pass = 0; pass < ahead; ++pass)
      loadPass(pass);
    for (int64_t pass = 0; pass < passes; ++pass) {
      if (pass + ahead < passes)
        loadPass(pass + ahead);
      turnPass(pass, static_cast<int32_t>(pass * rowsPerPass * rowBytes));
    }
  };
  if (threads < replica)
    emitIf(cmp(Pred::ult, t, i32(threads)), rotateTile);
  else
    rotateTile();
  // Generic-proxy writes become visible to the tensor cores (async proxy)
  // after a proxy fence by each writer and a barrier over the replica.
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  replicaBarrier();
  rewriter.eraseOp(op);
  return success();
}

/// The rotary pairs a thread holds in a register tile: (first register,
/// partner register). The partner of the register at column c is the one
/// of the same row slot at c + 1 (interleaved, c even) or c + D/2
/// (half-split, c < D/2). Column bases are run-time, so this needs partners
/// at a constant column offset, which both targets' layouts give (the wgmma
/// accumulator layout: column base 2 (lane % 4), offsets
/// 8 (reg / 4) + reg % 2).
static FailureOr<SmallVector<std::pair<int64_t, int64_t>>>
findPairs(Operation *op, const FragmentLayout &layout, int64_t d,
          bool interleaved) {
  int64_t partnerOffset = interleaved ? 1 : d / 2;
  auto noPairs = [&] {
    return op->emitOpError() << "register layout does not hold both elements "
                                "of a rotary pair in one thread";
  };
  DenseMap<std::pair<int64_t, int64_t>, int64_t> regAt;
  for (int64_t reg = 0; reg < layout.numRegs(); ++reg)
    regAt[{layout.rowSlot(reg), layout.colOffset(reg)}] = reg;
  SmallVector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t reg = 0; reg < layout.numRegs(); ++reg) {
    // Column bases are even and below colBaseBound() (pairsAreAdjacent
    // relies on the same), so an even offset starts an interleaved pair, and
    // an offset stays in its half for every thread or the layout mixes them.
    int64_t col = layout.colOffset(reg);
    bool isFirst;
    if (interleaved)
      isFirst = col % 2 == 0;
    else if (col + layout.colBaseBound() <= d / 2)
      isFirst = true;
    else if (col >= d / 2)
      isFirst = false;
    else
      return noPairs();
    if (!isFirst)
      continue;
    auto partner = regAt.find({layout.rowSlot(reg), col + partnerOffset});
    if (partner == regAt.end())
      return noPairs();
    pairs.push_back({reg, partner->second});
  }
  return pairs;
}

/// Calls `body(slot, first, second, cos, sin)` for each pair of each row
/// slot of the thread, with the pair's angle at the row's position (read
/// here, or given per row slot in `rowPositions`).
///
/// The table reads are the cost here: a warp's read touches 8 rows (8 cache
/// lines) whatever its width, so the number of reads is what counts. With
/// `widen`, two pairs with consecutive indices (the wgmma layout's adjacent
/// columns, half-split) share one 8-byte read, half as many; that costs
/// registers when the turns are interleaved with the reads (the backward
/// then spills), so only warpspec.rotary_angles, which only reads, widens.
static void forEachPairAngle(
    KernelBuilder &e, const FragmentLayout &layout, const AngleSource &angles,
    ArrayRef<std::pair<int64_t, int64_t>> pairs, bool widen,
    function_ref<void(int64_t, int64_t, int64_t, Value, Value)> body,
    ValueRange rowPositions = {}) {
  Value colBase = layout.colBase(e);
  // Pair index: column (half-split) or column / 2 (interleaved; the column
  // base and the first offset are even), a run-time base plus a constant.
  Value indexBase =
      angles.interleaved
          ? Value(LLVM::LShrOp::create(e.b, e.loc, colBase, e.i32(1)))
          : colBase;
  auto indexOffset = [&](int64_t reg) {
    return angles.firstPair + (angles.interleaved ? layout.colOffset(reg) / 2
                                                  : layout.colOffset(reg));
  };
  for (int64_t slot = 0; slot < layout.numRowSlots(); ++slot) {
    Value p = rowPositions.empty()
                  ? positionOf(e, angles, layout.rowIndex(e, slot))
                  : clampPosition(e, angles, rowPositions[slot]);
    if (angles.pinPositions)
      p = e.pinRegisters({p}).front();
    SmallVector<std::pair<int64_t, int64_t>> slotPairs;
    for (auto pair : pairs)
      if (layout.rowSlot(pair.first) == slot)
        slotPairs.push_back(pair);
    for (size_t n = 0; n < slotPairs.size();) {
      // An even offset keeps the 8-byte read aligned (the base is even).
      int64_t offset = indexOffset(slotPairs[n].first);
      size_t run = widen && n + 1 < slotPairs.size() && offset % 2 == 0 &&
                           indexOffset(slotPairs[n + 1].first) == offset + 1
                       ? 2
                       : 1;
      auto [cosines, sines] = loadAngles(e, angles, p, indexBase, offset, run);
      for (size_t j = 0; j < run; ++j)
        body(slot, slotPairs[n + j].first, slotPairs[n + j].second, cosines[j],
             sines[j]);
      n += run;
    }
  }
}

LogicalResult RotaryBuilder::lower(RotaryAnglesOp op,
                                   ArrayRef<ValueRange> operands) {
  RotaryAnglesOp::GenericAdaptor<ArrayRef<ValueRange>> adaptor(operands, op);
  AccType type = op.getAngles().getType();
  std::shared_ptr<FragmentLayout> layout = accumulatorLayout(type);
  int64_t d = type.getShape()[1];
  FailureOr<AngleSource> angles = bindAngles(
      *this, op, adaptor.getRow().front(), adaptor.getPosition().front(),
      op.getPositions() ? adaptor.getPositions().front() : Value(), d,
      /*inverse=*/false);
  if (failed(angles))
    return failure();
  auto pairs = findPairs(op, *layout, d, angles->interleaved);
  if (failed(pairs))
    return failure();
  Fragment result{type, layout, SmallVector<Value>(layout->numRegs())};
  forEachPairAngle(
      *this, *layout, *angles, *pairs, /*widen=*/true,
      [&](int64_t, int64_t first, int64_t second, Value c, Value s) {
        result.regs[first] = c;
        result.regs[second] = s;
      },
      adaptor.getRowPositions());
  rewriter.replaceOpWithMultiple(op, {result.regs});
  return success();
}

LogicalResult RotaryBuilder::lower(LoadPositionsOp op,
                                   ArrayRef<ValueRange> operands) {
  LoadPositionsOp::GenericAdaptor<ArrayRef<ValueRange>> adaptor(operands, op);
  std::shared_ptr<FragmentLayout> layout = rowsLayout(op.getValue().getType());
  SmallVector<Value> values;
  // The tile's positions in its slot (warpspec.copy_positions).
  if (isa<BufferType>(op.getPositions().getType())) {
    Value tilePositions = adaptor.getPositions().front();
    for (int64_t slot = 0; slot < layout->numRowSlots(); ++slot)
      values.push_back(readTilePosition(*this, tilePositions,
                                        layout->rowIndex(*this, slot)));
    rewriter.replaceOpWithMultiple(op, {values});
    return success();
  }
  ArgParams positions = ArgParams::of(op.getPositions());
  Value count = rowCount(*this, op.getPositions());
  if (!positions.pointer || !count)
    return op.emitOpError() << "positions must be a kernel parameter";
  Value row = asI32(adaptor.getRow().front());
  for (int64_t slot = 0; slot < layout->numRowSlots(); ++slot)
    values.push_back(readPosition(*this, positions.pointer, count, row,
                                  layout->rowIndex(*this, slot)));
  rewriter.replaceOpWithMultiple(op, {values});
  return success();
}

LogicalResult RotaryBuilder::lower(RotateTileOp op,
                                   ArrayRef<ValueRange> operands) {
  RotateTileOp::GenericAdaptor<ArrayRef<ValueRange>> adaptor(operands, op);
  const Fragment value(op.getValue().getType(), adaptor.getValue());
  const FragmentLayout &layout = *value.layout;
  int64_t d = value.type.getShape()[1];
  bool inverse = static_cast<bool>(op.getInverse());
  bool interleaved = op.getInterleaved();
  auto pairs = findPairs(op, layout, d, interleaved);
  if (failed(pairs))
    return failure();

  Fragment result{value.type, value.layout, value.regs};
  // Whole rows are turned past `rows` too (op description): no select per
  // element. A part of wider rows keeps them: without the selects ptxas
  // spilled the sm_100a backward at head dim 192 from theta (12 bytes).
  SmallVector<Value> valid;
  if (op.getHeadDim()) {
    Value validRows = asI32(adaptor.getRows().front());
    for (int64_t slot = 0; slot < layout.numRowSlots(); ++slot)
      valid.push_back(cmp(Pred::slt, layout.rowIndex(*this, slot), validRows));
  }
  auto turnPair = [&](int64_t slot, int64_t first, int64_t second, Value c,
                      Value s) {
    if (inverse)
      s = LLVM::FNegOp::create(b, loc, s);
    auto [x, y] = turn(*this, value.regs[first], value.regs[second], c, s);
    result.regs[first] =
        valid.empty() ? x : select(valid[slot], x, value.regs[first]);
    result.regs[second] =
        valid.empty() ? y : select(valid[slot], y, value.regs[second]);
  };
  if (Value anglesTile = op.getAngles()) {
    ValueRange angles = adaptor.getAngles();
    for (auto [first, second] : *pairs)
      turnPair(layout.rowSlot(first), first, second, angles[first],
               angles[second]);
  } else {
    // The angles of the rows' pairs from the tile's first one on, with the
    // frequencies of the rows' head dim (a part of wider rows).
    FailureOr<AngleSource> angles = bindAngles(
        *this, op, adaptor.getRow().front(), adaptor.getPosition().front(),
        /*positions=*/Value(), op.getRowHeadDim(), /*inverse=*/false);
    if (failed(angles))
      return failure();
    angles->firstPair = op.getFirstPair();
    angles->narrowIndex = op.getNarrowIndex();
    angles->pinPositions = angles->theta && op.getHeadDim().has_value();
    forEachPairAngle(*this, layout, *angles, *pairs, /*widen=*/false, turnPair);
    if (angles->pinPositions)
      result.regs = pinRegisters(result.regs);
  }
  rewriter.replaceOpWithMultiple(op, {result.regs});
  return success();
}

void mlir::blockattn::populateWarpSpecRotaryToNVVMPatterns(
    LLVMTypeConverter &converter, const TargetInfo &,
    RewritePatternSet &patterns) {
  patterns.add<RotateLowering, RotaryAnglesLowering, RotateTileLowering,
               LoadPositionsLowering>(converter);
}
