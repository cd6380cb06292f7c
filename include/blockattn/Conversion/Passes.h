//===- Passes.h - block-attn conversions ------------------------*- C++ -*-===//

#ifndef BLOCKATTN_CONVERSION_PASSES_H
#define BLOCKATTN_CONVERSION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace LLVM {
class LLVMDialect;
} // namespace LLVM
namespace NVVM {
class NVVMDialect;
} // namespace NVVM
namespace gpu {
class GPUDialect;
} // namespace gpu
namespace scf {
class SCFDialect;
} // namespace scf
namespace cf {
class ControlFlowDialect;
} // namespace cf

namespace blockattn {

#define GEN_PASS_DECL
#include "blockattn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "blockattn/Conversion/Passes.h.inc"

} // namespace blockattn
} // namespace mlir

#endif // BLOCKATTN_CONVERSION_PASSES_H
