//===- BlockAttnOps.cpp - blockattn operations ----------------------------===//
//
// Verifiers for blockattn.forward and blockattn.backward. Every illegal
// combination of operands and attributes is reported here, with the operand
// named, so that no later pass has to re-check (or crash on) its input.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::blockattn;

//===----------------------------------------------------------------------===//
// Support
//===----------------------------------------------------------------------===//

bool Support::isSupportedBlockSize(int64_t bs) {
  return llvm::is_contained(blockSizes, bs);
}

bool Support::isSupportedHeadDim(int64_t d) {
  return llvm::is_contained(headDims, d);
}

bool Support::isSupportedElementType(Type t) { return t.isBF16() || t.isF16(); }

//===----------------------------------------------------------------------===//
// Shared verification
//===----------------------------------------------------------------------===//

namespace {

/// A named memref operand, so that diagnostics can say which one is wrong.
struct NamedOperand {
  StringRef name;
  Value value;
};

std::string joinInts(ArrayRef<int64_t> values) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(values, os);
  return s;
}

/// Checks an activation memref ([T, H, head_dim], unit-stride last dim).
LogicalResult verifyActivation(Operation *op, const NamedOperand &operand,
                               int64_t headDim, Type elementType) {
  auto type = dyn_cast<MemRefType>(operand.value.getType());
  if (!type || type.getRank() != 3)
    return op->emitOpError()
           << "operand '" << operand.name
           << "' must be a rank-3 memref [tokens, heads, head_dim], got "
           << operand.value.getType();
  if (type.getElementType() != elementType)
    return op->emitOpError()
           << "operand '" << operand.name << "' has element type "
           << type.getElementType() << ", but element_type is " << elementType;
  if (type.isDynamicDim(2))
    return op->emitOpError() << "operand '" << operand.name
                             << "' must have a static head dimension (" << headDim
                             << ")";
  if (type.getDimSize(2) != headDim)
    return op->emitOpError()
           << "operand '" << operand.name << "' has head dimension "
           << type.getDimSize(2) << ", but head_dim is " << headDim;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides[2] != 1)
    return op->emitOpError() << "operand '" << operand.name
                             << "' must have a unit-stride head_dim dimension";
  return success();
}

/// Formats a shape for a diagnostic as `[?, 4, 128]` (dynamic sizes as `?`).
std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t size) {
    if (ShapedType::isDynamic(size))
      os << '?';
    else
      os << size;
  });
  os << ']';
  return s;
}

/// The static token and head dimensions of all activations must agree
/// (dynamic ones are checked at run time by the API). Each dimension is
/// compared against the first activation that has it static, so that two
/// static sizes that differ are caught even when an operand in between (or
/// the first one) is dynamic.
LogicalResult verifySameShape(Operation *op, ArrayRef<NamedOperand> activations,
                              int64_t firstDim = 0, int64_t endDim = 2) {
  for (int64_t i = firstDim; i < endDim; ++i) {
    const NamedOperand *ref = nullptr;
    for (const NamedOperand &other : activations) {
      auto type = cast<MemRefType>(other.value.getType());
      if (type.isDynamicDim(i))
        continue;
      if (!ref) {
        ref = &other;
        continue;
      }
      auto refType = cast<MemRefType>(ref->value.getType());
      if (refType.getDimSize(i) == type.getDimSize(i))
        continue;
      return op->emitOpError()
             << "operand '" << other.name << "' has shape "
             << formatShape(type.getShape()) << " but '" << ref->name
             << "' has shape " << formatShape(refType.getShape()) << ": "
             << (i == 0 ? "tokens" : "heads") << " differ";
    }
  }
  return success();
}

/// The first static size of dimension `dim` among `activations`, with the
/// operand that has it, or null.
const NamedOperand *firstStatic(ArrayRef<NamedOperand> activations,
                                int64_t dim) {
  for (const NamedOperand &operand : activations)
    if (!cast<MemRefType>(operand.value.getType()).isDynamicDim(dim))
      return &operand;
  return nullptr;
}

/// Grouped-query attention (group > 1): the k/v-side activations (k, v, dk,
/// dv) have Hkv heads and the query side (q, o, do, dq) Hq; each side agrees
/// within itself, and where both counts are static, Hq = group * Hkv.
LogicalResult verifyGroupedHeads(Operation *op,
                                 ArrayRef<NamedOperand> activations,
                                 int64_t group) {
  auto isKvSide = [](const NamedOperand &operand) {
    return llvm::is_contained({"k", "v", "dk", "dv"}, operand.name);
  };
  SmallVector<NamedOperand> query, kv;
  for (const NamedOperand &operand : activations)
    (isKvSide(operand) ? kv : query).push_back(operand);
  if (failed(verifySameShape(op, activations, 0, 1)) ||
      failed(verifySameShape(op, query, 1, 2)) ||
      failed(verifySameShape(op, kv, 1, 2)))
    return failure();
  const NamedOperand *q = firstStatic(query, 1);
  const NamedOperand *k = firstStatic(kv, 1);
  if (!q || !k)
    return success();
  int64_t hq = cast<MemRefType>(q->value.getType()).getDimSize(1);
  int64_t hkv = cast<MemRefType>(k->value.getType()).getDimSize(1);
  if (hkv == 0 || hq % hkv != 0)
    return op->emitOpError() << "operand '" << q->name << "' has " << hq
                             << " heads, which is not a multiple of the " << hkv
                             << " heads of operand '" << k->name << "'";
  if (hq != group * hkv)
    return op->emitOpError()
           << "operand '" << q->name << "' has " << hq << " heads and '"
           << k->name << "' has " << hkv << ": a group of " << hq / hkv
           << ", but group is " << group;
  return success();
}

LogicalResult verifyCuSeqlens(Operation *op, Value cu) {
  auto type = dyn_cast<MemRefType>(cu.getType());
  if (!type || type.getRank() != 1)
    return op->emitOpError()
           << "cu_seqlens must be a rank-1 memref [num_sequences + 1], got "
           << cu.getType();
  if (!type.getElementType().isSignlessInteger(32))
    return op->emitOpError() << "cu_seqlens must have i32 elements, got "
                             << type.getElementType();
  return success();
}

LogicalResult verifyRotaryTable(Operation *op, StringRef name, Value table,
                                int64_t headDim) {
  auto type = dyn_cast<MemRefType>(table.getType());
  bool ok = type && type.getRank() == 2 && type.getElementType().isF32() &&
            type.getDimSize(1) == headDim / 2 && type.getLayout().isIdentity();
  if (!ok)
    return op->emitOpError()
           << "rotary " << name
           << " table must be a contiguous memref<?x" << headDim / 2
           << "xf32> ([max_position, head_dim/2] of f32), got "
           << table.getType();
  return success();
}

/// Everything both kernels share: attributes, cu_seqlens, rotary operands.
template <typename OpTy>
LogicalResult verifyAttentionOp(OpTy op, ArrayRef<NamedOperand> activations) {
  Operation *operation = op.getOperation();
  int64_t blockSize = op.getBlockSize();
  if (!Support::isSupportedBlockSize(blockSize))
    return op.emitOpError() << "unsupported block_size " << blockSize
                            << "; supported block sizes: "
                            << joinInts(Support::blockSizes);
  int64_t headDim = op.getHeadDim();
  if (!Support::isSupportedHeadDim(headDim))
    return op.emitOpError() << "unsupported head_dim " << headDim
                            << "; supported head dims: "
                            << joinInts(Support::headDims);
  Type elementType = op.getElementType();
  if (!Support::isSupportedElementType(elementType))
    return op.emitOpError() << "unsupported element_type " << elementType
                            << "; supported element types: bf16, f16";

  for (const NamedOperand &operand : activations)
    if (failed(verifyActivation(operation, operand, headDim, elementType)))
      return failure();
  int64_t group = op.getGroup();
  if (group < 1)
    return op.emitOpError() << "group must be at least 1, got " << group;
  if (failed(group == 1 ? verifySameShape(operation, activations)
                        : verifyGroupedHeads(operation, activations, group)))
    return failure();
  if (failed(verifyCuSeqlens(operation, op.getCuSeqlens())))
    return failure();

  if (Value scale = op.getScale()) {
    if (!scale.getType().isF32())
      return op.emitOpError() << "scale operand must be f32, got "
                              << scale.getType();
    if (op.getSoftmaxScale())
      return op.emitOpError() << "the softmax_scale attribute and the scale "
                                 "operand are mutually exclusive";
  }
  if (std::optional<APFloat> scale = op.getSoftmaxScale()) {
    double value = scale->convertToDouble();
    if (!std::isfinite(value) || value <= 0.0)
      return op.emitOpError() << "softmax_scale must be finite and positive, got "
                              << value;
  }

  bool hasTables = op.getRotaryCos() != nullptr;
  if (hasTables != (op.getRotarySin() != nullptr))
    return op.emitOpError() << "rotary cos and sin tables must be given together";
  if (!op.hasRotary()) {
    if (hasTables)
      return op.emitOpError()
             << "rotary tables are given but the rotary mode is none";
    if (op.getRotaryTheta())
      return op.emitOpError()
             << "rotary_theta is given but the rotary mode is none";
    if (op.getPositions())
      return op.emitOpError()
             << "positions are given but the rotary mode is none";
    if (op.getRotateV())
      return op.emitOpError() << "rotate_v is set but the rotary mode is none";
    return success();
  }
  if (hasTables && op.getRotaryTheta())
    return op.emitOpError()
           << "rotary tables and rotary_theta are mutually exclusive";
  if (!hasTables && !op.getRotaryTheta())
    return op.emitOpError()
           << "rotary mode " << stringifyRotaryMode(op.getRotary())
           << " needs rotary(%cos, %sin) tables or a rotary_theta";
  if (std::optional<APFloat> theta = op.getRotaryTheta()) {
    double value = theta->convertToDouble();
    if (!std::isfinite(value) || value <= 1.0)
      return op.emitOpError()
             << "rotary_theta must be finite and greater than 1, got " << value;
  }
  if (hasTables) {
    if (failed(verifyRotaryTable(operation, "cos", op.getRotaryCos(), headDim)) ||
        failed(verifyRotaryTable(operation, "sin", op.getRotarySin(), headDim)))
      return failure();
    if (op.getRotaryCos().getType() != op.getRotarySin().getType())
      return op.emitOpError() << "rotary cos and sin tables must have the same "
                                 "type, got "
                              << op.getRotaryCos().getType() << " and "
                              << op.getRotarySin().getType();
  }
  if (Value positions = op.getPositions()) {
    auto type = dyn_cast<MemRefType>(positions.getType());
    if (!type || type.getRank() != 1 ||
        !type.getElementType().isSignlessInteger(32))
      return op.emitOpError()
             << "positions must be a rank-1 memref of i32 [tokens], got "
             << positions.getType();
  }
  return success();
}

/// Checks a per-row statistic (the forward's `lse`, the backward's `dlse`):
/// an f32 memref [H, T] with a unit-stride token dimension, whose static
/// sizes agree with q's [T, H, D].
LogicalResult verifyRowStatistic(Operation *op, StringRef name, Value value,
                                 Value q) {
  auto type = dyn_cast<MemRefType>(value.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || type.getRank() != 2 || !type.getElementType().isF32() ||
      failed(type.getStridesAndOffset(strides, offset)) || strides[1] != 1)
    return op->emitOpError()
           << "operand '" << name
           << "' must be an f32 memref [heads, tokens] with a unit-stride "
              "token dimension, got "
           << value.getType();
  auto qType = cast<MemRefType>(q.getType());
  for (auto [dim, qDim] : {std::pair<int64_t, int64_t>{0, 1}, {1, 0}}) {
    if (type.isDynamicDim(dim) || qType.isDynamicDim(qDim) ||
        type.getDimSize(dim) == qType.getDimSize(qDim))
      continue;
    return op->emitOpError()
           << "operand '" << name << "' has shape "
           << formatShape(type.getShape()) << " but 'q' has shape "
           << formatShape(qType.getShape()) << ": '" << name
           << "' must be [heads, tokens] of q";
  }
  return success();
}

template <typename OpTy>
double effectiveSoftmaxScale(OpTy op) {
  if (std::optional<APFloat> scale = op.getSoftmaxScale())
    return scale->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(op.getHeadDim()));
}

} // namespace

//===----------------------------------------------------------------------===//
// ForwardOp
//===----------------------------------------------------------------------===//

LogicalResult ForwardOp::verify() {
  NamedOperand activations[] = {
      {"q", getQ()}, {"k", getK()}, {"v", getV()}, {"o", getO()}};
  if (failed(verifyAttentionOp(*this, activations)))
    return failure();
  if (Value lse = getLse())
    return verifyRowStatistic(*this, "lse", lse, getQ());
  return success();
}

double ForwardOp::getEffectiveSoftmaxScale() {
  return effectiveSoftmaxScale(*this);
}

//===----------------------------------------------------------------------===//
// BackwardOp
//===----------------------------------------------------------------------===//

LogicalResult BackwardOp::verify() {
  NamedOperand activations[] = {{"q", getQ()},   {"k", getK()},
                                {"v", getV()},   {"do", getDout()},
                                {"dq", getDq()}, {"dk", getDk()},
                                {"dv", getDv()}};
  if (failed(verifyAttentionOp(*this, activations)))
    return failure();
  if (Value dlse = getDlse())
    return verifyRowStatistic(*this, "dlse", dlse, getQ());
  return success();
}

double BackwardOp::getEffectiveSoftmaxScale() {
  return effectiveSoftmaxScale(*this);
}

#define GET_OP_CLASSES
#include "blockattn/Dialect/BlockAttn/IR/BlockAttnOps.cpp.inc"
