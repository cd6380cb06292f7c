//===- InitAllDialects.h - register every block-attn dialect ----*- C++ -*-===//
//
// One call for tools and embedding compilers: registers the blockattn and
// warpspec dialects (and the upstream dialects their passes create) into a
// registry.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_INITALLDIALECTS_H
#define BLOCKATTN_INITALLDIALECTS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::blockattn {

/// Registers the project's dialects.
void registerAllBlockAttnDialects(DialectRegistry &registry);

/// Registers the project's dialects plus the upstream dialects, interfaces
/// and translations that `block-attn-opt` offers next to them: func, arith,
/// math, memref, scf, cf, gpu, nvvm, llvm (and their LLVM IR translations and
/// the NVVM target, which `gpu-module-to-binary` needs).
void registerBlockAttnToolDialects(DialectRegistry &registry);

} // namespace mlir::blockattn

#endif // BLOCKATTN_INITALLDIALECTS_H
