//===- InitAllPasses.h - register every block-attn pass ---------*- C++ -*-===//
//
// One call for tools and embedding compilers: registers the project's passes
// and named pipelines with the global pass registry, so that they can be
// named on a command line or in a textual pass pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_INITALLPASSES_H
#define BLOCKATTN_INITALLPASSES_H

namespace mlir::blockattn {

/// Registers the project's passes and pipelines.
void registerAllBlockAttnPasses();

/// Registers the project's passes plus the upstream ones `block-attn-opt`
/// offers next to them (canonicalize, cse, the conversions to LLVM/NVVM,
/// nvvm-attach-target, gpu-module-to-binary, ...).
void registerBlockAttnToolPasses();

} // namespace mlir::blockattn

#endif // BLOCKATTN_INITALLPASSES_H
