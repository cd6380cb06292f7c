//===- InitAllDialects.h - register every block-attn dialect ----*- C++ -*-===//
//
// One call for tools, plugins and embedding compilers. Upstream's
// `mlir::registerAllDialects` is everything a pipeline can need; the same
// holds here: `registerAllBlockAttnDialects` registers everything the
// blockattn-to-ptx pipeline and the compile API need, so a context built from
// that registry can run them to the end (PTX and cubin). The name carries the
// project so that `using namespace mlir; using namespace mlir::blockattn;`
// leaves both calls unambiguous.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_INITALLDIALECTS_H
#define BLOCKATTN_INITALLDIALECTS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::blockattn {

/// Registers the blockattn and warpspec dialects, the upstream dialects the
/// pipeline's passes create or accept (func, arith, math, memref, scf, cf,
/// gpu, nvvm, llvm), the NVVM target attribute's `gpu::TargetAttrInterface`
/// (without it `gpu-module-to-binary` cannot serialize a kernel) and the
/// translations of builtin, gpu, llvm and nvvm to LLVM IR. Safe to call more
/// than once and next to upstream's `registerAllDialects`.
void registerAllBlockAttnDialects(DialectRegistry &registry);

/// The name block-attn-opt used before everything moved into
/// registerAllBlockAttnDialects; registers the same.
void registerBlockAttnToolDialects(DialectRegistry &registry);

} // namespace mlir::blockattn

#endif // BLOCKATTN_INITALLDIALECTS_H
