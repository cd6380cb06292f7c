//===- KernelBuilder.cpp - what a pattern knows of its kernel -------------===//

#include "KernelBuilder.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

ArgParams ArgParams::of(Value memref) {
  ArgParams params;
  auto binding = memref.getDefiningOp<UnrealizedConversionCastOp>();
  auto roles = binding ? binding->getAttrOfType<DenseI64ArrayAttr>(kRoles)
                       : DenseI64ArrayAttr();
  if (!roles)
    return params;
  int64_t rank = cast<MemRefType>(memref.getType()).getRank();
  params.sizes.resize(rank);
  params.strides.resize(rank);
  for (auto [index, input] : llvm::enumerate(binding.getInputs())) {
    int64_t dim = roles[2 * index + 1];
    switch (static_cast<ParamRole>(roles[2 * index])) {
    case ParamRole::TensorMap:
      params.tensorMap = input;
      break;
    case ParamRole::Pointer:
      params.pointer = input;
      break;
    case ParamRole::Size:
      params.sizes[dim] = input;
      break;
    case ParamRole::Stride:
      params.strides[dim] = input;
      break;
    }
  }
  return params;
}

Value mlir::blockattn::lowering::argSize(Value memref, int64_t dim) {
  ArgParams params = ArgParams::of(memref);
  if (dim < 0 || dim >= static_cast<int64_t>(params.sizes.size()))
    return Value();
  return params.sizes[dim];
}

Value mlir::blockattn::lowering::rowCount(NVVMBuilder &e, Value memref) {
  ArgParams params = ArgParams::of(memref);
  if (!params.sizes.empty() && params.sizes[0])
    return params.sizes[0];
  auto type = cast<MemRefType>(memref.getType());
  return type.isDynamicDim(0) ? Value() : e.i32(type.getDimSize(0));
}

Value mlir::blockattn::lowering::positionAddress(NVVMBuilder &e,
                                                 Value positions,
                                                 Value numPositions, Value row,
                                                 Value r) {
  Value token = e.add(row, r);
  token =
      LLVM::UMinOp::create(e.b, e.loc, token, e.sub(numPositions, e.i32(1)));
  return LLVM::GEPOp::create(e.b, e.loc, e.globalPtrT(), e.i32T(), positions,
                             ValueRange{token});
}

KernelFrame KernelFrame::of(KernelOp kernel) {
  KernelFrame frame;
  for (auto marker :
       kernel.getBody().front().getOps<UnrealizedConversionCastOp>()) {
    if (!marker->hasAttr(kMarker))
      continue;
    ValueRange values = marker.getInputs();
    frame.tid = values[0];
    frame.warp = values[1];
    frame.lane = values[2];
    frame.smemBase = values[3];
    frame.metaBase = values[4];
    if (values.size() > 5)
      frame.tmemBase = values[5];
    frame.metaStart = marker->getAttrOfType<IntegerAttr>(kMetaStart).getInt();
    break;
  }
  return frame;
}

static KernelOp kernelOf(Operation *op) {
  if (auto kernel = dyn_cast<KernelOp>(op))
    return kernel;
  return op->getParentOfType<KernelOp>();
}

KernelBuilder::KernelBuilder(OpBuilder &b, Operation *op)
    : NVVMBuilder(b, kernelOf(op).getLoc()), kernel(kernelOf(op)),
      partition(isa<PartitionOp>(op) ? cast<PartitionOp>(op)
                                     : op->getParentOfType<PartitionOp>()),
      frame(KernelFrame::of(kernel)) {}

/// A shared-memory base, pinned at this use in a partition that asks
/// (warpspec.partition `pinned_bases`).
static Value baseAtUse(KernelBuilder &e, Value base) {
  if (e.partition && e.partition.getPinnedBases())
    return pinSharedPointer(e, base);
  return base;
}

Value KernelBuilder::smem(Value byteOffset) {
  return LLVM::GEPOp::create(b, loc, smemPtrT(), b.getI8Type(),
                             baseAtUse(*this, frame.smemBase),
                             ValueRange{byteOffset});
}

Value KernelBuilder::meta(Value byteOffset) {
  return LLVM::GEPOp::create(b, loc, smemPtrT(), b.getI8Type(),
                             baseAtUse(*this, frame.metaBase),
                             ValueRange{sub(byteOffset, i32(frame.metaStart))});
}

Value KernelBuilder::variable(Type t) {
  auto func = kernel->getParentOfType<LLVM::LLVMFuncOp>();
  return NVVMBuilder::variable(&func.getBody().front(), t);
}

PartitionIndexOp KernelBuilder::partitionIndex() {
  auto ops = partition.getBody().front().getOps<PartitionIndexOp>();
  return ops.empty() ? PartitionIndexOp() : *ops.begin();
}

void KernelBuilder::replicaBarrier() {
  Value id = add(i32(*partition.getBarrierBase()), replica());
  NVVM::BarrierOp::create(b, loc, Type(), id, i32(replicaThreads()), nullptr,
                          nullptr);
}

SmallVector<Value> KernelBuilder::pinRegisters(ArrayRef<Value> values) {
  if (values.empty())
    return {};
  std::string constraints;
  SmallVector<Type> types;
  for (Value v : values) {
    constraints += v.getType().isF32() ? "=f," : "=r,";
    types.push_back(v.getType());
  }
  for (size_t i = 0; i < values.size(); ++i)
    constraints += std::to_string(i) + (i + 1 < values.size() ? "," : "");
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, LLVM::LLVMStructType::getLiteral(ctx, types), values, "",
      constraints, /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  SmallVector<Value> pinned;
  for (size_t i = 0; i < values.size(); ++i)
    pinned.push_back(LLVM::ExtractValueOp::create(
        b, loc, asmOp.getResult(0), ArrayRef<int64_t>{int64_t(i)}));
  return pinned;
}

bool KernelBuilder::inSingleThread(Operation *op) {
  return op->getParentOfType<SingleThreadOp>() != nullptr;
}
