//===- Pipelines.cpp - the blockattn-to-ptx pipeline ----------------------===//

#include "blockattn/Pipelines/Pipelines.h"

#include "blockattn/Conversion/Passes.h"
#include "blockattn/Dialect/BlockAttn/Transforms/Passes.h"
#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h"

#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::blockattn;

void blockattn::buildBlockAttnToPtxPipeline(
    OpPassManager &pm, const BlockAttnToPtxOptions &options) {
  BlockAttnWarpSpecializePassOptions specialize;
  specialize.chip = options.chip;
  specialize.numStages = options.numStages;
  specialize.numConsumers = options.numConsumers;
  specialize.pOperand = options.pOperand;
  specialize.oStore = options.oStore;
  specialize.schedule = options.schedule;
  specialize.ctasPerSm = options.ctasPerSm;
  specialize.tilesPerCta = options.tilesPerCta;
  specialize.l2Prefetch = options.l2Prefetch;
  pm.addNestedPass<func::FuncOp>(createBlockAttnWarpSpecializePass(specialize));
  pm.addPass(warpspec::createWarpSpecAllocateTmemPass());
  pm.addPass(warpspec::createWarpSpecAllocateSmemPass());
  ConvertWarpSpecToNVVMPassOptions convert;
  convert.chip = options.chip;
  convert.features = options.ptxFeatures;
  pm.addPass(createConvertWarpSpecToNVVMPass(convert));
  // NVVM ops without an LLVM intrinsic (the parity wait loop, wgmma) become
  // inline PTX here; they must be gone before translation to LLVM IR.
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (options.format == "none")
    return;
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void blockattn::registerBlockAttnPipelines() {
  PassPipelineRegistration<BlockAttnToPtxOptions>(
      "blockattn-to-ptx",
      "Compile blockattn kernels to PTX (or cubin) for sm_90a or sm_100a",
      buildBlockAttnToPtxPipeline);
}
