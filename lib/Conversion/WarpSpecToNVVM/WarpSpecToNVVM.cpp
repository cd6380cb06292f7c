//===- WarpSpecToNVVM.cpp - convert-warpspec-to-nvvm ----------------------===//
//
// For each function whose body is a warpspec.kernel: build the gpu.module and
// the kernel's llvm.func (parameters, launch attributes, manifest), let the
// KernelEmitter fill its body, then lower the structured control flow it used
// to LLVM branches.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Conversion/Passes.h"
#include "blockattn/Conversion/WarpSpecToNVVM/PtxFeatures.h"
#include "blockattn/Conversion/WarpSpecToNVVM/TargetInfo.h"

#include "KernelEmitter.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
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
    bool tcgen05 = false;
    kernel.walk([&](Operation *op) {
      tcgen05 |= isa<MmaAsyncOp, TmemLoadOp, TmemStoreOp>(op);
    });
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
        /*isConstant=*/false, LLVM::Linkage::External,
        "__blockattn_dynamic_smem", Attribute(),
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

    KernelEmitter emitter(func, kernel, llvmFunc, *params);
    if (failed(emitter.emit()))
      return failure();
    llvmFunc->setAttr(
        "blockattn.manifest",
        buildManifest(b, func, kernel, *params, threads, maxRegisters));
    func.erase();
    return gpuModule;
  }

  /// The emitter uses scf for loops and conditionals; lower them to LLVM
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
