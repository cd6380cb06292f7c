//===- Schedule.cpp - the persistent jagged tile schedule, loops ----------===//
//
// warpspec.tile_loop without a prefix sum (see the op's description):
// block j of sequence b has the virtual number
//   v = floor(cu[b] / bs) + b + j,
// which increases along the packed tokens and stays below
//   V = floor(T / bs) + B,
// because floor((cu[b] + len) / bs) + 1 >= floor(cu[b] / bs) + ceil(len / bs).
// Work items are v * H + h (heads innermost), N = V H of them. CTA c of G
// takes items c, c + G, c + 2G, ... (strided: at any moment the whole grid
// works on neighbouring rows, which keeps DRAM pages open), or the range
// [c N / G, (c+1) N / G) (contiguous). The CTA finds the sequence of its
// first item by binary search over key(b) = floor(cu[b] / bs) + b, then walks
// forward, moving to later sequences as the virtual number passes their keys;
// an item whose virtual number lies past its sequence's last block (at most
// one per sequence) is skipped. The walk reads only cu_seqlens, so the kernel
// needs no host synchronization and is CUDA-graph safe.
//
// With a dynamic schedule, CTA c takes item c, then claims each next item
// from a global counter (G + the counter's old value) at the start of the
// tile before, so that the claim's round trip to L2 overlaps the tile's
// wait for a free slot. A CTA's claims increase, so the cursor still only
// walks forward. After its last claim a CTA counts itself finished; the
// last of the grid to do so resets both counters, so the next launch finds
// them zeroed (acq_rel on the count orders every CTA's claims before it).
//
// The values a tile loop carries (its iter_args: the ring positions of the
// lowered protocol) and those of an scf.while (a lowered consume loop) live
// in per-thread variables, like the cursor: stored before the loop and by
// its yield, loaded where the body reads them.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "blockattn/Conversion/WarpSpecToNVVM/WarpSpecToNVVM.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::blockattn;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

using Pred = LLVM::ICmpPredicate;

namespace {

/// The cursor of the walk: the work item, its virtual block and head, and the
/// sequence that virtual block falls in (index, first and end rows). Every
/// field is a per-thread variable (an alloca that SROA promotes).
struct Cursor {
  Value item, vblock, head, seq, seqStart, seqEnd;
};

/// The variables of a loop's carried values, `inits` (converted) stored into
/// them where the loop starts: fails on a value that is not a scalar.
LogicalResult carryInits(KernelBuilder &e, Operation *op, ValueRange inits,
                         SmallVectorImpl<std::pair<Value, Type>> &carried) {
  // One per-thread variable per carried value (SROA turns them into
  // registers), initialized where the loop starts.
  for (Value value : inits) {
    if (!isa<IntegerType, FloatType>(value.getType()))
      return op->emitOpError() << "carries a value that is not a scalar";
    Value var = e.variable(value.getType());
    e.store(value, var);
    carried.push_back({var, value.getType()});
  }
  return success();
}

/// Appends the current value of every carried variable to `values`, in
/// order (the loop body's arguments, or the loop's results).
void loadCarried(KernelBuilder &e, ArrayRef<std::pair<Value, Type>> carried,
                 SmallVectorImpl<Value> &values) {
  for (auto [var, type] : carried)
    values.push_back(e.load(type, var));
}

/// Replaces a loop body's terminator by the stores of the values it yields
/// into the carried variables, and returns its (remapped) operands.
LogicalResult storeYielded(ConversionPatternRewriter &rewriter,
                           KernelBuilder &e, Operation *terminator,
                           ValueRange values,
                           ArrayRef<std::pair<Value, Type>> carried) {
  SmallVector<Value> remapped;
  if (failed(rewriter.getRemappedValues(values, remapped)))
    return failure();
  rewriter.setInsertionPoint(terminator);
  for (auto [value, var] : llvm::zip(remapped, carried))
    e.store(value, var.first);
  rewriter.eraseOp(terminator);
  return success();
}

/// Inlines the tile loop's body at the builder's point with the tile's
/// arguments and the carried values; its yield stores their next values.
LogicalResult inlineTileBody(ConversionPatternRewriter &rewriter,
                             KernelBuilder &e, TileLoopOp op,
                             SmallVector<Value> args,
                             ArrayRef<std::pair<Value, Type>> carried) {
  Block &body = op.getBody().front();
  loadCarried(e, carried, args);
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  rewriter.inlineBlockBefore(&body, e.b.getInsertionBlock(),
                             e.b.getInsertionPoint(), args);
  if (yield)
    return storeYielded(rewriter, e, yield, yield.getValues(), carried);
  return success();
}

/// The counters of a dynamic schedule (TileLoopOp's description): where
/// they are, and the grid, whose first items every CTA takes unclaimed.
struct DynamicSchedule {
  Value counters; // !llvm.ptr<1> to i32 [next claim, finished CTAs]
  Value grid;     // i64

  /// The counters of `op`'s dynamic schedule; null counters for a static
  /// one. Fails, with a diagnostic, where the claims cannot be made.
  static FailureOr<DynamicSchedule> of(TileLoopOp op, Value grid) {
    Value schedule = op.getSchedule();
    if (!schedule)
      return DynamicSchedule{};
    // One thread claims for the CTA; each thread of several would take
    // items of its own.
    if (!KernelBuilder::inSingleThread(op))
      return op.emitOpError()
             << "with a dynamic schedule must run on one thread (in a "
                "warpspec.single_thread region)";
    Value pointer = ArgParams::of(schedule).pointer;
    if (!pointer)
      return op.emitOpError()
             << "dynamic schedule must be an argument of the kernel function";
    return DynamicSchedule{pointer, grid};
  }

  explicit operator bool() const { return counters != nullptr; }

  Value word(KernelBuilder &e, int64_t index) const {
    return LLVM::GEPOp::create(e.b, e.loc, e.globalPtrT(), e.i32T(), counters,
                               ArrayRef<LLVM::GEPArg>{index});
  }

  /// The CTA's next item (i64). Relaxed: the claims order nothing else.
  Value claim(KernelBuilder &e) const {
    Value old = LLVM::AtomicRMWOp::create(
        e.b, e.loc, LLVM::AtomicBinOp::add, word(e, 0), e.i32(1),
        LLVM::AtomicOrdering::monotonic, "device");
    return e.add(grid, e.zext64(old));
  }

  /// Counts the CTA finished (after its last claim); the grid's last resets
  /// both counters for the next launch. The fences make the count a release
  /// of the CTA's claims and the last count an acquire of everyone's, so that
  /// the reset follows every claim (NVPTX emits an acq_rel atomicrmw as a
  /// relaxed atom, so the orders are fences).
  void finish(KernelBuilder &e) const {
    LLVM::FenceOp::create(e.b, e.loc, LLVM::AtomicOrdering::release, "device");
    Value finished = LLVM::AtomicRMWOp::create(
        e.b, e.loc, LLVM::AtomicBinOp::add, word(e, 1), e.i32(1),
        LLVM::AtomicOrdering::monotonic, "device");
    Value last = e.cmp(Pred::eq, e.zext64(finished), e.sub(grid, e.i64(1)));
    e.emitIf(last, [&] {
      LLVM::FenceOp::create(e.b, e.loc, LLVM::AtomicOrdering::acquire,
                            "device");
      e.store(e.i32(0), word(e, 0), 4);
      e.store(e.i32(0), word(e, 1), 4);
    });
  }
};

/// Probes a round of searchSequence. A round's loads are independent, so
/// it costs about one load's latency where a halving costs one per probe:
/// the load warpgroup's elected thread searches before its CTA's first
/// copy, and at the seed's 1152 sequences eleven dependent L2 reads of
/// cu_seqlens held every CTA's first tile back by about 2.7 us (traced on
/// the H200; docs/performance-notes.md). Four-way rounds take six; seven
/// probes a round (four rounds) made ptxas spill 4-8 bytes in the sm_100a
/// rotary backwards, whose load warpgroup has the fewest registers.
constexpr int64_t kSearchProbes = 3;

/// The largest sequence b in [0, numSeqs) whose key (`keyOf(b)`, increasing
/// in b) is at most `target`: a search in rounds of kSearchProbes + 1 parts
/// over the variables `lo` and `hi` of `target`'s width, keeping
/// key(lo) <= target < key(hi) (hi = numSeqs stands for past the end).
/// Both tile loop lowerings start a CTA's cursor with it.
Value searchSequence(KernelBuilder &e, Value lo, Value hi, Value numSeqs,
                     Value target, function_ref<Value(Value)> keyOf) {
  Type t = target.getType();
  bool narrow = t.isInteger(32);
  auto constant = [&](int64_t v) { return narrow ? e.i32(v) : e.i64(v); };
  Value one = constant(1);
  e.store(constant(0), lo);
  e.store(numSeqs, hi);
  e.emitWhile(
      [&] {
        Value l = e.load(t, lo), h = e.load(t, hi);
        return std::make_pair(e.cmp(Pred::ugt, e.sub(h, l), one),
                              SmallVector<Value>{});
      },
      [&](ValueRange) {
        Value l = e.load(t, lo), h = e.load(t, hi);
        Value parts = constant(kSearchProbes + 1);
        Value step = e.udiv(e.add(e.sub(h, l), e.sub(parts, one)), parts);
        // Probe i is l + i step; the keys increase, so the probes at most
        // `target` are a prefix, and their count says which part holds it.
        // A probe at or past h reads key(l) instead (in bounds) and counts
        // as past the target.
        Value count = constant(0);
        for (int64_t i = 1; i <= kSearchProbes; ++i) {
          Value probe = e.add(l, e.mul(step, constant(i)));
          Value inside = e.cmp(Pred::ult, probe, h);
          Value key = keyOf(e.select(inside, probe, l));
          Value atMost = LLVM::AndOp::create(e.b, e.loc, inside,
                                             e.cmp(Pred::ule, key, target));
          count = e.add(count, LLVM::ZExtOp::create(e.b, e.loc, t, atMost));
        }
        Value newLo = e.add(l, e.mul(count, step));
        e.store(newLo, lo);
        e.store(LLVM::UMinOp::create(e.b, e.loc, e.add(newLo, step), h), hi);
      });
  return e.load(t, lo);
}

/// `warpspec.tile_loop ... packed(k)`: tile t holds the blocks of the
/// virtual numbers [k t, k t + k) (see the file comment), which lie back to
/// back in memory. With S(x) the first row of the block of the first
/// virtual number >= x that names one (T past the last), tile t covers the
/// rows [S(k t), S(k t + k)) and its q-th block ends at S(k t + q + 1).
/// Each S is found by walking a copy of the cursor forward from the
/// sequence of k t, so that the next item (another head of the same tile,
/// or a later tile) starts from the same cursor.
///
/// The walk runs in the load warpgroup's 40 registers, so everything but
/// the work items (which can pass 2^32 with many heads) is 32-bit: rows and
/// sequence indices are i32 already, and the virtual numbers stay below
/// T / 16 + B < 2^32 (unsigned).
LogicalResult lowerPackedTileLoop(TileLoopOp op, TileLoopOp::Adaptor adaptor,
                                  ConversionPatternRewriter &rewriter) {
  KernelBuilder e(rewriter, op);
  ArgParams cuParams = ArgParams::of(op.getCuSeqlens());
  if (!cuParams.pointer || !argSize(op.getCuSeqlens(), 0))
    return op.emitOpError()
           << "cu_seqlens must be a dynamically sized kernel argument";
  SmallVector<std::pair<Value, Type>> carried; // variable, type
  if (failed(carryInits(e, op, adaptor.getInits(), carried)))
    return failure();
  Value cu = cuParams.pointer;
  auto loadCu = [&](Value index) {
    Value ptr = LLVM::GEPOp::create(e.b, e.loc, e.globalPtrT(), e.i32T(), cu,
                                    ValueRange{index});
    return e.load(e.i32T(), ptr, 4);
  };
  int64_t k = static_cast<int64_t>(*op.getPacked());
  Value bs = e.i32(op.getBlockSize()), kv = e.i32(k);
  Value one = e.i32(1), zero = e.i32(0);
  Value heads64 = adaptor.getNumHeads();
  Value heads = e.trunc32(heads64);
  Value tokens = e.trunc32(adaptor.getNumTokens());
  Value numSeqs = e.sub(cuParams.sizes[0], one);
  Value virtualBlocks = e.add(e.udiv(tokens, bs), numSeqs);
  Value tiles = e.udiv(e.add(virtualBlocks, e.i32(k - 1)), kv);
  Value items = e.mul(e.zext64(tiles), heads64);
  Value grid = e.zext64(NVVM::GridDimXOp::create(e.b, e.loc, e.i32T()));
  Value cta = e.zext64(NVVM::BlockIdXOp::create(e.b, e.loc, e.i32T()));
  bool contiguous = op.getContiguous();
  Value first = contiguous ? e.udiv(e.mul(cta, items), grid) : cta;
  Value last =
      contiguous ? e.udiv(e.mul(e.add(cta, e.i64(1)), items), grid) : items;
  FailureOr<DynamicSchedule> dynamic = DynamicSchedule::of(op, grid);
  if (failed(dynamic))
    return failure();

  Type t32 = e.i32T(), t64 = e.i64T();
  // The cursor: the work item, its tile and head, and the sequence (index,
  // first and end rows) of the tile's first virtual number.
  Value item = e.variable(t64), tile = e.variable(t32), head = e.variable(t32);
  Value seq = e.variable(t32), seqStart = e.variable(t32),
        seqEnd = e.variable(t32);
  // The copy that finds the tile's block boundaries.
  Value tSeq = e.variable(t32), tStart = e.variable(t32),
        tEnd = e.variable(t32);
  Value lo = e.variable(t32), hi = e.variable(t32);
  auto key = [&](Value s, Value start) { return e.add(e.udiv(start, bs), s); };

  Value haveWork =
      LLVM::AndOp::create(e.b, e.loc, e.cmp(Pred::ult, first, last),
                          e.cmp(Pred::sgt, numSeqs, zero));
  LogicalResult result = success();
  e.emitIf(haveWork, [&] {
    Value t0 = e.trunc32(e.udiv(first, heads64));
    Value v0 = e.mul(t0, kv);
    Value b0 = searchSequence(e, lo, hi, numSeqs, v0,
                              [&](Value b) { return key(b, loadCu(b)); });
    e.store(b0, seq);
    e.store(loadCu(b0), seqStart);
    e.store(loadCu(e.add(b0, one)), seqEnd);
    e.store(first, item);
    e.store(t0, tile);
    e.store(e.trunc32(e.urem(first, heads64)), head);

    // Moves a cursor (sequence, start, end) forward to virtual number v.
    auto catchUp = [&](Value s, Value start, Value end, Value v) {
      e.emitWhile(
          [&] {
            Value index = e.load(t32, s), en = e.load(t32, end);
            Value more = e.cmp(Pred::ult, e.add(index, one), numSeqs);
            Value behind = e.cmp(Pred::uge, v, e.add(key(index, en), one));
            return std::make_pair(
                LLVM::AndOp::create(e.b, e.loc, more, behind).getResult(),
                SmallVector<Value>{});
          },
          [&](ValueRange) {
            Value next = e.add(e.load(t32, s), one);
            e.store(next, s);
            e.store(e.load(t32, end), start);
            e.store(loadCu(e.add(next, one)), end);
          });
    };
    // S(v), the copy of the cursor moved to v.
    auto blockStart = [&](Value v) {
      catchUp(tSeq, tStart, tEnd, v);
      Value s = e.load(t32, tSeq), start = e.load(t32, tStart),
            end = e.load(t32, tEnd);
      Value row = e.add(start, e.mul(e.sub(v, key(s, start)), bs));
      return LLVM::UMinOp::create(e.b, e.loc, row, end).getResult();
    };

    Value step = contiguous ? e.i64(1) : grid;
    Value dt = e.trunc32(e.udiv(step, heads64));
    Value dh = e.trunc32(e.urem(step, heads64));
    e.emitWhile(
        [&] {
          return std::make_pair(e.cmp(Pred::ult, e.load(t64, item), last),
                                SmallVector<Value>{});
        },
        [&](ValueRange) {
          Value claimed = *dynamic ? dynamic->claim(e) : Value();
          Value t = e.load(t32, tile), h = e.load(t32, head);
          e.store(e.load(t32, seq), tSeq);
          e.store(e.load(t32, seqStart), tStart);
          e.store(e.load(t32, seqEnd), tEnd);
          Value v = e.mul(t, kv);
          Value row = blockStart(v);
          // Byte q: the end of the q-th block, relative to the tile's row.
          Value ends = e.i32(0), rows;
          for (int64_t q = 0; q < k; ++q) {
            rows = e.sub(blockStart(e.add(v, e.i32(q + 1))), row);
            ends = LLVM::OrOp::create(
                e.b, e.loc, ends,
                LLVM::ShlOp::create(e.b, e.loc, rows, e.i32(8 * q)));
          }
          e.emitIf(e.cmp(Pred::ugt, rows, e.i32(0)), [&] {
            result =
                inlineTileBody(rewriter, e, op, {row, rows, h, ends}, carried);
          });
          Value nextT;
          if (*dynamic) {
            // The remainder from the quotient: one division, not two.
            Value quotient = e.udiv(claimed, heads64);
            e.store(claimed, item);
            e.store(e.trunc32(e.sub(claimed, e.mul(quotient, heads64))), head);
            nextT = e.trunc32(quotient);
          } else {
            e.store(e.add(e.load(t64, item), step), item);
            Value nextHead = e.add(h, dh);
            Value carry = e.cmp(Pred::uge, nextHead, heads);
            e.store(e.select(carry, e.sub(nextHead, heads), nextHead), head);
            nextT = e.add(e.add(t, dt), e.select(carry, one, zero));
          }
          e.store(nextT, tile);
          catchUp(seq, seqStart, seqEnd, e.mul(nextT, kv));
        });
  });
  if (failed(result))
    return failure();
  if (*dynamic)
    dynamic->finish(e);
  SmallVector<Value> results;
  loadCarried(e, carried, results);
  rewriter.replaceOp(op, results);
  return success();
}

struct TileLoopLowering : ConvertOpToLLVMPattern<TileLoopOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TileLoopOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getPacked())
      return lowerPackedTileLoop(op, adaptor, rewriter);
    KernelBuilder e(rewriter, op);
    ArgParams cuParams = ArgParams::of(op.getCuSeqlens());
    if (!cuParams.pointer || !argSize(op.getCuSeqlens(), 0))
      return op.emitOpError()
             << "cu_seqlens must be a dynamically sized kernel argument";
    // The carried values first: their variables then precede the cursor's.
    SmallVector<std::pair<Value, Type>> carried; // variable, type
    if (failed(carryInits(e, op, adaptor.getInits(), carried)))
      return failure();
    Value cu = cuParams.pointer;
    auto loadCu = [&](Value index64) {
      Value ptr = LLVM::GEPOp::create(e.b, e.loc, e.globalPtrT(), e.i32T(), cu,
                                      ValueRange{index64});
      return e.zext64(e.load(e.i32T(), ptr, 4));
    };

    Value bs = e.i64(op.getBlockSize());
    Value heads = adaptor.getNumHeads();
    Value tokens = adaptor.getNumTokens();
    Value numSeqs = e.sub(e.zext64(cuParams.sizes[0]), e.i64(1));
    Value virtualBlocks = e.add(e.udiv(tokens, bs), numSeqs);
    Value items = e.mul(virtualBlocks, heads);
    Value grid = e.zext64(NVVM::GridDimXOp::create(e.b, e.loc, e.i32T()));
    Value cta = e.zext64(NVVM::BlockIdXOp::create(e.b, e.loc, e.i32T()));
    bool contiguous = op.getContiguous();
    // Contiguous: CTA c owns [c N / G, (c+1) N / G). Strided: c, c + G, ...
    Value first = contiguous ? e.udiv(e.mul(cta, items), grid) : cta;
    Value last =
        contiguous ? e.udiv(e.mul(e.add(cta, e.i64(1)), items), grid) : items;
    FailureOr<DynamicSchedule> dynamic = DynamicSchedule::of(op, grid);
    if (failed(dynamic))
      return failure();

    Type t64 = e.i64T();
    Cursor c{e.variable(t64), e.variable(t64), e.variable(t64),
             e.variable(t64), e.variable(t64), e.variable(t64)};
    Value lo = e.variable(t64), hi = e.variable(t64);
    Value one = e.i64(1), zero = e.i64(0);
    // key(b) = floor(cu[b] / bs) + b: the virtual number of sequence b's
    // first block.
    auto keyAfter = [&](Value s, Value end) {
      return e.add(e.add(e.udiv(end, bs), s), one);
    };

    Value haveWork =
        LLVM::AndOp::create(e.b, e.loc, e.cmp(Pred::ult, first, last),
                            e.cmp(Pred::sgt, numSeqs, zero));
    LogicalResult result = success();
    e.emitIf(haveWork, [&] {
      Value v0 = e.udiv(first, heads);
      Value b0 = searchSequence(e, lo, hi, numSeqs, v0, [&](Value b) {
        return e.add(e.udiv(loadCu(b), bs), b);
      });
      e.store(b0, c.seq);
      e.store(loadCu(b0), c.seqStart);
      e.store(loadCu(e.add(b0, one)), c.seqEnd);
      e.store(first, c.item);
      e.store(v0, c.vblock);
      e.store(e.urem(first, heads), c.head);

      // Moves the cursor's sequence forward until it holds virtual block v.
      auto catchUp = [&](Value v) {
        e.emitWhile(
            [&] {
              Value s = e.load(t64, c.seq), end = e.load(t64, c.seqEnd);
              Value more = e.cmp(Pred::ult, e.add(s, one), numSeqs);
              Value behind = e.cmp(Pred::uge, v, keyAfter(s, end));
              return std::make_pair(
                  LLVM::AndOp::create(e.b, e.loc, more, behind).getResult(),
                  SmallVector<Value>{});
            },
            [&](ValueRange) {
              Value next = e.add(e.load(t64, c.seq), one);
              e.store(next, c.seq);
              e.store(e.load(t64, c.seqEnd), c.seqStart);
              e.store(loadCu(e.add(next, one)), c.seqEnd);
            });
      };

      // Per step: dv virtual blocks and dh heads (strided), or one item.
      Value step = contiguous ? one : grid;
      Value dv = e.udiv(step, heads), dh = e.urem(step, heads);
      e.emitWhile(
          [&] {
            return std::make_pair(e.cmp(Pred::ult, e.load(t64, c.item), last),
                                  SmallVector<Value>{});
          },
          [&](ValueRange) {
            Value claimed = *dynamic ? dynamic->claim(e) : Value();
            Value v = e.load(t64, c.vblock), h = e.load(t64, c.head),
                  s = e.load(t64, c.seq), start = e.load(t64, c.seqStart),
                  end = e.load(t64, c.seqEnd);
            Value j = e.sub(v, e.add(e.udiv(start, bs), s));
            Value row = e.add(start, e.mul(j, bs));
            // Past the sequence's last block: a virtual number with no block.
            Value valid = e.cmp(Pred::ult, row, end);
            e.emitIf(valid, [&] {
              Value rows =
                  LLVM::UMinOp::create(e.b, e.loc, e.sub(end, row), bs);
              Block &body = op.getBody().front();
              SmallVector<Value> args = {e.trunc32(row), e.trunc32(rows),
                                         e.trunc32(h)};
              // The row's position inside its sequence (rotary embeddings).
              if (body.getNumArguments() - carried.size() > 3)
                args.push_back(e.trunc32(e.sub(row, start)));
              loadCarried(e, carried, args);
              // The body, in place; its yield stores the carried values.
              auto yield =
                  body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
              rewriter.inlineBlockBefore(&body, e.b.getInsertionBlock(),
                                         e.b.getInsertionPoint(), args);
              if (yield)
                result = storeYielded(rewriter, e, yield, yield.getValues(),
                                      carried);
            });
            Value nextV;
            if (*dynamic) {
              // The remainder from the quotient: one division, not two.
              nextV = e.udiv(claimed, heads);
              e.store(claimed, c.item);
              e.store(e.sub(claimed, e.mul(nextV, heads)), c.head);
            } else {
              e.store(e.add(e.load(t64, c.item), step), c.item);
              Value nextHead = e.add(h, dh);
              Value carry = e.cmp(Pred::uge, nextHead, heads);
              e.store(e.select(carry, e.sub(nextHead, heads), nextHead),
                      c.head);
              nextV = e.add(e.add(v, dv), e.select(carry, one, zero));
            }
            e.store(nextV, c.vblock);
            catchUp(nextV);
          });
    });
    if (failed(result))
      return failure();
    if (*dynamic)
      dynamic->finish(e);
    SmallVector<Value> results;
    loadCarried(e, carried, results);
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// An scf.while of the input (a lowered consume loop): its carried values
/// live in variables, like the tile loop's, and the loop is rebuilt without
/// them around the original regions.
struct WhileLowering : ConvertOpToLLVMPattern<scf::WhileOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(scf::WhileOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder e(rewriter, op);
    SmallVector<std::pair<Value, Type>> carried; // variable, type
    if (failed(carryInits(e, op, adaptor.getInits(), carried)))
      return failure();
    SmallVector<Type> forwarded;
    for (Value value : op.getConditionOp().getArgs()) {
      if (!value.getType().isIntOrIndex())
        return op.emitOpError() << "forwards a value that is not a scalar";
      forwarded.push_back(getTypeConverter()->convertType(value.getType()));
    }
    auto whileOp =
        scf::WhileOp::create(rewriter, e.loc, forwarded, ValueRange{});
    OpBuilder::InsertionGuard guard(rewriter);
    Block *before = rewriter.createBlock(&whileOp.getBefore());
    rewriter.setInsertionPointToEnd(before);
    SmallVector<Value> loaded;
    loadCarried(e, carried, loaded);
    scf::ConditionOp condition = op.getConditionOp();
    rewriter.inlineBlockBefore(&op.getBefore().front(), before, before->end(),
                               loaded);
    SmallVector<Value> values;
    Value open = rewriter.getRemappedValue(condition.getCondition());
    if (failed(rewriter.getRemappedValues(condition.getArgs(), values)))
      return failure();
    rewriter.setInsertionPoint(condition);
    scf::ConditionOp::create(rewriter, e.loc, open, values);
    rewriter.eraseOp(condition);

    SmallVector<Location> locs(forwarded.size(), e.loc);
    Block *after =
        rewriter.createBlock(&whileOp.getAfter(), {}, forwarded, locs);
    scf::YieldOp yield = op.getYieldOp();
    rewriter.inlineBlockBefore(&op.getAfter().front(), after, after->end(),
                               after->getArguments());
    if (failed(storeYielded(rewriter, e, yield, yield.getResults(), carried)))
      return failure();
    rewriter.setInsertionPointToEnd(after);
    scf::YieldOp::create(rewriter, e.loc);
    rewriter.replaceOp(op, whileOp.getResults());
    return success();
  }
};

/// An scf.for of the input (the grouped-query backward's loop over the
/// query heads of a group, i32 bounds): its carried values live in
/// variables, like the other loops', and the loop is rebuilt without them
/// around the original body. A carried register tile (the sm_90a dV and dK
/// accumulators) is one variable per register: the body's argument is
/// converted to the registers, and since the body's ops are converted after
/// this one, its yield stores them later (YieldLowering), given the
/// variables as extra operands.
struct ForLowering : ConvertOpToLLVMPattern<scf::ForOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(scf::ForOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getInductionVar().getType().isInteger(32))
      return op.emitOpError() << "needs i32 bounds inside a warpspec.kernel";
    KernelBuilder e(rewriter, op);
    SmallVector<Value> flatInits;
    for (ValueRange init : adaptor.getInitArgs())
      llvm::append_range(flatInits, init);
    SmallVector<std::pair<Value, Type>> carried; // variable, type
    if (failed(carryInits(e, op, flatInits, carried)))
      return failure();
    Block *oldBody = op.getBody();
    TypeConverter::SignatureConversion signature(oldBody->getNumArguments());
    for (auto [i, arg] : llvm::enumerate(oldBody->getArguments())) {
      SmallVector<Type> types;
      if (failed(getTypeConverter()->convertType(arg.getType(), types)))
        return op.emitOpError() << "carries a value of type " << arg.getType()
                                << " that has no lowering";
      signature.addInputs(i, types);
    }
    auto loop = scf::ForOp::create(
        rewriter, e.loc, adaptor.getLowerBound().front(),
        adaptor.getUpperBound().front(), adaptor.getStep().front());
    Block *body = loop.getBody();
    Operation *yield = oldBody->getTerminator();
    {
      OpBuilder::InsertionGuard guard(rewriter);
      // The yield also takes the variables to store into.
      SmallVector<Value> operands = llvm::to_vector(yield->getOperands());
      for (auto var : carried)
        operands.push_back(var.first);
      rewriter.modifyOpInPlace(yield, [&] { yield->setOperands(operands); });
      Block *converted = rewriter.applySignatureConversion(
          oldBody, signature, getTypeConverter());
      rewriter.setInsertionPointToStart(body);
      SmallVector<Value> args = {loop.getInductionVar()};
      loadCarried(e, carried, args);
      rewriter.eraseOp(body->getTerminator());
      rewriter.inlineBlockBefore(converted, body, body->end(), args);
    }
    rewriter.setInsertionPointAfter(loop);
    SmallVector<SmallVector<Value>> results;
    size_t next = 0;
    for (Type type : op.getResultTypes()) {
      SmallVector<Type> types;
      if (failed(getTypeConverter()->convertType(type, types)))
        return failure();
      SmallVector<Value> values;
      for (size_t i = 0; i < types.size(); ++i, ++next)
        values.push_back(e.load(carried[next].second, carried[next].first));
      results.push_back(std::move(values));
    }
    rewriter.replaceOpWithMultiple(op, results);
    return success();
  }
};

/// The yield of a loop ForLowering rebuilt: stores the (converted) values it
/// yields into the variables it was given after them.
struct YieldLowering : ConvertOpToLLVMPattern<scf::YieldOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(scf::YieldOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder e(rewriter, op);
    SmallVector<Value> flat;
    for (ValueRange values : adaptor.getResults())
      llvm::append_range(flat, values);
    // [values..., variables...]: as many variables as values.
    size_t half = flat.size() / 2;
    for (size_t i = 0; i < half; ++i)
      e.store(flat[i], flat[half + i]);
    scf::YieldOp::create(rewriter, e.loc);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::blockattn::populateWarpSpecScheduleToNVVMPatterns(
    LLVMTypeConverter &converter, const TargetInfo &,
    RewritePatternSet &patterns) {
  patterns.add<TileLoopLowering, WhileLowering, ForLowering, YieldLowering>(
      converter);
}
