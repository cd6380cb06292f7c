//===- Passes.cpp - C API for the block-attn passes -----------------------===//

#include "blockattn-c/Passes.h"

#include "blockattn/InitAllPasses.h"
#include "blockattn/Pipelines/Pipelines.h"

#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"
#include "mlir/CAPI/Utils.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

void mlirRegisterAllBlockAttnPasses(void) {
  blockattn::registerAllBlockAttnPasses();
}

void mlirRegisterAllBlockAttnPipelines(void) {
  blockattn::registerAllBlockAttnPipelines();
}

MlirLogicalResult mlirBlockAttnBuildBlockAttnToPtxPipeline(
    MlirOpPassManager passManager, MlirStringRef options,
    MlirStringCallback errorCallback, void *userData) {
  blockattn::BlockAttnToPtxOptions pipeline;
  std::string message;
  llvm::raw_string_ostream errorStream(message);
  LogicalResult result = pipeline.parseFromString(unwrap(options), errorStream);
  if (succeeded(result))
    result = blockattn::buildBlockAttnToPtxPipeline(*unwrap(passManager),
                                                    pipeline, errorStream);
  if (failed(result) && errorCallback)
    errorCallback(wrap(StringRef(message).rtrim()), userData);
  return wrap(result);
}
