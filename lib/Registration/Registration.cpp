//===- Registration.cpp - register dialects, passes and pipelines ---------===//
//
// The registration hooks of InitAllDialects.h and InitAllPasses.h. The pass
// hooks run once per process (std::call_once): MLIR's pass registry rejects
// a pipeline registered twice in debug builds, and a dialect plugin, a pass
// plugin and the program that loads them may all ask.
//
//===----------------------------------------------------------------------===//

#include "blockattn/InitAllDialects.h"
#include "blockattn/InitAllPasses.h"

#include "blockattn/Conversion/Passes.h"
#include "blockattn/Dialect/BlockAttn/IR/BlockAttnDialect.h"
#include "blockattn/Dialect/BlockAttn/Transforms/Passes.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecDialect.h"
#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h"
#include "blockattn/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include <mutex>

using namespace mlir;

void blockattn::registerAllBlockAttnDialects(DialectRegistry &registry) {
  registry.insert<blockattn::BlockAttnDialect, warpspec::WarpSpecDialect>();
  registry
      .insert<arith::ArithDialect, cf::ControlFlowDialect, func::FuncDialect,
              gpu::GPUDialect, LLVM::LLVMDialect, math::MathDialect,
              memref::MemRefDialect, NVVM::NVVMDialect, scf::SCFDialect>();
  // gpu-module-to-binary casts #nvvm.target to gpu::TargetAttrInterface;
  // the NVVM dialect alone does not attach that interface.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void blockattn::registerBlockAttnToolDialects(DialectRegistry &registry) {
  registerAllBlockAttnDialects(registry);
}

void blockattn::registerAllBlockAttnPipelines() {
  static std::once_flag once;
  std::call_once(once, [] { registerBlockAttnPipelines(); });
}

void blockattn::registerAllBlockAttnPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerBlockAttnPasses();
    warpspec::registerWarpSpecPasses();
    registerBlockAttnConversionPasses();
    registerConvertNVVMToLLVMPass();
    registerReconcileUnrealizedCastsPass();
    registerGpuModuleToBinaryPass();
  });
  registerAllBlockAttnPipelines();
}

void blockattn::registerBlockAttnToolPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerTransformsPasses();
    registerConversionPasses();
    registerGPUPasses();
  });
  registerAllBlockAttnPasses();
}
