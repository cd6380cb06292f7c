/*===-- blockattn-c/Compiler.h - C API for the compile call -------*- C -*-===*\
|*                                                                            *|
|* mlir::blockattn::compileKernels for C: a module of blockattn kernels in,   *|
|* each kernel's PTX, cubin and launch manifest (JSON) out. Errors are        *|
|* diagnostics on the module's context (mlirContextAttachDiagnosticHandler).  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef BLOCKATTN_C_COMPILER_H
#define BLOCKATTN_C_COMPILER_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels of one compile call; owned by the caller, who destroys it
 * with mlirBlockAttnCompileResultDestroy. */
typedef struct MlirBlockAttnCompileResult {
  void *ptr;
} MlirBlockAttnCompileResult;

/* Compiles every kernel function of `module` (which the pipeline rewrites).
 * `pipelineOptions` are blockattn-to-ptx's ("chip=sm_90a num-stages=2";
 * format is ignored); with `cubin` each kernel is also assembled by ptxas
 * (`ptxas` names it; empty: PATH, then /usr/local/cuda/bin). A null result
 * (mlirBlockAttnCompileResultIsNull) means failure, after diagnostics. */
MLIR_CAPI_EXPORTED MlirBlockAttnCompileResult
mlirBlockAttnCompile(MlirModule module, MlirStringRef pipelineOptions,
                     bool cubin, MlirStringRef ptxas);

static inline bool
mlirBlockAttnCompileResultIsNull(MlirBlockAttnCompileResult result) {
  return !result.ptr;
}

MLIR_CAPI_EXPORTED void
mlirBlockAttnCompileResultDestroy(MlirBlockAttnCompileResult result);

/* The number of kernels, in the module's order. */
MLIR_CAPI_EXPORTED intptr_t
mlirBlockAttnCompileResultGetNumKernels(MlirBlockAttnCompileResult result);

/* Kernel `pos`'s symbol, PTX text, cubin bytes (empty without `cubin`) and
 * manifest (JSON, as block-attn-compile writes <kernel>.json). The strings
 * live as long as the result. */
MLIR_CAPI_EXPORTED MlirStringRef mlirBlockAttnCompileResultGetKernelName(
    MlirBlockAttnCompileResult result, intptr_t pos);
MLIR_CAPI_EXPORTED MlirStringRef mlirBlockAttnCompileResultGetPtx(
    MlirBlockAttnCompileResult result, intptr_t pos);
MLIR_CAPI_EXPORTED MlirStringRef mlirBlockAttnCompileResultGetCubin(
    MlirBlockAttnCompileResult result, intptr_t pos);
MLIR_CAPI_EXPORTED MlirStringRef mlirBlockAttnCompileResultGetManifest(
    MlirBlockAttnCompileResult result, intptr_t pos);

#ifdef __cplusplus
}
#endif

#endif /* BLOCKATTN_C_COMPILER_H */
