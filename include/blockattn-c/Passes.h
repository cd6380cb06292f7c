/*===-- blockattn-c/Passes.h - C API for the block-attn passes ----*- C -*-===*\
|*                                                                            *|
|* Registration of the passes and pipelines with MLIR's global registry (so   *|
|* that mlirParsePassPipeline can name them), and the blockattn-to-ptx        *|
|* pipeline built into a pass manager.                                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef BLOCKATTN_C_PASSES_H
#define BLOCKATTN_C_PASSES_H

#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mlir::blockattn::registerAllBlockAttnPasses: the passes and pipelines. */
MLIR_CAPI_EXPORTED void mlirRegisterAllBlockAttnPasses(void);

/* mlir::blockattn::registerAllBlockAttnPipelines: blockattn-to-ptx. */
MLIR_CAPI_EXPORTED void mlirRegisterAllBlockAttnPipelines(void);

/* Adds blockattn-to-ptx to `passManager` (on a builtin.module). `options`
 * are the pipeline's, as in "chip=sm_100a format=none"; on bad options
 * nothing is added, the reason goes to `errorCallback` (may be NULL) and the
 * result is a failure. */
MLIR_CAPI_EXPORTED MlirLogicalResult mlirBlockAttnBuildBlockAttnToPtxPipeline(
    MlirOpPassManager passManager, MlirStringRef options,
    MlirStringCallback errorCallback, void *userData);

#ifdef __cplusplus
}
#endif

#endif /* BLOCKATTN_C_PASSES_H */
