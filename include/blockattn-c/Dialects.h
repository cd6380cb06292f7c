/*===-- blockattn-c/Dialects.h - C API for the block-attn dialects -*- C
-*-===*\
|*                                                                            *|
|* The blockattn and warpspec dialects for C (and so Python ctypes, Rust,     *|
|* ...) in upstream MLIR's style: a dialect handle per dialect, and one call  *|
|* that registers everything the pipeline needs.                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef BLOCKATTN_C_DIALECTS_H
#define BLOCKATTN_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mlirGetDialectHandle__blockattn__ and mlirGetDialectHandle__warpspec__:
 * the dialect alone, as upstream's dialect handles are. */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(BlockAttn, blockattn);
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(WarpSpec, warpspec);

/* Registers into `registry` what mlir::blockattn::registerAllBlockAttnDialects
 * registers: both dialects, the upstream dialects the pipeline creates, the
 * NVVM target interface and the LLVM IR translations. */
MLIR_CAPI_EXPORTED void
mlirRegisterAllBlockAttnDialects(MlirDialectRegistry registry);

#ifdef __cplusplus
}
#endif

#endif /* BLOCKATTN_C_DIALECTS_H */
