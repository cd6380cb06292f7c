//===- Schedule.cpp - the persistent jagged tile schedule -----------------===//
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
// The values a tile loop carries (its iter_args: the ring positions of the
// lowered protocol) and those of an scf.while (a lowered consume loop) live
// in per-thread variables, like the cursor: stored before the loop and by
// its yield, loaded where the body reads them.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

using namespace mlir;
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

} // namespace

LogicalResult
KernelEmitter::carryInits(Operation *op, ValueRange inits,
                          SmallVectorImpl<std::pair<Value, Type>> &carried) {
  // One per-thread variable per carried value (SROA turns them into
  // registers), initialized where the loop starts.
  for (Value init : inits) {
    Value value = lookup(init);
    if (!value)
      return op->emitOpError() << "carries a value that is not a scalar";
    Value var = variable(value.getType());
    store(value, var);
    carried.push_back({var, value.getType()});
  }
  return success();
}

LogicalResult KernelEmitter::emitTileLoop(TileLoopOp op) {
  ArgParams &cuParams = argParams[op.getCuSeqlens()];
  if (!cuParams.pointer || !argSize(op.getCuSeqlens(), 0))
    return op.emitOpError()
           << "cu_seqlens must be a dynamically sized kernel argument";
  // The carried values first: their variables then precede the cursor's.
  SmallVector<std::pair<Value, Type>> carried; // variable, type
  if (failed(carryInits(op, op.getInits(), carried)))
    return failure();
  Value cu = cuParams.pointer;
  auto loadCu = [&](Value index64) {
    Value ptr = LLVM::GEPOp::create(b, loc, globalPtrT(), i32T(), cu,
                                    ValueRange{index64});
    return zext64(load(i32T(), ptr, 4));
  };

  Value bs = i64(op.getBlockSize());
  Value heads = lookup(op.getNumHeads());
  Value tokens = lookup(op.getNumTokens());
  Value numSeqs = sub(zext64(cuParams.sizes[0]), i64(1));
  Value virtualBlocks = add(udiv(tokens, bs), numSeqs);
  Value items = mul(virtualBlocks, heads);
  Value grid = zext64(NVVM::GridDimXOp::create(b, loc, i32T()));
  Value cta = zext64(NVVM::BlockIdXOp::create(b, loc, i32T()));
  bool contiguous = op.getContiguous();
  // Contiguous: CTA c owns [c N / G, (c+1) N / G). Strided: c, c + G, ...
  Value first = contiguous ? udiv(mul(cta, items), grid) : cta;
  Value last = contiguous ? udiv(mul(add(cta, i64(1)), items), grid) : items;

  Type t64 = i64T();
  Cursor c{variable(t64), variable(t64), variable(t64),
           variable(t64), variable(t64), variable(t64)};
  Value lo = variable(t64), hi = variable(t64);
  Value one = i64(1), zero = i64(0);
  // key(b) = floor(cu[b] / bs) + b: the virtual number of sequence b's first
  // block.
  auto keyAfter = [&](Value s, Value end) {
    return add(add(udiv(end, bs), s), one);
  };

  Value haveWork = LLVM::AndOp::create(b, loc, cmp(Pred::ult, first, last),
                                       cmp(Pred::sgt, numSeqs, zero));
  LogicalResult result = success();
  emitIf(haveWork, [&] {
    Value v0 = udiv(first, heads);
    // Binary search: the largest b in [0, B) with key(b) <= v0.
    store(zero, lo);
    store(numSeqs, hi);
    emitWhile(
        [&] {
          Value l = load(t64, lo), h = load(t64, hi);
          return std::make_pair(cmp(Pred::ugt, sub(h, l), one),
                                SmallVector<Value>{});
        },
        [&](ValueRange) {
          Value l = load(t64, lo), h = load(t64, hi);
          Value mid = LLVM::LShrOp::create(b, loc, add(l, h), one);
          Value key = add(udiv(loadCu(mid), bs), mid);
          Value le = cmp(Pred::ule, key, v0);
          store(select(le, mid, l), lo);
          store(select(le, h, mid), hi);
        });
    Value b0 = load(t64, lo);
    store(b0, c.seq);
    store(loadCu(b0), c.seqStart);
    store(loadCu(add(b0, one)), c.seqEnd);
    store(first, c.item);
    store(v0, c.vblock);
    store(urem(first, heads), c.head);

    // Moves the cursor's sequence forward until it holds virtual block v.
    auto catchUp = [&](Value v) {
      emitWhile(
          [&] {
            Value s = load(t64, c.seq), end = load(t64, c.seqEnd);
            Value more = cmp(Pred::ult, add(s, one), numSeqs);
            Value behind = cmp(Pred::uge, v, keyAfter(s, end));
            return std::make_pair(LLVM::AndOp::create(b, loc, more, behind),
                                  SmallVector<Value>{});
          },
          [&](ValueRange) {
            Value next = add(load(t64, c.seq), one);
            store(next, c.seq);
            store(load(t64, c.seqEnd), c.seqStart);
            store(loadCu(add(next, one)), c.seqEnd);
          });
    };

    // Per step: dv virtual blocks and dh heads (strided), or one item.
    Value step = contiguous ? one : grid;
    Value dv = udiv(step, heads), dh = urem(step, heads);
    emitWhile(
        [&] {
          return std::make_pair(cmp(Pred::ult, load(t64, c.item), last),
                                SmallVector<Value>{});
        },
        [&](ValueRange) {
          Value v = load(t64, c.vblock), h = load(t64, c.head),
                s = load(t64, c.seq), start = load(t64, c.seqStart),
                end = load(t64, c.seqEnd);
          Value j = sub(v, add(udiv(start, bs), s));
          Value row = add(start, mul(j, bs));
          // Past the sequence's last block: a virtual number with no block.
          Value valid = cmp(Pred::ult, row, end);
          emitIf(valid, [&] {
            Value rows = LLVM::UMinOp::create(b, loc, sub(end, row), bs);
            Block &body = op.getBody().front();
            scalars.map(body.getArgument(0), trunc32(row));
            scalars.map(body.getArgument(1), trunc32(rows));
            scalars.map(body.getArgument(2), trunc32(h));
            // The row's position inside its sequence (rotary embeddings).
            if (body.getNumArguments() - carried.size() > 3)
              scalars.map(body.getArgument(3), trunc32(sub(row, start)));
            for (auto [arg, var] : llvm::zip(op.getRegionIterArgs(), carried))
              scalars.map(arg, load(var.second, var.first));
            for (Operation &inner : body) {
              if (auto yield = dyn_cast<YieldOp>(inner)) {
                for (auto [value, var] : llvm::zip(yield.getValues(), carried))
                  store(lookup(value), var.first);
              } else if (failed(emitOp(&inner))) {
                result = failure();
                return;
              }
            }
          });
          store(add(load(t64, c.item), step), c.item);
          Value nextHead = add(h, dh);
          Value carry = cmp(Pred::uge, nextHead, heads);
          store(select(carry, sub(nextHead, heads), nextHead), c.head);
          Value nextV = add(add(v, dv), select(carry, one, zero));
          store(nextV, c.vblock);
          catchUp(nextV);
        });
  });
  for (auto [value, var] : llvm::zip(op.getResults(), carried))
    scalars.map(value, load(var.second, var.first));
  return result;
}

LogicalResult KernelEmitter::emitWhileLoop(scf::WhileOp op) {
  SmallVector<std::pair<Value, Type>> carried; // variable, type
  if (failed(carryInits(op, op.getInits(), carried)))
    return failure();
  SmallVector<Type> forwarded;
  for (Value value : op.getConditionOp().getArgs()) {
    if (!value.getType().isIntOrIndex())
      return op.emitOpError() << "forwards a value that is not a scalar";
    forwarded.push_back(value.getType().isIndex() ? i64T() : value.getType());
  }
  LogicalResult result = success();
  auto emitOps = [&](Block &block) {
    for (Operation &inner : block.without_terminator())
      if (failed(emitOp(&inner))) {
        result = failure();
        return;
      }
  };
  ValueRange exits = emitWhile(
      [&] {
        Block &before = op.getBefore().front();
        for (auto [arg, var] : llvm::zip(before.getArguments(), carried))
          scalars.map(arg, load(var.second, var.first));
        emitOps(before);
        scf::ConditionOp condition = op.getConditionOp();
        SmallVector<Value> values;
        // After a failure (reported), placeholders keep the loop well formed
        // until the pass gives up.
        for (auto [value, type] : llvm::zip(condition.getArgs(), forwarded))
          values.push_back(succeeded(result)
                               ? lookup(value)
                               : LLVM::ZeroOp::create(b, loc, type).getRes());
        Value open = succeeded(result)
                         ? lookup(condition.getCondition())
                         : LLVM::ZeroOp::create(b, loc, i1T()).getRes();
        return std::make_pair(open, values);
      },
      [&](ValueRange values) {
        if (failed(result))
          return;
        Block &after = op.getAfter().front();
        for (auto [arg, value] : llvm::zip(after.getArguments(), values))
          scalars.map(arg, value);
        emitOps(after);
        if (failed(result))
          return;
        for (auto [value, var] :
             llvm::zip(op.getYieldOp().getResults(), carried))
          store(lookup(value), var.first);
      },
      forwarded);
  for (auto [value, exit] : llvm::zip(op.getResults(), exits))
    scalars.map(value, exit);
  return result;
}
