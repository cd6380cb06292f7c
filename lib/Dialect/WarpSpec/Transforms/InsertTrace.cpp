//===- InsertTrace.cpp - pipeline events recorded into a trace buffer -----===//
//
// warpspec-insert-trace: a traced kernel takes one more argument, the trace
// buffer, and every partition replica records its pipeline events there
// with warpspec.trace (see the pass description). The events bracket the
// ops as the partitions hold them after warpspec-lower-protocol and
// warpspec-dispatch-partitions, so the waits, the arrivals and the tile
// boundaries are explicit ops to bracket.
//
// The pass only runs when a trace is asked for; an untraced kernel keeps
// exactly the IR (and the PTX) it had.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h"

#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::warpspec {
#define GEN_PASS_DEF_WARPSPECINSERTTRACEPASS
#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h.inc"
} // namespace mlir::warpspec

using namespace mlir;
using namespace mlir::warpspec;

namespace {

/// The name the trace buffer's argument (and kernel parameter) gets.
constexpr StringLiteral kTraceName = "trace";
/// What a traced kernel's name ends with.
constexpr StringLiteral kTraceSuffix = "_trace";

/// What brackets an op: the events before and after it (none for a point
/// event before), and its detail byte.
struct Bracket {
  std::optional<TraceEvent> before, after;
  int64_t detail = 0;
};

/// The channel index (declaration order) the detail byte of a slot op
/// names.
int64_t channelIndex(KernelOp kernel, Value channel) {
  for (auto [index, op] : llvm::enumerate(kernel.getChannels()))
    if (op.getChannel() == channel)
      return index;
  return 0;
}

std::optional<Bracket> bracketOf(KernelOp kernel, Operation *op) {
  auto span = [](TraceEvent begin, TraceEvent end, int64_t detail = 0) {
    return Bracket{begin, end, detail};
  };
  auto point = [](TraceEvent event, int64_t detail = 0) {
    return Bracket{std::nullopt, event, detail};
  };
  if (auto wait = dyn_cast<WaitEmptyOp>(op))
    return span(TraceEvent::wait_begin, TraceEvent::wait_end,
                channelIndex(kernel, wait.getChannel()));
  if (auto wait = dyn_cast<WaitFullOp>(op))
    return span(TraceEvent::wait_begin, TraceEvent::wait_end,
                channelIndex(kernel, wait.getChannel()));
  if (auto publish = dyn_cast<PublishOp>(op))
    return point(TraceEvent::arrive,
                 channelIndex(kernel, publish.getChannel()));
  if (auto close = dyn_cast<PublishCloseOp>(op))
    return point(TraceEvent::arrive, channelIndex(kernel, close.getChannel()));
  if (auto arrive = dyn_cast<ArriveEmptyOp>(op))
    return point(TraceEvent::arrive, channelIndex(kernel, arrive.getChannel()));
  if (isa<TmaLoadOp>(op))
    return point(TraceEvent::copy);
  if (isa<MmaOp, MmaAsyncOp>(op))
    return span(TraceEvent::mma_begin, TraceEvent::mma_end);
  if (isa<SoftmaxOp, SoftmaxGradOp>(op))
    return span(TraceEvent::softmax_begin, TraceEvent::softmax_end);
  if (isa<StoreOp, WriteOp>(op))
    return span(TraceEvent::store_begin, TraceEvent::store_end);
  if (isa<RotateOp, RotateTileOp, RotaryAnglesOp>(op))
    return span(TraceEvent::rotate_begin, TraceEvent::rotate_end);
  if (isa<TmemLoadOp, TmemStoreOp>(op))
    return span(TraceEvent::tmem_begin, TraceEvent::tmem_end);
  return std::nullopt;
}

/// A tile's body: that of a tile loop, or the `do` region of a lowered
/// consume loop (an scf.while whose test reads a tile record). The row of
/// the tile, when the body has it as an argument.
Block *tileBody(Operation *op, Value &row) {
  if (auto loop = dyn_cast<TileLoopOp>(op)) {
    Block *body = &loop.getBody().front();
    row = body->getArgument(0);
    return body;
  }
  auto loop = dyn_cast<scf::WhileOp>(op);
  if (!loop)
    return nullptr;
  scf::ConditionOp condition = loop.getConditionOp();
  auto read = llvm::find_if(condition.getArgs(), [](Value v) {
    return isa_and_nonnull<ReadTileOp>(v.getDefiningOp());
  });
  if (read == condition.getArgs().end())
    return nullptr;
  Block *body = loop.getAfterBody();
  auto tile = (*read).getDefiningOp<ReadTileOp>();
  if (!condition.getArgs().empty() && condition.getArgs()[0] == tile.getRow())
    row = body->getArgument(0);
  return body;
}

void traceOp(OpBuilder &b, Location loc, Value lane, TraceEvent event,
             int64_t detail, Value value = {}) {
  TraceOp::create(b, loc, lane, event, detail, value);
}

void tracePartition(KernelOp kernel, PartitionOp partition, Value buffer) {
  Location loc = partition.getLoc();
  auto index = *partition.getBody().front().getOps<PartitionIndexOp>().begin();
  OpBuilder b(index.getContext());
  b.setInsertionPointAfter(index);
  Value lane = TraceLaneOp::create(b, loc, buffer, index.getReplica(),
                                   index.getThread());
  bool anchors = partition.getFirstWarp() == 0;

  SmallVector<Operation *> ops;
  partition.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : ops) {
    Value row;
    if (Block *body = tileBody(op, row)) {
      b.setInsertionPointToStart(body);
      traceOp(b, op->getLoc(), lane, TraceEvent::tile_begin, 0, row);
      Operation *last = body->empty() ? nullptr : &body->back();
      if (last &&
          (last->hasTrait<OpTrait::IsTerminator>() || isa<YieldOp>(last)))
        b.setInsertionPoint(last);
      else
        b.setInsertionPointToEnd(body);
      traceOp(b, op->getLoc(), lane, TraceEvent::tile_end, 0);
      continue;
    }
    std::optional<Bracket> bracket = bracketOf(kernel, op);
    if (!bracket)
      continue;
    if (bracket->before) {
      b.setInsertionPoint(op);
      traceOp(b, op->getLoc(), lane, *bracket->before, bracket->detail);
    }
    b.setInsertionPointAfter(op);
    traceOp(b, op->getLoc(), lane, *bracket->after, bracket->detail);
  }
  if (anchors) {
    b.setInsertionPointToEnd(&partition.getBody().front());
    TraceAnchorOp::create(b, loc, buffer, /*start=*/false, /*end=*/true);
  }
}

struct WarpSpecInsertTracePass
    : public warpspec::impl::WarpSpecInsertTracePassBase<
          WarpSpecInsertTracePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<KernelOp> kernels;
    getOperation().walk([&](KernelOp kernel) { kernels.push_back(kernel); });
    for (KernelOp kernel : kernels)
      if (failed(traceKernel(kernel)))
        return signalPassFailure();
  }

  LogicalResult traceKernel(KernelOp kernel) {
    if (kernel.getTraceRecords())
      return kernel.emitOpError() << "is traced already (trace_records)";
    int64_t perLane = records;
    if (!TraceLayout::isValidRecordsPerLane(perLane))
      return kernel.emitOpError()
             << "cannot be traced with " << perLane
             << " records per lane; warpspec-insert-trace takes a power of "
                "two from "
             << TraceLayout::minRecordsPerLane << " to "
             << TraceLayout::maxRecordsPerLane;
    auto func = dyn_cast<FunctionOpInterface>(kernel->getParentOp());
    Block *block = kernel->getBlock();
    if (!func || block->getOperations().size() != 2 ||
        !block->back().hasTrait<OpTrait::IsTerminator>())
      return kernel.emitOpError()
             << "must be the only operation (besides its return) of a "
                "function, which takes the trace buffer as its argument";
    for (PartitionOp partition : kernel.getPartitions())
      if (!partition.isDispatched() ||
          partition.getBody().front().getOps<PartitionIndexOp>().empty())
        return partition.emitOpError()
               << "is not placed on warps: run warpspec-dispatch-partitions "
                  "before warpspec-insert-trace";

    // A traced kernel never passes for the untraced one: its entry symbol,
    // and so its files and manifest, have their own name.
    std::string name =
        (SymbolTable::getSymbolName(func).getValue() + kTraceSuffix).str();
    if (SymbolTable::lookupNearestSymbolFrom(
            func->getParentOp(), StringAttr::get(kernel.getContext(), name)))
      return kernel.emitOpError()
             << "cannot be traced as '" << name << "': that symbol exists";
    SymbolTable::setSymbolName(func, name);

    MLIRContext *ctx = kernel.getContext();
    OpBuilder b(ctx);
    auto type = MemRefType::get({ShapedType::kDynamic}, b.getI64Type());
    unsigned position = func.getNumArguments();
    auto attrs = b.getDictionaryAttr(
        b.getNamedAttr("blockattn.name", b.getStringAttr(kTraceName)));
    if (failed(func.insertArgument(position, type, attrs, kernel.getLoc())))
      return kernel.emitOpError() << "could not add the trace buffer to its "
                                     "function";
    Value buffer = func.getArgument(position);
    kernel.setTraceRecords(perLane);
    // Before the partitions, so before the barrier that releases them: no
    // role records an event before the CTA's start.
    b.setInsertionPoint(*kernel.getPartitions().begin());
    TraceAnchorOp::create(b, kernel.getLoc(), buffer, /*start=*/true,
                          /*end=*/false);
    for (PartitionOp partition : kernel.getPartitions())
      tracePartition(kernel, partition, buffer);
    return success();
  }
};

} // namespace
