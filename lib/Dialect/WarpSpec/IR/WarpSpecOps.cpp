//===- WarpSpecOps.cpp - warpspec operations ------------------------------===//
//
// Verifiers for the kernel's budgets and the channel protocol, and the custom
// assembly of the region ops. Everything the NVVM lowering relies on is
// checked here, so that the lowering can assume well-formed input.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::warpspec;

bool TargetLimits::isValidPtxIdentifier(StringRef name) {
  auto isLead = [](char c) { return llvm::isAlpha(c) || c == '_' || c == '$'; };
  auto isFollow = [&](char c) { return isLead(c) || llvm::isDigit(c); };
  if (name.empty() || !isLead(name.front()) ||
      !llvm::all_of(name.drop_front(), isFollow))
    return false;
  return name.size() > 1 || llvm::isAlpha(name.front());
}

/// The spellings of the cases of an enum of WarpSpecAttrs.td (numbered from
/// 0 to `maxValue`) for a diagnostic: "a, b, c" or, with `last` = " or ",
/// "a, b or c".
template <typename EnumT>
static std::string spellCases(uint32_t maxValue, StringRef last = ", ") {
  std::string list;
  for (uint32_t value = 0; value <= maxValue; ++value) {
    if (value > 0)
      list += value == maxValue ? last : StringRef(", ");
    list += stringifyEnum(static_cast<EnumT>(value));
  }
  return list;
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

/// The chip prints as a bare keyword, `chip(sm_90a)` (a quoted name parses
/// too); an unknown chip is one error that names the supported ones.
static ParseResult parseChip(OpAsmParser &parser, ChipAttr &chip) {
  std::string name;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeywordOrString(&name))
    return failure();
  std::optional<Chip> parsed = symbolizeChip(name);
  if (!parsed)
    return parser.emitError(loc)
           << "unknown chip '" << name << "'; supported chips: "
           << spellCases<Chip>(getMaxEnumValForChip());
  chip = ChipAttr::get(parser.getContext(), *parsed);
  return success();
}

static void printChip(OpAsmPrinter &printer, Operation *, ChipAttr chip) {
  printer << stringifyChip(chip.getValue());
}

SmallVector<PartitionOp, 4> KernelOp::getPartitions() {
  return llvm::to_vector<4>(getBody().front().getOps<PartitionOp>());
}

SmallVector<ChannelOp, 4> KernelOp::getChannels() {
  return llvm::to_vector<4>(getBody().front().getOps<ChannelOp>());
}

int64_t KernelOp::getNumThreads() {
  int64_t threads = 0;
  for (PartitionOp partition : getPartitions())
    threads += partition.getNumThreads();
  return threads;
}

bool KernelOp::usesTensorMemory() {
  return llvm::any_of(getPartitions(), [](PartitionOp partition) {
    return partition.usesTensorMemory();
  });
}

namespace {

/// The partitions that produce into and consume from one channel.
struct ChannelUsers {
  SmallVector<PartitionOp> producers;
  SmallVector<PartitionOp> consumers;
  bool closed = false;
  bool consumedInLoop = false; // by warpspec.consume (needs a close)
  /// The first op of each form that uses the channel: the protocol
  /// (acquire, consume, ...) and its lowering (wait_empty, publish, ...).
  Operation *protocolOp = nullptr;
  Operation *loweredOp = nullptr;
};

bool isProducerOp(Operation *op) {
  return isa<AcquireOp, CommitOp, CloseOp, WaitEmptyOp, ExpectTxOp, PublishOp,
             PublishCloseOp>(op);
}

bool isConsumerOp(Operation *op) {
  // A producer's wait for its own copies (`landed`) is no consumer's.
  if (auto wait = dyn_cast<WaitFullOp>(op))
    return !wait.getLanded();
  return isa<ConsumeOp, GetOp, ReadTileOp, ArriveEmptyOp>(op);
}

/// The ops of the lowered protocol (warpspec-lower-protocol) that say which
/// side of a channel a partition is on.
bool isLoweredProtocolOp(Operation *op) {
  return isa<WaitEmptyOp, ExpectTxOp, PublishOp, PublishCloseOp, WaitFullOp,
             ReadTileOp, ArriveEmptyOp>(op);
}

Value getProtocolChannel(Operation *op) {
  return TypeSwitch<Operation *, Value>(op)
      .Case<AcquireOp, CommitOp, CloseOp, ConsumeOp, GetOp, ReleaseOp,
            WaitEmptyOp, ExpectTxOp, PublishOp, PublishCloseOp, WaitFullOp,
            ReadTileOp, ArriveEmptyOp>(
          [](auto typed) { return typed.getChannel(); })
      .Default([](Operation *) { return Value(); });
}

void addUnique(SmallVectorImpl<PartitionOp> &list, PartitionOp partition) {
  if (!llvm::is_contained(list, partition))
    list.push_back(partition);
}

LogicalResult verifyBudgets(KernelOp kernel) {
  int64_t threads = kernel.getNumThreads();
  if (threads > TargetLimits::maxThreadsPerCta)
    return kernel.emitOpError()
           << "uses " << threads << " threads, more than the "
           << TargetLimits::maxThreadsPerCta << " a CTA can have";

  int64_t registers = 0;
  std::string breakdown;
  llvm::raw_string_ostream os(breakdown);
  for (PartitionOp partition : kernel.getPartitions()) {
    registers += partition.getNumRegs() * partition.getNumThreads();
    os << (breakdown.empty() ? "" : ", ") << '"' << partition.getName()
       << "\": " << partition.getNumRegs() << " x "
       << partition.getNumThreads();
  }
  int64_t ctas = kernel.getCtasPerSmOrDefault();
  if (ctas < 1 || ctas > 4)
    return kernel.emitOpError()
           << "ctas_per_sm must be in [1, 4], got " << ctas;
  if (std::optional<int64_t> records = kernel.getTraceRecords())
    if (!TraceLayout::isValidRecordsPerLane(*records))
      return kernel.emitOpError()
             << "trace_records must be a power of two in ["
             << TraceLayout::minRecordsPerLane << ", "
             << TraceLayout::maxRecordsPerLane << "], got " << *records;
  if (std::optional<int64_t> tiles = kernel.getTilesPerCta()) {
    if (*tiles < 1 || *tiles > std::numeric_limits<int32_t>::max())
      return kernel.emitOpError()
             << "tiles_per_cta must be in [1, "
             << std::numeric_limits<int32_t>::max() << "], got " << *tiles;
    // A chunked grid has a CTA per few tiles; a strided walk would give each
    // CTA tiles a whole grid apart.
    WalkResult strided = kernel.walk([](TileLoopOp loop) {
      return loop.getContiguous() ? WalkResult::advance()
                                  : WalkResult::interrupt();
    });
    if (strided.wasInterrupted())
      return kernel.emitOpError()
             << "tiles_per_cta (a chunked launch) needs contiguous tile loops";
  }
  // Two loops claiming from one counter would each see a part of the items.
  SmallVector<TileLoopOp> dynamicLoops;
  kernel.walk([&](TileLoopOp loop) {
    if (loop.getSchedule())
      dynamicLoops.push_back(loop);
  });
  if (dynamicLoops.size() > 1)
    return dynamicLoops[1].emitOpError()
           << "is a second dynamic tile loop in its kernel; the CTAs' claims "
              "of one counter must all walk one loop";
  // setmaxnreg moves registers within the pool the CTA was launched with; an
  // increase the pool cannot cover blocks forever.
  int64_t pool = kernel.getLaunchRegisterCap() * threads;
  if (registers > pool)
    return kernel.emitOpError()
           << "register budgets need " << registers << " registers ("
           << breakdown << "), more than the " << pool << " the CTA gets ("
           << threads << " threads x " << kernel.getLaunchRegisterCap()
           << " at launch, " << ctas << " CTA(s) per SM)";

  int64_t smemBudget = TargetLimits::sharedMemoryBudget(ctas);
  if (std::optional<int64_t> smem = kernel.getSmemBytes(); smem && *smem < 0)
    return kernel.emitOpError()
           << "smem_bytes must be non-negative, got " << *smem;
  if (std::optional<int64_t> base = kernel.getTmemBaseOffset();
      base &&
      (*base < 0 || *base % 8 != 0 ||
       *base > TargetLimits::maxSharedMemoryBytes - SlotState::tileRecordBytes))
    return kernel.emitOpError()
           << "tmem_base_offset must be a multiple of 8 in [0, "
           << TargetLimits::maxSharedMemoryBytes - SlotState::tileRecordBytes
           << "], got " << *base;
  if (std::optional<int64_t> smem = kernel.getSmemBytes();
      smem && *smem > smemBudget)
    return kernel.emitOpError()
           << "uses " << *smem << " bytes of shared memory, more than the "
           << smemBudget << " a CTA can have (" << ctas << " per SM)";

  if (std::optional<int64_t> columns = kernel.getTmemColumns()) {
    if (!kernel.isBlackwell())
      return kernel.emitOpError()
             << "has tmem_columns, but " << stringifyChip(kernel.getChip())
             << " has no tensor memory";
    if (*columns < 32 || *columns > TargetLimits::tmemColumns ||
        !llvm::isPowerOf2_64(*columns))
      return kernel.emitOpError()
             << "tmem_columns must be a power of two in [32, "
             << TargetLimits::tmemColumns << "], got " << *columns;
    for (ChannelOp channel : kernel.getChannels()) {
      std::optional<int64_t> end = channel.getTmemColumnsEnd();
      if (end && *end > *columns)
        return channel.emitOpError()
               << "tmem_slots reach column " << *end << ", past the "
               << *columns << " tmem_columns of the kernel";
    }
  }
  return success();
}

LogicalResult verifyChannelUsers(KernelOp kernel) {
  llvm::MapVector<Value, ChannelUsers> users;
  for (ChannelOp channel : kernel.getChannels()) {
    users[channel.getChannel()];
    if (channel.getChannelType().getMemorySpace() == MemorySpace::tmem &&
        !kernel.isBlackwell())
      return channel.emitOpError()
             << "lives in tensor memory, which "
             << stringifyChip(kernel.getChip()) << " does not have";
  }
  for (PartitionOp partition : kernel.getPartitions()) {
    WalkResult result = partition.walk([&](Operation *op) {
      Value channel = getProtocolChannel(op);
      if (!channel)
        return WalkResult::advance();
      ChannelUsers &entry = users[channel];
      if (isProducerOp(op))
        addUnique(entry.producers, partition);
      else if (isConsumerOp(op))
        addUnique(entry.consumers, partition);
      Operation *&first =
          isLoweredProtocolOp(op) ? entry.loweredOp : entry.protocolOp;
      if (!first)
        first = op;
      if (isa<CloseOp, PublishCloseOp>(op))
        entry.closed = true;
      if (isa<ConsumeOp>(op))
        entry.consumedInLoop = true;
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
  }
  for (auto &[value, entry] : users) {
    auto channel = value.getDefiningOp<ChannelOp>();
    if (!channel)
      return kernel.emitOpError() << "uses a channel not declared in it";
    StringRef name = channel.getName();
    if (entry.producers.empty())
      return channel.emitOpError()
             << "channel \"" << name << "\" has no producer partition";
    if (entry.producers.size() > 1)
      return channel.emitOpError()
             << "channel \"" << name << "\" is produced by two partitions, \""
             << entry.producers[0].getName() << "\" and \""
             << entry.producers[1].getName()
             << "\"; a channel has one producer";
    PartitionOp producer = entry.producers.front();
    if (entry.consumers.empty())
      return channel.emitOpError()
             << "channel \"" << name << "\" has no consumer partition";
    if (llvm::is_contained(entry.consumers, producer))
      return channel.emitOpError()
             << "channel \"" << name << "\" is produced and consumed by "
             << "partition \"" << producer.getName() << "\"";
    // The lowering replaces every protocol op of a kernel at once; a mix
    // would have two owners of the ring positions.
    if (entry.protocolOp && entry.loweredOp)
      return entry.loweredOp->emitOpError()
             << "uses channel \"" << name << "\" at the mbarrier level, but "
             << entry.protocolOp->getName()
             << " uses it through the channel protocol; "
                "warpspec-lower-protocol lowers all of a channel's protocol "
                "ops at once";
    // Whether a lowered consumer loop ends is the loop's business: it reads
    // the record of a warpspec.publish_close.
    if (entry.consumedInLoop && !entry.closed)
      return channel.emitOpError()
             << "channel \"" << name << "\" is never closed by its producer \""
             << producer.getName() << "\", so its consumers would never stop";
    if (entry.closed && !entry.consumedInLoop && !entry.loweredOp)
      return channel.emitOpError()
             << "channel \"" << name << "\" is closed, but no "
             << "warpspec.consume loop reads it";
    if (entry.closed && producer.getReplicas() != 1)
      return channel.emitOpError()
             << "channel \"" << name << "\" is closed by partition \""
             << producer.getName() << "\" with replicas("
             << producer.getReplicas()
             << "); only a single producer can end its consumers' loops";
    // Replicas take slots round-robin, producers and consumers alike: entry n
    // is produced by replica n % Rp and consumed by replica n % Rc. Each
    // slot's barriers must be used by one replica only, or a replica that
    // runs ahead could mistake a phase two laps old for the one it waits for
    // (parity waits alias); and replicated producers and consumers must
    // agree on who has which entry.
    int64_t producerReplicas = producer.getReplicas();
    if (producerReplicas > 1) {
      for (PartitionOp consumer : entry.consumers)
        if (consumer.getReplicas() != 1 &&
            static_cast<int64_t>(consumer.getReplicas()) != producerReplicas)
          return channel.emitOpError()
                 << "channel \"" << name << "\" is produced by "
                 << producerReplicas << " replicas of \"" << producer.getName()
                 << "\" and consumed by " << consumer.getReplicas()
                 << " replicas of \"" << consumer.getName()
                 << "\"; replicated ends must have the same count";
      if (channel.getDepth() % producerReplicas != 0)
        return channel.emitOpError()
               << "channel \"" << name << "\" has depth " << channel.getDepth()
               << ", which is not a multiple of the " << producerReplicas
               << " replicas of its producer \"" << producer.getName()
               << "\": each slot must belong to one replica so that its "
                  "barrier phases are waited for in order";
    }
    // Consumer partitions may differ in replicas (the sm_90a rotary
    // warpgroup and two consumers): each partition arrives once per entry
    // on the slot's empty barrier, and with the depth a multiple of each
    // partition's replicas every slot still belongs to one replica of each,
    // which waits for its phases in order; the producer refills a slot only
    // after all of them released it, so no waiter is a lap ahead.
    for (PartitionOp consumer : entry.consumers) {
      int64_t replicas = consumer.getReplicas();
      if (channel.getDepth() % replicas != 0)
        return channel.emitOpError()
               << "channel \"" << name << "\" has depth " << channel.getDepth()
               << ", which is not a multiple of the " << replicas
               << " replicas of its consumer \"" << consumer.getName()
               << "\": each slot must belong to one replica so that its "
                  "barrier phases are waited for in order";
    }
  }
  return success();
}

} // namespace

/// The lowering reads a memref.dim as a constant dimension of a kernel
/// parameter (Abi.cpp, emitDim), so its index must be one.
static LogicalResult verifyDims(KernelOp kernel) {
  WalkResult result = kernel.walk([](memref::DimOp dim) {
    auto type = dyn_cast<MemRefType>(dim.getSource().getType());
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!type) {
      dim.emitOpError() << "inside a warpspec.kernel needs a ranked memref";
      return WalkResult::interrupt();
    }
    if (!index || *index < 0 || *index >= type.getRank()) {
      InFlightDiagnostic diag = dim.emitOpError();
      diag << "inside a warpspec.kernel needs a constant dimension index in "
              "[0, "
           << type.getRank() << ")";
      if (index)
        diag << ", got " << *index;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// The function becomes the PTX entry of the same name.
static LogicalResult verifyKernelName(KernelOp kernel) {
  auto func = dyn_cast_or_null<func::FuncOp>(kernel->getParentOp());
  if (!func || TargetLimits::isValidPtxIdentifier(func.getSymName()))
    return success();
  return kernel.emitOpError()
         << "is the body of function @\"" << func.getSymName()
         << "\", which is not a valid PTX identifier: kernel names start "
            "with a letter, '_' or '$' and continue with letters, digits, "
            "'_' or '$'";
}

LogicalResult KernelOp::verifyRegions() {
  if (failed(verifyKernelName(*this)))
    return failure();
  for (Operation &op : getBody().front()) {
    if (isa<ChannelOp, PartitionOp, TraceAnchorOp>(op) ||
        isMemoryEffectFree(&op))
      continue;
    return op.emitOpError()
           << "is not allowed directly in a warpspec.kernel: only channels, "
              "partitions, side-effect-free values and the trace's start "
              "anchor are";
  }
  if (getPartitions().empty())
    return emitOpError() << "has no partitions";
  // Placed partitions (warpspec-dispatch-partitions) run on disjoint warps
  // and gather at disjoint named barriers.
  SmallVector<PartitionOp> placed;
  for (PartitionOp partition : getPartitions()) {
    if (!partition.isDispatched())
      continue;
    for (PartitionOp other : placed) {
      auto overlaps = [](int64_t a, int64_t aSize, int64_t b, int64_t bSize) {
        return a < b + bSize && b < a + aSize;
      };
      if (overlaps(*partition.getFirstWarp(),
                   partition.getNumWarps() * partition.getReplicas(),
                   *other.getFirstWarp(),
                   other.getNumWarps() * other.getReplicas()))
        return partition.emitOpError() << "runs on warps that partition \""
                                       << other.getName() << "\" runs on too";
      if (overlaps(*partition.getBarrierBase(), partition.getReplicas(),
                   *other.getBarrierBase(), other.getReplicas()))
        return partition.emitOpError()
               << "gathers at named barriers that partition \""
               << other.getName() << "\" uses too";
    }
    placed.push_back(partition);
  }
  // Ops appear only on the targets that have them.
  WalkResult targetCheck = walk([&](Operation *op) {
    bool blackwellOnly = isTensorMemoryOp(op);
    bool hopperOnly = isa<MmaOp>(op);
    if ((blackwellOnly && !isBlackwell()) || (hopperOnly && isBlackwell())) {
      op->emitOpError() << "is not available on " << stringifyChip(getChip())
                        << (hopperOnly ? " (use warpspec.mma_async into "
                                         "tensor memory)"
                                       : " (no tensor memory)");
      return WalkResult::interrupt();
    }
    // tcgen05.mma and tcgen05.commit are issued by one thread, and a commit
    // tracks the MMAs of the thread that issues it: both belong to the
    // single-thread MMA role, whose commits the channel barriers count.
    auto release = dyn_cast<ReleaseOp>(op);
    auto arrive = dyn_cast<ArriveEmptyOp>(op);
    bool afterMma =
        (release && release.getAfterMma()) || (arrive && arrive.getAfterMma());
    if (afterMma && !isBlackwell()) {
      op->emitOpError() << "with after_mma is not available on "
                        << stringifyChip(getChip()) << " (no tcgen05.commit)";
      return WalkResult::interrupt();
    }
    auto partition = op->getParentOfType<PartitionOp>();
    if ((afterMma || isa<MmaAsyncOp>(op)) && partition &&
        partition.getRole() != Role::mma) {
      op->emitOpError() << (afterMma ? "with after_mma" : "")
                        << (afterMma ? " " : "")
                        << "must be in a role(mma) partition (one thread "
                           "issues the MMAs and commits them), not in \""
                        << partition.getName() << "\"";
      return WalkResult::interrupt();
    }
    // The rotary ops split a tile over every thread of the replica (and
    // meet at its barrier); a load or MMA partition runs its body on one.
    if (isa<RotateOp, RotateTileOp, RotaryAnglesOp>(op) && partition &&
        partition.isSingleThreaded()) {
      op->emitOpError() << "needs every thread of its partition, but only "
                           "one thread of the role("
                        << stringifyRole(partition.getRole())
                        << ") partition \"" << partition.getName()
                        << "\" runs its body";
      return WalkResult::interrupt();
    }
    // A consumer reads the position its producer committed with the tile.
    if (auto position = dyn_cast<TilePositionOp>(op)) {
      bool committed =
          llvm::any_of(position.getChannel().getUsers(), [](Operation *user) {
            auto acquire = dyn_cast<AcquireOp>(user);
            return acquire &&
                   llvm::any_of(acquire.getSlot().getUsers(), [](Operation *u) {
                     auto commit = dyn_cast<CommitOp>(u);
                     return commit && commit.getPosition();
                   });
          });
      if (!committed) {
        op->emitOpError() << "reads a position that no warpspec.commit of the "
                             "channel carries (commit ... position(%p))";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (targetCheck.wasInterrupted())
    return failure();
  if (failed(verifyDims(*this)) || failed(verifyBudgets(*this)) ||
      failed(verifyChannelUsers(*this)))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// ChannelOp
//===----------------------------------------------------------------------===//

/// Tensor-memory columns one slot of the channel spans (one per 32-bit cell
/// of a row, buffers side by side).
static int64_t tmemSlotColumns(ChannelType type) {
  int64_t columns = 0;
  for (Type bufferType : type.getBufferTypes())
    columns += cast<BufferType>(bufferType).getTmemColumns();
  return columns;
}

std::optional<int64_t> ChannelOp::getTmemColumnsEnd() {
  std::optional<ArrayRef<int64_t>> slots = getTmemSlots();
  if (!slots || !inTensorMemory())
    return std::nullopt;
  int64_t end = 0;
  for (size_t s = 1; s < slots->size(); s += 2)
    end = std::max(end, (*slots)[s] + tmemSlotColumns(getChannelType()));
  return end;
}

LogicalResult ChannelOp::verify() {
  if (getDepth() > SlotState::maxDepth)
    return emitOpError() << "channel \"" << getName() << "\" has depth "
                         << getDepth() << ", more than the "
                         << SlotState::maxDepth
                         << " slots whose barriers and tile records ("
                         << SlotState::bytesPerSlot
                         << " bytes each) fit in the "
                         << TargetLimits::maxSharedMemoryBytes
                         << " bytes of shared memory";
  // The planned offsets address shared memory of the CTA.
  for (auto [name, value] : {std::pair<StringRef, std::optional<int64_t>>{
                                 "buffer_offset", getBufferOffset()},
                             {"slot_stride", getSlotStride()},
                             {"barrier_offset", getBarrierOffset()},
                             {"info_offset", getInfoOffset()},
                             {"rows_offset", getRowsOffset()}})
    if (value && (*value < 0 || *value > TargetLimits::maxSharedMemoryBytes))
      return emitOpError() << name << " must be in [0, "
                           << TargetLimits::maxSharedMemoryBytes << "], got "
                           << *value;
  std::optional<ArrayRef<int64_t>> slots = getTmemSlots();
  if (!slots)
    return success();
  if (!inTensorMemory())
    return emitOpError() << "has tmem_slots, but its buffers live in shared "
                            "memory";
  if (static_cast<int64_t>(slots->size()) != 2 * getDepth())
    return emitOpError() << "tmem_slots must hold a lane and a column per "
                            "slot ("
                         << 2 * getDepth() << " values), got " << slots->size();
  int64_t width = tmemSlotColumns(getChannelType());
  for (size_t s = 0; s < slots->size(); s += 2) {
    int64_t lane = (*slots)[s], column = (*slots)[s + 1];
    if (lane < 0 || lane >= TargetLimits::tmemLanes || column < 0 ||
        column > TargetLimits::tmemColumns - width)
      return emitOpError() << "tmem_slots of slot " << s / 2 << " (lane "
                           << lane << ", column " << column << ", " << width
                           << " columns wide) leave the tensor memory of "
                           << TargetLimits::tmemLanes << " lanes x "
                           << TargetLimits::tmemColumns << " columns";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// PartitionOp
//===----------------------------------------------------------------------===//

/// Roles print as a bare keyword: `role(load)`.
static ParseResult parseRole(OpAsmParser &parser, RoleAttr &role) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<Role> parsed = symbolizeRole(keyword);
  if (!parsed)
    return parser.emitError(loc)
           << "unknown partition role '" << keyword << "'; expected "
           << spellCases<Role>(getMaxEnumValForRole(), " or ");
  role = RoleAttr::get(parser.getContext(), *parsed);
  return success();
}

static void printRole(OpAsmPrinter &printer, Operation *, RoleAttr role) {
  printer << stringifyRole(role.getValue());
}

/// `increase` or `decrease`, as a bare keyword (the generic enum printer
/// would put a second space before it).
static ParseResult parseRegisterAction(OpAsmParser &parser,
                                       RegisterActionAttr &action) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<RegisterAction> parsed = symbolizeRegisterAction(keyword);
  if (!parsed)
    return parser.emitError(loc)
           << "unknown register action '" << keyword << "'; expected "
           << spellCases<RegisterAction>(getMaxEnumValForRegisterAction(),
                                         " or ");
  action = RegisterActionAttr::get(parser.getContext(), *parsed);
  return success();
}

static void printRegisterAction(OpAsmPrinter &printer, Operation *,
                                RegisterActionAttr action) {
  printer << stringifyRegisterAction(action.getValue());
}

bool PartitionOp::usesTensorMemory() {
  return walk([](Operation *op) {
           return isTensorMemoryOp(op) ? WalkResult::interrupt()
                                       : WalkResult::advance();
         })
      .wasInterrupted();
}

LogicalResult PartitionOp::verify() {
  int64_t warps = getNumWarps();
  if (warps <= 0 || warps % TargetLimits::warpgroupWarps != 0)
    return emitOpError() << "partition \"" << getName() << "\" has " << warps
                         << " warps; partitions are made of whole warpgroups "
                            "(multiples of 4 warps) so that setmaxnreg can set "
                            "their registers";
  if (warps > TargetLimits::maxWarpsPerCta)
    return emitOpError() << "partition \"" << getName() << "\" has " << warps
                         << " warps, more than the "
                         << TargetLimits::maxWarpsPerCta << " ("
                         << TargetLimits::maxThreadsPerCta
                         << " threads) a CTA can have";
  int64_t regs = getNumRegs();
  if (regs < 24 || regs > 256 || regs % 8 != 0)
    return emitOpError() << "partition \"" << getName() << "\" asks for "
                         << regs
                         << " registers per thread; setmaxnreg takes a "
                            "multiple of 8 in [24, 256]";
  int64_t maxReplicas = TargetLimits::maxWarpsPerCta / warps;
  if (getReplicas() < 1 || getReplicas() > maxReplicas)
    return emitOpError() << "replicas must be in [1, " << maxReplicas << "] ("
                         << TargetLimits::maxWarpsPerCta
                         << " warps a CTA at most, " << warps
                         << " per replica), got " << getReplicas();
  if (getFirstWarp().has_value() != getBarrierBase().has_value())
    return emitOpError() << "has one of first_warp and barrier_base; a placed "
                            "partition has both";
  if (std::optional<int64_t> first = getFirstWarp()) {
    int64_t end = *first + warps * getReplicas();
    if (*first < 0 || end > TargetLimits::maxWarpsPerCta)
      return emitOpError() << "runs on warps [" << *first << ", " << end
                           << "), outside the " << TargetLimits::maxWarpsPerCta
                           << " warps a CTA can have";
    int64_t base = *getBarrierBase();
    if (base < 1 || base + getReplicas() > TargetLimits::namedBarriers)
      return emitOpError() << "gathers its replicas at named barriers [" << base
                           << ", " << base + getReplicas()
                           << "); a CTA has barriers 1 to "
                           << TargetLimits::namedBarriers - 1
                           << " besides the CTA-wide barrier 0";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// TileLoopOp
//===----------------------------------------------------------------------===//

ParseResult TileLoopOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::Argument> args;
  OpAsmParser::UnresolvedOperand cuSeqlens, numHeads, numTokens;
  Type cuType;
  int64_t blockSize;
  Builder &b = parser.getBuilder();
  if (parser.parseArgumentList(args, OpAsmParser::Delimiter::Paren) ||
      parser.parseKeyword("in") || parser.parseOperand(cuSeqlens) ||
      parser.parseColonType(cuType) || parser.parseKeyword("heads") ||
      parser.parseLParen() || parser.parseOperand(numHeads) ||
      parser.parseRParen() || parser.parseKeyword("tokens") ||
      parser.parseLParen() || parser.parseOperand(numTokens) ||
      parser.parseRParen() || parser.parseKeyword("block_size") ||
      parser.parseLParen() || parser.parseInteger(blockSize) ||
      parser.parseRParen())
    return failure();
  result.addAttribute(getBlockSizeAttrName(result.name),
                      b.getI64IntegerAttr(blockSize));
  if (succeeded(parser.parseOptionalKeyword("contiguous")))
    result.addAttribute(getContiguousAttrName(result.name), b.getUnitAttr());
  if (succeeded(parser.parseOptionalKeyword("packed"))) {
    int64_t packed;
    if (parser.parseLParen() || parser.parseInteger(packed) ||
        parser.parseRParen())
      return failure();
    result.addAttribute(getPackedAttrName(result.name),
                        b.getI64IntegerAttr(packed));
  }
  // dynamic(%schedule : type)
  OpAsmParser::UnresolvedOperand schedule;
  Type scheduleType;
  bool dynamic = succeeded(parser.parseOptionalKeyword("dynamic"));
  if (dynamic && (parser.parseLParen() || parser.parseOperand(schedule) ||
                  parser.parseColonType(scheduleType) || parser.parseRParen()))
    return failure();
  for (OpAsmParser::Argument &arg : args)
    arg.type = b.getI32Type();
  // iter_args(%a = %init, ...) -> (types)
  SmallVector<OpAsmParser::Argument> iterArgs;
  SmallVector<OpAsmParser::UnresolvedOperand> inits;
  if (succeeded(parser.parseOptionalKeyword("iter_args"))) {
    if (parser.parseAssignmentList(iterArgs, inits) ||
        parser.parseArrowTypeList(result.types))
      return failure();
    if (iterArgs.size() != result.types.size())
      return parser.emitError(parser.getNameLoc())
             << "iter_args has " << iterArgs.size() << " values but "
             << result.types.size() << " types";
    for (auto [arg, type] : llvm::zip(iterArgs, result.types))
      arg.type = type;
  }
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes) ||
      parser.resolveOperand(cuSeqlens, cuType, result.operands) ||
      parser.resolveOperand(numHeads, b.getIndexType(), result.operands) ||
      parser.resolveOperand(numTokens, b.getIndexType(), result.operands) ||
      (dynamic &&
       parser.resolveOperand(schedule, scheduleType, result.operands)) ||
      parser.resolveOperands(inits, result.types, parser.getNameLoc(),
                             result.operands))
    return failure();
  result.getOrAddProperties<Properties>().operandSegmentSizes = {
      1, 1, 1, dynamic ? 1 : 0, static_cast<int32_t>(inits.size())};
  llvm::append_range(args, iterArgs);
  Region *body = result.addRegion();
  return parser.parseRegion(*body, args);
}

void TileLoopOp::print(OpAsmPrinter &p) {
  p << " (";
  Block &body = getBody().front();
  llvm::interleaveComma(body.getArguments().drop_back(getInits().size()), p,
                        [&](BlockArgument arg) { p.printOperand(arg); });
  p << ") in " << getCuSeqlens() << " : " << getCuSeqlens().getType()
    << " heads(" << getNumHeads() << ") tokens(" << getNumTokens()
    << ") block_size(" << getBlockSize() << ")";
  if (getContiguous())
    p << " contiguous";
  if (std::optional<uint64_t> packed = getPacked())
    p << " packed(" << *packed << ")";
  if (Value schedule = getSchedule())
    p << " dynamic(" << schedule << " : " << schedule.getType() << ")";
  if (!getInits().empty()) {
    p << " iter_args(";
    llvm::interleaveComma(
        llvm::zip(getRegionIterArgs(), getInits()), p, [&](auto pair) {
          p << std::get<0>(pair) << " = " << std::get<1>(pair);
        });
    p << ") -> (" << getResultTypes() << ")";
  }
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(),
      {getBlockSizeAttrName(), getContiguousAttrName(), getPackedAttrName(),
       getOperandSegmentSizesAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

LogicalResult TileLoopOp::verify() {
  auto type = dyn_cast<MemRefType>(getCuSeqlens().getType());
  if (!type || type.getRank() != 1 ||
      !type.getElementType().isSignlessInteger(32))
    return emitOpError() << "cu_seqlens must be a rank-1 memref of i32, got "
                         << getCuSeqlens().getType();
  // Rows are i32 (cu_seqlens, the body's arguments).
  if (getBlockSize() <= 0 ||
      getBlockSize() > std::numeric_limits<int32_t>::max())
    return emitOpError() << "block_size must be in [1, "
                         << std::numeric_limits<int32_t>::max() << "], got "
                         << getBlockSize();
  if (Value schedule = getSchedule()) {
    // [next item, finished CTAs] (the op's description).
    auto scheduleType = dyn_cast<MemRefType>(schedule.getType());
    if (!scheduleType ||
        scheduleType.getShape() != ArrayRef<int64_t>{kScheduleWords} ||
        !scheduleType.getElementType().isSignlessInteger(32))
      return emitOpError() << "dynamic schedule must be a memref<"
                           << kScheduleWords << "xi32>, got "
                           << schedule.getType();
    if (getContiguous())
      return emitOpError() << "cannot be both contiguous and dynamic: a "
                              "dynamic schedule hands out single items";
    // One thread claims for the CTA; each thread of several would take
    // items of its own.
    if (auto partition = (*this)->getParentOfType<PartitionOp>();
        partition && !partition.isSingleThreaded())
      return emitOpError() << "with a dynamic schedule must run on one "
                              "thread, in a load or mma partition, not in '"
                           << partition.getName() << "' (role "
                           << stringifyRole(partition.getRole()) << ")";
  }
  if (getInits().getTypes() != getResultTypes())
    return emitOpError() << "iter_args types " << getInits().getTypes()
                         << " differ from the result types "
                         << getResultTypes();
  Block &body = getBody().front();
  size_t carried = getInits().size();
  size_t tileArgs =
      body.getNumArguments() >= carried ? body.getNumArguments() - carried : 0;
  SmallVector<Type> argTypes(body.getArgumentTypes());
  if ((tileArgs != 3 && tileArgs != 4) ||
      !llvm::all_of(ArrayRef<Type>(argTypes).take_front(tileArgs),
                    [](Type t) { return t.isSignlessInteger(32); }) ||
      ArrayRef<Type>(argTypes).drop_front(tileArgs) !=
          ArrayRef<Type>(llvm::to_vector(getResultTypes())))
    return emitOpError() << "body must take three i32 arguments (row, rows, "
                            "head), and optionally a fourth (the position of "
                            "the row inside its sequence), then one per "
                            "iter_args value";
  if (std::optional<uint64_t> packed = getPacked()) {
    // Byte q of the block ends is the end of the q-th block (at most 64).
    int64_t k = static_cast<int64_t>(*packed);
    if (k < 2 || k > 4 || !llvm::isPowerOf2_64(k) || k * getBlockSize() != 64)
      return emitOpError() << "packed(" << k << ") must put 2 or 4 blocks of "
                           << "block_size " << getBlockSize()
                           << " into a 64-row tile";
    if (tileArgs != 4)
      return emitOpError() << "with packed, the body must take a fourth i32 "
                              "argument: the tile's block ends";
  }
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield) {
    if (carried)
      return emitOpError() << "with iter_args must end its body with a "
                              "warpspec.yield of their next values";
    return success();
  }
  if (yield.getValues().getTypes() != getResultTypes())
    return yield.emitOpError()
           << "yields " << yield.getValues().getTypes()
           << ", but the enclosing warpspec.tile_loop carries "
           << getResultTypes();
  return success();
}

//===----------------------------------------------------------------------===//
// AcquireOp
//===----------------------------------------------------------------------===//

LogicalResult AcquireOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  auto channel = dyn_cast<ChannelType>(operands[0].getType());
  if (!channel)
    return failure();
  inferredReturnTypes.push_back(SlotType::get(context));
  llvm::append_range(inferredReturnTypes, channel.getBufferTypes());
  return success();
}

//===----------------------------------------------------------------------===//
// Slots
//===----------------------------------------------------------------------===//

Value mlir::warpspec::getSlotChannel(Value slot) {
  if (auto acquire = slot.getDefiningOp<AcquireOp>())
    return acquire.getChannel();
  if (auto get = slot.getDefiningOp<GetOp>())
    return get.getChannel();
  if (auto arg = dyn_cast<BlockArgument>(slot))
    if (auto consume =
            dyn_cast_or_null<ConsumeOp>(arg.getOwner()->getParentOp()))
      if (arg.getArgNumber() == 0)
        return consume.getChannel();
  return Value();
}

Value mlir::warpspec::getBufferSlot(Value buffer) {
  if (auto acquire = buffer.getDefiningOp<AcquireOp>())
    return acquire.getSlot();
  if (auto get = buffer.getDefiningOp<GetOp>())
    return get.getSlot();
  if (auto arg = dyn_cast<BlockArgument>(buffer))
    if (auto consume =
            dyn_cast_or_null<ConsumeOp>(arg.getOwner()->getParentOp()))
      if (arg.getArgNumber() >= 4)
        return consume.getSlot();
  return Value();
}

/// Whether `slot` was taken by a consumer (warpspec.get or
/// warpspec.consume), as opposed to acquired by the producer.
static bool isConsumerSlot(Value slot) {
  return !slot.getDefiningOp<AcquireOp>();
}

/// A slot is what an acquire, a get or a consume took; nothing else makes
/// one (a block argument of another op, in the generic form, is none).
static LogicalResult verifySlotOperand(Operation *op, Value slot) {
  if (getSlotChannel(slot))
    return success();
  return op->emitOpError()
         << "slot operand must be the slot of a warpspec.acquire, a "
            "warpspec.get or a warpspec.consume";
}

/// The users of `slot` of type OpTy (its commits or releases), those in one
/// block in program order.
template <typename OpTy>
static SmallVector<OpTy> slotUsers(Value slot) {
  SmallVector<OpTy> users;
  for (Operation *user : slot.getUsers())
    if (auto typed = dyn_cast<OpTy>(user))
      users.push_back(typed);
  llvm::sort(users, [](OpTy a, OpTy b) {
    return a->getBlock() == b->getBlock() && a->isBeforeInBlock(b);
  });
  return users;
}

/// Reports the first op strictly between `from` and `to` (one block), or
/// nested in one, that `pred` selects. A `to` before `from` is left to the
/// dominance check.
static LogicalResult verifyNoneBetween(Operation *from, Operation *to,
                                       function_ref<bool(Operation *)> pred,
                                       StringRef message) {
  if (!from->isBeforeInBlock(to))
    return success();
  for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode()) {
    WalkResult result = op->walk([&](Operation *inner) {
      if (!pred(inner))
        return WalkResult::advance();
      inner->emitOpError() << message;
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      return failure();
  }
  return success();
}

/// The slots of `channel` one replica of the partition holding `op` may
/// hold at once: the ring's depth over the partition's replicas (each
/// replica takes every R-th slot), or 1 where either is not known here.
static int64_t slotsPerReplica(Operation *op, Value channel) {
  auto ring = channel.getDefiningOp<ChannelOp>();
  auto partition = op->getParentOfType<PartitionOp>();
  if (!ring || !partition || partition.getReplicas() < 1)
    return 1;
  return std::max<int64_t>(1, static_cast<int64_t>(ring.getDepth()) /
                                  partition.getReplicas());
}

/// The producer fills its slots in ring order: the slot is committed
/// exactly once, in the acquire's block, before the close of the channel.
/// It may acquire the next slots before it commits this one (the sm_100a
/// backward at block size 128 above head dim 128 accumulates both query
/// halves' S over the head dim's chunks, one ring slot each), in the same
/// block, as many as its share of the ring's slots, and commits them in the
/// order it acquired them.
LogicalResult AcquireOp::verify() {
  Value channel = getChannel();
  SmallVector<CommitOp> commits = slotUsers<CommitOp>(getSlot());
  if (commits.empty())
    return emitOpError() << "acquired slot is never committed";
  if (commits.size() > 1)
    return commits[1].emitOpError()
           << "commits a slot that is already committed; each acquired slot "
              "is committed once";
  CommitOp commit = commits.front();
  if (commit->getBlock() != (*this)->getBlock())
    return commit.emitOpError()
           << "commits a slot that was not acquired in the same block";
  int64_t share = slotsPerReplica(getOperation(), channel);
  int64_t held = 1;
  if (failed(verifyNoneBetween(
          getOperation(), commit,
          [&](Operation *op) {
            auto acquire = dyn_cast<AcquireOp>(op);
            if (!acquire || acquire.getChannel() != channel)
              return false;
            // Another slot acquired while this one is held: in this block,
            // within the share, and committed after this one.
            SmallVector<CommitOp> later =
                slotUsers<CommitOp>(acquire.getSlot());
            bool inOrder = acquire->getBlock() == (*this)->getBlock() &&
                           later.size() == 1 &&
                           commit->isBeforeInBlock(later.front());
            return !inOrder || ++held > share;
          },
          "acquires a slot of the channel while the previous one is not "
          "committed (a producer holds at most depth / replicas slots of a "
          "ring at once, acquired in one block and committed in the order "
          "acquired)")) ||
      failed(verifyNoneBetween(
          getOperation(), commit,
          [&](Operation *op) {
            auto close = dyn_cast<CloseOp>(op);
            return close && close.getChannel() == channel;
          },
          "closes the channel while an acquired slot is not committed")))
    return failure();
  if (!getL2Prefetch())
    return success();
  DominanceInfo dominance;
  bool hasCopies = false;
  for (Value buffer : getBuffers()) {
    for (Operation *user : buffer.getUsers()) {
      auto load = dyn_cast<TmaLoadOp>(user);
      if (!load)
        continue;
      hasCopies = true;
      for (Value coordinate : {load.getRow(), load.getHead()})
        if (!dominance.properlyDominates(coordinate, getOperation()))
          return emitOpError()
                 << "with l2_prefetch needs the coordinates of the copies "
                    "into its slot before it, but a warpspec.tma_load uses "
                    "one computed after it";
    }
  }
  if (!hasCopies)
    return emitOpError() << "with l2_prefetch has no warpspec.tma_load into "
                            "its slot to prefetch for";
  return success();
}

LogicalResult
GetOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                        ValueRange operands, DictionaryAttr attributes,
                        OpaqueProperties properties, RegionRange regions,
                        SmallVectorImpl<Type> &inferredReturnTypes) {
  auto channel = dyn_cast<ChannelType>(operands[0].getType());
  if (!channel)
    return failure();
  inferredReturnTypes.push_back(SlotType::get(context));
  llvm::append_range(inferredReturnTypes, channel.getBufferTypes());
  return success();
}

/// Printed as `%slot, %buf:N = ...`.
static void nameSlotResults(Value slot, ValueRange buffers,
                            OpAsmSetValueNameFn setNameFn) {
  setNameFn(slot, "slot");
  if (!buffers.empty())
    setNameFn(buffers.front(), "buf");
}

void AcquireOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  nameSlotResults(getSlot(), getBuffers(), setNameFn);
}

void GetOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  nameSlotResults(getSlot(), getBuffers(), setNameFn);
}

/// A consumer takes the slots of a ring in order: the slot is released
/// exactly once, in the get's block. It may take the next slots before it
/// releases this one (the sm_100a block-128 backward's MMA warp holds both
/// query halves' P and dS), in the same block, as many as its share of the
/// ring's slots, and releases them in the order it took them.
LogicalResult GetOp::verify() {
  Value channel = getChannel();
  SmallVector<ReleaseOp> releases = slotUsers<ReleaseOp>(getSlot());
  if (releases.empty())
    return emitOpError() << "slot is never released";
  if (releases.size() > 1)
    return releases[1].emitOpError()
           << "releases a slot that is already released; each slot is "
              "released once";
  ReleaseOp release = releases.front();
  if (release->getBlock() != (*this)->getBlock())
    return release.emitOpError()
           << "releases a slot that was not taken in the same block";
  int64_t share = slotsPerReplica(getOperation(), channel);
  int64_t held = 1;
  return verifyNoneBetween(
      getOperation(), release,
      [&](Operation *op) {
        auto get = dyn_cast<GetOp>(op);
        if (!get || get.getChannel() != channel)
          return false;
        // Another slot taken while this one is held: in this block, within
        // the share, and released after this one.
        SmallVector<ReleaseOp> later = slotUsers<ReleaseOp>(get.getSlot());
        bool inOrder = get->getBlock() == (*this)->getBlock() &&
                       later.size() == 1 &&
                       release->isBeforeInBlock(later.front());
        return !inOrder || ++held > share;
      },
      "takes a slot of the channel while the previous one is not released "
      "(a consumer holds at most depth / replicas slots of a ring at once, "
      "taken in one block and released in the order taken)");
}

//===----------------------------------------------------------------------===//
// ConsumeOp
//===----------------------------------------------------------------------===//

ParseResult ConsumeOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand channel;
  SmallVector<OpAsmParser::Argument> args;
  Type type;
  if (parser.parseOperand(channel) ||
      parser.parseArgumentList(args, OpAsmParser::Delimiter::Paren) ||
      parser.parseColonType(type) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes) ||
      parser.resolveOperand(channel, type, result.operands))
    return failure();
  auto channelType = dyn_cast<ChannelType>(type);
  if (!channelType)
    return parser.emitError(parser.getNameLoc(),
                            "expected a !warpspec.channel type");
  size_t expected = 4 + channelType.getBufferTypes().size();
  if (args.size() != expected)
    return parser.emitError(parser.getNameLoc())
           << "expected " << expected
           << " block arguments (slot, row, rows, head, then one per buffer)";
  Type i32 = parser.getBuilder().getI32Type();
  args[0].type = SlotType::get(parser.getContext());
  for (size_t i = 1; i < args.size(); ++i)
    args[i].type = i < 4 ? i32 : channelType.getBufferTypes()[i - 4];
  return parser.parseRegion(*result.addRegion(), args);
}

void ConsumeOp::print(OpAsmPrinter &p) {
  p << ' ' << getChannel() << " (";
  llvm::interleaveComma(getBody().getArguments(), p,
                        [&](BlockArgument arg) { p.printOperand(arg); });
  p << ") : " << getChannel().getType();
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs());
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

LogicalResult ConsumeOp::verifyRegions() {
  auto type = cast<ChannelType>(getChannel().getType());
  Block &body = getBody().front();
  SmallVector<Type> expected = {SlotType::get(getContext())};
  expected.append(3, IntegerType::get(getContext(), 32));
  llvm::append_range(expected, type.getBufferTypes());
  if (body.getArgumentTypes() != ArrayRef<Type>(expected))
    return emitOpError() << "body arguments must be (!warpspec.slot slot, i32 "
                            "row, i32 rows, i32 head) followed by the "
                            "channel's buffers";
  SmallVector<ReleaseOp> releases = slotUsers<ReleaseOp>(getSlot());
  if (releases.size() != 1)
    return emitOpError() << "body must release the slot exactly once, found "
                         << releases.size() << " releases";
  if (releases.front()->getBlock() != &body)
    return releases.front().emitOpError()
           << "releases the slot of the enclosing warpspec.consume from a "
              "nested block; the body releases it directly, once per slot";
  // A get of the same channel takes a second slot, which would need a second
  // release: the one release then gives back the get's slot, never the
  // consume's, and the producer stalls once the ring is full.
  WalkResult gets = getBody().walk([&](GetOp get) {
    if (get.getChannel() != getChannel())
      return WalkResult::advance();
    get.emitOpError() << "takes a slot of the channel the enclosing "
                         "warpspec.consume iterates over; the consume's own "
                         "slot would never be released";
    return WalkResult::interrupt();
  });
  return failure(gets.wasInterrupted());
}

Value CommitOp::getChannel() { return getSlotChannel(getSlot()); }
Value ReleaseOp::getChannel() { return getSlotChannel(getSlot()); }
Value TilePositionOp::getChannel() { return getSlotChannel(getSlot()); }

LogicalResult CommitOp::verify() {
  if (failed(verifySlotOperand(getOperation(), getSlot())))
    return failure();
  if (isConsumerSlot(getSlot()))
    return emitOpError() << "commits a slot that a consumer took; a consumer "
                            "gives its slots back with warpspec.release";
  return success();
}

/// A slot's release (`warpspec.release`, `warpspec.arrive_empty`) waits
/// either for the MMAs reading it or for the bulk stores staged in it, not
/// both: `after_mma` arrives by tcgen05.commit.
static LogicalResult verifyArrivalWaits(Operation *op, bool afterMma,
                                        bool afterStores) {
  if (afterMma && afterStores)
    return op->emitOpError() << "after_mma arrives by tcgen05.commit, which "
                                "does not wait for bulk stores: choose "
                                "after_mma or after_stores";
  return success();
}

LogicalResult ReleaseOp::verify() {
  if (failed(verifySlotOperand(getOperation(), getSlot())))
    return failure();
  if (!isConsumerSlot(getSlot()))
    return emitOpError() << "releases a slot that the producer acquired; the "
                            "producer publishes its slots with "
                            "warpspec.commit";
  return verifyArrivalWaits(getOperation(), getAfterMma(), getAfterStores());
}

LogicalResult TilePositionOp::verify() {
  if (failed(verifySlotOperand(getOperation(), getSlot())))
    return failure();
  if (!isConsumerSlot(getSlot()))
    return emitOpError() << "reads the position of a slot that the producer "
                            "acquired; a consumer reads the position the "
                            "producer committed with the slot";
  return success();
}

//===----------------------------------------------------------------------===//
// The lowered protocol
//===----------------------------------------------------------------------===//

/// What every op of the lowered protocol needs: to run in a partition, on a
/// declared channel, and, when its slot index is a constant, on a slot the
/// ring has.
static LogicalResult verifyRingOp(Operation *op, Value channel, Value stage) {
  if (!op->getParentOfType<PartitionOp>())
    return op->emitOpError() << "must be inside a warpspec.partition";
  auto decl = channel.getDefiningOp<ChannelOp>();
  if (!decl)
    return op->emitOpError()
           << "channel operand must be declared by a warpspec.channel";
  APInt index;
  if (stage && matchPattern(stage, m_ConstantInt(&index)) &&
      (index.isNegative() || index.getSExtValue() >= decl.getDepth()))
    return op->emitOpError()
           << "slot " << index.getSExtValue() << " is not in [0, "
           << decl.getDepth() << "), the slots of channel \"" << decl.getName()
           << "\"";
  return success();
}

LogicalResult ReplicaIdOp::verify() {
  if (!(*this)->getParentOfType<PartitionOp>())
    return emitOpError() << "must be inside a warpspec.partition";
  return success();
}

LogicalResult SetMaxRegistersOp::verify() {
  int64_t count = getCount();
  if (count < 24 || count > 256 || count % 8 != 0)
    return emitOpError() << "sets " << count
                         << " registers per thread; setmaxnreg takes a "
                            "multiple of 8 in [24, 256]";
  auto kernel = (*this)->getParentOfType<KernelOp>();
  int64_t cap = kernel.getLaunchRegisterCap();
  bool increase = getAction() == RegisterAction::increase;
  // At the launch's count only a partition that asks for its setmaxnreg
  // anyway (explicit_regs) has one, and then `increase` (what
  // warpspec-dispatch-partitions emits; ptxas takes either).
  if (count == cap) {
    auto partition = cast<PartitionOp>((*this)->getParentOp());
    if (!partition.getExplicitRegs())
      return emitOpError() << "keeps the registers at " << count
                           << " per thread, what the kernel is launched with, "
                              "in partition \""
                           << partition.getName()
                           << "\", which is not `explicit` (explicit_regs)";
    if (!increase)
      return emitOpError() << "sets the registers to the launch's " << count
                           << " per thread with `decrease`; an explicit "
                              "partition's setmaxnreg at that count is "
                              "`increase`";
    return success();
  }
  if (increase ? count < cap : count > cap)
    return emitOpError() << "would " << stringifyRegisterAction(getAction())
                         << " the registers to " << count
                         << " per thread, but the kernel is launched with "
                         << cap;
  return success();
}

LogicalResult PartitionIndexOp::verify() {
  auto partition = cast<PartitionOp>((*this)->getParentOp());
  if (!partition.isDispatched())
    return emitOpError() << "is in partition \"" << partition.getName()
                         << "\", which is not placed (no first_warp)";
  if (!llvm::hasSingleElement(
          partition.getBody().front().getOps<PartitionIndexOp>()))
    return emitOpError() << "is one of several in partition \""
                         << partition.getName() << "\"; it has one";
  return success();
}

/// Whether `thread` is the thread result of a `warpspec.partition_index`.
static LogicalResult verifyThreadOperand(Operation *op, Value thread) {
  auto index = thread.getDefiningOp<PartitionIndexOp>();
  if (!index || index.getThread() != thread)
    return op->emitOpError() << "takes a thread that is not the `thread` "
                                "result of a warpspec.partition_index";
  return success();
}

LogicalResult SingleThreadOp::verify() {
  return verifyThreadOperand(getOperation(), getThread());
}

LogicalResult TmemReleaseOp::verify() {
  if (failed(verifyThreadOperand(getOperation(), getThread())))
    return failure();
  if (!getArrive() && !getDealloc())
    return emitOpError() << "neither arrives nor deallocates";
  if (getGather() && !getArrive())
    return emitOpError() << "gathers the replica but does not arrive";
  auto partition = cast<PartitionOp>((*this)->getParentOp());
  auto kernel = partition->getParentOfType<KernelOp>();
  if (!kernel.getTmemColumns() || !kernel.getTmemBaseOffset())
    return emitOpError() << "releases tensor memory in a kernel that has no "
                            "placed allocation (run warpspec-allocate-tmem "
                            "and warpspec-allocate-smem)";
  if (getDealloc() && partition.getFirstWarp() != 0)
    return emitOpError() << "deallocates, but the partition does not run on "
                            "warp 0, which allocated the tensor memory";
  return success();
}

LogicalResult RingSlotOp::verify() {
  return verifyRingOp(getOperation(), getChannel(), Value());
}

LogicalResult WaitEmptyOp::verify() {
  return verifyRingOp(getOperation(), getChannel(), getStage());
}

LogicalResult WaitFullOp::verify() {
  return verifyRingOp(getOperation(), getChannel(), getStage());
}

LogicalResult ExpectTxOp::verify() {
  if (failed(verifyRingOp(getOperation(), getChannel(), getStage())))
    return failure();
  auto type = cast<ChannelType>(getChannel().getType());
  if (type.getMemorySpace() != MemorySpace::smem)
    return emitOpError() << "expects copies into a tensor-memory slot; only "
                            "shared-memory slots are filled by TMA";
  int64_t slotBytes = type.getSlotSizeInBytes();
  if (getBytes() < 1 || getBytes() > slotBytes)
    return emitOpError() << "expects " << getBytes()
                         << " bytes, but the copies into one slot deliver "
                            "between 1 and its "
                         << slotBytes << " bytes";
  return success();
}

LogicalResult SlotBuffersOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  auto channel = dyn_cast<ChannelType>(operands[0].getType());
  if (!channel)
    return failure();
  llvm::append_range(inferredReturnTypes, channel.getBufferTypes());
  return success();
}

LogicalResult SlotBuffersOp::verify() {
  return verifyRingOp(getOperation(), getChannel(), getStage());
}

LogicalResult PublishOp::verify() {
  return verifyRingOp(getOperation(), getChannel(), getStage());
}

LogicalResult PublishCloseOp::verify() {
  return verifyRingOp(getOperation(), getChannel(), getStage());
}

LogicalResult ReadTileOp::verify() {
  return verifyRingOp(getOperation(), getChannel(), getStage());
}

LogicalResult ArriveEmptyOp::verify() {
  if (failed(
          verifyArrivalWaits(getOperation(), getAfterMma(), getAfterStores())))
    return failure();
  return verifyRingOp(getOperation(), getChannel(), getStage());
}

//===----------------------------------------------------------------------===//
// Tile operations
//===----------------------------------------------------------------------===//

static bool isSixteenBit(Type type) { return type.isBF16() || type.isF16(); }

/// The tile a TMA copy or prefetch moves: rows of one head of a rank-3
/// [tokens, heads, head_dim] memref, as a 2-D 16-bit shared-memory tile of
/// whole swizzled chunks (32 elements, 64 bytes, at least: 64-column chunks
/// with the 128-byte swizzle where the width allows, else 32-column chunks
/// with the 64-byte swizzle) and at most 256 rows (a TMA box).
static LogicalResult verifyTmaTile(Operation *op, Type sourceType,
                                   BufferType dest, StringRef what,
                                   std::optional<int64_t> colOffset = {}) {
  auto source = dyn_cast<MemRefType>(sourceType);
  if (!source || source.getRank() != 3)
    return op->emitOpError() << "source must be a rank-3 memref [tokens, "
                                "heads, head_dim], got "
                             << sourceType;
  if (dest.getMemorySpace() != MemorySpace::smem)
    return op->emitOpError() << what << " must be a shared-memory buffer";
  if (source.getElementType() != dest.getElementType())
    return op->emitOpError()
           << "source element type " << source.getElementType()
           << " differs from the buffer's " << dest.getElementType();
  if (!isSixteenBit(dest.getElementType()))
    return op->emitOpError() << "only 16-bit elements are supported, got "
                             << dest.getElementType();
  ArrayRef<int64_t> shape = dest.getShape();
  if (shape.size() != 2)
    return op->emitOpError() << what << " must be a 2-D tile, got " << dest;
  // A part of the head dimension: whole chunks of the buffer's swizzle
  // (its layout, nvdesc::SwizzledTile), inside the source's static head dim.
  if (colOffset) {
    int64_t chunk = dest.getLayoutChunkCols();
    if (*colOffset < 0 || *colOffset % chunk != 0 || source.isDynamicDim(2) ||
        *colOffset + shape[1] > source.getDimSize(2))
      return op->emitOpError()
             << "col_offset " << *colOffset << " with a buffer of " << shape[1]
             << " columns must be a multiple of " << chunk
             << " and stay inside the source's static head dimension";
  } else if (source.isDynamicDim(2) || source.getDimSize(2) != shape[1])
    return op->emitOpError()
           << "buffer has " << shape[1]
           << " columns, but the source's head dimension is "
           << (source.isDynamicDim(2) ? std::string("dynamic")
                                      : std::to_string(source.getDimSize(2)));
  if (shape[1] % 32 != 0)
    return op->emitOpError() << "the head dimension must be a multiple of 32 "
                                "elements (whole 64- or 128-byte swizzled "
                                "chunks), got "
                             << shape[1];
  if (shape[0] > 256)
    return op->emitOpError()
           << "a TMA box has at most 256 rows, got " << shape[0];
  return success();
}

/// Pair-complete chunks (pair_halves) are pieces of `chunk_cols = C`
/// columns, each an ordinary box: chunk i of 2 C columns from chunk j
/// (col_offset 2 C j) holds columns C (j + i) and their partners D / 2 on,
/// inside the halves of a static head dim that are whole pieces.
static LogicalResult verifyPairHalves(Operation *op, Type sourceType,
                                      BufferType dest,
                                      std::optional<int64_t> colOffset) {
  auto source = cast<MemRefType>(sourceType);
  int64_t piece = dest.getChunkCols();
  if (!piece)
    return op->emitOpError() << "pair_halves loads pieces of a buffer with a "
                                "chunk_cols layout, got "
                             << dest;
  int64_t d = source.isDynamicDim(2) ? 0 : source.getDimSize(2);
  int64_t offset = colOffset.value_or(0);
  int64_t cols = dest.getShape()[1];
  int64_t chunk = 2 * piece;
  if (cols % chunk != 0 || d % chunk != 0 || offset % chunk != 0 ||
      offset / 2 + cols / 2 > d / 2)
    return op->emitOpError()
           << "pair_halves loads a buffer of whole " << chunk
           << "-column chunks (two " << piece
           << "-column pieces) at a col_offset that is a "
              "multiple of "
           << chunk
           << " with its pieces inside the halves of a static "
              "head dim that is a multiple of "
           << chunk << ", got " << dest << " at col_offset " << offset
           << " of head dim " << (d ? std::to_string(d) : "?");
  return success();
}

/// An asynchronous copy (warpspec.tma_load, warpspec.copy_positions)
/// completes on the full barrier of its destination's slot: the slot a
/// producer acquired, or, once the protocol is lowered, the slot of a
/// warpspec.slot_buffers.
static LogicalResult verifySlotDestination(Operation *op, Value dest) {
  if (!dest.getDefiningOp<AcquireOp>() && !dest.getDefiningOp<SlotBuffersOp>())
    return op->emitOpError()
           << "destination must be a buffer of a slot acquired by the "
              "producer (or, lowered, of a warpspec.slot_buffers)";
  return success();
}

LogicalResult TmaLoadOp::verify() {
  if (failed(verifyTmaTile(getOperation(), getSource().getType(),
                           getDest().getType(), "destination", getColOffset())))
    return failure();
  if (getPairHalves() &&
      failed(verifyPairHalves(getOperation(), getSource().getType(),
                              getDest().getType(), getColOffset())))
    return failure();
  return verifySlotDestination(*this, getDest());
}

LogicalResult TmaPrefetchOp::verify() {
  if (failed(verifyTmaTile(getOperation(), getSource().getType(), getTileType(),
                           "tile", getColOffset())))
    return failure();
  if (getPairHalves())
    return verifyPairHalves(getOperation(), getSource().getType(),
                            getTileType(), getColOffset());
  return success();
}

LogicalResult MmaOp::verify() {
  Type aType = getA().getType();
  ArrayRef<int64_t> aShape;
  Type aElement;
  if (auto buffer = dyn_cast<BufferType>(aType)) {
    aShape = buffer.getShape();
    aElement = buffer.getElementType();
  } else {
    auto acc = cast<AccType>(aType);
    aShape = acc.getShape();
    aElement = acc.getElementType();
  }
  BufferType b = getB().getType();
  AccType d = getResult().getType();
  if (aShape.size() != 2 || b.getShape().size() != 2 ||
      d.getShape().size() != 2)
    return emitOpError() << "operands must be 2-D tiles";
  if (!isSixteenBit(aElement) || b.getElementType() != aElement)
    return emitOpError() << "A and B must have the same 16-bit element type, "
                            "got "
                         << aElement << " and " << b.getElementType();
  if (!d.getElementType().isF32())
    return emitOpError() << "the accumulator must be f32";
  if (getTransposeA() && !isa<BufferType>(aType))
    return emitOpError() << "transpose_a needs A in shared memory: a register "
                            "A operand is always K-major";
  if (getAcc() && getAcc().getType() != d)
    return emitOpError() << "the added accumulator must have the result's "
                            "type "
                         << d << ", got " << getAcc().getType();
  if (getAcc() && !isa<BufferType>(aType))
    return emitOpError() << "an added accumulator needs A in shared memory";
  int64_t m = getTransposeA() ? aShape[1] : aShape[0];
  int64_t k = getTransposeA() ? aShape[0] : aShape[1];
  int64_t bk = getTransposeB() ? b.getShape()[1] : b.getShape()[0];
  int64_t n = getTransposeB() ? b.getShape()[0] : b.getShape()[1];
  if (bk != k)
    return emitOpError() << "A is " << m << "x" << k << " but B has " << bk
                         << " rows along K"
                         << (getTransposeB() ? " (transpose_b)" : "");
  if (d.getShape()[0] != m || d.getShape()[1] != n)
    return emitOpError() << "result must be " << m << "x" << n;
  if (m != 64)
    return emitOpError() << "M must be 64 (one warpgroup's tile), got " << m;
  if (n % 8 != 0 || n > 256 || k % 16 != 0)
    return emitOpError() << "N must be a multiple of 8 up to 256 and K a "
                            "multiple of 16, got N="
                         << n << " K=" << k;
  if (auto buffer = dyn_cast<BufferType>(aType);
      buffer && buffer.getMemorySpace() != MemorySpace::smem)
    return emitOpError() << "a buffer A operand must be in shared memory";
  if (b.getMemorySpace() != MemorySpace::smem)
    return emitOpError() << "B must be in shared memory";
  return success();
}

LogicalResult ColumnChunkOp::verify() {
  BufferType source = getSource().getType();
  BufferType result = getResult().getType();
  if (source.getMemorySpace() != MemorySpace::smem ||
      result.getMemorySpace() != MemorySpace::smem)
    return emitOpError() << "views shared-memory buffers only";
  if (source.getShape().size() != 2 || !isSixteenBit(source.getElementType()))
    return emitOpError() << "source must be a 2-D 16-bit buffer, got "
                         << source;
  int64_t cols = source.getShape()[1];
  // The chunk width of the swizzled layout (nvdesc::SwizzledTile).
  int64_t chunk = source.getLayoutChunkCols();
  if (cols % 32 != 0)
    return emitOpError()
           << "buffers hold whole swizzled chunks (a multiple of 32 columns)";
  if (result.getElementType() != source.getElementType() ||
      result.getShape() != ArrayRef<int64_t>{source.getShape()[0], chunk})
    return emitOpError() << "result must be one chunk of the source ("
                         << source.getShape()[0] << " rows x " << chunk
                         << " columns of its element type), got " << result;
  if (getIndex() < 0 ||
      static_cast<uint64_t>(getIndex()) >= static_cast<uint64_t>(cols / chunk))
    return emitOpError() << "chunk index " << getIndex()
                         << " is outside the source's " << cols / chunk
                         << " chunks";
  return success();
}

LogicalResult PinOp::verify() {
  auto buffer = dyn_cast<BufferType>(getSource().getType());
  if (buffer && buffer.getMemorySpace() != MemorySpace::smem)
    return emitOpError() << "pins shared-memory buffers only";
  return success();
}

LogicalResult MaskBlocksOp::verify() {
  AccType scores = getScores().getType();
  if (scores.getShape().size() != 2 || !scores.getElementType().isF32())
    return emitOpError() << "scores must be a 2-D f32 tile";
  int64_t rows = scores.getShape()[0], cols = scores.getShape()[1];
  int64_t b = static_cast<int64_t>(getBlock());
  // Four block ends fit the i32, a byte each.
  if (rows != cols || rows > 255 || b <= 0 || !llvm::isPowerOf2_64(b) ||
      b >= rows || rows % b || rows / b > 4)
    return emitOpError() << "block(" << b << ") must be a power of two that "
                         << "cuts the square tile (" << rows << "x" << cols
                         << ") into 2 to 4 blocks";
  return success();
}

LogicalResult SoftmaxOp::verify() {
  AccType scores = getScores().getType();
  AccType probs = getProbs().getType();
  if (scores.getShape().size() != 2 || !scores.getElementType().isF32())
    return emitOpError() << "scores must be a 2-D f32 tile";
  if (probs.getShape() != scores.getShape())
    return emitOpError() << "probabilities must have the scores' shape";
  Type pElement = probs.getElementType();
  if (!isSixteenBit(pElement) && !pElement.isF32())
    return emitOpError() << "probabilities must be bf16, f16 or f32";
  RowsType sums = getRowSums().getType();
  if (sums.getNumRows() != scores.getShape()[0] ||
      !sums.getElementType().isF32())
    return emitOpError() << "row sums must be !warpspec.rows<"
                         << scores.getShape()[0] << "xf32>";
  if (Value lse = getLse())
    if (lse.getType() != sums)
      return emitOpError() << "the log-sum-exp must be !warpspec.rows<"
                           << scores.getShape()[0] << "xf32>";
  if (std::optional<uint64_t> block = getBlock()) {
    int64_t rows = scores.getShape()[0], cols = scores.getShape()[1];
    int64_t b = static_cast<int64_t>(*block);
    if (b <= 0 || !llvm::isPowerOf2_64(b) || b >= rows || rows % b || cols % b)
      return emitOpError() << "block(" << b
                           << ") must be a power of two below the tile's "
                           << rows << " rows that divides its rows and " << cols
                           << " columns";
  }
  // Full tiles are masked too under causal and block: the branch would
  // save nothing.
  if (getFullTilePath() && (getCausal() || getBlock()))
    return emitOpError() << "full_tile_path does not go with "
                         << (getCausal() ? "causal" : "block")
                         << " (its mask applies to full tiles too)";
  if (std::optional<uint64_t> offset = getRowOffset()) {
    if (!getCausal())
      return emitOpError() << "row_offset needs causal (it shifts the causal "
                              "mask's rows)";
    int64_t cols = scores.getShape()[1];
    if (static_cast<int64_t>(*offset) >= cols)
      return emitOpError() << "row_offset(" << static_cast<int64_t>(*offset)
                           << ") must be below the tile's " << cols
                           << " columns";
  }
  if (Value offset = getDynamicRowOffset()) {
    if (!getCausal())
      return emitOpError() << "dynamic_row_offset needs causal (it shifts the "
                              "causal mask's rows)";
    // One offset: the lowering adds one to the rows, and two would be a
    // recipe's mistake rather than a sum it meant.
    if (getRowOffset())
      return emitOpError()
             << "takes row_offset or dynamic_row_offset, not both";
    // A constant offset is checked as row_offset is; a run-time one (a
    // replica's query half) is the recipe's to keep in range.
    APInt value;
    if (matchPattern(offset, m_ConstantInt(&value))) {
      int64_t cols = scores.getShape()[1];
      if (value.isNegative() || value.getSExtValue() >= cols)
        return emitOpError()
               << "dynamic_row_offset(" << value.getSExtValue()
               << ") must be in [0, " << cols << "), the tile's columns";
    }
  }
  return success();
}

/// The memref of warpspec.store_rows and warpspec.load_rows: f32 [H, T] with
/// a unit-stride token dimension; `rows` values must be f32.
static LogicalResult verifyRowsMemref(Operation *op, Value memref,
                                      RowsType rows) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || type.getRank() != 2 || !type.getElementType().isF32() ||
      failed(type.getStridesAndOffset(strides, offset)) || strides[1] != 1)
    return op->emitOpError() << "memref must be f32 [heads, tokens] with a "
                                "unit-stride token dimension, got "
                             << memref.getType();
  if (!rows.getElementType().isF32())
    return op->emitOpError()
           << "row values must be f32, got " << rows.getElementType();
  return success();
}

LogicalResult StoreRowsOp::verify() {
  return verifyRowsMemref(*this, getDest(), getValue().getType());
}

LogicalResult LoadRowsOp::verify() {
  return verifyRowsMemref(*this, getSource(), getValue().getType());
}

LogicalResult ScratchOp::verify() {
  BufferType type = getBuffer().getType();
  if (type.getMemorySpace() != MemorySpace::smem)
    return emitOpError() << "scratch buffers live in shared memory";
  if (type.getShape().size() != 2)
    return emitOpError() << "scratch buffers are 2-D tiles";
  return success();
}

LogicalResult WriteOp::verify() {
  AccType value = getValue().getType();
  BufferType dest = getDest().getType();
  if (!isSixteenBit(dest.getElementType()))
    return emitOpError() << "only 16-bit buffers can be written, got "
                         << dest.getElementType();
  if (value.getShape() != dest.getShape() ||
      (value.getElementType() != dest.getElementType() &&
       !value.getElementType().isF32()))
    return emitOpError() << "tile " << value << " does not match buffer "
                         << dest;
  if (dest.getShape().size() != 2)
    return emitOpError() << "only 2-D tiles can be written, got " << dest;
  if (getStmatrix() && dest.getShape()[1] % 16)
    return emitOpError() << "stmatrix needs a multiple of 16 columns (two "
                            "8x8 matrices side by side), got "
                         << dest.getShape()[1];
  if (dest.getMemorySpace() != MemorySpace::smem)
    return emitOpError() << "destination must be in shared memory";
  if (dest.getShape()[1] % 32 != 0)
    return emitOpError()
           << "buffers hold whole swizzled chunks (a multiple of 32 columns)";
  return success();
}

/// The types of warpspec.store's optional operands, each after a comma:
/// `[, !warpspec.rows<...>] [, !warpspec.buffer<...>]`. Two optional groups
/// of ODS could not tell them apart (with `via` but no `divide_by`, the
/// buffer type would be taken for divide_by's), so the kind of type decides.
static ParseResult parseStoreOptionalTypes(OpAsmParser &parser, Type &divideBy,
                                           Type &staging) {
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc loc = parser.getCurrentLocation();
    Type type;
    if (parser.parseType(type))
      return failure();
    if (isa<RowsType>(type) && !divideBy && !staging)
      divideBy = type;
    else if (isa<BufferType>(type) && !staging)
      staging = type;
    else
      return parser.emitError(loc)
             << "expected the divide_by type (!warpspec.rows), then the "
                "staging type (!warpspec.buffer), got "
             << type;
  }
  return success();
}

static void printStoreOptionalTypes(OpAsmPrinter &printer, Operation *,
                                    Type divideBy, Type staging) {
  if (divideBy)
    printer << ", " << divideBy;
  if (staging)
    printer << ", " << staging;
}

LogicalResult MmaAsyncOp::verify() {
  BufferType a = getA().getType(), b = getB().getType(),
             d = getDest().getType();
  if (a.getShape().size() != 2 || b.getShape().size() != 2 ||
      d.getShape().size() != 2)
    return emitOpError() << "operands must be 2-D tiles";
  if (d.getMemorySpace() != MemorySpace::tmem || !d.getElementType().isF32())
    return emitOpError() << "the destination must be an f32 tensor-memory "
                            "buffer, got "
                         << d;
  if (b.getMemorySpace() != MemorySpace::smem)
    return emitOpError() << "B must be in shared memory";
  if (a.getMemorySpace() == MemorySpace::tmem && getTransposeA())
    return emitOpError() << "an A operand in tensor memory is always K-major: "
                            "transpose_a needs A in shared memory";
  if (!isSixteenBit(a.getElementType()) ||
      a.getElementType() != b.getElementType())
    return emitOpError() << "A and B must have the same 16-bit element type, "
                            "got "
                         << a.getElementType() << " and " << b.getElementType();
  int64_t m = getTransposeA() ? a.getShape()[1] : a.getShape()[0];
  int64_t k = getTransposeA() ? a.getShape()[0] : a.getShape()[1];
  int64_t bk = getTransposeB() ? b.getShape()[1] : b.getShape()[0];
  int64_t n = getTransposeB() ? b.getShape()[0] : b.getShape()[1];
  if (bk != k)
    return emitOpError() << "A is " << m << "x" << k << " but B has " << bk
                         << " rows along K";
  if (d.getShape()[0] != m || d.getShape()[1] != n)
    return emitOpError() << "the destination must be " << m << "x" << n;
  if (m != 64 || n % 8 != 0 || n > 256 || k % 16 != 0)
    return emitOpError() << "tcgen05.mma with M = 64 needs N a multiple of 8 "
                            "up to 256 and K a multiple of 16, got M="
                         << m << " N=" << n << " K=" << k;
  return success();
}

LogicalResult TmemLoadOp::verify() {
  BufferType source = getSource().getType();
  AccType result = getResult().getType();
  if (source.getMemorySpace() != MemorySpace::tmem ||
      !source.getElementType().isF32())
    return emitOpError() << "the source must be an f32 tensor-memory buffer";
  if (source.getShape() != result.getShape() ||
      !result.getElementType().isF32())
    return emitOpError() << "the result must be an f32 tile of the buffer's "
                            "shape";
  if (source.getShape().size() != 2 || source.getShape()[0] != 64 ||
      source.getShape()[1] % 8 != 0)
    return emitOpError() << "tensor-memory tiles have 64 rows and a multiple "
                            "of 8 columns";
  // tcgen05.ld 16x256b reads .x1 to .x32 groups of 8 columns (4 registers
  // a thread each); a count that is not a power of two (96 columns: 12) is
  // loaded in power-of-two pieces.
  if (source.getShape()[1] > 256)
    return emitOpError() << "tcgen05.ld 16x256b reads at most 256 columns "
                            "(128 registers a thread), got "
                         << source.getShape()[1];
  return success();
}

LogicalResult TmemStoreOp::verify() {
  AccType value = getValue().getType();
  BufferType dest = getDest().getType();
  if (dest.getMemorySpace() != MemorySpace::tmem)
    return emitOpError() << "the destination must be in tensor memory";
  if (!isSixteenBit(value.getElementType()) ||
      value.getElementType() != dest.getElementType() ||
      value.getShape() != dest.getShape())
    return emitOpError() << "stores a 16-bit tile into a buffer of its shape "
                            "and element type (P for a tensor-memory A "
                            "operand)";
  if (dest.getShape()[0] != 64 || dest.getShape()[1] % 16 != 0)
    return emitOpError() << "tensor-memory tiles have 64 rows and a multiple "
                            "of 16 columns here";
  // tcgen05.st 16x128b writes .x1 to .x64 groups of 4 packed 32-bit columns;
  // a 16-column group of 16-bit elements is .x2.
  int64_t groups = dest.getShape()[1] / 8;
  if (!llvm::isPowerOf2_64(groups) || groups > 64)
    return emitOpError() << "tcgen05.st 16x128b writes 16, 32, 64, 128, 256 "
                            "or 512 columns of 16-bit elements, got "
                         << dest.getShape()[1];
  return success();
}

/// Rotary angles come from f32 tables [max_position, head_dim / 2] (cos and
/// sin) or from `theta`; positions, if given, are i32 [tokens].
/// A positions tensor, if any: a rank-1 memref of i32 [T].
static LogicalResult verifyPositionsMemref(Operation *op, Value positions) {
  if (!positions)
    return success();
  auto type = dyn_cast<MemRefType>(positions.getType());
  if (!type || type.getRank() != 1 ||
      !type.getElementType().isSignlessInteger(32))
    return op->emitOpError() << "positions must be a rank-1 memref of i32, got "
                             << positions.getType();
  return success();
}

/// The positions of the rotary ops: a positions tensor, or the tile's
/// positions in a slot of the load ring (warpspec.copy_positions), one per
/// row of the `rows` rows the op turns.
static LogicalResult verifyPositionsSource(Operation *op, Value positions,
                                           int64_t rows) {
  if (!positions || isa<MemRefType>(positions.getType()))
    return verifyPositionsMemref(op, positions);
  auto buffer = cast<BufferType>(positions.getType());
  if (buffer.getShape().size() != 1 || buffer.getShape()[0] < rows ||
      buffer.getMemorySpace() != MemorySpace::smem ||
      !buffer.getElementType().isSignlessInteger(32))
    return op->emitOpError() << "positions in shared memory must be a 1-D i32 "
                                "buffer of at least the tile's "
                             << rows << " rows, got " << buffer;
  return success();
}

static LogicalResult verifyRotaryOperands(Operation *op, int64_t headDim,
                                          int64_t rows, Value cos, Value sin,
                                          Value positions,
                                          std::optional<APFloat> theta) {
  if (headDim % 16 != 0)
    return op->emitOpError() << "rotary embeddings need a head dim that is a "
                                "multiple of 16, got "
                             << headDim;
  if (bool(cos) != bool(sin))
    return op->emitOpError() << "cos and sin tables must be given together";
  if (bool(cos) == bool(theta))
    return op->emitOpError()
           << "needs either cos/sin tables or a theta, not both or neither";
  if (theta) {
    double value = theta->convertToDouble();
    if (!std::isfinite(value) || value <= 1.0)
      return op->emitOpError()
             << "theta must be finite and greater than 1, got " << value;
  }
  for (Value table : {cos, sin}) {
    if (!table)
      continue;
    auto type = cast<MemRefType>(table.getType());
    if (type.getRank() != 2 || !type.getElementType().isF32() ||
        type.getDimSize(1) != headDim / 2 || !type.getLayout().isIdentity())
      return op->emitOpError() << "rotary tables must be contiguous memref<?x"
                               << headDim / 2 << "xf32>, got " << type;
  }
  return verifyPositionsSource(op, positions, rows);
}

/// A rotated tile that is a part of wider rows (head_dim, pair_offset on
/// warpspec.rotate and warpspec.rotate_tile): its pairs must be pairs of the
/// rows (half-split, the tile's two halves hold a run of first elements and
/// their partners, so that run must lie in the rows' first half).
static LogicalResult verifyRowPart(Operation *op, int64_t width,
                                   int64_t headDim, int64_t firstPair,
                                   bool hasPairOffset) {
  if (headDim < width || headDim % 16 != 0 || width % 16 != 0)
    return op->emitOpError()
           << "head_dim must be a multiple of 16 no smaller than the tile's "
           << width << " columns (also a multiple of 16), got " << headDim;
  if (hasPairOffset && (firstPair < 0 || firstPair % 8 != 0 ||
                        firstPair + width / 2 > headDim / 2))
    return op->emitOpError()
           << "pair_offset must be a multiple of 8 with the tile's "
           << width / 2 << " pairs within the rows' " << headDim / 2 << ", got "
           << firstPair;
  return success();
}

LogicalResult RotateOp::verify() {
  if (getSources().empty() || getSources().size() != getDests().size())
    return emitOpError() << "needs as many destinations as sources (at least "
                            "one), got "
                         << getSources().size() << " and " << getDests().size();
  BufferType first = cast<BufferType>(getSources().front().getType());
  for (Value tile : llvm::concat<Value>(getSources(), getDests())) {
    auto type = cast<BufferType>(tile.getType());
    if (type != first || type.getMemorySpace() != MemorySpace::smem ||
        !isSixteenBit(type.getElementType()) || type.getShape().size() != 2)
      return emitOpError() << "rotates 16-bit shared-memory tiles of one "
                              "type, got "
                           << first << " and " << type;
  }
  if ((getHeadDim() || getPairOffset()) &&
      failed(verifyRowPart(*this, first.getShape()[1], getRowHeadDim(),
                           getFirstPair(), bool(getPairOffset()))))
    return failure();
  // Two runs of a half-split item's pairs, in the pass loop's body.
  if (getSplitItems() && (getInterleaved() || !getPassLoop()))
    return emitOpError() << "split_items turns half-split items in the "
                            "pass_loop, got "
                         << (getInterleaved() ? "interleaved pairs"
                                              : "no pass_loop");
  return verifyRotaryOperands(*this, getRowHeadDim(), first.getShape()[0],
                              getCos(), getSin(), getPositions(), getTheta());
}

LogicalResult RotateTileOp::verify() {
  AccType value = getValue().getType();
  if (value != getResult().getType() || !value.getElementType().isF32() ||
      value.getShape().size() != 2)
    return emitOpError() << "rotates an f32 register tile into one of the same "
                            "type, got "
                         << value << " and " << getResult().getType();
  // A part of rows of a wider head dim: its pairs must be pairs of the rows
  // (half-split, the tile's two halves hold a run of first elements and
  // their partners, so that run must lie in the rows' first half).
  int64_t width = value.getShape()[1], headDim = getRowHeadDim();
  if (getHeadDim() || getPairOffset()) {
    if (failed(verifyRowPart(*this, width, headDim, getFirstPair(),
                             bool(getPairOffset()))))
      return failure();
    if (getAngles())
      return emitOpError() << "a part of wider rows (head_dim, pair_offset) "
                              "reads its own angles, not angles(...)";
  }
  if ((getNarrowIndex() || getPinnedTableRows()) && !getCos())
    return emitOpError() << (getNarrowIndex() ? "narrow_index"
                                              : "pinned_table_rows")
                         << " applies to the cos and sin tables, got no tables";
  if (Value angles = getAngles()) {
    if (angles.getType() != value)
      return emitOpError() << "angles must be a tile of the rotated tile's "
                              "type "
                           << value << ", got " << angles.getType();
    if (getCos() || getTheta() || getPositions())
      return emitOpError() << "takes its angles either from angles(...) or "
                              "from tables or theta, not both";
    if (value.getShape()[1] % 16 != 0)
      return emitOpError() << "rotary embeddings need a head dim that is a "
                              "multiple of 16, got "
                           << value.getShape()[1];
    return success();
  }
  return verifyRotaryOperands(*this, headDim, value.getShape()[0], getCos(),
                              getSin(), getPositions(), getTheta());
}

/// The columns of an f32 register tile come in runs of 8 per thread (the
/// accumulator layout), so tiles are joined and split at multiples of 8.
static LogicalResult verifyColumnTile(Operation *op, AccType type,
                                      int64_t rows) {
  if (!type.getElementType().isF32() || type.getShape().size() != 2 ||
      type.getShape()[0] != rows || type.getShape()[1] % 8 != 0)
    return op->emitOpError()
           << "takes f32 register tiles of " << rows
           << " rows and a multiple of 8 columns, got " << type;
  return success();
}

LogicalResult ConcatColumnsOp::verify() {
  AccType result = getResult().getType();
  int64_t rows = result.getShape().empty() ? 0 : result.getShape()[0];
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  int64_t cols = 0;
  for (Value input : getInputs()) {
    auto type = cast<AccType>(input.getType());
    if (failed(verifyColumnTile(*this, type, rows)))
      return failure();
    cols += type.getShape()[1];
  }
  if (failed(verifyColumnTile(*this, result, rows)))
    return failure();
  if (result.getShape()[1] != cols)
    return emitOpError() << "the result must have the inputs' " << cols
                         << " columns, got " << result.getShape()[1];
  return success();
}

LogicalResult ExtractColumnsOp::verify() {
  AccType source = getSource().getType(), result = getResult().getType();
  int64_t rows = source.getShape().empty() ? 0 : source.getShape()[0];
  if (failed(verifyColumnTile(*this, source, rows)) ||
      failed(verifyColumnTile(*this, result, rows)))
    return failure();
  int64_t offset = static_cast<int64_t>(getOffset());
  if (offset < 0 || offset % 8 != 0 ||
      offset + result.getShape()[1] > source.getShape()[1])
    return emitOpError() << "columns [" << offset << ", "
                         << offset + result.getShape()[1]
                         << ") must start at a multiple of 8 within the "
                            "source's "
                         << source.getShape()[1];
  return success();
}

LogicalResult RotaryAnglesOp::verify() {
  AccType angles = getAngles().getType();
  if (!angles.getElementType().isF32() || angles.getShape().size() != 2)
    return emitOpError() << "produces an f32 register tile, got " << angles;
  if (Value read = getRowPositions()) {
    if (getPositions())
      return emitOpError() << "takes its rows' positions from a positions "
                              "tensor or from row_positions, not both";
    auto rows = cast<RowsType>(read.getType());
    if (rows.getNumRows() != angles.getShape()[0] ||
        !rows.getElementType().isSignlessInteger(32))
      return emitOpError() << "row_positions must be !warpspec.rows<"
                           << angles.getShape()[0] << "xi32>, got " << rows;
  }
  return verifyRotaryOperands(*this, angles.getShape()[1], angles.getShape()[0],
                              getCos(), getSin(), getPositions(), getTheta());
}

LogicalResult LoadPositionsOp::verify() {
  if (failed(verifyPositionsSource(*this, getPositions(),
                                   getValue().getType().getNumRows())))
    return failure();
  RowsType rows = getValue().getType();
  // The rows of one warpgroup's register tile (accumulatorLayout).
  if (rows.getNumRows() != 64 || !rows.getElementType().isSignlessInteger(32))
    return emitOpError() << "reads the positions of a 64-row register tile "
                            "into !warpspec.rows<64xi32>, got "
                         << rows;
  return success();
}

LogicalResult CopyPositionsOp::verify() {
  if (failed(verifyPositionsMemref(*this, getPositions())))
    return failure();
  BufferType dest = getDest().getType();
  if (dest.getShape().size() != 1 ||
      dest.getMemorySpace() != MemorySpace::smem ||
      !dest.getElementType().isSignlessInteger(32))
    return emitOpError() << "copies into a 1-D i32 shared-memory buffer, got "
                         << dest;
  return verifySlotDestination(*this, getDest());
}

LogicalResult SoftmaxGradOp::verify() {
  AccType p = getProbs().getType(), dp = getDprobs().getType();
  AccType ds = getGrad().getType();
  if (p.getShape().size() != 2 || !dp.getElementType().isF32() ||
      dp.getShape() != p.getShape() ||
      (!p.getElementType().isF32() && !isSixteenBit(p.getElementType())))
    return emitOpError() << "probabilities and their gradient must be tiles "
                            "of one shape, the gradient f32 and the "
                            "probabilities f32, bf16 or f16";
  if (ds.getShape() != p.getShape())
    return emitOpError() << "the result must have the probabilities' shape";
  if (!isSixteenBit(ds.getElementType()) && !ds.getElementType().isF32())
    return emitOpError() << "the result must be bf16, f16 or f32";
  if (Value dlse = getDlse()) {
    auto rows = cast<RowsType>(dlse.getType());
    if (rows.getNumRows() != p.getShape()[0] || !rows.getElementType().isF32())
      return emitOpError() << "dlse must be !warpspec.rows<" << p.getShape()[0]
                           << "xf32>, got " << dlse.getType();
  }
  return success();
}

/// A store of columns [offset, offset + cols) of the head dimension: whole
/// 32-column units inside the destination's static head dimension.
static LogicalResult verifyColumnChunk(StoreOp op, int64_t cols, int64_t offset,
                                       MemRefType dest) {
  // A multiple of 16: a 16-column piece of a half-split pair-complete
  // chunk at head dim 96 (columns 16 j and 48 + 16 j) is the narrowest part
  // stored; its rows are whole 16-byte units.
  if (offset < 0 || offset % 16 != 0 || dest.isDynamicDim(2) ||
      offset + cols > dest.getDimSize(2))
    return op.emitOpError()
           << "col_offset " << offset << " with a tile of " << cols
           << " columns must be a multiple of 16 and stay inside the "
              "destination's static head dimension";
  return success();
}

LogicalResult SubviewOp::verify() {
  BufferType source = getSource().getType(), result = getResult().getType();
  int64_t offset = getOffset();
  if (source.getShape().size() != 2 || result.getShape().size() != 2 ||
      source.getShape()[0] != result.getShape()[0] ||
      source.getElementType() != result.getElementType() ||
      source.getMemorySpace() != result.getMemorySpace())
    return emitOpError() << "result must be a 2-D buffer of the source's "
                            "rows, element type and memory space";
  int64_t cols = result.getShape()[1];
  if (offset < 0 || offset + cols > source.getShape()[1])
    return emitOpError() << "columns [" << offset << ", " << offset + cols
                         << ") are not inside the source's "
                         << source.getShape()[1];
  if (source.getMemorySpace() == MemorySpace::tmem) {
    if (!source.getElementType().isF32())
      return emitOpError() << "tensor-memory views are of f32 buffers";
    return success();
  }
  // Shared memory: whole chunks of the source, with the source's swizzle
  // (its layout: 64-column chunks where the width is a multiple of 64 unless
  // chunk_cols = 32, else 32; nvdesc::SwizzledTile).
  int64_t chunk = source.getLayoutChunkCols();
  if (offset % chunk != 0 || cols % chunk != 0 ||
      result.getLayoutChunkCols() != chunk)
    return emitOpError() << "a shared-memory view covers whole " << chunk
                         << "-column chunks of the source";
  return success();
}

/// Whether `staging` is a buffer of a ring slot: a buffer argument of a
/// `warpspec.consume` body or, once the protocol is lowered, a result of
/// `warpspec.slot_buffers`.
static bool isSlotBuffer(Value staging) {
  if (staging.getDefiningOp<SlotBuffersOp>())
    return true;
  auto arg = dyn_cast<BlockArgument>(staging);
  auto consume =
      arg ? dyn_cast_or_null<ConsumeOp>(arg.getOwner()->getParentOp())
          : ConsumeOp();
  return consume && llvm::is_contained(consume.getBufferArgs(), arg);
}

/// Whether `op` gives back the slot whose buffer `staging` is (isSlotBuffer),
/// and if so whether it waits for the bulk stores' reads (`after_stores`).
static std::optional<bool> releasesSlotOf(Operation *op, Value staging) {
  if (auto buffers = staging.getDefiningOp<SlotBuffersOp>()) {
    auto arrive = dyn_cast<ArriveEmptyOp>(op);
    if (arrive && arrive.getChannel() == buffers.getChannel() &&
        arrive.getStage() == buffers.getStage())
      return arrive.getAfterStores();
    return std::nullopt;
  }
  auto consume =
      cast<ConsumeOp>(cast<BlockArgument>(staging).getOwner()->getParentOp());
  auto release = dyn_cast<ReleaseOp>(op);
  if (release && release.getSlot() == consume.getSlot())
    return release.getAfterStores();
  return std::nullopt;
}

/// A store staged in a buffer of a ring slot its partition holds (the
/// tile's own inputs, no longer read): the threads' copy-out is done when
/// the store is, but a bulk store still reads the slot after it, so the
/// slot's release, later in the same block, must wait for it.
static LogicalResult verifySlotStaging(StoreOp store, Value staging) {
  if (!isSlotBuffer(staging))
    return store.emitOpError() << "staging buffer must be a warpspec.scratch "
                                  "of the partition or a buffer of a slot it "
                                  "holds";
  if (!store.getBulk())
    return success();
  for (Operation *op = store->getNextNode(); op; op = op->getNextNode())
    if (std::optional<bool> waits = releasesSlotOf(op, staging)) {
      if (*waits)
        return success();
      break;
    }
  return store.emitOpError()
         << "stages a bulk store in a slot's buffer, so the slot's release "
            "must follow it in the block and wait for the store to have "
            "read it (warpspec.release ... after_stores)";
}

LogicalResult StoreOp::verify() {
  AccType value = getValue().getType();
  auto dest = dyn_cast<MemRefType>(getDest().getType());
  if (value.getShape().size() != 2 || !value.getElementType().isF32())
    return emitOpError() << "value must be a 2-D f32 tile";
  if (getStmatrix() && !getStaging())
    return emitOpError() << "stmatrix writes the staging buffer: it needs "
                            "via(...)";
  if (getStmatrix() && value.getShape()[1] % 16)
    return emitOpError() << "stmatrix needs a multiple of 16 columns (two "
                            "8x8 matrices side by side), got "
                         << value.getShape()[1];
  if (!dest || dest.getRank() != 3)
    return emitOpError() << "destination must be a rank-3 memref [tokens, "
                            "heads, head_dim]";
  if (std::optional<int64_t> offset = getColOffset()) {
    if (failed(verifyColumnChunk(*this, value.getShape()[1], *offset, dest)))
      return failure();
  } else if (dest.isDynamicDim(2) ||
             dest.getDimSize(2) != value.getShape()[1]) {
    return emitOpError() << "tile has " << value.getShape()[1]
                         << " columns, but the destination's head dimension "
                            "differs";
  }
  if (!isSixteenBit(dest.getElementType()) && !dest.getElementType().isF32())
    return emitOpError() << "destination element type must be bf16, f16 or "
                            "f32";
  if (Value divide = getDivideBy()) {
    auto rows = cast<RowsType>(divide.getType());
    if (rows.getNumRows() != value.getShape()[0])
      return emitOpError() << "divide_by has " << rows.getNumRows()
                           << " rows, the tile " << value.getShape()[0];
  }
  if (getWideOffsets() && (!getPinnedSteps() || getStaging()))
    return emitOpError() << "wide_offsets applies to the pinned column of a "
                            "store without via: add pinned_steps, drop via";
  if (Value staging = getStaging()) {
    auto buffer = cast<BufferType>(staging.getType());
    if (buffer.getMemorySpace() != MemorySpace::smem ||
        buffer.getShape() != value.getShape() ||
        buffer.getElementType() != dest.getElementType() ||
        !isSixteenBit(buffer.getElementType()))
      return emitOpError()
             << "staging buffer must be a shared-memory tile of the value's "
                "shape and the destination's 16-bit element type, got "
             << buffer;
    // A pinned scratch buffer (warpspec.pin) is the scratch buffer itself.
    if (auto pin = staging.getDefiningOp<PinOp>())
      staging = pin.getSource();
    if (!staging.getDefiningOp<ScratchOp>() &&
        failed(verifySlotStaging(*this, staging)))
      return failure();
  } else if (getBulk()) {
    return emitOpError() << "bulk stores go through a staging buffer: add "
                            "via(%staging)";
  }
  // Whole swizzled chunks, or one 16-column piece (a box of 32-byte rows
  // under the 32-byte swizzle: a half-split pair-complete chunk's piece at
  // head dim 96).
  if (getBulk() && value.getShape()[1] % 32 != 0 && value.getShape()[1] != 16)
    return emitOpError()
           << "bulk stores copy whole swizzled chunks (a multiple of 32 "
              "columns, or one 16-column piece)";
  if (std::optional<int64_t> pending = getPendingReads()) {
    if (!getBulk())
      return emitOpError() << "pending_reads applies to bulk stores";
    if (*pending < 0 || *pending > 1)
      return emitOpError() << "pending_reads must be 0 or 1, got " << *pending;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Tracing
//===----------------------------------------------------------------------===//

std::optional<TraceLayout> KernelOp::getTraceLayout() {
  std::optional<int64_t> records = getTraceRecords();
  if (!records)
    return std::nullopt;
  TraceLayout layout;
  layout.recordsPerLane = *records;
  for (PartitionOp partition : getPartitions())
    layout.lanes += partition.getReplicas();
  return layout;
}

/// The trace ops need a traced kernel: its `trace_records` sizes the lanes.
static LogicalResult verifyTraced(Operation *op) {
  auto kernel = op->getParentOfType<KernelOp>();
  if (!kernel || !kernel.getTraceRecords())
    return op->emitOpError() << "is in a kernel that is not traced (no "
                                "trace_records: run warpspec-insert-trace)";
  return success();
}

LogicalResult TraceAnchorOp::verify() {
  if (getStart() == getEnd())
    return emitOpError() << "must be either `start` or `end`";
  if (failed(verifyTraced(getOperation())))
    return failure();
  auto partition = dyn_cast<PartitionOp>((*this)->getParentOp());
  // The start is read before the barrier that releases the roles, so that
  // no role's first event precedes it.
  if (getStart() && partition)
    return emitOpError() << "start is in partition \"" << partition.getName()
                         << "\": it must stand directly in the "
                            "warpspec.kernel, before the partitions start";
  if (getEnd() && !partition)
    return emitOpError() << "end must stand in the partition that runs on "
                            "warp 0, not directly in the warpspec.kernel";
  if (partition && partition.getFirstWarp() != 0)
    return emitOpError() << "is in partition \"" << partition.getName()
                         << "\", which does not run on warp 0 (thread 0 of "
                            "the CTA writes the anchors)";
  return success();
}

LogicalResult TraceLaneOp::verify() {
  if (failed(verifyTraced(getOperation())))
    return failure();
  if (failed(verifyThreadOperand(getOperation(), getThread())))
    return failure();
  auto index = getThread().getDefiningOp<PartitionIndexOp>();
  if (index.getReplica() != getReplica())
    return emitOpError() << "takes a replica that is not the `replica` "
                            "result of the partition's "
                            "warpspec.partition_index";
  return success();
}

LogicalResult TraceOp::verify() {
  if (getDetail() < 0 || getDetail() > 255)
    return emitOpError() << "detail must be in [0, 255] (one byte of the "
                            "event code), got "
                         << getDetail();
  auto lane = getLane().getDefiningOp<TraceLaneOp>();
  if (!lane)
    return emitOpError() << "takes a lane that is not the result of a "
                            "warpspec.trace_lane";
  if (lane->getParentOp() != (*this)->getParentOfType<PartitionOp>())
    return emitOpError() << "records into the lane of another partition";
  return success();
}

#define GET_OP_CLASSES
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.cpp.inc"
