//===- NVVMBuilder.cpp - stateless helpers to build LLVM/NVVM ops ---------===//

#include "NVVMBuilder.h"

#include "blockattn/Conversion/WarpSpecToNVVM/Descriptors.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::blockattn::lowering;

Value NVVMBuilder::i32(int64_t v) {
  return LLVM::ConstantOp::create(b, loc, i32T(), b.getI32IntegerAttr(v));
}
Value NVVMBuilder::i64(int64_t v) {
  return LLVM::ConstantOp::create(b, loc, i64T(), b.getI64IntegerAttr(v));
}
Value NVVMBuilder::f32(double v) {
  return LLVM::ConstantOp::create(b, loc, f32T(), b.getF32FloatAttr(v));
}
Value NVVMBuilder::add(Value a, Value c) {
  return LLVM::AddOp::create(b, loc, a, c);
}
Value NVVMBuilder::sub(Value a, Value c) {
  return LLVM::SubOp::create(b, loc, a, c);
}
Value NVVMBuilder::mul(Value a, Value c) {
  return LLVM::MulOp::create(b, loc, a, c);
}
Value NVVMBuilder::udiv(Value a, Value c) {
  return LLVM::UDivOp::create(b, loc, a, c);
}
Value NVVMBuilder::urem(Value a, Value c) {
  return LLVM::URemOp::create(b, loc, a, c);
}
Value NVVMBuilder::andi(Value a, Value c) {
  return LLVM::AndOp::create(b, loc, a, c);
}
Value NVVMBuilder::cmp(LLVM::ICmpPredicate p, Value a, Value c) {
  return LLVM::ICmpOp::create(b, loc, p, a, c);
}
Value NVVMBuilder::select(Value c, Value t, Value f) {
  return LLVM::SelectOp::create(b, loc, c, t, f);
}
Value NVVMBuilder::zext64(Value v) {
  return LLVM::ZExtOp::create(b, loc, i64T(), v);
}
Value NVVMBuilder::trunc32(Value v) {
  return LLVM::TruncOp::create(b, loc, i32T(), v);
}
Value NVVMBuilder::asI32(Value v) {
  return v.getType().isInteger(64) ? trunc32(v) : v;
}
Value NVVMBuilder::load(Type t, Value ptr, unsigned alignment) {
  return LLVM::LoadOp::create(b, loc, t, ptr, alignment);
}
void NVVMBuilder::store(Value v, Value ptr, unsigned alignment) {
  LLVM::StoreOp::create(b, loc, v, ptr, alignment);
}

Value NVVMBuilder::variable(Block *entry, Type t) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  Value one = LLVM::ConstantOp::create(b, loc, i32T(), b.getI32IntegerAttr(1));
  return LLVM::AllocaOp::create(b, loc, LLVM::LLVMPointerType::get(ctx), t, one,
                                /*alignment=*/8);
}

Value NVVMBuilder::smemAddress(Value ptr) {
  return LLVM::PtrToIntOp::create(b, loc, i32T(), ptr);
}

Value NVVMBuilder::smemDescriptor(uint64_t fixedBits, Value start,
                                  uint64_t offset) {
  Value address = zext64(add(start, i32(offset)));
  Value field =
      andi(LLVM::LShrOp::create(b, loc, address, i64(4)), i64(0x3FFF));
  return LLVM::OrOp::create(b, loc, field,
                            i64(static_cast<int64_t>(fixedBits)));
}

SmallVector<TmaBox> NVVMBuilder::tmaBoxes(Value row, Value head, int64_t rows,
                                          int64_t cols, int64_t chunk) {
  nvdesc::SwizzledTile tile{rows, cols, chunk};
  SmallVector<TmaBox> boxes;
  for (int64_t chunk = 0; chunk < cols / tile.chunkCols(); ++chunk)
    boxes.push_back({tile.chunkBytes() * chunk,
                     {i32(chunk * tile.chunkCols()), head, row}});
  return boxes;
}

Value NVVMBuilder::swizzlePhase(int64_t chunkCols, Value row) {
  nvdesc::SwizzledTile tile{/*rows=*/0, chunkCols};
  Value rowsIn = row;
  if (int64_t shift = llvm::Log2_64(tile.rowsPerPhase()))
    rowsIn = LLVM::LShrOp::create(b, loc, row, i32(shift));
  return andi(rowsIn, i32(tile.phases() - 1));
}

Value NVVMBuilder::shuffleXor(Value v, int32_t mask) {
  return NVVM::ShflOp::create(b, loc, v.getType(), i32(-1), v, i32(mask),
                              i32(0x1f), NVVM::ShflKind::bfly, UnitAttr());
}

/// cvt.rn.{bf16,f16}x2.f32 takes the high half first; LLVM orders the vector
/// elements for us.
Value NVVMBuilder::packPair(Type elementType, Value lo, Value hi) {
  auto pairF32 = VectorType::get({2}, f32T());
  Value v = LLVM::UndefOp::create(b, loc, pairF32);
  v = LLVM::InsertElementOp::create(b, loc, v, lo, i32(0));
  v = LLVM::InsertElementOp::create(b, loc, v, hi, i32(1));
  Value narrow =
      LLVM::FPTruncOp::create(b, loc, VectorType::get({2}, elementType), v);
  return LLVM::BitcastOp::create(b, loc, i32T(), narrow);
}

void NVVMBuilder::waitBarrier(Value barrier, Value parity) {
  // The suspend-time hint lets the hardware park the thread instead of
  // spinning (CUTLASS uses the same value).
  NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier, parity, i32(0x989680));
}

void NVVMBuilder::tcgen05Fence(bool after) {
  NVVM::Tcgen05FenceOp::create(
      b, loc,
      after ? NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC
            : NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
}

void NVVMBuilder::asyncProxyFence() {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
}

void NVVMBuilder::emitIf(Value cond, function_ref<void()> thenFn) {
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  thenFn();
}

void NVVMBuilder::emitIfElse(Value cond, function_ref<void()> thenFn,
                             function_ref<void()> elseFn) {
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  thenFn();
  b.setInsertionPointToStart(ifOp.elseBlock());
  elseFn();
}

ValueRange NVVMBuilder::emitWhile(
    function_ref<std::pair<Value, SmallVector<Value>>()> cond,
    function_ref<void(ValueRange)> body, TypeRange forwarded) {
  auto whileOp = scf::WhileOp::create(b, loc, forwarded, ValueRange{});
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&whileOp.getBefore());
  b.setInsertionPointToEnd(before);
  auto [condition, values] = cond();
  scf::ConditionOp::create(b, loc, condition, values);
  SmallVector<Location> locs(forwarded.size(), loc);
  Block *after = b.createBlock(&whileOp.getAfter(), {}, forwarded, locs);
  b.setInsertionPointToEnd(after);
  body(after->getArguments());
  scf::YieldOp::create(b, loc);
  return whileOp.getResults();
}
