//===- KernelPatterns.cpp - scalars, dispatch ops, the type converter -----===//
//
// The ops every kernel has around its tile ops: the scalars of the kernel
// and its partitions (arith constants and the few integer ops the lowered
// protocol uses, memref.dim of kernel arguments) and the dispatch ops that
// warpspec-dispatch-partitions wrote (set_max_registers, scratch,
// wait_bulk_stores). warpspec.partition_index (whose results the patterns
// read as they are) and warpspec.single_thread (which tells the patterns
// inside that one thread runs them) stay around the lowered ops and are
// lowered with the partition shells (Prologue.cpp).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "blockattn/Conversion/WarpSpecToNVVM/Descriptors.h"
#include "blockattn/Conversion/WarpSpecToNVVM/WarpSpecToNVVM.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::blockattn;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

namespace {

struct ConstantLowering : ConvertOpToLLVMPattern<arith::ConstantOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder e(rewriter, op);
    Attribute value = op.getValue();
    Value result;
    if (auto integer = dyn_cast<IntegerAttr>(value)) {
      if (integer.getType().isIndex())
        result = e.i64(integer.getInt());
      else if (integer.getType().isInteger(32))
        result = e.i32(integer.getInt());
      else if (integer.getType().isInteger(64))
        result = e.i64(integer.getInt());
    } else if (auto real = dyn_cast<FloatAttr>(value)) {
      if (real.getType().isF32())
        result = e.f32(real.getValueAsDouble());
    }
    if (!result)
      return op.emitOpError() << "constant of type " << op.getType()
                              << " is not supported inside a warpspec.kernel";
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Sizes of kernel arguments: static, or the i32 size parameter.
struct DimLowering : ConvertOpToLLVMPattern<memref::DimOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(memref::DimOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder e(rewriter, op);
    auto type = cast<MemRefType>(op.getSource().getType());
    // buildKernelParams checked the index against the rank.
    int64_t dim = *op.getConstantIndex();
    Value result;
    if (!type.isDynamicDim(dim))
      result = e.i64(type.getDimSize(dim));
    else if (Value size = argSize(op.getSource(), dim))
      result = e.zext64(size);
    if (!result)
      return op.emitOpError() << "size of a memref that is not a kernel "
                                 "parameter";
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Ring positions and the consume loop's test (i32 scalars).
struct AddILowering : ConvertOpToLLVMPattern<arith::AddIOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(arith::AddIOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder e(rewriter, op);
    rewriter.replaceOp(op, e.add(adaptor.getLhs(), adaptor.getRhs()));
    return success();
  }
};

struct CmpILowering : ConvertOpToLLVMPattern<arith::CmpIOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(arith::CmpIOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder e(rewriter, op);
    // arith's and LLVM's predicates are numbered alike (eq, ne, slt, ...).
    auto predicate = static_cast<LLVM::ICmpPredicate>(op.getPredicate());
    rewriter.replaceOp(op,
                       e.cmp(predicate, adaptor.getLhs(), adaptor.getRhs()));
    return success();
  }
};

/// Grouped-query attention's k/v head: the query head / group (i32).
struct DivUILowering : ConvertOpToLLVMPattern<arith::DivUIOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(arith::DivUIOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::UDivOp>(op, adaptor.getLhs(),
                                              adaptor.getRhs());
    return success();
  }
};

/// The other i32 scalar arithmetic of the recipes (the rows of a large
/// block's query halves, docs/block-sizes.md): one LLVM op each.
template <typename ArithOp, typename LLVMOp>
struct BinaryLowering : ConvertOpToLLVMPattern<ArithOp> {
  using ConvertOpToLLVMPattern<ArithOp>::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(ArithOp op, typename ArithOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVMOp>(op, adaptor.getLhs(), adaptor.getRhs());
    return success();
  }
};

struct SetMaxRegistersLowering : ConvertOpToLLVMPattern<SetMaxRegistersOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(SetMaxRegistersOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // setmaxnreg.inc waits until the registers that other warpgroups
    // released with .dec are available.
    rewriter.replaceOpWithNewOp<NVVM::SetMaxRegisterOp>(
        op, op.getCount(),
        op.getAction() == RegisterAction::increase
            ? NVVM::SetMaxRegisterAction::increase
            : NVVM::SetMaxRegisterAction::decrease);
    return success();
  }
};

struct WaitBulkStoresLowering : ConvertOpToLLVMPattern<WaitBulkStoresOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(WaitBulkStoresOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    NVVM::CpAsyncBulkWaitGroupOp::create(rewriter, op.getLoc(), 0, UnitAttr());
    rewriter.eraseOp(op);
    return success();
  }
};

/// A scratch buffer: the replica's copy at its planned offset.
struct ScratchLowering : ConvertOpToLLVMPattern<ScratchOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(ScratchOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getOffset() || !op.getReplicaStride())
      return op.emitOpError() << "has no offset: run warpspec-allocate-smem "
                                 "first";
    KernelBuilder e(rewriter, op);
    Value offset = e.add(e.i32(*op.getOffset()),
                         e.mul(e.replica(), e.i32(*op.getReplicaStride())));
    rewriter.replaceOp(op, e.smem(offset));
    return success();
  }
};

/// A view of whole column chunks: in shared memory the chunks of a tile
/// follow each other (`rows` x W elements each), so columns from `offset`
/// start `offset * rows` elements further; in tensor memory a 32-bit cell
/// is a column, so the address (lane << 16 | column) moves `offset` columns.
struct SubviewLowering : ConvertOpToLLVMPattern<SubviewOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(SubviewOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder e(rewriter, op);
    BufferType source = op.getSource().getType();
    int64_t offset = op.getOffset();
    if (source.getMemorySpace() == MemorySpace::tmem) {
      rewriter.replaceOp(op, e.add(adaptor.getSource(), e.i32(offset)));
      return success();
    }
    int64_t bytes = offset * source.getShape()[0] *
                    source.getElementType().getIntOrFloatBitWidth() / 8;
    Value view = LLVM::GEPOp::create(
        e.b, e.loc, e.smemPtrT(), e.b.getI8Type(),
        pinSharedPointer(e, adaptor.getSource()),
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(bytes)});
    rewriter.replaceOp(op, view);
    return success();
  }
};

/// A column chunk of a buffer: chunks are stored one after the other, each
/// `rows` rows of the chunk's row bytes (nvdesc::SwizzledTile).
struct ColumnChunkLowering : ConvertOpToLLVMPattern<ColumnChunkOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(ColumnChunkOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    BufferType source = op.getSource().getType();
    nvdesc::SwizzledTile tile{source.getShape()[0], source.getShape()[1],
                              source.getChunkCols()};
    KernelBuilder e(rewriter, op);
    rewriter.replaceOpWithNewOp<LLVM::GEPOp>(
        op, e.smemPtrT(), e.b.getI8Type(), adaptor.getSource(),
        ValueRange{e.i32(op.getIndex() * tile.chunkBytes())});
    return success();
  }
};

/// A pinned buffer: its address through pinSharedPointer's empty
/// side-effecting asm (NVVM has no op that stops LLVM's loop-invariant code
/// motion; this is CUTLASS's warpgroup_fence_operand on an address); a
/// pinned i32 through the same asm (pinI32).
struct PinLowering : ConvertOpToLLVMPattern<PinOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(PinOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder e(rewriter, op);
    Value source = adaptor.getSource();
    bool pointer = !isa<IntegerType>(source.getType());
    if (Value anchor = adaptor.getAnchor()) {
      // after(v): plus min(v, 0), zero at run time, which neither LLVM nor
      // ptxas can fold, so what derives from the result stays where v is.
      Value value = pointer
                        ? LLVM::PtrToIntOp::create(e.b, e.loc, e.i32T(), source)
                              .getResult()
                        : source;
      Value zero = LLVM::SMinOp::create(e.b, e.loc, anchor, e.i32(0));
      Value pinnedValue = pinI32(e, e.add(value, zero));
      rewriter.replaceOp(op, pointer ? LLVM::IntToPtrOp::create(e.b, e.loc,
                                                                e.smemPtrT(),
                                                                pinnedValue)
                                           .getResult()
                                     : pinnedValue);
      return success();
    }
    if (!pointer)
      rewriter.replaceOp(op, pinI32(e, source));
    else
      rewriter.replaceOp(op, pinSharedPointer(e, source));
    return success();
  }
};

} // namespace

void mlir::blockattn::populateWarpSpecKernelToNVVMPatterns(
    LLVMTypeConverter &converter, const TargetInfo &,
    RewritePatternSet &patterns) {
  patterns.add<ConstantLowering, DimLowering, AddILowering, CmpILowering,
               DivUILowering, SetMaxRegistersLowering, WaitBulkStoresLowering,
               ScratchLowering, ColumnChunkLowering, PinLowering>(converter);
  patterns.add<SubviewLowering>(converter);
  patterns.add<BinaryLowering<arith::SubIOp, LLVM::SubOp>,
               BinaryLowering<arith::MulIOp, LLVM::MulOp>,
               BinaryLowering<arith::MinSIOp, LLVM::SMinOp>,
               BinaryLowering<arith::MaxSIOp, LLVM::SMaxOp>>(converter);
}

void mlir::blockattn::populateWarpSpecToNVVMPatterns(
    LLVMTypeConverter &converter, const TargetInfo &target,
    RewritePatternSet &patterns) {
  populateWarpSpecKernelToNVVMPatterns(converter, target, patterns);
  populateWarpSpecScheduleToNVVMPatterns(converter, target, patterns);
  populateWarpSpecChannelsToNVVMPatterns(converter, target, patterns);
  populateWarpSpecTileMathToNVVMPatterns(converter, target, patterns);
  populateWarpSpecHopperToNVVMPatterns(converter, target, patterns);
  populateWarpSpecBlackwellToNVVMPatterns(converter, target, patterns);
  populateWarpSpecRotaryToNVVMPatterns(converter, target, patterns);
  populateWarpSpecTraceToNVVMPatterns(converter, target, patterns);
}

// The view's source is pinned where the view is taken (SubviewLowering): the
// matrix descriptors of a chunk's product derive from it; unpinned, LLVM
// computes those of every chunk of a tile at the top of the tile, where at
// head dim 256 they held about a hundred 64-bit registers and ptxas spilled.
Value mlir::blockattn::lowering::pinI32(KernelBuilder &e, Value value) {
  auto asmOp = LLVM::InlineAsmOp::create(
      e.b, e.loc, e.i32T(), ValueRange{value}, "", "=r,0",
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(e.ctx, LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  return asmOp.getResult(0);
}

Value mlir::blockattn::lowering::pinSharedPointer(KernelBuilder &e, Value ptr) {
  Value address = LLVM::PtrToIntOp::create(e.b, e.loc, e.i32T(), ptr);
  return LLVM::IntToPtrOp::create(e.b, e.loc, e.smemPtrT(), pinI32(e, address));
}
