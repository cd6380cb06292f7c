//===- WarpSpecToNVVM.cpp - convert-warpspec-to-nvvm ----------------------===//
//
// For each function whose body is a warpspec.kernel: build the gpu.module and
// the kernel's llvm.func (parameters, launch attributes, manifest), move the
// kernel into it behind its prologue, lower every op inside with the
// patterns (one dialect conversion), turn the partitions into the warp-range
// dispatch, then lower the structured control flow the patterns used to LLVM
// branches.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Conversion/WarpSpecToNVVM/WarpSpecToNVVM.h"
#include "blockattn/Conversion/Passes.h"
#include "blockattn/Conversion/WarpSpecToNVVM/PtxFeatures.h"
#include "blockattn/Conversion/WarpSpecToNVVM/TargetInfo.h"

#include "Prologue.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::blockattn {
#define GEN_PASS_DEF_CONVERTWARPSPECTONVVMPASS
#include "blockattn/Conversion/Passes.h.inc"
} // namespace mlir::blockattn

using namespace mlir;
using namespace mlir::blockattn;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

namespace {

/// The kernel of a function whose body is `warpspec.kernel; return`.
KernelOp getKernel(func::FuncOp func) {
  if (func.isExternal())
    return {};
  Block &body = func.getBody().front();
  auto kernel = dyn_cast<KernelOp>(body.front());
  if (!kernel || body.getOperations().size() != 2 ||
      !isa<func::ReturnOp>(body.back()))
    return {};
  return kernel;
}

Type paramType(MLIRContext *ctx, const KernelParam &p) {
  switch (p.kind) {
  case KernelParam::Kind::TensorMap:
    return LLVM::LLVMPointerType::get(ctx);
  case KernelParam::Kind::Pointer:
    return LLVM::LLVMPointerType::get(ctx, 1);
  case KernelParam::Kind::I32:
    return IntegerType::get(ctx, 32);
  case KernelParam::Kind::I64:
    return IntegerType::get(ctx, 64);
  case KernelParam::Kind::F32:
    return Float32Type::get(ctx);
  }
  llvm_unreachable("unknown parameter kind");
}

struct ConvertWarpSpecToNVVMPass
    : public blockattn::impl::ConvertWarpSpecToNVVMPassBase<
          ConvertWarpSpecToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::FuncOp, KernelOp>> kernels;
    module.walk([&](func::FuncOp func) {
      if (KernelOp kernel = getKernel(func))
        kernels.push_back({func, kernel});
    });
    // A kernel nested anywhere else has no function to take its parameters
    // from.
    WalkResult stray = module.walk([&](KernelOp kernel) {
      auto func = dyn_cast<func::FuncOp>(kernel->getParentOp());
      if (func && getKernel(func) == kernel)
        return WalkResult::advance();
      kernel.emitOpError() << "must be the only operation (besides return) of "
                              "a func.func to be lowered to a GPU kernel";
      return WalkResult::interrupt();
    });
    if (stray.wasInterrupted())
      return signalPassFailure();

    SmallVector<gpu::GPUModuleOp> gpuModules;
    for (auto [func, kernel] : kernels) {
      FailureOr<gpu::GPUModuleOp> gpuModule = lowerKernel(func, kernel);
      if (failed(gpuModule))
        return signalPassFailure();
      gpuModules.push_back(*gpuModule);
    }
    for (gpu::GPUModuleOp gpuModule : gpuModules)
      if (failed(lowerStructuredControlFlow(gpuModule)))
        return signalPassFailure();
  }

  FailureOr<gpu::GPUModuleOp> lowerKernel(func::FuncOp func, KernelOp kernel) {
    TargetInfo targetInfo = TargetInfo::get(kernel);
    if (!chip.empty() && TargetInfo::get(chip) != targetInfo) {
      kernel.emitOpError() << "targets " << targetInfo.getName()
                           << ", but convert-warpspec-to-nvvm was asked for "
                           << chip;
      return failure();
    }
    // NVPTX aborts on a PTX ISA the chip cannot use: say so on the kernel.
    if (std::optional<std::string> problem =
            checkPtxFeatures(features, targetInfo.getName())) {
      kernel.emitOpError() << "targets " << targetInfo.getName()
                           << ", but convert-warpspec-to-nvvm's " << *problem;
      return failure();
    }
    if (!kernel.getSmemBytes()) {
      kernel.emitOpError()
          << "has no shared-memory plan: run warpspec-allocate-smem first";
      return failure();
    }
    // The prologue initializes every channel's barriers before any channel
    // op is lowered (and could report a missing offset): check them first.
    for (ChannelOp channel : kernel.getChannels()) {
      if (!channel.getBarrierOffset() || !channel.getInfoOffset()) {
        channel.emitOpError() << "has no barrier or tile record offsets: run "
                                 "warpspec-allocate-smem first";
        return failure();
      }
    }
    // The prologue allocates tensor memory (tmem_columns) into the slot at
    // tmem_base_offset before any tensor-memory op is lowered.
    SmallVector<ChannelOp, 4> channels = kernel.getChannels();
    auto tmemChannel =
        llvm::find_if(channels, [](ChannelOp c) { return c.inTensorMemory(); });
    bool tcgen05 = kernel.usesTensorMemory();
    bool usesTmem = tcgen05 || tmemChannel != channels.end();
    // The prologue allocates tensor memory for the partitions that issue
    // tcgen05 ops, the only way to reach it: without one, a tensor-memory
    // channel has no allocation to address.
    if (!tcgen05 && usesTmem) {
      tmemChannel->emitOpError()
          << "channel \"" << tmemChannel->getName()
          << "\" lives in tensor memory, but no partition accesses tensor "
             "memory (warpspec.mma_async, warpspec.tmem_load or "
             "warpspec.tmem_store), so none allocates it";
      return failure();
    }
    if (usesTmem && (!kernel.getTmemColumns() || !kernel.getTmemBaseOffset())) {
      kernel.emitOpError() << "uses tensor memory but has no tensor-memory "
                              "plan (tmem_columns, tmem_base_offset): run "
                              "warpspec-allocate-tmem and "
                              "warpspec-allocate-smem first";
      return failure();
    }
    FailureOr<SmallVector<KernelParam>> params =
        buildKernelParams(func, kernel);
    if (failed(params))
      return failure();

    MLIRContext *ctx = &getContext();
    OpBuilder b(func);
    Location loc = func.getLoc();
    auto target =
        NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3, "nvptx64-nvidia-cuda",
                                  targetInfo.getName(), features);
    auto gpuModule = gpu::GPUModuleOp::create(b, loc, func.getSymName(),
                                              b.getArrayAttr({target}));
    b.setInsertionPointToStart(gpuModule.getBody());
    LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
        /*isConstant=*/false, LLVM::Linkage::External, dynamicSmemSymbol(),
        Attribute(),
        // Claim only what CUDA guarantees; the prologue aligns the base to
        // 1024 at run time. A larger alignment here would let LLVM fold that
        // computation away on a promise the driver does not make.
        /*alignment=*/16, /*addrSpace=*/3);

    SmallVector<Type> argTypes;
    for (const KernelParam &p : *params)
      argTypes.push_back(paramType(ctx, p));
    auto fnType =
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), argTypes);
    auto llvmFunc = LLVM::LLVMFuncOp::create(b, loc, func.getSymName(), fnType);
    int64_t threads = kernel.getNumThreads();
    // The per-thread register cap the kernel is launched with; partitions
    // then move registers between each other from this base.
    int64_t maxRegisters = kernel.getLaunchRegisterCap();
    llvmFunc->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(),
                      b.getUnitAttr());
    llvmFunc->setAttr(
        NVVM::NVVMDialect::getReqntidAttrName(),
        b.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
    // .minnctapersm makes ptxas keep the registers within the CTA's share.
    llvmFunc->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      b.getI32IntegerAttr(static_cast<int32_t>(
                          kernel.getCtasPerSmOrDefault())));
    for (auto [index, p] : llvm::enumerate(*params)) {
      if (p.kind != KernelParam::Kind::TensorMap)
        continue;
      // CUtensorMap by value in parameter space (a __grid_constant__ param).
      llvmFunc.setArgAttr(
          index, LLVM::LLVMDialect::getByValAttrName(),
          TypeAttr::get(LLVM::LLVMArrayType::get(b.getI8Type(), 128)));
      llvmFunc.setArgAttr(index, LLVM::LLVMDialect::getAlignAttrName(),
                          b.getI64IntegerAttr(64));
      llvmFunc.setArgAttr(index, NVVM::NVVMDialect::getGridConstantAttrName(),
                          b.getUnitAttr());
    }

    if (failed(checkLowerable(kernel)))
      return failure();
    llvmFunc->setAttr(
        "blockattn.manifest",
        buildManifest(b, func, kernel, *params, threads, maxRegisters));
    buildPrologue(func, kernel, llvmFunc, *params);
    if (failed(convertKernelOps(kernel, targetInfo)))
      return failure();
    lowerShells(kernel);
    func.erase();
    return gpuModule;
  }

  /// What the patterns take for granted: dispatched partitions, and only
  /// ops that have a pattern.
  LogicalResult checkLowerable(KernelOp kernel) {
    for (PartitionOp op : kernel.getPartitions()) {
      if (!op.isDispatched())
        return op.emitOpError()
               << "is not placed on warps: run warpspec-dispatch-partitions "
                  "before convert-warpspec-to-nvvm";
      if (!llvm::hasSingleElement(
              op.getBody().front().getOps<PartitionIndexOp>()))
        return op.emitOpError() << "has no warpspec.partition_index (the "
                                   "dispatch warpspec-dispatch-partitions "
                                   "writes)";
    }
    WalkResult walk = kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == kernel.getOperation())
        return WalkResult::advance();
      if (isa<ReplicaIdOp>(op)) {
        op->emitOpError() << "is not dispatched: run "
                             "warpspec-dispatch-partitions before "
                             "convert-warpspec-to-nvvm";
        return WalkResult::interrupt();
      }
      if (isa<AcquireOp, CommitOp, CloseOp, ConsumeOp, ReleaseOp, GetOp,
              TilePositionOp>(op)) {
        op->emitOpError()
            << "is a channel-protocol op: run warpspec-lower-protocol "
               "before convert-warpspec-to-nvvm";
        return WalkResult::interrupt();
      }
      // arith.divui: grouped-query attention's k/v head (query head /
      // group) in the producer; scf.for: the grouped backward's loop over
      // the query heads of a group; scf.if without results: the grouped
      // block-128 backward's rotation of a streamed chunk, one case a chunk
      // index (the patterns build such ifs too; the final scf-to-cf
      // lowering takes them).
      if (isa<WarpSpecDialect>(op->getDialect()) ||
          isa<arith::ConstantOp, arith::AddIOp, arith::SubIOp, arith::MulIOp,
              arith::CmpIOp, arith::DivUIOp, arith::MinSIOp, arith::MaxSIOp,
              memref::DimOp, scf::WhileOp, scf::ConditionOp, scf::YieldOp>(
              op) ||
          isa<scf::ForOp>(op) ||
          (isa<scf::IfOp>(op) && op->getNumResults() == 0))
        return WalkResult::advance();
      op->emitOpError() << "cannot be lowered by convert-warpspec-to-nvvm "
                           "inside a warpspec.kernel";
      return WalkResult::interrupt();
    });
    return failure(walk.wasInterrupted());
  }

  /// The patterns, in one dialect conversion of the ops inside `kernel`
  /// (which the pre-step moved into its llvm.func): the kernel, its
  /// partitions and channels, partition_index and single_thread stay for
  /// lowerShells.
  LogicalResult convertKernelOps(KernelOp kernel, const TargetInfo &target) {
    MLIRContext *ctx = &getContext();
    LLVMTypeConverter converter(ctx);
    populateWarpSpecToNVVMTypeConversions(converter);
    RewritePatternSet patterns(ctx);
    populateWarpSpecToNVVMPatterns(converter, target, patterns);
    ConversionTarget legal(*ctx);
    legal.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect>();
    legal.addLegalOp<scf::IfOp, scf::ConditionOp,
                     UnrealizedConversionCastOp>();
    // A yield with operands in an scf.for is one ForLowering rebuilt the
    // loop around: YieldLowering stores what it yields.
    legal.addDynamicallyLegalOp<scf::YieldOp>([](scf::YieldOp op) {
      return op.getNumOperands() == 0 || !isa<scf::ForOp>(op->getParentOp());
    });
    // The loops the patterns build carry nothing; those of the input do.
    legal.addDynamicallyLegalOp<scf::WhileOp>([&](scf::WhileOp op) {
      return op.getInits().empty() && converter.isLegal(op.getResultTypes());
    });
    legal.addDynamicallyLegalOp<scf::ForOp>([&](scf::ForOp op) {
      return op.getInitArgs().empty() &&
             converter.isLegal(op.getLowerBound().getType());
    });
    legal.addIllegalDialect<WarpSpecDialect, arith::ArithDialect,
                            memref::MemRefDialect>();
    legal.addLegalOp<KernelOp, PartitionOp, ChannelOp, PartitionIndexOp,
                     SingleThreadOp>();
    // A pattern that cannot lower its op says why; the conversion's own
    // "failed to legalize" that follows adds nothing.
    bool reported = false;
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Error)
        return failure();
      if (reported && StringRef(diag.str()).starts_with("failed to legalize"))
        return success();
      reported = true;
      return failure();
    });
    // Every op is lowered by its pattern, as written: folding would change
    // the LLVM IR (and the PTX) of ops the patterns lower as they stand.
    ConversionConfig config;
    config.foldingMode = DialectConversionFoldingMode::Never;
    return applyPartialConversion(kernel, legal, std::move(patterns), config);
  }

  /// The patterns use scf for loops and conditionals; lower them to LLVM
  /// branches inside the gpu.module only.
  LogicalResult lowerStructuredControlFlow(gpu::GPUModuleOp gpuModule) {
    MLIRContext *ctx = &getContext();
    {
      RewritePatternSet patterns(ctx);
      populateSCFToControlFlowConversionPatterns(patterns);
      ConversionTarget target(*ctx);
      target.addIllegalDialect<scf::SCFDialect>();
      target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      if (failed(
              applyPartialConversion(gpuModule, target, std::move(patterns))))
        return failure();
    }
    LLVMTypeConverter converter(ctx);
    RewritePatternSet patterns(ctx);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    LLVMConversionTarget target(*ctx);
    target.addLegalDialect<NVVM::NVVMDialect>();
    target.addLegalOp<gpu::GPUModuleOp>();
    return applyPartialConversion(gpuModule, target, std::move(patterns));
  }
};

} // namespace
