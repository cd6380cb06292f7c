//===- InitAllPasses.h - register every block-attn pass ---------*- C++ -*-===//
//
// One call per kind for tools, plugins and embedding compilers: the project's
// passes and its named pipelines, registered with the global pass registry so
// that a command line or a textual pass pipeline can name them. Every call is
// idempotent: a plugin loaded into an mlir-opt that registered the upstream
// passes already, or a program calling twice, registers nothing twice.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_INITALLPASSES_H
#define BLOCKATTN_INITALLPASSES_H

namespace mlir::blockattn {

/// Registers the project's passes (blockattn-warp-specialize,
/// warpspec-allocate-smem, warpspec-allocate-tmem, convert-warpspec-to-nvvm),
/// the upstream passes blockattn-to-ptx runs after them (convert-nvvm-to-llvm,
/// reconcile-unrealized-casts, gpu-module-to-binary), so that every stage of
/// the pipeline can be spelled out textually, and the pipelines
/// (registerAllBlockAttnPipelines).
void registerAllBlockAttnPasses();

/// Registers the project's named pipelines: blockattn-to-ptx.
void registerAllBlockAttnPipelines();

/// registerAllBlockAttnPasses plus the upstream passes block-attn-opt offers
/// next to them (canonicalize, cse, the conversions to LLVM/NVVM,
/// nvvm-attach-target, ...).
void registerBlockAttnToolPasses();

} // namespace mlir::blockattn

#endif // BLOCKATTN_INITALLPASSES_H
