//===- Plan.h - blockattn-warp-specialize's launch and tuning plan -*- C++
//-*-===//
//
// What a recipe builds is decided here, before any IR is built: from the
// kernel's shape (KernelShape) and the tuning options (TuningOptions), the
// launch (how tiles are dealt to CTAs, CTAs per SM), the depths of the
// rings, the consumers and the register budget of every warpgroup. These are
// pure functions, unit tested in unittests/Dialect/BlockAttn/Transforms; the
// measurements behind each default are in docs/performance-notes.md.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PLAN_H
#define BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PLAN_H

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnOps.h"

#include "mlir/Support/LLVM.h"

#include "blockattn/Dialect/BlockAttn/Transforms/Passes.h"
#include <algorithm>
#include <string>

namespace mlir::blockattn {

/// What the plan needs to know about the kernel: no IR, so that it can be
/// made up in a test.
struct KernelShape {
  bool backward = false;
  int64_t blockSize = 64;
  int64_t headDim = 128;
  RotaryMode rotary = RotaryMode::none;
  /// With rotary embeddings: v is rotated as well as q and k.
  bool rotateV = false;
  /// With rotary embeddings: the positions come from a tensor (one more
  /// dependent load before the table reads), not from the sequence.
  bool hasPositions = false;
  /// With rotary embeddings: the angles are computed from a base theta, not
  /// read from tables (different register needs).
  bool rotaryTheta = false;
  /// Query heads per k/v head (grouped-query attention; 1: every head has
  /// its own k and v).
  int64_t group = 1;
  /// Causal attention inside each block (the softmax masks j > i).
  bool causal = false;

  /// Rows of a tile (query rows and key rows alike): the 64 rows of one MMA
  /// when blocks are smaller, so that a tile holds 64 / blockSize whole
  /// blocks of one sequence and the softmax masks each query row to its own
  /// block's keys (docs/block-sizes.md); else one block.
  static constexpr int64_t kMinTileRows = 64;
  int64_t tileRows() const { return std::max(blockSize, kMinTileRows); }
  /// Blocks share a tile: the scores are masked to each row's block.
  bool masksBlocks() const { return blockSize < tileRows(); }

  bool hasRotary() const { return rotary != RotaryMode::none; }
  /// Tensors loaded per tile: q, k, v, and the backward's do.
  int64_t numLoads() const { return backward ? 4 : 3; }
  /// Both supported element types (bf16, f16) are two bytes.
  int64_t elementBytes() const { return 2; }
  int64_t tileBytes(int64_t cols) const {
    return tileRows() * cols * elementBytes();
  }
  /// The grouped-query backward: its work item is a block and a k/v head,
  /// whose loads are K, V once and Q, dO per query head of the group.
  bool groupedBackward() const { return backward && group > 1; }
  /// Query rows of one product (M of the MMA): 64; a block larger than 64
  /// tokens is computed in 64-row halves against all of its keys.
  int64_t queryTileRows() const { return kMinTileRows; }
  /// Query tiles of a tile: a 128-token block's two 64-row halves, else 1.
  int64_t numQueryTiles() const { return tileRows() / queryTileRows(); }
  int64_t queryTileBytes(int64_t cols) const {
    return queryTileRows() * cols * elementBytes();
  }
  /// Columns of the head dimension one output product makes (N of O = P V,
  /// dV = P^T dO, dK = dS^T Q, dQ = dS K): the whole head dim up to 128;
  /// above, 64-column chunks, each stored as soon as it is done, so that
  /// the accumulators and the staging buffers stay those of head dim 64
  /// (docs/head-dims.md, "Head dims 192 and 256").
  static constexpr int64_t kMaxOutputCols = 128;
  int64_t outputChunkCols() const {
    return headDim > kMaxOutputCols ? 64 : headDim;
  }
  int64_t numOutputChunks() const { return headDim / outputChunkCols(); }
};

/// The chip and tuning options, as blockattn-warp-specialize's options
/// struct (Passes.td); 0 means "the recipe picks" for the counts.
using TuningOptions = BlockAttnWarpSpecializePassOptions;

/// Register budgets per thread of each warpgroup of a recipe (what
/// warpspec.partition's `registers` says; 0 for a warpgroup the recipe does
/// not have).
struct RegisterPlan {
  /// The TMA producer.
  int64_t load = 0;
  /// Each replica of the warpgroups doing the softmax (sm_90a: the
  /// consumers, which also issue the products; sm_100a: the softmax and
  /// epilogue warpgroups).
  int64_t compute = 0;
  /// sm_100a: the warpgroup whose one thread issues the MMAs.
  int64_t mma = 0;
  /// With rotary embeddings, the warpgroup rotating q, k (and v): always
  /// on sm_100a, on sm_90a when KernelPlan::rotaryWarpgroup is set.
  int64_t rotary = 0;
};

/// Everything a recipe builds from besides the kernel itself, validated.
struct KernelPlan {
  /// Launch: CTAs sharing an SM, and for a chunked launch the tiles of one
  /// CTA (0: a persistent launch). The tile loop walks one contiguous range
  /// per CTA when `contiguousSchedule` is set, else strided, or with
  /// `dynamicSchedule` claimed from a global counter (the kernel function
  /// gets a `schedule` argument).
  int64_t ctasPerSm = 1;
  int64_t tilesPerCta = 0;
  bool contiguousSchedule = false;
  bool dynamicSchedule = false;
  /// Rings: slots of the load ring, and on sm_100a with rotary embeddings
  /// of the rotated-tile ring.
  int64_t numStages = 0;
  int64_t rotaryDepth = 0;
  /// The grouped-query backward (group > 1): slots of the ring "qdo" (Q and
  /// dO of one query head); `numStages` is then the depth of the ring "kv"
  /// (K and V of one item).
  int64_t groupStages = 0;
  /// The sm_90a grouped-query backward: consumer warpgroups that each take
  /// every slot and compute one column part of dV, dK and dQ (recomputing S
  /// and dP), so that dK and dV fit their registers at head dim 128.
  int64_t columnParts = 1;
  /// The grouped-query backward above head dim 128 (both chips): dK and dV
  /// of the whole head dim do not fit the registers (sm_90a) or the tensor
  /// memory (sm_100a) next to S and dP, so an item is made in `groupPasses`
  /// passes over 64-column chunks of the head dim, each recomputing every
  /// query head's S, P, dP and dS and accumulating that chunk of dK and dV
  /// over the group (the producer streams the group's Q and dO once a
  /// pass); 1 elsewhere.
  int64_t groupPasses = 1;
  /// The sm_90a grouped-query backward at block size 128 above head dim 128:
  /// slots of the ring "chunks", through which the producer streams, a pass
  /// and a query head at a time, the 64-column chunks of a query half and
  /// K (for S), then of its dO and V (for dP), since an item's K and V and a
  /// head's Q and dO of the whole head dim do not fit shared memory next to
  /// P and dS (docs/head-dims.md); 0 elsewhere. "qdo" then holds one query
  /// head's pass chunk of Q, dO and K, and "kv" the item's record alone.
  int64_t groupChunkStages = 0;
  /// The sm_90a grouped-query backward with `group-roles=pipelined`: a
  /// "scores" consumer (S, P, dP, dS, dQ) and an "accumulate" consumer (dV,
  /// dK over the group) that take every slot of "kv" and "qdo", P and dS
  /// handed from the first to the second through the ring "pds" of
  /// `pdsStages` slots.
  bool pipelinedRoles = false;
  int64_t pdsStages = 0;
  /// With `pipelinedRoles`: the accumulate warpgroup's registers (the scores
  /// warpgroup's are `registers.compute`).
  int64_t accumulateRegisters = 0;
  /// The sm_90a grouped backward at block size 128: accumulate warpgroup 1's
  /// (key half 1) registers where they differ from accumulate warpgroup 0's
  /// (`accumulateRegisters`); 0 where they do not. Where set, that
  /// warpgroup's partition always gets its setmaxnreg (`explicit_regs`),
  /// even at the launch's budget.
  int64_t secondAccumulateRegisters = 0;
  /// The sm_90a backward at block size 128 above head dim 128 (column
  /// passes) with rotary embeddings: consumer 1's (query half 1) registers
  /// where they differ from consumer 0's (`registers.compute`); 0 where
  /// they do not.
  int64_t secondConsumerRegisters = 0;
  /// The sm_90a grouped backward at block size 128 with
  /// `group-roles=query-halves`: two consumer warpgroups, one per 64-row
  /// query half, that take every slot of "kv" and "qdo", hand each other
  /// their half's P and dS of each query head through the one-slot rings
  /// "pds0" and "pds1", and each sum one key half's dV and dK over the group
  /// (docs/pipeline.md, "Grouped-query attention"); false: the scores and
  /// accumulate warpgroups (`pipelinedRoles`).
  bool groupedQueryHalves = false;
  /// The same kernels: whether the producer warpgroup rotates each chunk
  /// slot in place (every thread of it, its copies issued by one) and
  /// signals the consumers through the ring "rotated", instead of the two
  /// consumers rotating it next to their accumulators.
  bool producerRotates = false;
  /// The same kernels: every partition derives its shared-memory addresses
  /// from bases pinned at each use (warpspec.partition `pinned_bases`) and
  /// the consumers' staged stores compute their row steps where they store
  /// (warpspec.store `pinned_steps`), so that LLVM holds none of those
  /// addresses and products through a partition (ptxas spilled them).
  bool pinnedAddresses = false;
  /// With `pipelinedRoles` (`group-roles=pipelined-dq`): dQ = dS K is made
  /// and stored by the accumulate warpgroup, not the scores one.
  bool dqInAccumulate = false;
  /// The sm_90a backward above head dim 128 with `slot-parts=2`: the load
  /// ring is two rings by columns of the head dimension, the low
  /// `lowSlotCols` (`numStages` slots) and the rest (`highStages` slots),
  /// which the consumer releases first (docs/head-dims.md); 0: one ring.
  int64_t lowSlotCols = 0;
  int64_t highStages = 0;
  /// With `lowSlotCols`: output staging buffers the chunk stores alternate
  /// between (`staging-buffers`): with 2 a chunk's bulk store waits only
  /// for the store before last to have read its buffer.
  int64_t stagingBuffers = 1;
  /// The sm_90a backward at block size 128 with `large-block-consumers=2`:
  /// two consumer partitions (each of `numConsumers` = 1 replica), one per
  /// 64-row query half, that both take every slot of the load ring and hand
  /// each other their half's P and dS through the one-slot rings "pds0" and
  /// "pds1" (docs/block-sizes.md); 0: one consumer runs the whole block.
  int64_t largeBlockConsumers = 0;
  /// With `largeBlockConsumers` = 2 (`large-block-rings`): the rings a
  /// block's tiles are loaded into, each `numStages` slots deep: 1, one
  /// ring of all six tiles; 2, the ring "qk" (q's halves and k, released
  /// after both consumers' dK) and the ring "vdo" (v and dO's halves,
  /// released after their dV), so that the next block's loads overlap this
  /// block's last products and stores (docs/block-sizes.md).
  int64_t largeBlockRings = 1;
  /// The sm_90a backward at block size 128 above head dim 128: a block's
  /// q, k, v and dO do not fit shared memory at once, so the producer
  /// streams them in slots of 64-column chunks, twice a block (the second
  /// time without v), and two consumers, one per query half, accumulate S
  /// and dP over the first pass and make the gradients' chunks in the second
  /// (docs/head-dims.md); `numStages` is the chunk ring's depth.
  bool columnPasses = false;
  /// Consumers of the load ring, taking its slots round-robin (sm_90a: the
  /// consumer warpgroups; sm_100a: 1, the MMA warpgroup), and the replicas
  /// of the sm_100a softmax warpgroups, which take tiles round-robin.
  int64_t numConsumers = 1;
  int64_t softmaxReplicas = 0;
  /// sm_90a forward: P feeds O = P V from a shared-memory scratch buffer.
  bool pFromSmem = false;
  /// Output tiles are staged in shared memory, and full tiles leave with a
  /// bulk tensor store.
  bool stageOutput = false;
  bool bulkStore = false;
  /// The sm_90a backward at blocks of up to 64 tokens and head dims up to 128
  /// (`o-store=slot`): dV and dK are staged in the tile's slot, in the
  /// buffers of v and q once their last products have read them, and leave
  /// by bulk stores that the slot's release waits for (`warpspec.release
  /// after_stores`); dQ, made after the release's last read of k, through
  /// the staging buffer. The consumer then never waits for a bulk store
  /// before it stages the next gradient.
  bool outputsInSlot = false;
  /// The producer prefetches each tile into L2 before it waits for a slot.
  bool l2Prefetch = false;
  /// Each softmax that can branches to a copy without masks on a full tile
  /// (warpspec.softmax {full_tile_path}).
  bool softmaxFullTiles = false;
  /// Register tiles go to shared memory by stmatrix (warpspec.write and
  /// warpspec.store {stmatrix}).
  bool stmatrixWrites = false;
  /// sm_90a with rotary embeddings: a rotary warpgroup rotates each slot of
  /// the load ring in place and signals the consumers through a ring without
  /// buffers of depth `numStages`; else each consumer rotates its own slot.
  bool rotaryWarpgroup = false;
  /// Replicas of that rotary warpgroup, each taking every `rotaryReplicas`-th
  /// slot of the load ring (and of the signal ring).
  int64_t rotaryReplicas = 1;
  /// The sm_90a rotary backward: each consumer reads its tile's angles once,
  /// as the tile arrives, and holds them for all of the tile's gradients,
  /// instead of before each product that makes one (`rotary-angles`).
  bool anglesPerTile = false;
  /// With anglesPerTile: the angles are read after the tile's softmax, and
  /// a positions tensor as the tile arrives (`rotary-angles=after-softmax`),
  /// so that the table reads do not wait for the positions.
  bool anglesAfterSoftmax = false;
  /// The producer copies each tile's positions into its slot
  /// (warpspec.copy_positions), where the rotary warpgroup and the
  /// consumers read them (`positions-load=producer`).
  bool positionsInSlot = false;
  RegisterPlan registers;
};

/// The plan of `shape` on `options.chip` under `options`, or failure with
/// the reason in `error` (a sentence that names the option, for the op's
/// diagnostic).
FailureOr<KernelPlan> planKernel(const KernelShape &shape,
                                 const TuningOptions &options,
                                 std::string &error);

/// The register budget of each of `replicas` replicated warpgroups next to
/// `single` unreplicated ones whose budgets add up to `otherRegs`: the
/// registers the CTA is launched with (TargetLimits::launchRegisterCap),
/// which setmaxnreg can only move between warpgroups, less the others',
/// split evenly (at most 256, a multiple of 8).
int64_t replicaRegisters(int64_t single, int64_t otherRegs, int64_t replicas,
                         int64_t ctasPerSm);

} // namespace mlir::blockattn

#endif // BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PLAN_H
