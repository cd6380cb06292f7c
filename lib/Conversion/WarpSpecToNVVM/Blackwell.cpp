//===- Blackwell.cpp - tensor memory and tcgen05 (sm_100a) ----------------===//
//
// The patterns of the ops that exist only on sm_100a:
//   - warpspec.tmem_release: every partition that used tensor memory
//     arrives on a teardown barrier, and warp 0 deallocates once all of them
//     did (the allocation, by warp 0 before the CTA barrier, is the
//     prologue's: Prologue.cpp);
//   - warpspec.mma_async: tcgen05.mma, one thread, M = 64, shared-memory
//     descriptors and instruction descriptors from Descriptors.h;
//   - warpspec.tmem_load / tmem_store: tcgen05.ld 16x256b and tcgen05.st
//     16x128b. An M = 64 accumulator puts row 16q + i in lane 32q + a + i
//     (a = the buffer's lane alignment, 0 or 16), so warp q of a warpgroup
//     reads its 16 rows at lane field 32q + a; the 16x256b shape gives thread
//     t the rows t/4 and t/4 + 8 and the column pairs 8j + 2(t%4): the wgmma
//     accumulator layout, so the tile math is the Hopper code unchanged.
//     16x128b writes packed 16-bit pairs in the same order (register h + 2j
//     is row t/4 + 8h, 32-bit column 4j + t%4, i.e. elements 8j + 2(t%4)
//     and +1): P is written where tcgen05.mma reads a tensor-memory A.
// The ordering rules (fences around thread synchronization, waits before
// signalling) are in Channels.cpp with the protocol they belong to.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "blockattn/Conversion/WarpSpecToNVVM/WarpSpecToNVVM.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"

#include "blockattn/Conversion/WarpSpecToNVVM/Descriptors.h"

using namespace mlir;
using namespace mlir::blockattn;
using namespace mlir::blockattn::lowering;
using namespace mlir::blockattn::nvdesc;
using namespace mlir::warpspec;

using Pred = LLVM::ICmpPredicate;

namespace {
constexpr int64_t kTeardownBarrierOffset = 8; // after the 4-byte address
} // namespace

Value lowering::tmemTeardownBarrier(KernelBuilder &e) {
  return e.meta(*e.kernel.getTmemBaseOffset() + kTeardownBarrierOffset);
}

namespace {

struct TmemReleaseLowering : ConvertOpToLLVMPattern<TmemReleaseOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TmemReleaseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override;
};

struct MmaAsyncLowering : ConvertOpToLLVMPattern<MmaAsyncOp> {
  MmaAsyncLowering(LLVMTypeConverter &converter, const TargetInfo &target)
      : ConvertOpToLLVMPattern(converter), target(target) {}
  LogicalResult
  matchAndRewrite(MmaAsyncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override;
  TargetInfo target;
};

struct TmemLoadLowering : ConvertOpToLLVMPattern<TmemLoadOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TmemLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override;
};

struct TmemStoreLowering : ConvertOpToLLVMPattern<TmemStoreOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TmemStoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override;
};

} // namespace

LogicalResult TmemReleaseLowering::matchAndRewrite(
    TmemReleaseOp op, OpAdaptor adaptor,
    ConversionPatternRewriter &rewriter) const {
  KernelBuilder e(rewriter, op);
  Value tmemBase = e.frame.tmemBase;
  if (!tmemBase)
    return op.emitOpError() << "releases tensor memory, but no partition "
                               "arrives on the teardown barrier";
  Value leader = e.cmp(Pred::eq, adaptor.getThread(), e.i32(0));
  if (op.getArrive()) {
    // This replica's tensor-memory work is ordered before the barrier.
    e.tcgen05Fence(/*after=*/false);
    if (op.getGather())
      e.replicaBarrier();
    e.emitIf(leader, [&] {
      NVVM::MBarrierArriveOp::create(e.b, e.loc, Type(), tmemTeardownBarrier(e),
                                     Value());
    });
  }
  if (!op.getDealloc()) {
    rewriter.eraseOp(op);
    return success();
  }
  e.emitIf(e.cmp(Pred::eq, e.warp(), e.i32(0)), [&] {
    e.waitBarrier(tmemTeardownBarrier(e), e.i32(0));
    e.tcgen05Fence(/*after=*/true);
    Value base = LLVM::IntToPtrOp::create(
        e.b, e.loc, LLVM::LLVMPointerType::get(e.ctx, 6), tmemBase);
    NVVM::Tcgen05DeallocOp::create(e.b, e.loc, base,
                                   e.i32(*e.kernel.getTmemColumns()));
  });
  rewriter.eraseOp(op);
  return success();
}

static Tcgen05Type tcgen05Type(Type type) {
  if (type.isBF16())
    return Tcgen05Type::BF16;
  if (type.isF16())
    return Tcgen05Type::F16;
  return Tcgen05Type::F32;
}

static Value tmemPointer(KernelBuilder &e, Value address) {
  return LLVM::IntToPtrOp::create(
      e.b, e.loc, LLVM::LLVMPointerType::get(e.ctx, 6), address);
}

LogicalResult
MmaAsyncLowering::matchAndRewrite(MmaAsyncOp op, OpAdaptor adaptor,
                                  ConversionPatternRewriter &rewriter) const {
  if (!target.hasTensorMemory())
    return op.emitOpError() << "needs tensor memory (sm_100a)";
  KernelBuilder e(rewriter, op);
  BufferType aType = op.getA().getType(), bType = op.getB().getType();
  BufferType dType = op.getDest().getType();
  Value d = adaptor.getDest();
  Value bPtr = adaptor.getB();
  bool aInTmem = aType.getMemorySpace() == MemorySpace::tmem;
  Value aAddr = adaptor.getA();
  int64_t m = 64, n = dType.getShape()[1];
  bool aKMajor = !op.getTransposeA(), bKMajor = op.getTransposeB();
  int64_t k = aKMajor ? aType.getShape()[1] : aType.getShape()[0];
  SwizzledTile aTile{aType.getShape()[0], aType.getShape()[1],
                     aType.getChunkCols()};
  SwizzledTile bTile{bType.getShape()[0], bType.getShape()[1],
                     bType.getChunkCols()};
  uint32_t idesc = tcgen05InstrDescriptor(
      m, n, tcgen05Type(aType.getElementType()),
      tcgen05Type(bType.getElementType()), Tcgen05Type::F32,
      /*aMNMajor=*/!aKMajor, /*bMNMajor=*/!bKMajor);
  uint64_t aFixed = aKMajor ? tcgen05KMajorDescriptor(0, aTile)
                            : tcgen05MNMajorDescriptor(0, aTile);
  uint64_t bFixed = bKMajor ? tcgen05KMajorDescriptor(0, bTile)
                            : tcgen05MNMajorDescriptor(0, bTile);
  Value aStart = aInTmem ? Value() : e.smemAddress(aAddr);
  Value bStart = e.smemAddress(bPtr);
  Value dPtr = tmemPointer(e, d);
  Value idescValue = e.i32(static_cast<int32_t>(idesc));
  // 16 elements of K per instruction: 32 bytes of a swizzled row, or (A in
  // tensor memory, two 16-bit elements per 32-bit column) 8 columns.
  int64_t aColumnsPerStep =
      16 * aType.getElementType().getIntOrFloatBitWidth() / 32;
  for (int64_t step = 0; step < k / 16; ++step) {
    // Chains of more than 8 steps (K above 128: S and dP at head dims 192
    // and 256) pin their start addresses every 4 steps, so that each 64
    // columns' descriptors are computed next to their steps instead of all
    // before the chain (the single-thread MMA warp spilled them).
    if (k / 16 > 8 && step > 0 && step % 4 == 0) {
      if (!aInTmem)
        aStart = e.smemAddress(pinSharedPointer(e, aAddr));
      bStart = e.smemAddress(pinSharedPointer(e, bPtr));
    }
    Value a = aInTmem
                  ? tmemPointer(e, e.add(aAddr, e.i32(step * aColumnsPerStep)))
                  : e.smemDescriptor(aFixed, aStart,
                                     aKMajor ? kMajorStepOffset(aTile, step)
                                             : mnMajorStepOffset(aTile, step));
    Value bDesc = e.smemDescriptor(bFixed, bStart,
                                   bKMajor ? kMajorStepOffset(bTile, step)
                                           : mnMajorStepOffset(bTile, step));
    // The first step overwrites D (unless the op adds to it), the others
    // accumulate.
    Value accumulate = LLVM::ConstantOp::create(
        e.b, e.loc, e.i1T(), e.b.getBoolAttr(step > 0 || op.getAccumulate()));
    NVVM::Tcgen05MMAOp::create(e.b, e.loc, NVVM::Tcgen05MMAKind::F16,
                               NVVM::CTAGroupKind::CTA_1,
                               NVVM::Tcgen05MMACollectorOp::DISCARD,
                               /*aShift=*/false, dPtr, a, bDesc, idescValue,
                               accumulate, Value(), Value());
  }
  rewriter.eraseOp(op);
  return success();
}

/// Warp q of the warpgroup owns the lanes 32q.. of every buffer.
static Value warpLanes(KernelBuilder &e) {
  Value quarter =
      e.andi(LLVM::LShrOp::create(e.b, e.loc, e.threadInReplica(), e.i32(5)),
             e.i32(3));
  return LLVM::ShlOp::create(e.b, e.loc, e.mul(quarter, e.i32(32)), e.i32(16));
}

LogicalResult
TmemLoadLowering::matchAndRewrite(TmemLoadOp op, OpAdaptor adaptor,
                                  ConversionPatternRewriter &rewriter) const {
  KernelBuilder e(rewriter, op);
  Value address = adaptor.getSource();
  AccType type = op.getResult().getType();
  int64_t regs = type.getShape()[1] / 2; // 16x256b: 4 registers per 8 columns
  Value lanes = e.add(address, warpLanes(e));
  // The repetition count (.x1 .. .x128) is a power of two: a width that is
  // not (head dim 96: 48 registers) loads as several pieces, widest first,
  // whose registers follow each other in the fragment (register r of the
  // 16x256b layout holds column 8 (r / 4) + ..., so a piece starting at
  // column c holds registers 4 c / 8 onwards).
  SmallVector<Value> pieces;
  SmallVector<int64_t> pieceRegs;
  for (int64_t done = 0; done < regs;) {
    int64_t n = static_cast<int64_t>(llvm::bit_floor(uint64_t(regs - done)));
    Value ptr = tmemPointer(
        e, done == 0 ? lanes : e.add(lanes, e.i32(done * 2))); // 2 columns/reg
    pieces.push_back(NVVM::Tcgen05LdOp::create(
        e.b, e.loc, VectorType::get({n}, e.i32T()), /*pack=*/false,
        NVVM::Tcgen05LdStShape::SHAPE_16X256B, ptr, Value()));
    pieceRegs.push_back(n);
    done += n;
  }
  NVVM::Tcgen05WaitOp::create(e.b, e.loc, NVVM::Tcgen05WaitKind::LOAD);
  SmallVector<Value> fragment;
  for (auto [loaded, n] : llvm::zip(pieces, pieceRegs)) {
    for (int64_t r = 0; r < n; ++r) {
      Value bits = LLVM::ExtractElementOp::create(e.b, e.loc, loaded, e.i32(r));
      fragment.push_back(LLVM::BitcastOp::create(e.b, e.loc, e.f32T(), bits));
    }
  }
  rewriter.replaceOpWithMultiple(op, {fragment});
  return success();
}

LogicalResult
TmemStoreLowering::matchAndRewrite(TmemStoreOp op, OneToNOpAdaptor adaptor,
                                   ConversionPatternRewriter &rewriter) const {
  KernelBuilder e(rewriter, op);
  Value address = adaptor.getDest().front();
  ValueRange packed = adaptor.getValue(); // 16-bit pairs
  Type vec = VectorType::get({static_cast<int64_t>(packed.size())}, e.i32T());
  Value value = LLVM::UndefOp::create(e.b, e.loc, vec);
  for (auto [i, reg] : llvm::enumerate(packed))
    value = LLVM::InsertElementOp::create(e.b, e.loc, value, reg, e.i32(i));
  Value ptr = tmemPointer(e, e.add(address, warpLanes(e)));
  NVVM::Tcgen05StOp::create(e.b, e.loc, /*unpack=*/false,
                            NVVM::Tcgen05LdStShape::SHAPE_16X128B, ptr, value,
                            Value());
  rewriter.eraseOp(op);
  return success();
}

void mlir::blockattn::populateWarpSpecBlackwellToNVVMPatterns(
    LLVMTypeConverter &converter, const TargetInfo &target,
    RewritePatternSet &patterns) {
  patterns.add<TmemReleaseLowering, TmemLoadLowering, TmemStoreLowering>(
      converter);
  patterns.add<MmaAsyncLowering>(converter, target);
}
