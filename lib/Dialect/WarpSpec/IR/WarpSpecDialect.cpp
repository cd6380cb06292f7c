//===- WarpSpecDialect.cpp - warpspec dialect and types -------------------===//

#include "blockattn/Dialect/WarpSpec/IR/WarpSpecDialect.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"
#include "blockattn/Support/CheckedArithmetic.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::warpspec;
using mlir::blockattn::CheckedSize;

#include "blockattn/Dialect/WarpSpec/IR/WarpSpecEnums.cpp.inc"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOpsDialect.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOpsTypes.cpp.inc"

void WarpSpecDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOpsTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecAttrs.cpp.inc"
      >();
}

int64_t mlir::warpspec::getElementSizeInBytes(Type type) {
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

//===----------------------------------------------------------------------===//
// Shapes: `64x128xbf16`
//===----------------------------------------------------------------------===//

static ParseResult parseStaticShape(AsmParser &parser,
                                    SmallVectorImpl<int64_t> &shape,
                                    Type &elementType) {
  if (parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return failure();
  return success();
}

static void printStaticShape(AsmPrinter &printer, ArrayRef<int64_t> shape,
                             Type elementType) {
  for (int64_t dim : shape)
    printer << dim << 'x';
  printer << elementType;
}

static ParseResult parseMemorySpace(AsmParser &parser, MemorySpace &space) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<MemorySpace> parsed = symbolizeMemorySpace(keyword);
  if (!parsed)
    return parser.emitError(loc, "expected memory space 'smem' or 'tmem'");
  space = *parsed;
  return success();
}

//===----------------------------------------------------------------------===//
// BufferType
//===----------------------------------------------------------------------===//

/// The optional layout of a buffer, `chunk_cols = 32` (BufferType): absent
/// is 0, the width's own layout.
static ParseResult parseOptionalChunkCols(AsmParser &parser,
                                          int64_t &chunkCols) {
  chunkCols = 0;
  if (failed(parser.parseOptionalKeyword("chunk_cols")))
    return success();
  return failure(parser.parseEqual() || parser.parseInteger(chunkCols));
}

static void printChunkCols(AsmPrinter &printer, int64_t chunkCols) {
  if (chunkCols)
    printer << " chunk_cols = " << chunkCols;
}

Type BufferType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  MemorySpace space;
  int64_t chunkCols = 0;
  if (parser.parseLess() || parseStaticShape(parser, shape, elementType) ||
      parser.parseComma() || parseMemorySpace(parser, space))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("chunk_cols") || parser.parseEqual() ||
       parser.parseInteger(chunkCols)))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<BufferType>(parser.getContext(), shape, elementType,
                                       space, chunkCols);
}

void BufferType::print(AsmPrinter &printer) const {
  printer << '<';
  printStaticShape(printer, getShape(), getElementType());
  printer << ", " << stringifyMemorySpace(getMemorySpace());
  if (getChunkCols())
    printer << ", chunk_cols = " << getChunkCols();
  printer << '>';
}

BufferType BufferType::withShape(ArrayRef<int64_t> shape) const {
  // A view keeps the buffer's pieces unless they are the view's own layout:
  // one 32-column piece of chunk_cols = 32 is an ordinary 32-column tile
  // (64-byte swizzle), one 16-column piece of chunk_cols = 16 an ordinary
  // 16-column tile (32-byte swizzle); a view of whole pair-complete chunks
  // (64 or 32 columns) keeps chunk_cols.
  int64_t chunkCols =
      getChunkCols() && getChunkCols() != ownChunkCols(shape.back())
          ? getChunkCols()
          : 0;
  return BufferType::get(getContext(), shape, getElementType(),
                         getMemorySpace(), chunkCols);
}

LogicalResult BufferType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> shape, Type elementType,
                                 MemorySpace memorySpace, int64_t chunkCols) {
  // The layouts that are not the width's own: chunks narrower than the
  // width's own (32 columns with the 64-byte swizzle on a width that is a
  // multiple of 64, 16 columns with the 32-byte swizzle on one that is a
  // multiple of 32), so that each piece is a TMA box that fills its swizzle
  // span.
  if (chunkCols != 0 && ((chunkCols != 16 && chunkCols != 32) ||
                         memorySpace != MemorySpace::smem ||
                         shape.size() != 2 || shape[1] % (2 * chunkCols) != 0 ||
                         !isa<FloatType, IntegerType>(elementType) ||
                         elementType.getIntOrFloatBitWidth() != 16))
    return emitError() << "chunk_cols = " << chunkCols
                       << " needs 32 or 16 on a 2-D shared-memory tile of "
                          "16-bit elements whose width is a multiple of twice "
                          "that (narrower than the width's own chunks: 64 "
                          "columns, or 32 where the width is not a multiple "
                          "of 64)";
  // Buffers are sized in bytes (getSizeInBytes), so their elements must have
  // a bit width.
  if (!isa<IntegerType, FloatType>(elementType))
    return emitError() << "buffer elements must be integers or floats, got "
                       << elementType;
  // Sizes and addresses are computed from the shape: it must fit the memory.
  if (memorySpace == MemorySpace::tmem) {
    if (shape.size() != 2)
      return emitError() << "tensor-memory buffers are 2-D tiles, got "
                         << shape.size() << " dimensions";
    int64_t bits = elementType.getIntOrFloatBitWidth();
    CheckedSize cells = CheckedSize(shape[1]) * CheckedSize(bits);
    std::string tile;
    llvm::raw_string_ostream os(tile);
    os << shape[0] << 'x' << shape[1] << 'x' << elementType;
    if (shape[0] > TargetLimits::tmemLanes ||
        !cells.fitsIn(TargetLimits::tmemColumns * 32))
      return emitError() << "a tensor-memory buffer of " << tile
                         << " does not fit in the " << TargetLimits::tmemLanes
                         << " lanes x " << TargetLimits::tmemColumns
                         << " 32-bit columns of tensor memory";
    return success();
  }
  CheckedSize bytes = getElementSizeInBytes(elementType);
  for (int64_t dim : shape)
    bytes *= dim;
  if (!bytes.fitsIn(TargetLimits::maxSharedMemoryBytes))
    return emitError() << "a shared-memory buffer must fit in the "
                       << TargetLimits::maxSharedMemoryBytes
                       << " bytes of a CTA, got "
                       << (bytes.get() ? std::to_string(*bytes.get())
                                       : std::string("more than 2^63"))
                       << " bytes";
  return success();
}

int64_t BufferType::getSizeInBytes() const {
  // Verified types fit; an unverified one saturates so that every budget
  // check fails instead of wrapping around.
  CheckedSize bytes = getElementSizeInBytes(getElementType());
  for (int64_t dim : getShape())
    bytes *= dim;
  return bytes.get().value_or(std::numeric_limits<int64_t>::max());
}

int64_t BufferType::getTmemColumns() const {
  int64_t columns = getShape()[1];
  int64_t bits = getElementType().getIntOrFloatBitWidth();
  return bits >= 32 ? columns : llvm::divideCeil(columns * bits, 32);
}

//===----------------------------------------------------------------------===//
// ChannelType
//===----------------------------------------------------------------------===//

Type ChannelType::parse(AsmParser &parser) {
  SmallVector<Type> buffers;
  SmallVector<SmallVector<int64_t>> shapes;
  SmallVector<Type> elementTypes;
  SmallVector<int64_t> chunkCols;
  MemorySpace space;
  auto parseOne = [&]() -> ParseResult {
    shapes.emplace_back();
    elementTypes.emplace_back();
    chunkCols.emplace_back();
    return failure(
        parseStaticShape(parser, shapes.back(), elementTypes.back()) ||
        parseOptionalChunkCols(parser, chunkCols.back()));
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseOne) ||
      parser.parseComma() || parseMemorySpace(parser, space) ||
      parser.parseGreater())
    return {};
  for (auto [shape, elementType, chunk] :
       llvm::zip(shapes, elementTypes, chunkCols)) {
    auto buffer = parser.getChecked<BufferType>(parser.getContext(), shape,
                                                elementType, space, chunk);
    if (!buffer)
      return {};
    buffers.push_back(buffer);
  }
  return parser.getChecked<ChannelType>(parser.getContext(), buffers, space);
}

void ChannelType::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getBufferTypes(), printer, [&](Type type) {
    auto buffer = cast<BufferType>(type);
    printStaticShape(printer, buffer.getShape(), buffer.getElementType());
    printChunkCols(printer, buffer.getChunkCols());
  });
  printer << "], " << stringifyMemorySpace(getMemorySpace()) << '>';
}

LogicalResult ChannelType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ArrayRef<Type> bufferTypes,
                                  MemorySpace memorySpace) {
  // A channel without buffers carries only its barriers and tile records: a
  // signal that a stage of work on a tile (held in another channel's slot)
  // is done, as the sm_90a rotary warpgroup tells the consumers.
  // Its barriers are in shared memory like every channel's.
  if (bufferTypes.empty() && memorySpace != MemorySpace::smem)
    return emitError() << "a channel without buffers is a signal: its "
                          "barriers and records live in shared memory, so "
                          "it must be 'smem'";
  bool seenRowBuffer = false;
  for (Type type : bufferTypes) {
    auto buffer = dyn_cast<BufferType>(type);
    if (!buffer)
      return emitError() << "channel slots hold !warpspec.buffer types, got "
                         << type;
    if (buffer.getMemorySpace() != memorySpace)
      return emitError() << "channel buffer " << type
                         << " is not in the channel's memory space";
    // Row values (a tile's positions) follow the tiles: one i32 per row.
    if (buffer.getShape().size() == 1) {
      if (memorySpace != MemorySpace::smem ||
          !buffer.getElementType().isSignlessInteger(32))
        return emitError() << "a channel's 1-D buffers hold one i32 per row "
                              "in shared memory, got "
                           << type;
      seenRowBuffer = true;
      continue;
    }
    if (buffer.getShape().size() != 2 || seenRowBuffer)
      return emitError() << "channel buffers are 2-D tiles, then 1-D buffers "
                            "of i32, got "
                         << type;
  }
  return success();
}

int64_t ChannelType::getSlotSizeInBytes() const {
  CheckedSize bytes = 0;
  for (Type type : getBufferTypes())
    if (!isRowBuffer(type))
      bytes += cast<BufferType>(type).getSizeInBytes();
  return bytes.get().value_or(std::numeric_limits<int64_t>::max());
}

int64_t ChannelType::getRowBuffersSizeInBytes() const {
  CheckedSize bytes = 0;
  for (Type type : getBufferTypes())
    if (isRowBuffer(type))
      bytes += CheckedSize(cast<BufferType>(type).getSizeInBytes()).alignTo(16);
  return bytes.get().value_or(std::numeric_limits<int64_t>::max());
}

//===----------------------------------------------------------------------===//
// AccType and RowsType
//===----------------------------------------------------------------------===//

Type AccType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() || parseStaticShape(parser, shape, elementType) ||
      parser.parseGreater())
    return {};
  return AccType::get(parser.getContext(), shape, elementType);
}

void AccType::print(AsmPrinter &printer) const {
  printer << '<';
  printStaticShape(printer, getShape(), getElementType());
  printer << '>';
}

Type RowsType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parseStaticShape(parser, shape, elementType) ||
      parser.parseGreater())
    return {};
  if (shape.size() != 1) {
    parser.emitError(loc, "expected one dimension (the number of rows)");
    return {};
  }
  return RowsType::get(parser.getContext(), shape[0], elementType);
}

void RowsType::print(AsmPrinter &printer) const {
  printer << '<' << getNumRows() << 'x' << getElementType() << '>';
}
