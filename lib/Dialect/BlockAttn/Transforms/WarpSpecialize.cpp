//===- WarpSpecialize.cpp - blockattn to warpspec -------------------------===//
//
// blockattn-warp-specialize: replaces a blockattn kernel op with the
// warp-specialized warpspec.kernel that implements it on one chip. This is
// where the per-chip recipe lives (which roles, how many warps and registers,
// how deep the rings are); everything below it is shared machinery.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Dialect/BlockAttn/Transforms/Passes.h"

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnOps.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::blockattn {
#define GEN_PASS_DEF_BLOCKATTNWARPSPECIALIZEPASS
#include "blockattn/Dialect/BlockAttn/Transforms/Passes.h.inc"
} // namespace mlir::blockattn

using namespace mlir;
using namespace mlir::blockattn;
using namespace mlir::warpspec;

namespace {

/// Per-tile constants of the recipe.
constexpr int64_t kProducerRegs = 40;
constexpr int64_t kMaxStages = 8;
/// Bytes the allocator needs besides the ring: run-time alignment slack of
/// the dynamic shared memory base, barriers and tile records (generous).
constexpr int64_t kSmemReserve = 1024 + 1024;

/// Everything the recipes need to know about the op being lowered.
struct KernelSpec {
  Operation *op;
  int64_t blockSize;
  int64_t headDim;
  Type elementType;
  Value cuSeqlens;
  Value scale;                      // run-time scale, or null
  double constantScale;             // used when `scale` is null
  RotaryMode rotary;
};

/// The tunables of the Hopper forward recipe, already validated.
struct HopperForwardOptions {
  int64_t numStages;
  int64_t numConsumers;
  bool pFromSmem;
  bool stageOutput;
  bool bulkStore;
  bool contiguousSchedule;
};

/// Names the function arguments the kernel's parameters come from, so that
/// the launch manifest can say which tensor each parameter is.
LogicalResult nameKernelArguments(func::FuncOp func, Operation *op,
                                  ArrayRef<std::pair<StringRef, Value>> named) {
  for (auto [name, value] : named) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &func.getBody().front())
      return op->emitOpError()
             << "operand '" << name
             << "' must be an argument of the enclosing function, since it "
                "becomes a kernel parameter";
    func.setArgAttr(arg.getArgNumber(), "blockattn.name",
                    StringAttr::get(func.getContext(), name));
  }
  return success();
}

/// The function must be exactly `op; return`: the kernel is the function.
LogicalResult checkKernelFunction(func::FuncOp func, Operation *op) {
  Block &body = func.getBody().front();
  if (op->getBlock() != &body || body.getOperations().size() != 2 ||
      func.getNumResults() != 0)
    return op->emitOpError()
           << "must be the only operation of a function with no results "
              "(the function becomes the kernel)";
  return success();
}

DictionaryAttr buildInfo(OpBuilder &b, const KernelSpec &spec,
                         StringRef kind) {
  SmallVector<NamedAttribute> entries = {
      b.getNamedAttr("kind", b.getStringAttr(kind)),
      b.getNamedAttr("block_size", b.getI64IntegerAttr(spec.blockSize)),
      b.getNamedAttr("head_dim", b.getI64IntegerAttr(spec.headDim)),
      b.getNamedAttr("element_type", TypeAttr::get(spec.elementType)),
      b.getNamedAttr("rotary",
                     b.getStringAttr(stringifyRotaryMode(spec.rotary)))};
  if (!spec.scale)
    entries.push_back(b.getNamedAttr(
        "softmax_scale", b.getF32FloatAttr(static_cast<float>(spec.constantScale))));
  return b.getDictionaryAttr(entries);
}

BufferType tileBuffer(const KernelSpec &spec, int64_t cols) {
  return BufferType::get(spec.elementType.getContext(), {spec.blockSize, cols},
                         spec.elementType, MemorySpace::smem);
}

/// Creates a single-block region op body and returns its block.
template <typename OpTy>
Block &createBody(OpTy op, TypeRange argTypes, Location loc) {
  Block &block = op.getBody().emplaceBlock();
  for (Type type : argTypes)
    block.addArgument(type, loc);
  return block;
}

/// Hopper forward (DESIGN.md, "Targets"): one TMA producer warpgroup and
/// `numConsumers` consumer warpgroups that each own whole tiles.
///
/// Why these numbers: a 64x64 tile is memory-bound by ~7x (32 FLOP/byte), so
/// the recipe is about keeping enough loads in flight (Little's law asks for
/// ~32-48 KiB per SM on an H200): a ring as deep as shared memory allows.
/// Two consumers are enough to hide one tile's math and store behind the
/// other's; the producer needs few registers (40), which leaves the
/// consumers 232 each (S 32 + O 64 + P 16 accumulator registers at D=128).
void buildHopperForward(OpBuilder &b, Location loc, ForwardOp op,
                        const KernelSpec &spec,
                        const HopperForwardOptions &options) {
  MLIRContext *ctx = b.getContext();
  int64_t numThreads = 128 * (1 + options.numConsumers);
  int64_t consumerRegs =
      std::min<int64_t>(256, ((65536 / 128 - kProducerRegs) /
                              options.numConsumers) / 8 * 8);
  (void)numThreads;

  auto kernel = KernelOp::create(b, loc, b.getStringAttr("sm_90a"),
                                 /*smem_bytes=*/nullptr,
                                 /*tmem_columns=*/nullptr,
                                 buildInfo(b, spec, "forward"));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&createBody(kernel, {}, loc));

  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value numTokens = memref::DimOp::create(b, loc, op.getQ(), c0);
  Value numHeads = memref::DimOp::create(b, loc, op.getQ(), c1);
  Value scale = spec.scale;
  if (!scale)
    scale = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(static_cast<float>(spec.constantScale)));

  BufferType tile = tileBuffer(spec, spec.headDim);
  auto channelType =
      ChannelType::get(ctx, {tile, tile, tile}, MemorySpace::smem);
  Value qkv = ChannelOp::create(b, loc, channelType, b.getStringAttr("qkv"),
                                b.getI64IntegerAttr(options.numStages),
                                nullptr, nullptr, nullptr, nullptr);
  Type i32 = b.getI32Type();

  // Producer: walk the tiles, copy Q, K, V of each into the next free slot.
  auto producer = PartitionOp::create(
      b, loc, b.getStringAttr("load"), RoleAttr::get(ctx, Role::load),
      b.getI64IntegerAttr(4), b.getI64IntegerAttr(kProducerRegs),
      b.getI64IntegerAttr(1));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&createBody(producer, {}, loc));
    auto loop = TileLoopOp::create(b, loc, spec.cuSeqlens, numHeads, numTokens,
                                   b.getI64IntegerAttr(spec.blockSize),
                                   options.contiguousSchedule ? b.getUnitAttr() : nullptr);
    Block &body = createBody(loop, {i32, i32, i32}, loc);
    b.setInsertionPointToStart(&body);
    Value row = body.getArgument(0), rows = body.getArgument(1),
          head = body.getArgument(2);
    auto acquire = AcquireOp::create(b, loc, qkv);
    Value sources[] = {op.getQ(), op.getK(), op.getV()};
    for (auto [source, buffer] : llvm::zip(sources, acquire.getBuffers()))
      TmaLoadOp::create(b, loc, source, row, head, buffer);
    CommitOp::create(b, loc, qkv, row, rows, head);
    b.setInsertionPointAfter(loop);
    CloseOp::create(b, loc, qkv);
  }

  // Consumers: each owns whole tiles, round-robin over the ring's slots.
  auto consumer = PartitionOp::create(
      b, loc, b.getStringAttr("compute"), RoleAttr::get(ctx, Role::compute),
      b.getI64IntegerAttr(4), b.getI64IntegerAttr(consumerRegs),
      b.getI64IntegerAttr(options.numConsumers));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&createBody(consumer, {}, loc));
    BufferType pTile = tileBuffer(spec, spec.blockSize);
    Value pScratch, oStaging;
    if (options.pFromSmem)
      pScratch = ScratchOp::create(b, loc, pTile, nullptr, nullptr);
    if (options.stageOutput)
      oStaging = ScratchOp::create(b, loc, tileBuffer(spec, spec.headDim),
                                   nullptr, nullptr);
    auto consume = ConsumeOp::create(b, loc, qkv);
    Block &body =
        createBody(consume, {i32, i32, i32, tile, tile, tile}, loc);
    b.setInsertionPointToStart(&body);
    Value row = body.getArgument(0), rows = body.getArgument(1),
          head = body.getArgument(2);
    Value q = body.getArgument(3), k = body.getArgument(4),
          v = body.getArgument(5);
    auto f32 = b.getF32Type();
    auto sType = AccType::get(ctx, {spec.blockSize, spec.blockSize}, f32);
    auto pType =
        AccType::get(ctx, {spec.blockSize, spec.blockSize}, spec.elementType);
    auto oType = AccType::get(ctx, {spec.blockSize, spec.headDim}, f32);
    auto rowsType = RowsType::get(ctx, spec.blockSize, f32);
    Value s = MmaOp::create(b, loc, sType, q, k, /*transpose_b=*/true);
    auto softmax =
        SoftmaxOp::create(b, loc, pType, rowsType, s, rows, scale);
    Value pOperand = softmax.getProbs();
    if (pScratch) {
      WriteOp::create(b, loc, softmax.getProbs(), pScratch);
      pOperand = pScratch;
    }
    Value o = MmaOp::create(b, loc, oType, pOperand, v, /*transpose_b=*/false);
    ReleaseOp::create(b, loc, qkv);
    StoreOp::create(b, loc, o, op.getO(), row, head, rows,
                    softmax.getRowSums(), oStaging,
                    options.bulkStore ? b.getUnitAttr() : nullptr);
  }
}

struct BlockAttnWarpSpecializePass
    : public blockattn::impl::BlockAttnWarpSpecializePassBase<
          BlockAttnWarpSpecializePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> kernels;
    func.walk([&](Operation *op) {
      if (isa<ForwardOp, BackwardOp>(op))
        kernels.push_back(op);
    });
    if (kernels.empty())
      return;
    if (chip != "sm_90a" && chip != "sm_100a") {
      func.emitError() << "blockattn-warp-specialize: unsupported chip '"
                       << chip << "'; supported chips: sm_90a, sm_100a";
      return signalPassFailure();
    }
    for (Operation *op : kernels)
      if (failed(lowerKernel(func, op)))
        return signalPassFailure();
  }

  LogicalResult lowerKernel(func::FuncOp func, Operation *op) {
    if (failed(checkKernelFunction(func, op)))
      return failure();
    if (auto forward = dyn_cast<ForwardOp>(op))
      return lowerForward(func, forward);
    return op->emitOpError()
           << "the backward kernel is not implemented yet by "
              "blockattn-warp-specialize";
  }

  LogicalResult lowerForward(func::FuncOp func, ForwardOp op) {
    if (op.hasRotary())
      return op.emitOpError() << "fused rotary embeddings are not implemented "
                                 "yet by blockattn-warp-specialize";
    if (chip != "sm_90a")
      return op.emitOpError() << "the forward kernel is not implemented yet "
                                 "for "
                              << chip;
    SmallVector<std::pair<StringRef, Value>> named = {
        {"q", op.getQ()},
        {"k", op.getK()},
        {"v", op.getV()},
        {"o", op.getO()},
        {"cu_seqlens", op.getCuSeqlens()}};
    if (op.getScale())
      named.push_back({"softmax_scale", op.getScale()});
    if (failed(nameKernelArguments(func, op, named)))
      return failure();

    KernelSpec spec{op,
                    op.getBlockSize(),
                    op.getHeadDim(),
                    op.getElementType(),
                    op.getCuSeqlens(),
                    op.getScale(),
                    op.getEffectiveSoftmaxScale(),
                    op.getRotary()};
    FailureOr<HopperForwardOptions> options = hopperForwardOptions(op, spec);
    if (failed(options))
      return failure();

    OpBuilder b(op);
    buildHopperForward(b, op.getLoc(), op, spec, *options);
    op.erase();
    return success();
  }

  FailureOr<HopperForwardOptions> hopperForwardOptions(Operation *op,
                                                       const KernelSpec &spec) {
    if (numConsumers < 1 || numConsumers > 3) {
      op->emitOpError() << "num-consumers must be 1, 2 or 3 (warpgroups of "
                           "128 threads next to the producer), got "
                        << static_cast<int64_t>(numConsumers);
      return failure();
    }
    if (pOperand != "registers" && pOperand != "smem") {
      op->emitOpError() << "p-operand must be 'registers' or 'smem', got '"
                        << pOperand << "'";
      return failure();
    }
    HopperForwardOptions options;
    options.numConsumers = numConsumers;
    options.pFromSmem = pOperand == "smem";
    int64_t elementBytes = 2;
    int64_t slotBytes = 3 * spec.blockSize * spec.headDim * elementBytes;
    if (oStore != "tma" && oStore != "smem" && oStore != "registers") {
      op->emitOpError() << "o-store must be 'tma', 'smem' or 'registers', "
                           "got '"
                        << oStore << "'";
      return failure();
    }
    options.stageOutput = oStore != "registers";
    options.bulkStore = oStore == "tma";
    if (schedule != "strided" && schedule != "contiguous") {
      op->emitOpError() << "schedule must be 'strided' or 'contiguous', got '"
                        << schedule << "'";
      return failure();
    }
    options.contiguousSchedule = schedule == "contiguous";
    int64_t scratchBytes = 0;
    if (options.pFromSmem)
      scratchBytes += numConsumers * spec.blockSize * spec.blockSize *
                      elementBytes;
    if (options.stageOutput)
      scratchBytes += numConsumers * spec.blockSize * spec.headDim *
                      elementBytes;
    int64_t budget =
        TargetLimits::maxSharedMemoryBytes - kSmemReserve - scratchBytes;
    // Consumers take slots round-robin, so the depth is a multiple of their
    // number (see the warpspec.kernel verifier).
    int64_t fits = std::min(kMaxStages, budget / slotBytes);
    fits -= fits % options.numConsumers;
    if (numStages < 0 || numStages % options.numConsumers != 0) {
      op->emitOpError() << "num-stages must be a non-negative multiple of "
                           "num-consumers ("
                        << options.numConsumers << "), got "
                        << static_cast<int64_t>(numStages);
      return failure();
    }
    options.numStages = numStages > 0 ? numStages : fits;
    if (options.numStages < 1) {
      op->emitOpError() << "no ring of Q, K and V slots (" << slotBytes
                        << " bytes each, a multiple of " << numConsumers
                        << " slots) fits in shared memory next to "
                        << scratchBytes << " bytes of scratch";
      return failure();
    }
    return options;
  }
};

} // namespace
