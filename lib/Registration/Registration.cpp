//===- Registration.cpp - register dialects and passes --------------------===//

#include "blockattn/InitAllDialects.h"
#include "blockattn/InitAllPasses.h"

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnDialect.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecDialect.h"
#include "blockattn/Conversion/Passes.h"
#include "blockattn/Dialect/BlockAttn/Transforms/Passes.h"
#include "blockattn/Pipelines/Pipelines.h"
#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h"

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

using namespace mlir;

void blockattn::registerAllBlockAttnDialects(DialectRegistry &registry) {
  registry.insert<blockattn::BlockAttnDialect, warpspec::WarpSpecDialect>();
}

void blockattn::registerBlockAttnToolDialects(DialectRegistry &registry) {
  registerAllBlockAttnDialects(registry);
  registry.insert<arith::ArithDialect, cf::ControlFlowDialect,
                  func::FuncDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                  math::MathDialect, memref::MemRefDialect, NVVM::NVVMDialect,
                  scf::SCFDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void blockattn::registerAllBlockAttnPasses() {
  registerBlockAttnPasses();
  warpspec::registerWarpSpecPasses();
  registerBlockAttnConversionPasses();
  registerBlockAttnPipelines();
}

void blockattn::registerBlockAttnToolPasses() {
  registerAllBlockAttnPasses();
  registerTransformsPasses();
  registerConversionPasses();
  registerGPUPasses();
}
