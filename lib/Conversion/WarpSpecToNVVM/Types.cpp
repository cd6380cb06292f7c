//===- Types.cpp - register tiles: their layout and converted types -------===//
//
// A !warpspec.acc tile lives in registers in the layout of the wgmma
// accumulator, which the sm_100a tcgen05.ld shape 16x256b reproduces, so
// both targets share it (and TileMath.cpp's code); the type converter gives
// an acc value its registers, a rows value its row slots, and a buffer its
// address.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "blockattn/Conversion/WarpSpecToNVVM/WarpSpecToNVVM.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"

using namespace mlir;
using namespace mlir::blockattn;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

namespace {

/// The wgmma m64nNk16 f32 accumulator fragment (PTX ISA, "Register Fragments:
/// wgmma .m64nNk16", matrix D; CuTe CLayout_64xN): thread t = 32 w + l holds
/// register i at row 16 w + l / 4 + 8 ((i / 2) % 2), column
/// 8 (i / 4) + 2 (l % 4) + i % 2. A row is spread over the 4 lanes of a quad.
class WgmmaAccumulatorLayout : public FragmentLayout {
public:
  explicit WgmmaAccumulatorLayout(int64_t cols) : cols(cols) {}
  int64_t numRegs() const override { return cols / 2; }
  static constexpr int64_t kRowSlots = 2;
  int64_t numRowSlots() const override { return kRowSlots; }
  int64_t rowSlot(int64_t reg) const override { return (reg / 2) % 2; }
  int64_t colOffset(int64_t reg) const override {
    return 8 * (reg / 4) + reg % 2;
  }
  Value rowBase(KernelBuilder &e) const override {
    Value warpInGroup =
        LLVM::LShrOp::create(e.b, e.loc, e.threadInReplica(), e.i32(5));
    Value quad = LLVM::LShrOp::create(e.b, e.loc, e.lane(), e.i32(2));
    return e.add(e.mul(warpInGroup, e.i32(16)), quad);
  }
  int64_t rowOffset(int64_t slot) const override { return 8 * slot; }
  Value colBase(KernelBuilder &e) const override {
    return e.mul(e.andi(e.lane(), e.i32(3)), e.i32(2));
  }
  int64_t colBaseBound() const override { return 7; }
  ArrayRef<int32_t> rowReductionMasks() const override { return masks; }

private:
  int64_t cols;
  static constexpr int32_t masks[] = {1, 2};
};

} // namespace

std::shared_ptr<FragmentLayout>
mlir::blockattn::lowering::accumulatorLayout(AccType type) {
  return std::make_shared<WgmmaAccumulatorLayout>(type.getShape()[1]);
}

std::shared_ptr<FragmentLayout>
mlir::blockattn::lowering::rowsLayout(RowsType type) {
  return accumulatorLayout(AccType::get(type.getContext(),
                                        {type.getNumRows(), type.getNumRows()},
                                        type.getElementType()));
}

Value FragmentLayout::rowIndex(KernelBuilder &e, int64_t slot) const {
  return e.add(rowBase(e), e.i32(rowOffset(slot)));
}

void mlir::blockattn::populateWarpSpecToNVVMTypeConversions(
    LLVMTypeConverter &converter) {
  MLIRContext *ctx = &converter.getContext();
  // Registers per thread of a warpgroup tile (the accumulator layout's):
  // f32, or i32 pairs of 16-bit elements.
  converter.addConversion(
      [ctx](AccType type,
            SmallVectorImpl<Type> &results) -> std::optional<LogicalResult> {
        int64_t regs = accumulatorLayout(type)->numRegs();
        if (type.getElementType().isF32())
          results.append(regs, Float32Type::get(ctx));
        else
          results.append(regs / 2, IntegerType::get(ctx, 32));
        return success();
      });
  // One value per row slot of the thread (a thread holds the same rows of
  // every tile of the layout, whatever its width).
  converter.addConversion([](RowsType type, SmallVectorImpl<Type> &results)
                              -> std::optional<LogicalResult> {
    results.append(WgmmaAccumulatorLayout::kRowSlots, type.getElementType());
    return success();
  });
  converter.addConversion([ctx](BufferType type) -> Type {
    if (type.getMemorySpace() == MemorySpace::tmem)
      return IntegerType::get(ctx, 32);
    return LLVM::LLVMPointerType::get(ctx, 3);
  });
  // A trace lane: its base pointer (global) and its record counter (a
  // per-thread variable).
  converter.addConversion(
      [ctx](TraceType,
            SmallVectorImpl<Type> &results) -> std::optional<LogicalResult> {
        results.push_back(LLVM::LLVMPointerType::get(ctx, 1));
        results.push_back(LLVM::LLVMPointerType::get(ctx));
        return success();
      });
  converter.addConversion([](ChannelType type) { return type; });
  converter.addConversion([](MemRefType type) { return type; });
}
