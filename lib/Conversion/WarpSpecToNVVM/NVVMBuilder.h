//===- NVVMBuilder.h - stateless helpers to build LLVM/NVVM ops -*- C++ -*-===//
//
// Short names for the LLVM and NVVM ops every part of the lowering builds
// (constants, integer arithmetic, shared-memory pointers, descriptors,
// structured control flow). An NVVMBuilder is a builder and a location and
// nothing else: it is built where an op is lowered and forgotten after.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_LIB_CONVERSION_WARPSPECTONVVM_NVVMBUILDER_H
#define BLOCKATTN_LIB_CONVERSION_WARPSPECTONVVM_NVVMBUILDER_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

#include <array>
#include <optional>

namespace mlir::blockattn::lowering {

/// One bulk tensor copy of a tile: one swizzled chunk (64 columns with the
/// 128-byte swizzle, or 32 with the 64-byte one: nvdesc::SwizzledTile),
/// at byte `smemOffset` of the tile in shared memory and at coordinates
/// {column, head, row} of the [T, H, D] tensor map.
struct TmaBox {
  int64_t smemOffset;
  std::array<Value, 3> coords;
};

struct NVVMBuilder {
  NVVMBuilder(OpBuilder &b, Location loc)
      : b(b), loc(loc), ctx(b.getContext()) {}

  OpBuilder &b;
  Location loc;
  MLIRContext *ctx;

  Type i1T() { return b.getI1Type(); }
  Type i32T() { return b.getI32Type(); }
  Type i64T() { return b.getI64Type(); }
  Type f32T() { return b.getF32Type(); }
  Type smemPtrT() { return LLVM::LLVMPointerType::get(ctx, 3); }
  Type globalPtrT() { return LLVM::LLVMPointerType::get(ctx, 1); }

  Value i32(int64_t v);
  Value i64(int64_t v);
  Value f32(double v);
  Value add(Value a, Value c);
  Value sub(Value a, Value c);
  Value mul(Value a, Value c);
  Value udiv(Value a, Value c);
  Value urem(Value a, Value c);
  Value andi(Value a, Value c);
  Value cmp(LLVM::ICmpPredicate p, Value a, Value c);
  Value select(Value c, Value t, Value f);
  Value zext64(Value v);
  Value trunc32(Value v);
  /// `v` as i32 (an index scalar, lowered to i64, is truncated).
  Value asI32(Value v);
  Value load(Type t, Value ptr, unsigned alignment = 0);
  void store(Value v, Value ptr, unsigned alignment = 0);
  /// A per-thread mutable variable: an alloca at the start of `entry` (the
  /// kernel's entry block), which SROA turns into registers.
  Value variable(Block *entry, Type t);

  /// Shared-window address (i32) of a shared pointer, for descriptors.
  Value smemAddress(Value ptr);
  /// A shared-memory matrix descriptor (wgmma and tcgen05 share the layout of
  /// its low bits): the address-independent `fixedBits` | ((start + offset)
  /// >> 4) & 0x3FFF.
  Value smemDescriptor(uint64_t fixedBits, Value start, uint64_t offset);
  /// The bulk tensor copies of a `rows` x `cols` tile whose first row is
  /// `row` of head `head` (TMA loads, their L2 prefetches, bulk stores),
  /// in chunks of `chunk` columns (0: the width's own, nvdesc::SwizzledTile).
  SmallVector<TmaBox> tmaBoxes(Value row, Value head, int64_t rows,
                               int64_t cols, int64_t chunk = 0);
  /// The swizzle phase of run-time row `row` of a tile of `chunkCols`-column
  /// chunks (nvdesc::SwizzledTile::phase): row % 8 (128-byte swizzle),
  /// (row / 2) % 4 (64-byte) or (row / 4) % 2 (32-byte).
  Value swizzlePhase(int64_t chunkCols, Value row);
  /// Butterfly shuffle of `v` with the lane `lane ^ mask`.
  Value shuffleXor(Value v, int32_t mask);
  /// Packs two f32 values into one i32 of two 16-bit floats, `lo` in the low
  /// half.
  Value packPair(Type elementType, Value lo, Value hi);
  void waitBarrier(Value barrier, Value parity);
  void tcgen05Fence(bool after);
  /// fence.proxy.async.shared::cta: generic-proxy writes to shared memory
  /// become visible to the async proxy (TMA, tensor cores).
  void asyncProxyFence();

  /// Structured control flow (converted to branches at the end of the pass).
  void emitIf(Value cond, function_ref<void()> thenFn);
  void emitIfElse(Value cond, function_ref<void()> thenFn,
                  function_ref<void()> elseFn);
  /// while (cond()) body(); `cond` may forward values to `body`, which are
  /// also the loop's results (their values when `cond` failed).
  ValueRange
  emitWhile(function_ref<std::pair<Value, SmallVector<Value>>()> cond,
            function_ref<void(ValueRange)> body, TypeRange forwarded = {});
};

} // namespace mlir::blockattn::lowering

#endif // BLOCKATTN_LIB_CONVERSION_WARPSPECTONVVM_NVVMBUILDER_H
