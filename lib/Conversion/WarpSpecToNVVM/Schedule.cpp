//===- Schedule.cpp - the persistent jagged tile schedule -----------------===//
//
// warpspec.tile_loop without a prefix sum (see the op's description):
// block j of sequence b has the virtual number
//   v = floor(cu[b] / bs) + b + j,
// which increases along the packed tokens and stays below
//   V = floor(T / bs) + B,
// because floor((cu[b] + len) / bs) + 1 >= floor(cu[b] / bs) + ceil(len / bs).
// Work items are v * H + h (heads innermost, so consecutive items of a CTA
// read adjacent bytes of the same rows); CTA c of G owns items
// [c N / G, (c+1) N / G) with N = V H. The CTA finds the sequence of its
// first item by binary search over key(b) = floor(cu[b] / bs) + b, then walks
// forward: each step is either a real tile or the (at most one per sequence)
// virtual number past a sequence's last block, which is skipped for all heads
// at once. Nothing reads memory the host wrote after launch, so the kernel
// needs no host synchronization and is CUDA-graph safe.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

using namespace mlir;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

using Pred = LLVM::ICmpPredicate;

LogicalResult KernelEmitter::emitTileLoop(TileLoopOp op) {
  ArgParams &cuParams = argParams[op.getCuSeqlens()];
  if (!cuParams.pointer || !cuParams.sizes[0])
    return op.emitOpError()
           << "cu_seqlens must be a dynamically sized kernel argument";
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
  Value first = udiv(mul(cta, items), grid);
  Value last = udiv(mul(add(cta, i64(1)), items), grid);

  // The cursor: item L, virtual block v, head h, sequence b and its rows.
  Type i64 = i64T();
  Value item = variable(i64), vblock = variable(i64), head = variable(i64),
        seq = variable(i64), seqStart = variable(i64), seqEnd = variable(i64);
  Value lo = variable(i64), hi = variable(i64);

  Value haveWork =
      LLVM::AndOp::create(b, loc, cmp(Pred::ult, first, last),
                          cmp(Pred::sgt, numSeqs, this->i64(0)));
  LogicalResult result = success();
  emitIf(haveWork, [&] {
    Value v0 = udiv(first, heads);
    // Binary search: the largest b in [0, B) with key(b) <= v0.
    store(this->i64(0), lo);
    store(numSeqs, hi);
    emitWhile(
        [&] {
          Value l = load(i64, lo), h = load(i64, hi);
          return std::make_pair(cmp(Pred::ugt, sub(h, l), this->i64(1)),
                                SmallVector<Value>{});
        },
        [&](ValueRange) {
          Value l = load(i64, lo), h = load(i64, hi);
          Value mid = LLVM::LShrOp::create(b, loc, add(l, h), this->i64(1));
          Value key = add(udiv(loadCu(mid), bs), mid);
          Value le = cmp(Pred::ule, key, v0);
          store(select(le, mid, l), lo);
          store(select(le, h, mid), hi);
        });
    Value b0 = load(i64, lo);
    store(b0, seq);
    store(loadCu(b0), seqStart);
    store(loadCu(add(b0, this->i64(1))), seqEnd);
    store(first, item);
    store(v0, vblock);
    store(urem(first, heads), head);

    emitWhile(
        [&] {
          return std::make_pair(cmp(Pred::ult, load(i64, item), last),
                                SmallVector<Value>{});
        },
        [&](ValueRange) {
          Value v = load(i64, vblock), h = load(i64, head),
                s = load(i64, seq), start = load(i64, seqStart),
                end = load(i64, seqEnd);
          Value j = sub(v, add(udiv(start, bs), s));
          Value row = add(start, mul(j, bs));
          Value valid = cmp(Pred::ult, row, end);
          emitIf(valid, [&] {
            Value rows = LLVM::UMinOp::create(b, loc, sub(end, row), bs);
            Block &body = op.getBody().front();
            scalars.map(body.getArgument(0), trunc32(row));
            scalars.map(body.getArgument(1), trunc32(rows));
            scalars.map(body.getArgument(2), trunc32(h));
            if (failed(emitBlock(body)))
              result = failure();
          });
          // Advance: the next head, or skip the rest of an invalid block.
          Value nextHead = select(valid, add(h, this->i64(1)), heads);
          store(add(load(i64, item), sub(nextHead, h)), item);
          Value wrapped = cmp(Pred::eq, nextHead, heads);
          store(select(wrapped, this->i64(0), nextHead), head);
          emitIf(wrapped, [&] {
            Value nextV = add(v, this->i64(1));
            store(nextV, vblock);
            Value nextKey = add(add(udiv(end, bs), s), this->i64(1));
            Value more = cmp(Pred::ult, add(s, this->i64(1)), numSeqs);
            Value crossed = LLVM::AndOp::create(
                b, loc, cmp(Pred::uge, nextV, nextKey), more);
            emitIf(crossed, [&] {
              Value next = add(s, this->i64(1));
              store(next, seq);
              store(end, seqStart);
              store(loadCu(add(next, this->i64(1))), seqEnd);
            });
          });
        });
  });
  return result;
}
