//===- Hopper.cpp - warpspec.mma as wgmma (sm_90a) ------------------------===//
//
// warpspec.mma on sm_90a: one warpgroup issues wgmma.mma_async m64nNk16 with
// f32 accumulators in registers (the accumulator layout is Types.cpp's).
//   - A from shared memory (S = Q K^T, or P staged in a scratch buffer):
//     nvvm.wgmma.mma_async with K-major A and K-major (transpose_b) or
//     MN-major B descriptors.
//   - A from registers (O = P V with P left where softmax produced it):
//     MLIR 22's nvvm.wgmma.mma_async only takes A as a descriptor, so this
//     form is an llvm.inline_asm of the PTX `wgmma.mma_async ... {a0..a3},
//     descB, p, 1, 1, 1;` (PTX ISA, "wgmma.mma_async", register A), built the
//     way convert-nvvm-to-llvm builds the descriptor form.
// Every chain is fenced before (its A registers or accumulators may have been
// written by ordinary instructions), committed as one group and waited for
// before its accumulators are read, so ptxas never has to serialize it.
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

namespace {

NVVM::WGMMATypes wgmmaType(Type type) {
  if (type.isBF16())
    return NVVM::WGMMATypes::bf16;
  if (type.isF16())
    return NVVM::WGMMATypes::f16;
  return NVVM::WGMMATypes::f32;
}

/// Tile geometry of a buffer operand, its layout (chunk_cols) included.
SwizzledTile tileOf(BufferType type) {
  return SwizzledTile{type.getShape()[0], type.getShape()[1],
                      type.getChunkCols()};
}

Type accStructType(MLIRContext *ctx, int64_t regs) {
  return LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(regs, Float32Type::get(ctx)));
}

SmallVector<Value> unpack(KernelBuilder &e, Value structValue, int64_t n) {
  SmallVector<Value> values;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(LLVM::ExtractValueOp::create(e.b, e.loc, structValue, i));
  return values;
}

/// One register-A wgmma step: D (n f32, read and written) += A (4 x b32) * B.
Value registerAWgmma(KernelBuilder &e, int64_t n, Type elementType,
                     ArrayRef<Value> acc, ArrayRef<Value> a, Value descB,
                     bool accumulate) {
  int64_t regs = n / 2;
  std::string type = elementType.isBF16() ? "bf16" : "f16";
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                     std::to_string(2 * regs + 5) +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(n) + "k16.f32." + type + "." + type + " {";
  std::string constraints;
  for (int64_t i = 0; i < regs; ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    constraints += "=f,";
  }
  text += "}, {$" + std::to_string(2 * regs) + ", $" +
          std::to_string(2 * regs + 1) + ", $" + std::to_string(2 * regs + 2) +
          ", $" + std::to_string(2 * regs + 3) + "}, $" +
          std::to_string(2 * regs + 4) + ", p, 1, 1, 1;\n}\n";
  for (int64_t i = 0; i < regs; ++i)
    constraints += std::to_string(i) + ",";
  constraints += "r,r,r,r,l,n";

  SmallVector<Value> operands(acc.begin(), acc.end());
  operands.append(a.begin(), a.end());
  operands.push_back(descB);
  operands.push_back(e.i32(accumulate ? 1 : 0));
  auto asmOp = LLVM::InlineAsmOp::create(
      e.b, e.loc, accStructType(e.ctx, regs), operands, text, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(e.ctx, LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  return asmOp.getResult(0);
}

/// Pins `values` to this point of the instruction stream: an empty
/// side-effecting asm that reads and redefines them (CUTLASS's
/// warpgroup_fence_operand). LLVM may otherwise move the arithmetic that
/// produces a wgmma's register operands below its `wgmma.fence`, or the
/// arithmetic that reads its accumulators above its `wgmma.wait_group`; both
/// are undefined behaviour (PTX ISA, wgmma.fence and wgmma.wait_group).
SmallVector<Value> fenceRegisters(KernelBuilder &e, ArrayRef<Value> values) {
  return e.pinRegisters(values);
}

/// Whether a chain of `steps` k-steps pins its start addresses again before
/// step `k`: every 4 steps (64 columns of K) in chains of more than 8 (K
/// above 128: S and dP at head dims 192 and 256), so that each 64 columns'
/// descriptors are computed next to their steps. Unpinned, LLVM computes
/// all of a chain's descriptors before its first step and holds them (64
/// registers at K = 256: ptxas spilled the sm_90a backward).
bool repinsAt(int64_t steps, int64_t k) {
  constexpr int64_t kStepsPerChunk = 4, kMaxUnpinnedSteps = 8;
  return steps > kMaxUnpinnedSteps && k > 0 && k % kStepsPerChunk == 0;
}

} // namespace

namespace {

struct MmaLowering : ConvertOpToLLVMPattern<MmaOp> {
  MmaLowering(LLVMTypeConverter &converter, const TargetInfo &target)
      : ConvertOpToLLVMPattern(converter), target(target) {}
  LogicalResult
  matchAndRewrite(MmaOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override;
  TargetInfo target;
};

} // namespace

LogicalResult
MmaLowering::matchAndRewrite(MmaOp op, OneToNOpAdaptor adaptor,
                             ConversionPatternRewriter &rewriter) const {
  if (!target.hasWgmma())
    return op.emitOpError()
           << "with register operands is not available on " << target.getName();
  KernelBuilder e(rewriter, op);
  AccType resultType = op.getResult().getType();
  int64_t n = resultType.getShape()[1];
  int64_t regs = n / 2;
  BufferType bType = op.getB().getType();
  Value bPtr = adaptor.getB().front();
  Value bStart = e.smemAddress(bPtr);
  SwizzledTile bTile = tileOf(bType);
  bool bKMajor = op.getTransposeB();
  uint64_t bFixed =
      bKMajor ? kMajorDescriptor(0, bTile) : mnMajorDescriptor(0, bTile);
  auto bOffset = [&](int64_t k) -> uint64_t {
    return bKMajor ? kMajorStepOffset(bTile, k) : mnMajorStepOffset(bTile, k);
  };
  Type elementType = bType.getElementType();
  Type structType = accStructType(e.ctx, regs);

  // With `acc`, the chain starts from the given tile (fenced like register
  // A operands: ordinary instructions may have written it) instead of zero.
  SmallVector<Value> initial;
  if (op.getAcc())
    initial = fenceRegisters(e, SmallVector<Value>(adaptor.getAcc()));
  SmallVector<Value> result;
  if (auto aType = dyn_cast<BufferType>(op.getA().getType())) {
    Value aPtr = adaptor.getA().front();
    Value aStart = e.smemAddress(aPtr);
    SwizzledTile aTile = tileOf(aType);
    // A stored K x M (transpose_a) is MN-major: the same descriptor rules
    // as an MN-major B.
    bool aKMajor = !op.getTransposeA();
    uint64_t aFixed =
        aKMajor ? kMajorDescriptor(0, aTile) : mnMajorDescriptor(0, aTile);
    auto aOffset = [&](int64_t k) -> uint64_t {
      return aKMajor ? kMajorStepOffset(aTile, k) : mnMajorStepOffset(aTile, k);
    };
    int64_t steps = (aKMajor ? aType.getShape()[1] : aType.getShape()[0]) / 16;
    NVVM::WgmmaFenceAlignedOp::create(e.b, e.loc);
    Value acc = LLVM::UndefOp::create(e.b, e.loc, structType);
    for (auto [i, value] : llvm::enumerate(initial))
      acc = LLVM::InsertValueOp::create(e.b, e.loc, acc, value, i);
    for (int64_t k = 0; k < steps; ++k) {
      if (repinsAt(steps, k)) {
        SmallVector<Value> pinned = fenceRegisters(e, {aStart, bStart});
        aStart = pinned[0];
        bStart = pinned[1];
      }
      Value descA = e.smemDescriptor(aFixed, aStart, aOffset(k));
      Value descB = e.smemDescriptor(bFixed, bStart, bOffset(k));
      acc = NVVM::WgmmaMmaAsyncOp::create(
          e.b, e.loc, structType, acc, descA, descB,
          NVVM::MMAShapeAttr::get(e.ctx, 64, n, 16), wgmmaType(elementType),
          wgmmaType(elementType), NVVM::WGMMATypes::f32,
          k == 0 && initial.empty() ? NVVM::WGMMAScaleOut::zero
                                    : NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          // The NVVM op emits imm-trans-a = layoutA and imm-trans-b =
          // 1 - layoutB (row = 0): K-major A is `row`, K-major B is `col`.
          aKMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col,
          bKMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
          NVVM::MMAIntOverflowAttr());
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(e.b, e.loc);
    NVVM::WgmmaWaitGroupSyncOp::create(e.b, e.loc, 0);
    result = fenceRegisters(e, unpack(e, acc, regs));
  } else {
    // A 16-bit register tile is its wgmma accumulator layout, packed in
    // pairs; k-block kb (16 columns) is registers 8kb..8kb+7, i.e. packed
    // registers 4kb..4kb+3, which is exactly the A fragment of m64nNk16
    // (PTX ISA, "wgmma .m64nNk16" register fragment A). No data moves.
    SmallVector<Value> a =
        fenceRegisters(e, SmallVector<Value>(adaptor.getA()));
    NVVM::WgmmaFenceAlignedOp::create(e.b, e.loc);
    int64_t steps = cast<AccType>(op.getA().getType()).getShape()[1] / 16;
    SmallVector<Value> acc(regs, LLVM::UndefOp::create(e.b, e.loc, e.f32T()));
    if (!initial.empty())
      acc = initial;
    for (int64_t k = 0; k < steps; ++k) {
      if (repinsAt(steps, k))
        bStart = fenceRegisters(e, {bStart}).front();
      Value descB = e.smemDescriptor(bFixed, bStart, bOffset(k));
      Value out = registerAWgmma(e, n, elementType, acc,
                                 ArrayRef<Value>(a).slice(4 * k, 4), descB,
                                 k > 0 || !initial.empty());
      acc = unpack(e, out, regs);
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(e.b, e.loc);
    NVVM::WgmmaWaitGroupSyncOp::create(e.b, e.loc, 0);
    result = fenceRegisters(e, acc);
  }
  rewriter.replaceOpWithMultiple(op, {result});
  return success();
}

void mlir::blockattn::populateWarpSpecHopperToNVVMPatterns(
    LLVMTypeConverter &converter, const TargetInfo &target,
    RewritePatternSet &patterns) {
  patterns.add<MmaLowering>(converter, target);
}
