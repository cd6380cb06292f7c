//===- Prologue.h - the steps before and after the patterns -----*- C++ -*-===//
//
// What convert-warpspec-to-nvvm does around its dialect conversion (see
// KernelBuilder.h): the kernel's parameters and manifest (Abi.cpp), the
// prologue that moves the kernel into its llvm.func, and the lowering of the
// shells the patterns leave (Prologue.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_LIB_CONVERSION_WARPSPECTONVVM_PROLOGUE_H
#define BLOCKATTN_LIB_CONVERSION_WARPSPECTONVVM_PROLOGUE_H

#include "KernelBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::blockattn::lowering {

/// One parameter of the kernel, in launch order.
struct KernelParam {
  enum class Kind { TensorMap, Pointer, I32, I64, F32 };
  Kind kind;
  std::string name;   // e.g. "q_tmap", "o", "o_stride0"
  std::string tensor; // the function argument it comes from, e.g. "o"
  std::string value;  // what the runtime passes: "tensormap", "base",
                      // "stride", "size", "scalar"
  int64_t dim = -1;   // for "stride" and "size"
  /// Tensor maps: box (innermost first) and element type.
  SmallVector<int64_t> box;
  Type elementType;
  /// The function argument this parameter is derived from.
  Value source;
};

/// Decides the parameter list of a kernel from how the kernel uses the
/// enclosing function's arguments (Abi.cpp).
FailureOr<SmallVector<KernelParam>>
buildKernelParams(func::FuncOp func, warpspec::KernelOp kernel);

/// The `blockattn.manifest` attribute: everything a runtime needs to launch
/// (Abi.cpp).
DictionaryAttr buildManifest(OpBuilder &b, func::FuncOp func,
                             warpspec::KernelOp kernel,
                             ArrayRef<KernelParam> params, int64_t threads,
                             int64_t maxRegisters);

/// The symbol of the kernel's dynamic shared memory.
StringRef dynamicSmemSymbol();

/// The pre-step: fills `llvmFunc`'s entry block with the prologue and moves
/// `kernel` into it, its uses of `func`'s arguments bound to `params`.
void buildPrologue(func::FuncOp func, warpspec::KernelOp kernel,
                   LLVM::LLVMFuncOp llvmFunc, ArrayRef<KernelParam> params);

/// The post-step: once the patterns lowered every op inside `kernel`, its
/// partitions become scf.if on the warp index (partition_index their
/// replica and thread arithmetic) and the kernel's body takes its place.
void lowerShells(warpspec::KernelOp kernel);

} // namespace mlir::blockattn::lowering

#endif // BLOCKATTN_LIB_CONVERSION_WARPSPECTONVVM_PROLOGUE_H
