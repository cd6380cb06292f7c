//===- Pipelines.cpp - the blockattn-to-ptx pipeline ----------------------===//

#include "blockattn/Pipelines/Pipelines.h"

#include "blockattn/Conversion/Passes.h"
#include "blockattn/Conversion/WarpSpecToNVVM/PtxFeatures.h"
#include "blockattn/Dialect/BlockAttn/Transforms/Passes.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"
#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h"

#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::blockattn;

LogicalResult
blockattn::verifyBlockAttnToPtxOptions(const BlockAttnToPtxOptions &options,
                                       raw_ostream &errorStream) {
  StringRef format = options.format;
  if (!llvm::is_contained({"isa", "assembly", "bin", "binary", "fatbin",
                           "fatbinary", "llvm", "offloading", "none"},
                          format)) {
    errorStream << "blockattn-to-ptx: format must be 'isa', 'bin', "
                   "'fatbin', 'llvm' or 'none', got '"
                << format << "'\n";
    return failure();
  }
  if (std::optional<std::string> problem =
          checkPtxFeatures(options.ptxFeatures, stringifyChip(options.chip))) {
    errorStream << "blockattn-to-ptx: " << *problem << "\n";
    return failure();
  }
  if (options.traceRecords != 0 &&
      !warpspec::TraceLayout::isValidRecordsPerLane(options.traceRecords)) {
    errorStream << "blockattn-to-ptx: trace-records must be 0 (no trace) or "
                   "a power of two from "
                << warpspec::TraceLayout::minRecordsPerLane << " to "
                << warpspec::TraceLayout::maxRecordsPerLane << ", got "
                << options.traceRecords << "\n";
    return failure();
  }
  return success();
}

LogicalResult
blockattn::buildBlockAttnToPtxPipeline(OpPassManager &pm,
                                       const BlockAttnToPtxOptions &options,
                                       raw_ostream &errorStream) {
  if (failed(verifyBlockAttnToPtxOptions(options, errorStream)))
    return failure();
  BlockAttnWarpSpecializePassOptions specialize;
#define BLOCKATTN_PASS_OPTION(TYPE, NAME, ...) specialize.NAME = options.NAME;
#define GEN_PASS_OPTION_LIST_BLOCKATTNWARPSPECIALIZEPASS
#include "blockattn/Dialect/BlockAttn/Transforms/PassOptionList.h.inc"
  pm.addNestedPass<func::FuncOp>(createBlockAttnWarpSpecializePass(specialize));
  pm.addPass(warpspec::createWarpSpecAllocateTmemPass());
  pm.addPass(warpspec::createWarpSpecAllocateSmemPass());
  pm.addPass(warpspec::createWarpSpecLowerProtocolPass());
  pm.addPass(warpspec::createWarpSpecDispatchPartitionsPass());
  // Only a traced build runs the pass: an untraced kernel is unchanged.
  if (options.traceRecords > 0) {
    warpspec::WarpSpecInsertTracePassOptions trace;
    trace.records = options.traceRecords;
    pm.addPass(warpspec::createWarpSpecInsertTracePass(trace));
  }
  ConvertWarpSpecToNVVMPassOptions convert;
  convert.chip = stringifyChip(options.chip).str();
  convert.features = options.ptxFeatures;
  pm.addPass(createConvertWarpSpecToNVVMPass(convert));
  // NVVM ops without an LLVM intrinsic (the parity wait loop, wgmma) become
  // inline PTX here; they must be gone before translation to LLVM IR.
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (options.format == "none")
    return success();
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  return success();
}

void blockattn::registerBlockAttnPipelines() {
  // PassPipelineRegistration<Options> would drop the builder's result; a
  // pipeline with bad options must fail to parse instead.
  registerPassPipeline(
      "blockattn-to-ptx",
      "Compile blockattn kernels to PTX (or cubin) for sm_90a or sm_100a",
      [](OpPassManager &pm, StringRef optionsString,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        BlockAttnToPtxOptions options;
        std::string message;
        llvm::raw_string_ostream errorStream(message);
        if (failed(options.parseFromString(optionsString, errorStream)) ||
            failed(buildBlockAttnToPtxPipeline(pm, options, errorStream))) {
          // llvm::cl reports a bad option value on stderr by itself.
          if (message.empty())
            message = "blockattn-to-ptx: invalid options '" +
                      optionsString.str() + "'";
          return errorHandler(StringRef(message).rtrim());
        }
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optionsHandler) {
        optionsHandler(BlockAttnToPtxOptions());
      });
}
