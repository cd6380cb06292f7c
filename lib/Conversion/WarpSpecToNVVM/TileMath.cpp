//===- TileMath.cpp - softmax, stores and writes of register tiles --------===//
//
// Written against FragmentLayout: which row and column each register of a
// thread holds, and which lanes share a row. The same code serves the wgmma
// accumulator layout (sm_90a) and the tcgen05.ld layouts (sm_100a).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "blockattn/Conversion/WarpSpecToNVVM/WarpSpecToNVVM.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "blockattn/Conversion/WarpSpecToNVVM/Descriptors.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::blockattn;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

using Pred = LLVM::ICmpPredicate;
namespace nvdesc = mlir::blockattn::nvdesc;

/// Reduces `v` over the lanes that hold the same row.
static Value reduceRow(KernelBuilder &e, const FragmentLayout &layout, Value v,
                       bool isMax) {
  for (int32_t mask : layout.rowReductionMasks()) {
    Value other = e.shuffleXor(v, mask);
    v = isMax ? Value(LLVM::MaxNumOp::create(e.b, e.loc, v, other))
              : Value(LLVM::FAddOp::create(e.b, e.loc, v, other));
  }
  return v;
}

/// Causal attention inside the block: the tile row of each of the thread's
/// row slots, against which its columns are masked (a tile is one block, so
/// its rows and columns are the same tokens and query i sees keys 0..i);
/// empty without `causal`. `rowOffset` is the block token of the tile's row
/// 0 (a later query half of a large block: row i is token rowOffset + i);
/// `dynamicRowOffset`, when set, is the same as an i32 value (a softmax
/// replica's query half, known at run time), added instead.
static SmallVector<Value> causalRows(KernelBuilder &e,
                                     const FragmentLayout &layout, bool causal,
                                     int64_t rowOffset,
                                     Value dynamicRowOffset) {
  SmallVector<Value> rows;
  if (causal)
    for (int64_t slot = 0; slot < layout.numRowSlots(); ++slot) {
      Value row = layout.rowIndex(e, slot);
      if (dynamicRowOffset)
        row = e.add(row, dynamicRowOffset);
      else if (rowOffset)
        row = e.add(row, e.i32(rowOffset));
      rows.push_back(row);
    }
  return rows;
}

/// Whether the key in column `col` of row slot `slot` is kept: columns at or
/// past the tile's valid count are other sequences' keys; with causalRows,
/// columns past the row are later tokens. Column 0 is always kept.
static Value keepsKey(KernelBuilder &e, Value col, Value validCols,
                      ArrayRef<Value> causalRows, int64_t slot) {
  Value keep = e.cmp(Pred::slt, col, validCols);
  if (causalRows.empty())
    return keep;
  return LLVM::AndOp::create(e.b, e.loc, keep,
                             e.cmp(Pred::sle, col, causalRows[slot]));
}

/// The lanes of a row's reduction group all hold its per-row values; the one
/// whose lane bits under the group's masks are zero speaks for the row.
static Value isRowLeader(KernelBuilder &e, const FragmentLayout &layout) {
  int32_t groupBits = 0;
  for (int32_t mask : layout.rowReductionMasks())
    groupBits |= mask;
  return e.cmp(Pred::eq, e.andi(e.lane(), e.i32(groupBits)), e.i32(0));
}

/// Masks the scores outside each row's attention block (warpspec.softmax's
/// `block`): the tile holds blocks of `block` rows and columns on its
/// diagonal, and row i keeps column j only when i / block == j / block. A
/// register's columns lie in [colOffset, colOffset + colBaseBound), inside
/// one block for the accumulator layouts (8-column groups, blocks of 16 or
/// more), so its column block is a constant and the mask costs a shift per
/// row slot and a compare and select per element.
///
/// A row past the tile's `validCols` valid rows takes the last valid row's
/// block: its scores stay finite (it is never stored, and zeroed where
/// valid_rows is given), and the row blocks depend on the tile, so that the
/// compares are made per tile instead of being hoisted out of the tile loop
/// as loop-invariant predicates, which held predicate registers across the
/// loop and made the sm_90a head-dim-64 backward spill.
static void maskOtherBlocks(KernelBuilder &e, const FragmentLayout &layout,
                            int64_t block, Value validCols,
                            MutableArrayRef<Value> scores, Value negInf) {
  int64_t shift = llvm::Log2_64(block);
  Value lastRow = e.sub(validCols, e.i32(1));
  SmallVector<Value> rowBlock;
  for (int64_t slot = 0; slot < layout.numRowSlots(); ++slot) {
    Value row =
        LLVM::SMinOp::create(e.b, e.loc, layout.rowIndex(e, slot), lastRow);
    rowBlock.push_back(LLVM::LShrOp::create(e.b, e.loc, row, e.i32(shift)));
  }
  Value colBase;
  for (int64_t r = 0; r < layout.numRegs(); ++r) {
    int64_t first = layout.colOffset(r);
    int64_t last = first + layout.colBaseBound() - 1;
    Value colBlock;
    if (first >> shift == last >> shift) {
      colBlock = e.i32(first >> shift);
    } else {
      if (!colBase)
        colBase = layout.colBase(e);
      colBlock = LLVM::LShrOp::create(e.b, e.loc, e.add(colBase, e.i32(first)),
                                      e.i32(shift));
    }
    Value same = e.cmp(Pred::eq, rowBlock[layout.rowSlot(r)], colBlock);
    scores[r] = e.select(same, scores[r], negInf);
  }
}

namespace {

/// warpspec.mask_blocks: per row slot, the bounds [lo, hi) of its block
/// from the packed ends (byte q: the end of block q); per element, two
/// compares of its column against them.
struct MaskBlocksLowering : ConvertOpToLLVMPattern<MaskBlocksOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(MaskBlocksOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder e(rewriter, op);
    const Fragment scores(op.getScores().getType(), adaptor.getScores());
    const FragmentLayout &layout = *scores.layout;
    int64_t cols = op.getScores().getType().getShape()[1];
    int64_t numBlocks = cols / static_cast<int64_t>(op.getBlock());
    Value packed = e.asI32(adaptor.getEnds().front());
    SmallVector<Value> ends;
    for (int64_t q = 0; q < numBlocks; ++q)
      ends.push_back(e.andi(
          LLVM::LShrOp::create(e.b, e.loc, packed, e.i32(8 * q)), e.i32(0xff)));
    // Rows past the valid ones (the last end) take the last valid row's
    // block, so that every row keeps a column.
    Value lastRow = e.sub(ends.back(), e.i32(1));
    SmallVector<Value> lo, hi;
    for (int64_t slot = 0; slot < layout.numRowSlots(); ++slot) {
      Value row =
          LLVM::SMinOp::create(e.b, e.loc, layout.rowIndex(e, slot), lastRow);
      Value from = e.i32(0), to = e.i32(cols);
      for (Value end : ends) {
        Value before = e.cmp(Pred::sle, end, row);
        from = LLVM::SMaxOp::create(e.b, e.loc, from,
                                    e.select(before, end, e.i32(0)));
        to = LLVM::SMinOp::create(e.b, e.loc, to,
                                  e.select(before, e.i32(cols), end));
      }
      lo.push_back(from);
      hi.push_back(to);
    }
    Value colBase = layout.colBase(e);
    Value negInf = e.f32(-std::numeric_limits<double>::infinity());
    SmallVector<Value> regs;
    for (int64_t r = 0; r < layout.numRegs(); ++r) {
      Value col = e.add(colBase, e.i32(layout.colOffset(r)));
      int64_t slot = layout.rowSlot(r);
      // In this order whatever the host compiler (argument order).
      Value from = e.cmp(Pred::sge, col, lo[slot]);
      Value to = e.cmp(Pred::slt, col, hi[slot]);
      Value keep = LLVM::AndOp::create(e.b, e.loc, from, to);
      regs.push_back(e.select(keep, scores.regs[r], negInf));
    }
    rewriter.replaceOpWithMultiple(op, {regs});
    return success();
  }
};

/// The registers of the f32 tile(s) `tiles` (columns starting at `starts`),
/// rearranged as the tile `type` whose column 0 is column `from` of theirs:
/// each result register is the input register of the same row slot and
/// column. Every f32 tile has the accumulator layout, whose column base
/// is the same at every width (2 (lane % 4)), so this is a choice of
/// registers, no data moves.
static FailureOr<SmallVector<Value>> selectColumns(Operation *op,
                                                   ArrayRef<Fragment> tiles,
                                                   ArrayRef<int64_t> starts,
                                                   AccType type, int64_t from) {
  std::shared_ptr<FragmentLayout> layout = accumulatorLayout(type);
  DenseMap<std::pair<int64_t, int64_t>, Value> at;
  for (auto [tile, start] : llvm::zip_equal(tiles, starts)) {
    if (tile.layout->colBaseBound() != layout->colBaseBound() ||
        tile.layout->numRowSlots() != layout->numRowSlots())
      return op->emitOpError() << "register layouts of " << tile.type << " and "
                               << type << " do not line up";
    for (int64_t reg = 0; reg < tile.layout->numRegs(); ++reg)
      at[{tile.layout->rowSlot(reg), start + tile.layout->colOffset(reg)}] =
          tile.regs[reg];
  }
  SmallVector<Value> regs;
  for (int64_t reg = 0; reg < layout->numRegs(); ++reg) {
    auto it = at.find({layout->rowSlot(reg), from + layout->colOffset(reg)});
    if (it == at.end())
      return op->emitOpError()
             << "no register holds column " << from + layout->colOffset(reg);
    regs.push_back(it->second);
  }
  return regs;
}

/// warpspec.concat_columns: the inputs' registers, as the wider tile's.
struct ConcatColumnsLowering : ConvertOpToLLVMPattern<ConcatColumnsOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(ConcatColumnsOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Fragment> tiles;
    SmallVector<int64_t> starts;
    int64_t start = 0;
    for (auto [input, regs] :
         llvm::zip_equal(op.getInputs(), adaptor.getInputs())) {
      auto type = cast<AccType>(input.getType());
      tiles.emplace_back(type, regs);
      starts.push_back(start);
      start += type.getShape()[1];
    }
    FailureOr<SmallVector<Value>> regs =
        selectColumns(op, tiles, starts, op.getResult().getType(), 0);
    if (failed(regs))
      return failure();
    rewriter.replaceOpWithMultiple(op, {*regs});
    return success();
  }
};

/// warpspec.extract_columns: the registers of the source's columns
/// [offset, offset + N).
struct ExtractColumnsLowering : ConvertOpToLLVMPattern<ExtractColumnsOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(ExtractColumnsOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Fragment source(op.getSource().getType(), adaptor.getSource());
    FailureOr<SmallVector<Value>> regs =
        selectColumns(op, {source}, {0}, op.getResult().getType(),
                      static_cast<int64_t>(op.getOffset()));
    if (failed(regs))
      return failure();
    rewriter.replaceOpWithMultiple(op, {*regs});
    return success();
  }
};

struct SoftmaxLowering : ConvertOpToLLVMPattern<SoftmaxOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(SoftmaxOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override;

private:
  /// The registers of the op's results (P, the row sums, and the log-sum-
  /// exps when asked for), from the scores as masked, or with `masked`
  /// false as they are (a full tile).
  SmallVector<SmallVector<Value>> softmax(KernelBuilder &e, SoftmaxOp op,
                                          OneToNOpAdaptor adaptor,
                                          bool masked) const;
};

struct SoftmaxGradLowering : ConvertOpToLLVMPattern<SoftmaxGradOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(SoftmaxGradOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override;
};

struct StoreRowsLowering : ConvertOpToLLVMPattern<StoreRowsOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(StoreRowsOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override;
};

struct LoadRowsLowering : ConvertOpToLLVMPattern<LoadRowsOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(LoadRowsOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override;
};

struct StoreLowering : ConvertOpToLLVMPattern<StoreOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(StoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override;
};

struct WriteLowering : ConvertOpToLLVMPattern<WriteOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(WriteOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override;
};

} // namespace

/// exp2(x) as ex2.approx.ftz.f32, through its intrinsic: the NVVM dialect
/// has no op for it, and llvm.exp2.f32 becomes ex2.approx.f32, which ptxas
/// expands into four instructions (FSETP x < -126, a predicated FMUL by 0.5,
/// MUFU.EX2, a predicated squaring) to get subnormal results right: three
/// more instructions per score element, on the softmax's issue-bound path.
/// Here the exponents are at most 0 and the row sum at least 1: flushing the
/// results below 2^-126 to zero moves a probability by less than 2^-126.
static Value exp2FlushingSubnormals(KernelBuilder &e, Value x) {
  return LLVM::CallIntrinsicOp::create(
             e.b, e.loc, e.f32T(),
             e.b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"), ValueRange{x})
      .getResult(0);
}

/// Whether the softmax's tile is full: every column and (with valid_rows)
/// every row valid. The same for every thread of the warpgroup.
static Value isFullTile(KernelBuilder &e, SoftmaxOp op, Value validCols,
                        ValueRange validRows) {
  ArrayRef<int64_t> shape = op.getScores().getType().getShape();
  Value full = e.cmp(Pred::sge, validCols, e.i32(shape[1]));
  if (validRows.empty())
    return full;
  return LLVM::AndOp::create(
      e.b, e.loc, full,
      e.cmp(Pred::sge, e.asI32(validRows.front()), e.i32(shape[0])));
}

LogicalResult
SoftmaxLowering::matchAndRewrite(SoftmaxOp op, OneToNOpAdaptor adaptor,
                                 ConversionPatternRewriter &rewriter) const {
  KernelBuilder e(rewriter, op);
  if (!op.getFullTilePath()) {
    rewriter.replaceOpWithMultiple(op, softmax(e, op, adaptor, true));
    return success();
  }
  // A uniform branch: a full tile takes the copy without masks.
  SmallVector<Type> types;
  SmallVector<size_t> counts;
  for (Type type : op->getResultTypes()) {
    size_t before = types.size();
    if (failed(getTypeConverter()->convertType(type, types)))
      return failure();
    counts.push_back(types.size() - before);
  }
  Value full = isFullTile(e, op, e.asI32(adaptor.getValidCols().front()),
                          adaptor.getValidRows());
  auto branch = scf::IfOp::create(rewriter, e.loc, types, full,
                                  /*addThenBlock=*/true,
                                  /*addElseBlock=*/true);
  for (auto [block, masked] : {std::pair(branch.thenBlock(), false),
                               std::pair(branch.elseBlock(), true)}) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(block);
    SmallVector<Value> flat;
    for (ArrayRef<Value> result : softmax(e, op, adaptor, masked))
      llvm::append_range(flat, result);
    scf::YieldOp::create(rewriter, e.loc, flat);
  }
  SmallVector<SmallVector<Value>> results;
  ValueRange rest = branch.getResults();
  for (size_t count : counts) {
    results.emplace_back(rest.take_front(count));
    rest = rest.drop_front(count);
  }
  rewriter.replaceOpWithMultiple(op, results);
  return success();
}

SmallVector<SmallVector<Value>>
SoftmaxLowering::softmax(KernelBuilder &e, SoftmaxOp op,
                         OneToNOpAdaptor adaptor, bool masked) const {
  const Fragment scores(op.getScores().getType(), adaptor.getScores());
  const FragmentLayout &layout = *scores.layout;
  int64_t numRegs = layout.numRegs(), numSlots = layout.numRowSlots();

  Value validCols = e.asI32(adaptor.getValidCols().front());
  Value negInf = e.f32(-std::numeric_limits<double>::infinity());
  SmallVector<Value> s(scores.regs.begin(), scores.regs.end());
  if (masked) {
    Value colBase = layout.colBase(e);
    // pin_columns: the columns derive from valid_cols (+ min(valid_cols, 0),
    // zero), so that LLVM does not hoist them out of a loop around the op.
    if (op.getPinColumns())
      colBase =
          e.add(colBase, LLVM::SMinOp::create(e.b, e.loc, validCols, e.i32(0)));
    Value dynamicRowOffset;
    if (!adaptor.getDynamicRowOffset().empty())
      dynamicRowOffset = e.asI32(adaptor.getDynamicRowOffset().front());
    SmallVector<Value> rows = causalRows(
        e, layout, static_cast<bool>(op.getCausal()),
        static_cast<int64_t>(op.getRowOffset().value_or(0)), dynamicRowOffset);
    for (int64_t r = 0; r < numRegs; ++r) {
      Value col = e.add(colBase, e.i32(layout.colOffset(r)));
      s[r] = e.select(keepsKey(e, col, validCols, rows, layout.rowSlot(r)),
                      s[r], negInf);
    }
    if (std::optional<uint64_t> block = op.getBlock())
      maskOtherBlocks(e, layout, static_cast<int64_t>(*block), validCols, s,
                      negInf);
  }

  // Row max; column 0 is always valid, so the max is finite (with `block`,
  // a row's block starts at a valid column, at most the last valid row).
  SmallVector<Value> rowMax(numSlots, negInf);
  for (int64_t r = 0; r < numRegs; ++r) {
    int64_t slot = layout.rowSlot(r);
    rowMax[slot] = LLVM::MaxNumOp::create(e.b, e.loc, rowMax[slot], s[r]);
  }
  for (Value &m : rowMax)
    m = reduceRow(e, layout, m, /*isMax=*/true);

  // exp(scale (s - m)) = exp2(s k - m k) with k = scale log2(e): one FMA and
  // one ex2 per element.
  Value k = LLVM::FMulOp::create(e.b, e.loc, adaptor.getScale().front(),
                                 e.f32(M_LOG2E));
  SmallVector<Value> negMaxK(numSlots);
  for (int64_t slot = 0; slot < numSlots; ++slot)
    negMaxK[slot] = LLVM::FNegOp::create(
        e.b, e.loc, LLVM::FMulOp::create(e.b, e.loc, rowMax[slot], k));
  SmallVector<Value> p(numRegs);
  // Each row's sum starts from its first element, not from 0: LLVM cannot
  // drop 0 + p for the intrinsic's p (it does not know p is not -0).
  SmallVector<Value> rowSum(numSlots);
  for (int64_t r = 0; r < numRegs; ++r) {
    int64_t slot = layout.rowSlot(r);
    Value x = LLVM::FMAOp::create(e.b, e.loc, s[r], k, negMaxK[slot]);
    p[r] = exp2FlushingSubnormals(e, x);
    rowSum[slot] = rowSum[slot]
                       ? LLVM::FAddOp::create(e.b, e.loc, rowSum[slot], p[r])
                       : p[r];
  }
  for (Value &sum : rowSum)
    sum = reduceRow(e, layout, sum, /*isMax=*/false);

  // log(sum_j exp(scale s_j)) = ln(2) (log2(L) + m k), from the sum of
  // exp2(s k - m k).
  SmallVector<Value> lse;
  if (op.getLse())
    for (int64_t slot = 0; slot < numSlots; ++slot) {
      // lg2.approx.f32 through its intrinsic: the NVVM dialect has no op for
      // it and NVPTX has no lowering of llvm.log2.f32 (not even with `afn`).
      // Its error (2^-22) is far below the f32 sum's own.
      Value log2Sum =
          LLVM::CallIntrinsicOp::create(
              e.b, e.loc, e.f32T(), e.b.getStringAttr("llvm.nvvm.lg2.approx.f"),
              ValueRange{rowSum[slot]})
              .getResult(0);
      Value log2Lse = LLVM::FMAOp::create(e.b, e.loc, rowMax[slot], k, log2Sum);
      lse.push_back(LLVM::FMulOp::create(e.b, e.loc, log2Lse, e.f32(M_LN2)));
    }

  // Normalized probabilities, and zero rows for queries past the tile.
  if (op.getNormalize()) {
    SmallVector<Value> inverse;
    for (Value sum : rowSum)
      inverse.push_back(LLVM::FDivOp::create(e.b, e.loc, e.f32(1.0), sum));
    for (int64_t r = 0; r < numRegs; ++r)
      p[r] = LLVM::FMulOp::create(e.b, e.loc, p[r], inverse[layout.rowSlot(r)]);
  }
  if (masked && op.getValidRows()) {
    Value validRows = e.asI32(adaptor.getValidRows().front());
    Value zero = e.f32(0.0);
    SmallVector<Value> rowValid;
    for (int64_t slot = 0; slot < numSlots; ++slot)
      rowValid.push_back(e.cmp(Pred::slt, layout.rowIndex(e, slot), validRows));
    for (int64_t r = 0; r < numRegs; ++r)
      p[r] = e.select(rowValid[layout.rowSlot(r)], p[r], zero);
  }

  AccType probsType = op.getProbs().getType();
  Fragment probs{probsType, scores.layout, {}};
  if (probsType.getElementType().isF32()) {
    probs.regs = p;
  } else {
    for (int64_t r = 0; r + 1 < numRegs; r += 2)
      probs.regs.push_back(
          e.packPair(probsType.getElementType(), p[r], p[r + 1]));
  }
  SmallVector<SmallVector<Value>> results = {probs.regs, rowSum};
  if (op.getLse())
    results.push_back(lse);
  return results;
}

/// The swizzle phase of `row` in `tile` (nvdesc::SwizzledTile::phase): the
/// value XOR-ed into the 16-byte unit index of the row.
static Value swizzlePhase(KernelBuilder &e, const nvdesc::SwizzledTile &tile,
                          Value row) {
  return e.swizzlePhase(tile.chunkCols(), row);
}

/// Byte offset of element (row, col) in a 16-bit tile laid out as TMA writes
/// it (nvdesc::SwizzledTile::byteOffset): chunks of `rows` rows of
/// tile.rowBytes() bytes, 16-byte units XOR-ed with the row's swizzle phase.
/// Also what keeps the staging buffer's fragment writes and row reads free of
/// bank conflicts.
static Value swizzledOffset(KernelBuilder &e, Value row, Value col,
                            const nvdesc::SwizzledTile &tile) {
  int64_t chunkCols = tile.chunkCols();
  Value chunk =
      LLVM::LShrOp::create(e.b, e.loc, col, e.i32(llvm::Log2_64(chunkCols)));
  Value byteInRow = e.mul(e.andi(col, e.i32(chunkCols - 1)), e.i32(2));
  Value unit = LLVM::XOrOp::create(
      e.b, e.loc, LLVM::LShrOp::create(e.b, e.loc, byteInRow, e.i32(4)),
      swizzlePhase(e, tile, row));
  return e.add(e.add(e.mul(chunk, e.i32(tile.chunkBytes())),
                     e.mul(row, e.i32(tile.rowBytes()))),
               e.add(e.mul(unit, e.i32(16)), e.andi(byteInRow, e.i32(15))));
}

LogicalResult SoftmaxGradLowering::matchAndRewrite(
    SoftmaxGradOp op, OneToNOpAdaptor adaptor,
    ConversionPatternRewriter &rewriter) const {
  KernelBuilder e(rewriter, op);
  Fragment p(op.getProbs().getType(), adaptor.getProbs());
  const Fragment dp(op.getDprobs().getType(), adaptor.getDprobs());
  const FragmentLayout &layout = *dp.layout;
  int64_t numRegs = layout.numRegs(), numSlots = layout.numRowSlots();
  // 16-bit probabilities (held packed, half the registers of f32 ones, across
  // dP's product) are widened here, pair by pair, as they are used.
  if (Type element = p.type.getElementType(); !element.isF32()) {
    SmallVector<Value> wide;
    auto pair = VectorType::get({2}, element);
    for (Value word : p.regs) {
      Value widened = LLVM::FPExtOp::create(
          e.b, e.loc, VectorType::get({2}, e.f32T()),
          LLVM::BitcastOp::create(e.b, e.loc, pair, word));
      for (int64_t h = 0; h < 2; ++h)
        wide.push_back(
            LLVM::ExtractElementOp::create(e.b, e.loc, widened, e.i32(h)));
    }
    p.regs = std::move(wide);
  }
  // D[i] = sum_j P[i, j] dP[i, j], reduced over the lanes holding row i.
  SmallVector<Value> rowDot(numSlots, e.f32(0.0));
  for (int64_t r = 0; r < numRegs; ++r) {
    int64_t slot = layout.rowSlot(r);
    rowDot[slot] =
        LLVM::FMAOp::create(e.b, e.loc, p.regs[r], dp.regs[r], rowDot[slot]);
  }
  for (Value &dot : rowDot)
    dot = reduceRow(e, layout, dot, /*isMax=*/false);
  // The log-sum-exp's gradient g: dS = scale P (dP - (D - g)).
  if (op.getDlse())
    for (auto [dot, g] : llvm::zip(rowDot, adaptor.getDlse()))
      dot = LLVM::FSubOp::create(e.b, e.loc, dot, g);
  // dS = P (scale dP - scale D): the row's -scale D once, then one FMA and
  // one multiply per element (not a subtraction and two multiplies).
  Value scale = adaptor.getScale().front();
  SmallVector<Value> negScaledDot;
  for (Value dot : rowDot)
    negScaledDot.push_back(LLVM::FNegOp::create(
        e.b, e.loc, LLVM::FMulOp::create(e.b, e.loc, dot, scale)));
  SmallVector<Value> ds(numRegs);
  for (int64_t r = 0; r < numRegs; ++r) {
    Value centered = LLVM::FMAOp::create(e.b, e.loc, dp.regs[r], scale,
                                         negScaledDot[layout.rowSlot(r)]);
    ds[r] = LLVM::FMulOp::create(e.b, e.loc, p.regs[r], centered);
  }
  AccType type = op.getGrad().getType();
  Fragment grad{type, dp.layout, {}};
  if (type.getElementType().isF32()) {
    grad.regs = ds;
  } else {
    for (int64_t r = 0; r + 1 < numRegs; r += 2)
      grad.regs.push_back(e.packPair(type.getElementType(), ds[r], ds[r + 1]));
  }
  rewriter.replaceOpWithMultiple(op, {grad.regs});
  return success();
}

/// A pointer into a swizzled tile at [`threadOffset` + ((`threadUnit` XOR
/// `unit`) << 4)] + `constant`: the thread's part, made once per 16-byte
/// unit of a row and kept in `unitBases`, and a constant that becomes the
/// access's immediate offset.
static Value unitPointer(KernelBuilder &e, Value tile, Value threadOffset,
                         Value threadUnit, int64_t unit, int64_t constant,
                         MutableArrayRef<Value> unitBases) {
  Value &base = unitBases[unit];
  if (!base) {
    Value swizzled = LLVM::XOrOp::create(e.b, e.loc, threadUnit, e.i32(unit));
    Value offset = e.add(threadOffset,
                         LLVM::ShlOp::create(e.b, e.loc, swizzled, e.i32(4)));
    base = LLVM::GEPOp::create(e.b, e.loc, e.smemPtrT(), e.b.getI8Type(), tile,
                               ValueRange{offset});
  }
  return LLVM::GEPOp::create(
      e.b, e.loc, e.smemPtrT(), e.b.getI8Type(), base,
      ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(constant)});
}

/// Shared-memory pointers to the register pairs of a fragment in a swizzled
/// tile (swizzledOffset), one per pair.
///
/// Written naively, every pair's address is a different run-time value, and
/// LLVM hoists all of them out of the tile loop, where they cost a register
/// each (and spill). When the layout allows it (the thread's column base
/// stays inside one 16-byte unit, constant column offsets are whole units,
/// constant row offsets whole swizzle periods of 8 rows, as in the wgmma
/// layout), byte(row, col) = [chunk and row constants] +
/// [rowBase * rowBytes + ((unit ^ phase(rowBase)) << 4) + colBase * 2], and
/// the bracket takes only one value per unit of a row (8, or 4 with the
/// 64-byte swizzle): the constants become immediate offsets of the stores.
static SmallVector<Value> pairPointers(KernelBuilder &e,
                                       const FragmentLayout &layout, Value tile,
                                       int64_t rows, int64_t cols,
                                       int64_t chunk = 0) {
  nvdesc::SwizzledTile geometry{rows, cols, chunk};
  int64_t rowBytes = geometry.rowBytes();
  SmallVector<Value> ptrs;
  bool factorable = 2 * layout.colBaseBound() <= 16;
  for (int64_t r = 0; r + 1 < layout.numRegs(); r += 2)
    factorable &= (2 * layout.colOffset(r)) % 16 == 0 &&
                  layout.rowOffset(layout.rowSlot(r)) % 8 == 0;
  Value rowBase = layout.rowBase(e), colBase = layout.colBase(e);
  if (!factorable) {
    for (int64_t r = 0; r + 1 < layout.numRegs(); r += 2) {
      Value row = e.add(rowBase, e.i32(layout.rowOffset(layout.rowSlot(r))));
      Value col = e.add(colBase, e.i32(layout.colOffset(r)));
      ptrs.push_back(LLVM::GEPOp::create(
          e.b, e.loc, e.smemPtrT(), e.b.getI8Type(), tile,
          ValueRange{swizzledOffset(e, row, col, geometry)}));
    }
    return ptrs;
  }
  Value rowPhase = swizzlePhase(e, geometry, rowBase);
  Value common =
      e.add(e.mul(rowBase, e.i32(rowBytes)), e.mul(colBase, e.i32(2)));
  SmallVector<Value> unitBase(rowBytes / 16);
  for (int64_t r = 0; r + 1 < layout.numRegs(); r += 2) {
    int64_t colBytes = 2 * layout.colOffset(r);
    int64_t chunk = colBytes / rowBytes;
    int64_t unit = (colBytes % rowBytes) / 16;
    int64_t constant = chunk * geometry.chunkBytes() +
                       layout.rowOffset(layout.rowSlot(r)) * rowBytes;
    ptrs.push_back(
        unitPointer(e, tile, common, rowPhase, unit, constant, unitBase));
  }
  return ptrs;
}

/// The row address each lane gives each stmatrix.x4 of a 16-bit tile
/// (`rows` x `cols`, in swizzled chunks of `chunk` columns, 0: its own) in
/// the accumulator layout. stmatrix j takes the thread's pairs 4j..4j+3:
/// pair 4j + m is row slot m % 2 of column group 2j + m / 2, and lanes
/// 8m..8m+7 give the addresses of matrix m's 8 rows: lane l addresses row
/// (l % 8) + 8 ((l / 8) % 2) of its warp's 16, 16-byte unit 2j + l / 16. The
/// two groups of an instruction share a chunk (a chunk has an even number of
/// units), so the unit is (2j mod units) XOR (l / 16 XOR phase(row)): one
/// lane term, and one XOR per distinct even unit (unitPointer).
static SmallVector<Value> stmatrixPointers(KernelBuilder &e, Value tile,
                                           int64_t rows, int64_t cols,
                                           int64_t chunk) {
  nvdesc::SwizzledTile geometry{rows, cols, chunk};
  int64_t units = geometry.chunkCols() / 8;
  Value lane = e.lane();
  Value warpInGroup =
      LLVM::LShrOp::create(e.b, e.loc, e.threadInReplica(), e.i32(5));
  Value rowHalf =
      e.andi(LLVM::LShrOp::create(e.b, e.loc, lane, e.i32(3)), e.i32(1));
  Value row =
      e.add(e.add(e.mul(warpInGroup, e.i32(16)), e.andi(lane, e.i32(7))),
            e.mul(rowHalf, e.i32(8)));
  Value unitOfLane = LLVM::XOrOp::create(
      e.b, e.loc, LLVM::LShrOp::create(e.b, e.loc, lane, e.i32(4)),
      swizzlePhase(e, geometry, row));
  Value rowStart = e.mul(row, e.i32(geometry.rowBytes()));
  SmallVector<Value> unitBase(units);
  SmallVector<Value> ptrs;
  for (int64_t j = 0; j < cols / 16; ++j) {
    int64_t group = 2 * j;
    ptrs.push_back(unitPointer(e, tile, rowStart, unitOfLane, group % units,
                               group / units * geometry.chunkBytes(),
                               unitBase));
  }
  return ptrs;
}

/// Writes the packed pairs of a 16-bit tile (`pair(i)`: registers 2i, 2i+1
/// of the accumulator layout, packed) into its swizzled buffer, four pairs a
/// stmatrix.x4, or a 4-byte st.shared a pair.
static void writePairs(KernelBuilder &e, function_ref<Value(int64_t)> pair,
                       Value tile, int64_t rows, int64_t cols, int64_t chunk,
                       bool stmatrix, const FragmentLayout &layout) {
  if (!stmatrix) {
    SmallVector<Value> ptrs = pairPointers(e, layout, tile, rows, cols, chunk);
    for (auto [i, ptr] : llvm::enumerate(ptrs))
      e.store(pair(i), ptr, 4);
    return;
  }
  SmallVector<Value> ptrs = stmatrixPointers(e, tile, rows, cols, chunk);
  for (auto [j, ptr] : llvm::enumerate(ptrs)) {
    SmallVector<Value> sources;
    for (int64_t m = 0; m < 4; ++m)
      sources.push_back(pair(4 * j + m));
    NVVM::StMatrixOp::create(
        e.b, e.loc, ptr, sources,
        NVVM::MMALayoutAttr::get(e.ctx, NVVM::MMALayout::row),
        NVVM::LdStMatrixShapeAttr::get(e.ctx, 8, 8),
        NVVM::LdStMatrixEltTypeAttr::get(e.ctx, NVVM::LdStMatrixEltType::B16));
  }
}

/// Registers 2i and 2i+1 hold adjacent columns of one row in every layout
/// the targets use; the stores and writes rely on it.
static bool pairsAreAdjacent(const FragmentLayout &layout) {
  for (int64_t r = 0; r + 1 < layout.numRegs(); r += 2)
    if (layout.rowSlot(r) != layout.rowSlot(r + 1) ||
        layout.colOffset(r + 1) != layout.colOffset(r) + 1)
      return false;
  return true;
}

static void copyOutRows(KernelBuilder &e, StoreOp op, Value staging,
                        Value tileBase, Value validRows, int64_t rows,
                        int64_t cols);

/// warpspec.store via a staging buffer: fragments into shared memory, then
/// 16-byte loads and stores of whole row segments (8 consecutive threads
/// cover the 128 bytes of one 64-column chunk of a row).
static LogicalResult emitStagedStore(KernelBuilder &e, StoreOp op,
                                     Value stagingPtr, Value row, Value head,
                                     const Fragment &value,
                                     ArrayRef<Value> scale, Value tileBase,
                                     Value validRows) {
  const FragmentLayout &layout = *value.layout;
  ArgParams dest = ArgParams::of(op.getDest());
  Value staging = stagingPtr;
  Type elementType = cast<MemRefType>(op.getDest().getType()).getElementType();
  int64_t rows = value.type.getShape()[0], cols = value.type.getShape()[1];
  bool bulk = op.getBulk();
  Value leader = e.cmp(LLVM::ICmpPredicate::eq, e.threadInReplica(), e.i32(0));

  // The previous tile has left the buffer: the leader's bulk store has read
  // it (wait_group.read), and every thread finished copying it out. With
  // `pending_reads = 1` the buffer is the one of the store before last (two
  // staging buffers alternate), so the last store may still be reading its
  // own.
  if (bulk)
    e.emitIf(leader, [&] {
      NVVM::CpAsyncBulkWaitGroupOp::create(
          e.b, e.loc, op.getPendingReads().value_or(0), e.b.getUnitAttr());
    });
  e.replicaBarrier();
  auto pair = [&](int64_t i) {
    int64_t slot = layout.rowSlot(2 * i);
    Value lo = value.regs[2 * i], hi = value.regs[2 * i + 1];
    if (!scale.empty()) {
      lo = LLVM::FMulOp::create(e.b, e.loc, lo, scale[slot]);
      hi = LLVM::FMulOp::create(e.b, e.loc, hi, scale[slot]);
    }
    return e.packPair(elementType, lo, hi);
  };
  writePairs(e, pair, staging, rows, cols, /*chunk=*/0, op.getStmatrix(),
             layout);
  // The whole tile is in the buffer, visible to the tensor memory
  // accelerator (async proxy) too.
  if (bulk)
    NVVM::FenceProxyOp::create(
        e.b, e.loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(e.ctx, NVVM::SharedSpace::shared_cta));
  e.replicaBarrier();
  auto copyOut = [&] {
    copyOutRows(e, op, staging, tileBase, validRows, rows, cols);
  };
  if (!bulk) {
    copyOut();
    return success();
  }
  // Full tiles: two (or one) bulk tensor stores of 64-column chunks; the
  // tensor map clips rows past T. A partial tile's extra rows belong to the
  // next sequence, so the threads copy only its valid rows.
  e.emitIfElse(
      e.cmp(LLVM::ICmpPredicate::eq, validRows, e.i32(rows)),
      [&] {
        e.emitIf(leader, [&] {
          for (TmaBox box :
               e.tmaBoxes(e.asI32(row), e.asI32(head), rows, cols)) {
            // A column chunk of the head dimension (col_offset) starts its
            // boxes that many columns in.
            if (int64_t offset = op.getColOffset().value_or(0))
              box.coords[0] = e.add(box.coords[0], e.i32(offset));
            Value src =
                LLVM::GEPOp::create(e.b, e.loc, e.smemPtrT(), e.b.getI8Type(),
                                    staging, ValueRange{e.i32(box.smemOffset)});
            NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
                e.b, e.loc, dest.tensorMap, src, box.coords, Value(),
                NVVM::TMAStoreModeAttr(), Value());
          }
          NVVM::CpAsyncBulkCommitGroupOp::create(e.b, e.loc);
        });
      },
      copyOut);
  return success();
}

/// Copies the valid rows of a staged tile to global memory.
static void copyOutRows(KernelBuilder &e, StoreOp op, Value staging,
                        Value tileBase, Value validRows, int64_t rows,
                        int64_t cols) {
  ArgParams dest = ArgParams::of(op.getDest());
  Type elementType = cast<MemRefType>(op.getDest().getType()).getElementType();
  // Consecutive threads copy consecutive 16-byte units of a tile row (every
  // chunk), so each warp store writes whole rows of the head. Where the
  // threads do not divide into whole rows (head dim 96: 12 units a row), they
  // copy one chunk at a time instead, a group of the chunk's units per row.
  nvdesc::SwizzledTile geometry{rows, cols};
  int64_t rowBytes = geometry.rowBytes();
  constexpr int64_t kUnitBytes = 16;
  int64_t unitsPerChunkRow = rowBytes / kUnitBytes;
  int64_t unitsPerRow = cols * 2 / kUnitBytes;
  int64_t threads = e.replicaThreads();
  int64_t groupUnits =
      threads % unitsPerRow == 0 ? unitsPerRow : unitsPerChunkRow;
  Type vec = VectorType::get({4}, e.i32T());
  // Every pass of the loop moves the thread `threads / groupUnits` rows
  // down (a multiple of the 8-row swizzle period), so its unit, chunk and
  // swizzle are the same in every pass: one base address, plus a constant.
  assert(threads % groupUnits == 0 && (threads / groupUnits) % 8 == 0 &&
         "a pass must cover whole swizzle periods");
  Value t = e.threadInReplica();
  Value rowBase = e.udiv(t, e.i32(groupUnits));
  // In a partition with `pinned_bases` the thread's first row is derived
  // where the tile is copied out, so that LLVM holds no row offset (rowBase
  // x stride, one a gradient tensor) from the partition's entry.
  if (e.partition && e.partition.getPinnedBases())
    rowBase = pinI32(e, rowBase);
  int64_t rowsPerPass = threads / groupUnits;
  for (int64_t group = 0; group < unitsPerRow / groupUnits; ++group) {
    Value unitInRow = e.urem(t, e.i32(groupUnits));
    if (group > 0)
      unitInRow = e.add(unitInRow, e.i32(group * groupUnits));
    Value chunk = e.udiv(unitInRow, e.i32(unitsPerChunkRow));
    Value unit = e.urem(unitInRow, e.i32(unitsPerChunkRow));
    Value physical = LLVM::XOrOp::create(e.b, e.loc, unit,
                                         swizzlePhase(e, geometry, rowBase));
    Value offset = e.add(e.add(e.mul(chunk, e.i32(geometry.chunkBytes())),
                               e.mul(rowBase, e.i32(rowBytes))),
                         e.mul(physical, e.i32(kUnitBytes)));
    Value srcBase = LLVM::GEPOp::create(
        e.b, e.loc, e.smemPtrT(), e.b.getI8Type(), staging, ValueRange{offset});
    Value col = e.zext64(e.mul(unitInRow, e.i32(kUnitBytes / 2)));
    Value dstBase =
        e.add(e.add(tileBase, e.mul(e.zext64(rowBase), dest.strides[0])), col);
    for (int64_t pass = 0; pass * rowsPerPass < rows; ++pass) {
      int64_t rowStep = pass * rowsPerPass;
      Value src = LLVM::GEPOp::create(
          e.b, e.loc, e.smemPtrT(), e.b.getI8Type(), srcBase,
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(rowStep * rowBytes)});
      Value data = e.load(vec, src, 16);
      Value row = e.add(rowBase, e.i32(rowStep));
      e.emitIf(e.cmp(LLVM::ICmpPredicate::slt, row, validRows), [&] {
        // pinned_steps: the step's offset computed here, not hoisted.
        Value step = op.getPinnedSteps() && rowStep > 0
                         ? e.zext64(pinI32(e, e.i32(rowStep)))
                         : e.i64(rowStep);
        Value element = e.add(dstBase, e.mul(step, dest.strides[0]));
        Value dst = LLVM::GEPOp::create(e.b, e.loc, e.globalPtrT(), elementType,
                                        dest.pointer, ValueRange{element});
        e.store(data, dst, 16);
      });
    }
  }
}

LogicalResult
StoreLowering::matchAndRewrite(StoreOp op, OneToNOpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const {
  KernelBuilder e(rewriter, op);
  const Fragment value(op.getValue().getType(), adaptor.getValue());
  const FragmentLayout &layout = *value.layout;
  if (!pairsAreAdjacent(layout))
    return op.emitOpError() << "register layout without adjacent column pairs";
  ArgParams dest = ArgParams::of(op.getDest());
  if (!dest.pointer || !dest.strides[0] || !dest.strides[1])
    return op.emitOpError() << "destination must be a kernel argument";
  Type elementType = cast<MemRefType>(op.getDest().getType()).getElementType();

  SmallVector<Value> scale;
  if (op.getDivideBy()) {
    for (Value sum : adaptor.getDivideBy())
      scale.push_back(LLVM::FDivOp::create(e.b, e.loc, e.f32(1.0), sum));
  }

  // Element offset of the tile's (row 0, head, column 0).
  Value rowStart = e.zext64(e.asI32(adaptor.getRow().front()));
  Value head = e.zext64(e.asI32(adaptor.getHead().front()));
  Value tileBase =
      e.add(e.mul(rowStart, dest.strides[0]), e.mul(head, dest.strides[1]));
  if (int64_t offset = op.getColOffset().value_or(0))
    tileBase = e.add(tileBase, e.i64(offset));
  Value validRows = e.asI32(adaptor.getRows().front());
  if (op.getStaging()) {
    if (failed(emitStagedStore(
            e, op, adaptor.getStaging().front(), adaptor.getRow().front(),
            adaptor.getHead().front(), value, scale, tileBase, validRows)))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
  // pinned_steps: the thread's column and rows derived where the tile is
  // stored, so that LLVM holds no row address (dest plus the row's stride
  // times the row, a 64-bit pair a row slot) from the partition's entry.
  Value colBase = layout.colBase(e);
  if (op.getPinnedSteps())
    colBase = pinI32(e, colBase);

  for (int64_t slot = 0; slot < layout.numRowSlots(); ++slot) {
    Value row = layout.rowIndex(e, slot);
    if (op.getPinnedSteps())
      row = pinI32(e, row);
    // Rows past the tile's valid count belong to the next sequence.
    e.emitIf(e.cmp(Pred::slt, row, validRows), [&] {
      Value rowBase = e.add(tileBase, e.mul(e.zext64(row), dest.strides[0]));
      for (int64_t r = 0; r + 1 < layout.numRegs(); r += 2) {
        if (layout.rowSlot(r) != slot)
          continue;
        Value lo = value.regs[r], hi = value.regs[r + 1];
        if (!scale.empty()) {
          lo = LLVM::FMulOp::create(e.b, e.loc, lo, scale[slot]);
          hi = LLVM::FMulOp::create(e.b, e.loc, hi, scale[slot]);
        }
        // A pinned column base is opaque to LLVM, which then cannot widen
        // base + offset: each constant offset stays a 32-bit add, a
        // register per offset held through the store (8 a row in a
        // 64-column chunk). Added in 64 bits (wide_offsets), the offsets
        // become the stores' immediate offsets.
        Value col = op.getWideOffsets()
                        ? e.add(e.zext64(colBase), e.i64(layout.colOffset(r)))
                        : e.zext64(e.add(colBase, e.i32(layout.colOffset(r))));
        Value ptr =
            LLVM::GEPOp::create(e.b, e.loc, e.globalPtrT(), elementType,
                                dest.pointer, ValueRange{e.add(rowBase, col)});
        if (elementType.isF32()) {
          auto pair = VectorType::get({2}, e.f32T());
          Value v = LLVM::UndefOp::create(e.b, e.loc, pair);
          v = LLVM::InsertElementOp::create(e.b, e.loc, v, lo, e.i32(0));
          v = LLVM::InsertElementOp::create(e.b, e.loc, v, hi, e.i32(1));
          e.store(v, ptr, 8);
        } else {
          e.store(e.packPair(elementType, lo, hi), ptr, 4);
        }
      }
    });
  }
  rewriter.eraseOp(op);
  return success();
}

LogicalResult
WriteLowering::matchAndRewrite(WriteOp op, OneToNOpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const {
  KernelBuilder e(rewriter, op);
  const Fragment value(op.getValue().getType(), adaptor.getValue());
  Value dest = adaptor.getDest().front();
  const FragmentLayout &layout = *value.layout;
  if (!pairsAreAdjacent(layout))
    return op.emitOpError() << "register layout without adjacent column pairs";
  ArrayRef<int64_t> shape = op.getDest().getType().getShape();
  int64_t rows = shape[0];
  // The TMA swizzle layout (nvdesc::SwizzledTile::byteOffset), so
  // that warpspec.mma reads it with the same descriptors as a TMA'd tile.
  auto pair = [&](int64_t i) {
    return value.type.getElementType().isF32()
               ? e.packPair(op.getDest().getType().getElementType(),
                            value.regs[2 * i], value.regs[2 * i + 1])
               : value.regs[i];
  };
  writePairs(e, pair, dest, rows, shape[1],
             op.getDest().getType().getChunkCols(), op.getStmatrix(), layout);
  // Generic-proxy writes become visible to the tensor cores (async proxy)
  // after a proxy fence by each writer and a barrier over the warpgroup.
  NVVM::FenceProxyOp::create(
      e.b, e.loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(e.ctx, NVVM::SharedSpace::shared_cta));
  e.replicaBarrier();
  rewriter.eraseOp(op);
  return success();
}

/// The f32 element `[head, rowStart + row]` of an [H, T] memref argument.
static Value rowElement(KernelBuilder &e, const ArgParams &memref,
                        Value rowStart, Value head, Value row) {
  Value index = e.add(e.mul(e.zext64(head), memref.strides[0]),
                      e.zext64(e.add(rowStart, row)));
  return LLVM::GEPOp::create(e.b, e.loc, e.globalPtrT(), e.f32T(),
                             memref.pointer, ValueRange{index});
}

LogicalResult
StoreRowsLowering::matchAndRewrite(StoreRowsOp op, OneToNOpAdaptor adaptor,
                                   ConversionPatternRewriter &rewriter) const {
  KernelBuilder e(rewriter, op);
  ArgParams dest = ArgParams::of(op.getDest());
  if (!dest.pointer || !dest.strides[0])
    return op.emitOpError() << "destination must be a kernel argument";
  std::shared_ptr<FragmentLayout> layout = rowsLayout(op.getValue().getType());
  Value rowStart = e.asI32(adaptor.getRow().front());
  Value head = e.asI32(adaptor.getHead().front());
  Value validRows = e.asI32(adaptor.getRows().front());
  Value leader = isRowLeader(e, *layout);
  for (auto [slot, value] : llvm::enumerate(adaptor.getValue())) {
    Value row = layout->rowIndex(e, slot);
    // Rows past the tile's valid count belong to the next sequence.
    Value owns = LLVM::AndOp::create(e.b, e.loc, leader,
                                     e.cmp(Pred::slt, row, validRows));
    e.emitIf(owns, [&] {
      e.store(value, rowElement(e, dest, rowStart, head, row), 4);
    });
  }
  rewriter.eraseOp(op);
  return success();
}

LogicalResult
LoadRowsLowering::matchAndRewrite(LoadRowsOp op, OneToNOpAdaptor adaptor,
                                  ConversionPatternRewriter &rewriter) const {
  KernelBuilder e(rewriter, op);
  ArgParams source = ArgParams::of(op.getSource());
  if (!source.pointer || !source.strides[0])
    return op.emitOpError() << "source must be a kernel argument";
  std::shared_ptr<FragmentLayout> layout = rowsLayout(op.getValue().getType());
  Value rowStart = e.asI32(adaptor.getRow().front());
  Value head = e.asI32(adaptor.getHead().front());
  Value validRows = e.asI32(adaptor.getRows().front());
  SmallVector<Value> values;
  for (int64_t slot = 0; slot < layout->numRowSlots(); ++slot) {
    Value row = layout->rowIndex(e, slot);
    if (op.getPinnedRows())
      row = pinI32(e, row);
    // Rows past the tile's valid count read the tile's row 0 (always valid,
    // so never past T) and take 0.
    Value valid = e.cmp(Pred::slt, row, validRows);
    Value clamped = e.select(valid, row, e.i32(0));
    Value loaded =
        e.load(e.f32T(), rowElement(e, source, rowStart, head, clamped), 4);
    values.push_back(e.select(valid, loaded, e.f32(0.0)));
  }
  rewriter.replaceOpWithMultiple(op, {values});
  return success();
}

void mlir::blockattn::populateWarpSpecTileMathToNVVMPatterns(
    LLVMTypeConverter &converter, const TargetInfo &,
    RewritePatternSet &patterns) {
  patterns.add<SoftmaxLowering, SoftmaxGradLowering, StoreLowering,
               WriteLowering, StoreRowsLowering, LoadRowsLowering>(converter);
  patterns.add<MaskBlocksLowering>(converter);
  patterns.add<ConcatColumnsLowering, ExtractColumnsLowering>(converter);
}
