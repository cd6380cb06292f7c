//===- KernelSpec.h - the blockattn op a recipe lowers ----------*- C++ -*-===//
//
// The kernel description blockattn-warp-specialize works from: the shape the
// plan reads (KernelShape) and the op's operands the recipes build with.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_BLOCKATTN_TRANSFORMS_KERNELSPEC_H
#define LIB_DIALECT_BLOCKATTN_TRANSFORMS_KERNELSPEC_H

#include "blockattn/Dialect/BlockAttn/Transforms/Plan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::blockattn {

/// Everything the recipes need to know about the op being lowered.
struct KernelSpec : KernelShape {
  Operation *op = nullptr;
  Type elementType;
  Value cuSeqlens;
  Value scale;                // run-time scale, or null
  double constantScale = 0.0; // used when `scale` is null
  /// Rotary operands: tables (or theta), explicit positions.
  Value cos, sin, positions;
  std::optional<float> theta;
  /// The forward's optional log-sum-exp output and the backward's optional
  /// log-sum-exp gradient, f32 [H, T] (or null).
  Value lse, dlse;
  /// Tensors loaded per tile (q, k, v[, do]) and stored per tile (o, or
  /// dv, dk, dq).
  SmallVector<Value> loads;
  SmallVector<Value> stores;

  /// What the manifest calls the kernel's kind.
  StringRef kind() const { return backward ? "backward" : "forward"; }

  /// The name of the ring the loaded tiles travel in: the loaded tensors'
  /// names, "qkv" or "qkvdo".
  StringRef loadRingName() const { return backward ? "qkvdo" : "qkv"; }

  /// The tile position travels with the tile unless positions are explicit.
  bool needsTilePosition() const { return hasRotary() && !positions; }

  /// Blocks smaller than the tile are packed: a tile holds the blocks of
  /// tileRows() / blockSize consecutive virtual numbers, of one or several
  /// sequences (`warpspec.tile_loop ... packed`), and the tile record's
  /// position field carries the blocks' ends instead. Not with rotary
  /// embeddings (their positions are per tile) nor in the grouped-query
  /// backward (its own loop over k/v tiles): those keep one sequence a tile.
  bool packsTiles() const {
    return masksBlocks() && !hasRotary() && !(backward && group > 1);
  }
};

/// Describes the kernel `op` (a blockattn.forward or blockattn.backward)
/// that is the body of `func`: checks that the function is exactly
/// `op; return` and that every operand that becomes a kernel parameter is
/// an argument of it, and names those arguments (`blockattn.name`) for the
/// launch manifest. Emits a diagnostic on `op` and fails otherwise.
FailureOr<KernelSpec> describeKernel(func::FuncOp func, Operation *op);

} // namespace mlir::blockattn

#endif // LIB_DIALECT_BLOCKATTN_TRANSFORMS_KERNELSPEC_H
