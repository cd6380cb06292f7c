//===- Trace.cpp - trace anchors, lanes and records -----------------------===//
//
// A traced kernel (warpspec-insert-trace) writes into its trace buffer, a
// kernel parameter like any 1-D memref (a pointer and its length in 8-byte
// words). CTA c owns the bytes [c * ctaBytes, (c + 1) * ctaBytes) of it
// (TraceLayout): a header with the anchors, then one lane of records per
// partition replica. A CTA whose region does not fit in the buffer writes
// nothing, so a short buffer cannot be overrun.
//
// A lane (!warpspec.trace) is two values: the buffer (the kernel
// parameter, which needs no register) and a per-thread variable holding the
// index of the thread's next record in the buffer. Lanes start at multiples
// of the records per lane R (the header takes the first R records of a
// region), so the index alone says when the lane is full: it becomes 0 when
// it reaches the next multiple of R, and 0 means "do not record" (a thread
// other than the replica's thread 0, a CTA past the buffer's end). A record
// costs every thread one compare, and the recording thread a clock read, one
// 16-byte store and the index's update: one 32-bit register lives across the
// kernel.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "blockattn/Conversion/WarpSpecToNVVM/WarpSpecToNVVM.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"

using namespace mlir;
using namespace mlir::blockattn;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

using Pred = LLVM::ICmpPredicate;

namespace {

constexpr int64_t kWordBytes = 8;

/// The first 8-byte word of the CTA's region of the trace buffer (i64).
Value regionStart(KernelBuilder &e, const TraceLayout &layout) {
  Value cta = e.zext64(NVVM::BlockIdXOp::create(e.b, e.loc, e.i32T()));
  return e.mul(cta, e.i64(layout.ctaBytes() / kWordBytes));
}

/// Whether the CTA's region lies inside the buffer (i1): a short buffer is
/// never overrun, its last CTAs just record nothing.
Value regionFits(KernelBuilder &e, Value buffer, const TraceLayout &layout) {
  auto type = cast<MemRefType>(buffer.getType());
  Value words = type.isDynamicDim(0) ? e.zext64(ArgParams::of(buffer).sizes[0])
                                     : e.i64(type.getDimSize(0));
  Value end =
      e.add(regionStart(e, layout), e.i64(layout.ctaBytes() / kWordBytes));
  return e.cmp(Pred::ule, end, words);
}

Value word(KernelBuilder &e, Value base, Value index) {
  return LLVM::GEPOp::create(e.b, e.loc, e.globalPtrT(), e.i64T(), base,
                             ValueRange{index});
}

/// The first lane of `partition`: lanes are numbered over the partitions and
/// their replicas in warp order.
int64_t firstLane(KernelOp kernel, PartitionOp partition) {
  int64_t lane = 0;
  for (PartitionOp other : kernel.getPartitions()) {
    if (other == partition)
      break;
    lane += other.getReplicas();
  }
  return lane;
}

/// The trace layout of the kernel around `op` (the warpspec verifiers
/// already require one for every trace op).
FailureOr<TraceLayout> traceLayout(Operation *op, KernelOp kernel) {
  std::optional<TraceLayout> layout = kernel.getTraceLayout();
  if (!layout)
    return op->emitOpError() << "is in a kernel without trace_records";
  return *layout;
}

/// The layout, and a check that `buffer` is the kernel's trace parameter.
FailureOr<TraceLayout> checkBuffer(Operation *op, KernelOp kernel,
                                   Value buffer) {
  FailureOr<TraceLayout> layout = traceLayout(op, kernel);
  if (succeeded(layout) && !ArgParams::of(buffer).pointer)
    return op->emitOpError()
           << "records into a buffer that is not a kernel parameter";
  return layout;
}

struct TraceAnchorLowering : ConvertOpToLLVMPattern<TraceAnchorOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TraceAnchorOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder e(rewriter, op);
    FailureOr<TraceLayout> layout = checkBuffer(op, e.kernel, op.getBuffer());
    if (failed(layout))
      return failure();
    Value fits = regionFits(e, op.getBuffer(), *layout);
    Value region =
        word(e, ArgParams::of(op.getBuffer()).pointer, regionStart(e, *layout));
    Value leader = e.cmp(Pred::eq, e.tid(), e.i32(0));
    e.emitIf(e.andi(leader, fits), [&] {
      // Read together, so that the pair maps this SM's clock onto the
      // global timer.
      Value ns = NVVM::GlobalTimerOp::create(e.b, e.loc, e.i64T());
      Value clock = NVVM::Clock64Op::create(e.b, e.loc, e.i64T());
      bool start = op.getStart();
      e.store(ns,
              word(e, region,
                   e.i64(start ? TraceLayout::startGlobalTimer
                               : TraceLayout::endGlobalTimer)),
              kWordBytes);
      e.store(
          clock,
          word(e, region,
               e.i64(start ? TraceLayout::startClock : TraceLayout::endClock)),
          kWordBytes);
      if (start) {
        Value sm = NVVM::SmIdOp::create(e.b, e.loc, e.i32T());
        e.store(e.zext64(sm), word(e, region, e.i64(TraceLayout::smId)),
                kWordBytes);
      }
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct TraceLaneLowering : ConvertOpToLLVMPattern<TraceLaneOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TraceLaneOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder e(rewriter, op);
    FailureOr<TraceLayout> layout = checkBuffer(op, e.kernel, op.getBuffer());
    if (failed(layout))
      return failure();
    Value fits = regionFits(e, op.getBuffer(), *layout);
    // The lane's first record: past the CTA's header slot and the lanes
    // before it.
    int64_t records = layout->recordsPerLane;
    Value cta = NVVM::BlockIdXOp::create(e.b, e.loc, e.i32T());
    Value lane = e.add(e.i32(firstLane(e.kernel, e.partition) + 1),
                       adaptor.getReplica());
    Value first = e.add(e.mul(cta, e.i32(layout->ctaRecords())),
                        e.mul(lane, e.i32(records)));
    // Only the replica's thread 0 records; the others hold 0.
    Value recorder =
        e.andi(e.cmp(Pred::eq, adaptor.getThread(), e.i32(0)), fits);
    Value cursor = e.variable(e.i32T());
    e.store(e.select(recorder, first, e.i32(0)), cursor);
    Value buffer = ArgParams::of(op.getBuffer()).pointer;
    rewriter.replaceOpWithMultiple(op, {{buffer, cursor}});
    return success();
  }
};

struct TraceLowering : ConvertOpToLLVMPattern<TraceOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TraceOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder e(rewriter, op);
    FailureOr<TraceLayout> layout = traceLayout(op, e.kernel);
    if (failed(layout))
      return failure();
    ValueRange lane = adaptor.getLane();
    Value buffer = lane[0], cursorVar = lane[1];
    // The event code's low byte is the event, the next the detail; the
    // value goes into the record's upper 4 bytes.
    int64_t code = static_cast<int64_t>(op.getEvent()) | (op.getDetail() << 8);
    Value index = e.load(e.i32T(), cursorVar);
    e.emitIf(e.cmp(Pred::ne, index, e.i32(0)), [&] {
      Value clock = NVVM::Clock64Op::create(e.b, e.loc, e.i64T());
      Value record = word(e, buffer, e.mul(e.zext64(index), e.i64(2)));
      e.store(clock, record, TraceLayout::recordBytes);
      Value tail = e.i64(code);
      if (!adaptor.getValue().empty())
        tail = LLVM::OrOp::create(
            e.b, e.loc, tail,
            LLVM::ShlOp::create(e.b, e.loc, e.zext64(adaptor.getValue()[0]),
                                e.i64(32)));
      e.store(tail, word(e, record, e.i64(1)), kWordBytes);
      // The next record, or 0 past the lane's last one.
      Value next = e.add(index, e.i32(1));
      Value full = e.cmp(
          Pred::eq, e.andi(next, e.i32(layout->recordsPerLane - 1)), e.i32(0));
      e.store(e.select(full, e.i32(0), next), cursorVar);
    });
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::blockattn::populateWarpSpecTraceToNVVMPatterns(
    LLVMTypeConverter &converter, const TargetInfo &,
    RewritePatternSet &patterns) {
  patterns.add<TraceAnchorLowering, TraceLaneLowering, TraceLowering>(
      converter);
}
