//===- Plan.cpp - blockattn-warp-specialize's launch and tuning plan ------===//
//
// The defaults below were chosen by measurement on the H200; each function
// cites the section of docs/performance-notes.md ("Recipe defaults") that
// has the numbers.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Dialect/BlockAttn/Transforms/Plan.h"

#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "blockattn/Dialect/BlockAttn/Transforms/PlanEnums.cpp.inc"

using namespace mlir;
using namespace mlir::blockattn;
using mlir::warpspec::Chip;
using mlir::warpspec::SlotState;
using mlir::warpspec::TargetLimits;

namespace {

/// The TMA producer needs few registers: one thread issues the copies.
constexpr int64_t kProducerRegs = 40;
/// sm_100a with rotary embeddings: 640 threads leave 96 registers a thread
/// at launch, and ptxas keeps the values computed before the warpgroups
/// part (the shared memory base, the barrier addresses) in registers every
/// warpgroup can hold. At 40 the load warpgroup's lower bound made it spill
/// the shared memory base in the head_dim 128 forward with rotate_v
/// (8 / 32 bytes); at 48 nothing spills there, and 48 + 56 + 56 + 2 x 160
/// is exactly the 480 a thread the pool holds
/// (docs/performance-notes.md#sm_100a-rotary-registers).
constexpr int64_t kRotaryProducerRegs = 48;
/// sm_100a: the MMA warpgroup's budget (one thread issues, the schedule is
/// scalar code), and with rotary embeddings the rotary warpgroup's and the
/// MMA warpgroup's, which then also tracks the rotated ring and the tile
/// position (at 40 it spills).
constexpr int64_t kMmaRegs = 40;
constexpr int64_t kRotaryRegs = 56, kRotaryMmaRegs = 56;
/// sm_100a at block size 128: the MMA warpgroup issues four products a
/// block (S and O per query half); at 40 or 64 registers ptxas spills it
/// (176 / 60 bytes at head dim 128), at 96 nothing spills and the softmax
/// warpgroups keep 184 (S 64 + O 64 + P 32 at D = 128; ptxas, CUDA 13.0).
constexpr int64_t kLargeBlockMmaRegs = 96;
/// sm_100a, the backward above head dim 128 (one softmax warpgroup, three
/// warpgroups of 168 registers at launch): the MMA warpgroup issues 2 +
/// 3 D / 64 products a tile (at 40 ptxas spilled hundreds of bytes), and
/// the load warpgroup 16 TMA boxes a tile at 256 (at 40 it spilled 8-36
/// bytes); the softmax warpgroup keeps 256 (ptxas, CUDA 13.0).
constexpr int64_t kChunkedBackwardMmaRegs = 96, kChunkedBackwardLoadRegs = 64;
/// sm_90a, the backward at block size 128: the producer issues six tiles'
/// boxes a block (q and dO in halves; 18 boxes at head dim 96), and at 40
/// registers ptxas spilled it (44 bytes at D = 96, 8 at 128); at 64 nothing
/// spills, and the one consumer still gets 256 (its cap).
constexpr int64_t kLargeBlockBackwardProducerRegs = 64;
/// sm_90a, the backward with half-depth slots (`slot-parts=2`): the
/// producer fills two rings (two slot and phase counters, eight TMA boxes
/// at two column offsets a tile at 256); at 40 registers ptxas spilled it
/// (8 bytes at head dim 192, 16 at 256: the tensor maps' addresses), at
/// 48 nothing spills, and the one consumer still gets 256 (its cap).
constexpr int64_t kSplitSlotProducerRegs = 48;
/// sm_100a, the backward at block size 128: the producer (six tiles' boxes
/// a block) and the MMA warpgroup (fourteen products a block, operands
/// pinned at each use) at 88 each leave each softmax warpgroup 168 (S 64 +
/// dP 64 f32 at its peak). ptxas (CUDA 13.0) spills the MMA warpgroup below
/// 88 (80 bytes at 64, head dim 128), and spills whenever the producer and
/// the MMA warpgroup get different budgets that leave the softmax
/// warpgroups less than 256 (64 / 96: 204 bytes at 176); 88 / 88 / 168
/// assembles with no spills at every head dim (docs/block-sizes.md).
constexpr int64_t kSm100aLargeBlockBackwardLoadRegs = 88,
                  kSm100aLargeBlockBackwardMmaRegs = 88;
/// The causal backward at block size 128 below head dim 128: the softmax
/// warpgroups also hold the causal mask's rows (offset by the replica's
/// half), and at 168 ptxas spilled them at head dim 96 (8 bytes, 20 with
/// dlse). 80 / 80 leave them 176: no spills at head dims 32, 64 and 96. Not
/// at 128, where the MMA warpgroup spills at 80 (16 bytes) and 88 / 88 / 168
/// spills nothing.
constexpr int64_t kSm100aLargeBlockCausalBackwardLoadRegs = 80,
                  kSm100aLargeBlockCausalBackwardMmaRegs = 80;
/// The forward at block size 128 above head dim 128 (largeBlockWideForward):
/// the producer issues 16 TMA boxes a block at 256 (q in halves, k and v of
/// 128 rows, four 64-column boxes each), and at 40 registers ptxas spilled
/// it (8 bytes at 192, 36 at 256 on sm_90a); at 48 nothing spills. On
/// sm_100a the MMA warpgroup issues S and O (N = D) per query half, and
/// with the load warpgroup at 40 or 48 and it at 96, ptxas spilled 8-72
/// bytes; 48 / 112 leave each softmax warpgroup 176 (S 64 f32 and one
/// 64-column chunk of O, 32, at its peak) and nothing spills (CUDA 13.0).
constexpr int64_t kLargeBlockWideForwardLoadRegs = 48,
                  kSm100aLargeBlockWideForwardMmaRegs = 112;
/// sm_90a, the backward at block size 128 above head dim 128
/// (KernelPlan::columnPasses): the producer fills 3 D / 64 chunk slots a
/// block (36 TMA boxes at 256); at 64 registers ptxas spilled it (20-28
/// bytes), at 88 4 bytes at 192; at 104 nothing spills and each of the two
/// consumers gets 200 (P 64 + dP 64 f32 at the peak; at 192 they spill
/// below 200: ptxas, CUDA 13.0, found by editing the PTX's setmaxnreg).
constexpr int64_t kColumnPassProducerRegs = 104;
/// With rotate_v at head dim 192 (tables, or theta with a positions
/// tensor) the producer warpgroup rotates each chunk slot in place, every
/// thread of it, once its copies land (Recipe.cpp,
/// buildColumnPassLoadPartition with `rotated`), and the consumers only
/// turn their gradients back: at 104 / 200 / 200 none of the 24 spills
/// (session 20, rotating in the consumers: 15 of them, 8-32 bytes). Not
/// elsewhere: the producer then needs more than 104 registers (ptxas,
/// CUDA 13.0, editing the PTX's setmaxnreg: 32-44 bytes in every rotate_v
/// kernel at 256, 52-92 without rotate_v at 192, 48 with theta and no
/// positions tensor; up to 200-232 registers to spill nothing), and the
/// consumers spill below 200 (docs/head-dims.md, "The rotary backward at
/// block size 128 with the producer rotating (session 21)").
constexpr int64_t kRotaryColumnPassProducerRegs = 104,
                  kRotaryColumnPassConsumerRegs = 200;
bool producerRotatesColumnPasses(const KernelShape &shape) {
  return shape.rotateV && shape.headDim <= 192 &&
         (!shape.rotaryTheta || shape.hasPositions);
}
/// Interleaved pairs, where the kernels below spilled (session 23): the
/// producer rotates as above and every partition pins its shared-memory
/// bases at each use, the consumers' staged stores their row steps and
/// first rows (KernelPlan::pinnedAddresses), at 104 / 200 / 200. What
/// ptxas (CUDA 13.0) spilled there were loop-invariant addresses LLVM held
/// from the partitions' entries, not the rotation (docs/head-dims.md,
/// "Pinned addresses in the interleaved backward at block size 128
/// (session 23)"). At 256 (tables and theta, every variant) and with theta
/// at 192 nothing spills with them (44 and 4 of these 96 spilled 4-100
/// bytes without). With tables at 192 only the kernels with a positions
/// tensor, no rotate_v and no causal blocks: of the others, 14 spill 4
/// bytes with the pins (every split of the 504 registers tried by editing
/// setmaxnreg spilled in some) and none without.
bool pinsColumnPassAddresses(const KernelShape &shape) {
  if (shape.rotary != RotaryMode::interleaved)
    return false;
  return shape.headDim > 192 || shape.rotaryTheta ||
         (shape.hasPositions && !shape.rotateV && !shape.causal);
}
/// Half-split pairs (pair-complete chunks of 64-byte-swizzled pieces,
/// session 23): the partitions pin their bases and the staged stores of
/// both pieces their row steps (storePairHalves) at the budgets below, with
/// the consumers rotating, where the kernels spilled 16-64 bytes without
/// (docs/head-dims.md, "Pinned addresses in the half-split backward at
/// block size 128 (session 23)"). Not where the producer rotates (rotate_v
/// at 192): those spill nothing unpinned but 24-40 bytes pinned, and
/// letting the producer rotate with the pins elsewhere (the interleaved
/// rule above) left all 16 plain table kernels spilling.
bool pinsHalfSplitColumnPassAddresses(const KernelShape &shape) {
  return shape.rotary == RotaryMode::half_split &&
         !producerRotatesColumnPasses(shape);
}
/// With rotate_v elsewhere (v turned in pass 2 next to P and dP) none tried
/// is spill-free in all: 104 / 200 / 200 12-76 bytes, 96 / 200 / 208 0-48,
/// 96 / 192 / 216 0-168, 88 / 208 / 208 0-52, 104 / 192 / 208 12-180, 88 /
/// 200 / 216 12-124; 80 / 208 / 216 spills least (0-28; session 20).
constexpr int64_t kRotateVColumnPassProducerRegs = 80,
                  kRotateVColumnPassConsumerRegs = 208,
                  kRotateVColumnPassSecondConsumerRegs = 216;
/// Without rotate_v the two consumers rotate each chunk slot in place
/// (buildColumnPassConsumer: every part in a loop of passes, the thread
/// placed in each pass from its pinned index). Found by editing the PTX's
/// setmaxnreg (ptxas, CUDA 13.0; producer / consumer 0 / consumer 1,
/// consumer 1 turning both query halves): 104 / 200 / 200 spills nothing at
/// head dim 192 but 4-44 bytes at 256; 96 / 200 / 208 nothing at 256 but
/// the f16 kernel with a positions tensor (4 bytes), but 0-20 at 192.
constexpr int64_t kWideRotaryColumnPassProducerRegs = 96,
                  kWideRotaryColumnPassConsumerRegs = 200,
                  kWideRotaryColumnPassSecondConsumerRegs = 208;
/// Half-split pieces with pinned addresses at 256 without rotate_v: at 96 /
/// 200 / 208 the causal kernels without rotate_v spilled 4 bytes (8 of
/// them, tables and theta); 96 / 208 / 200 spills nothing in all 24 such
/// kernels measured (tables plain, causal, dlse, causal + dlse; theta plain
/// and causal + dlse), 104 / 200 / 200 4 bytes, 88 / 208 / 208 8 with a
/// positions tensor, 88 / 216 / 200 and 80 / 216 / 208 8 (ptxas, CUDA 13.0,
/// editing the PTX's setmaxnreg; session 23).
constexpr int64_t kPinnedHalfSplitColumnPassConsumerRegs = 208,
                  kPinnedHalfSplitColumnPassSecondConsumerRegs = 200;
/// sm_100a, the backward at block size 128 above head dim 128
/// (KernelPlan::columnPasses): the producer fills 3 D / 64 chunk slots a
/// block as on sm_90a, the MMA warpgroup issues S and dP per chunk and the
/// gradients' 64-column chunks (its chunk loops in scf.for), and each
/// softmax warpgroup holds S 64 + dP 64 f32 at its peak (as at head dim
/// 128). Found by editing the PTX's setmaxnreg (ptxas, CUDA 13.0, head dims
/// 192 and 256): 88 / 88 / 168 spilled 4 bytes, 96 / 80 / 168 4, 104 / 72 /
/// 168 32-36, 80 / 96 / 168 172, 88 / 72 / 176 28-32; 80 / 80 / 176 spills
/// nothing (with causal and dlse too: docs/head-dims.md).
constexpr int64_t kSm100aColumnPassLoadRegs = 80, kSm100aColumnPassMmaRegs = 80;
/// With rotary embeddings (interleaved pairs; Sm100aRecipe.cpp,
/// buildBlackwellLargeBlockRotaryColumnPasses) a rotary warpgroup rotates
/// each chunk slot in place (one pass of tables ahead: warpspec.rotate with
/// head_dim, so its code does not depend on its budget), the MMA warp also
/// waits on its signals, and one softmax warpgroup takes both halves (S 64
/// + dP 64 f32 of one half at its peak, then one 64-column gradient chunk
/// turned back). Found by editing the PTX's setmaxnreg (ptxas, CUDA 13.0,
/// head dims 192 and 256): the block-128 rotary backward's 88 / 152 / 88 /
/// 184 spilled 8 bytes at 256 (the softmax warpgroup); 88 / 136 / 88 / 200
/// 8 bytes in the f16 rotate_v kernels at 256; 88 / 144 / 88 / 192 20 at
/// 192; 88 / 112 / 88 / 224 12-24 bytes (the rotary warpgroup); a load and
/// an MMA warpgroup of different budgets spilled more (88 / 120 / 96 / 208:
/// 52-84 bytes in all 32; 80 / 152 / 88 / 192: 92-124), and 80 / 136 / 80 /
/// 216 4 bytes at 192. 88 / 128 / 88 / 208 spilled nothing with the rotary
/// warpgroup's setmaxnreg in the PTX, but 128 is the launch's budget, for
/// which the kernel has none, and then ptxas spilled 8-104 bytes in 30 of
/// 32. 88 / 120 / 88 / 216 spills nothing in all 64 kernels (both head
/// dims and dtypes, positions, rotate_v, each plain, causal, dlse and
/// causal + dlse).
constexpr int64_t kSm100aRotaryColumnPassLoadRegs = 88,
                  kSm100aRotaryColumnPassRegs = 120,
                  kSm100aRotaryColumnPassMmaRegs = 88;
/// sm_90a: the rotary warpgroup that rotates the load ring's slots in place
/// (KernelPlan::rotaryWarpgroup). warpspec.rotate reads the tables of as
/// many passes ahead as its registers allow, (regs - 40) / (2 x pairs per
/// thread): 104 reads all of a tile's tables at once (4 passes of 8
/// half-split pairs, 8 of 4 interleaved), so a tile costs one L2 round
/// trip. The four warpgroups (512 threads) launch with 128 registers each:
/// 40 + 104 leave the two consumers 184 each
/// (docs/performance-notes.md#rotary-warpgroup).
constexpr int64_t kSm90aRotaryRegs = 104;
/// sm_90a: the rotary warpgroup of a chunked launch (two CTAs of three
/// warpgroups an SM launch with 80 registers a thread, a pool of 240 per
/// CTA): 72 leave the consumer 128, what the forward at head dim 64 needs,
/// but with rotate_v the f16 interleaved forwards then spill 16 bytes (at
/// 120, eight of the sixteen forwards spill 36-80): with rotate_v 64 and 136
/// (ptxas: no spills). The rotation is 3-5% slower at 64 (run 13).
constexpr int64_t kSm90aChunkedRotaryRegs = 72,
                  kSm90aChunkedRotateVRotaryRegs = 64;
/// sm_100a: the softmax warpgroups, taking tiles round-robin.
constexpr int64_t kSoftmaxReplicas = 2;
/// sm_100a, the rotary backward at head_dim above 64: one softmax warpgroup,
/// so that the CTA has 512 threads (128 registers each at launch) instead of
/// 640 (96). With two, no split of the pool avoids spills: the softmax
/// warpgroups need about 176-192 each, the rotary and MMA warpgroups with
/// rotate_v up to 64 and 80, more than 5 x 96 together. With one, the rotary
/// and MMA warpgroups get 72 and 96 (at 56 the MMA warpgroup spills with
/// rotate_v) and the softmax warpgroup 256. Not timed: no Blackwell GPU
/// (docs/performance-notes.md#sm_100a-rotary-registers).
constexpr int64_t kWideRotaryBackwardRegs = 72, kWideRotaryBackwardMmaRegs = 96;
/// sm_100a, the rotary forward above head dim 128 with angles from theta:
/// with the table kernels' budgets (load 48, rotary 56) ptxas spilled the
/// rotary warpgroup in five of the sixteen bf16 variants (4-52 bytes
/// stored), and the other splits tried spilled one to twenty of the 32
/// (bf16, f16) kernels: rotary 64-96, load 48 or 56, softmax 136-152. Load
/// 40, rotary 80 (one pass of angles ahead, Rotary.cpp), MMA 56 and softmax
/// 2 x 152 (S 32, P 16 and one 64-column chunk of O, 32) spill nothing in
/// any of them; so does 56 / 80 / 56 / 144. With tables the rotary
/// warpgroup keeps 56: at 64 ptxas spilled it at 256 half-split (24 / 52
/// bytes), at 56 nothing spills (ptxas, CUDA 13.0).
constexpr int64_t kWideThetaRotaryForwardLoadRegs = 40,
                  kWideThetaRotaryForwardRegs = 80;

/// Whether the sm_100a kernel is the rotary backward with one softmax
/// warpgroup (see kWideRotaryBackwardRegs).
bool singleSoftmaxReplica(const KernelShape &shape) {
  return shape.hasRotary() && shape.backward && shape.headDim > 64;
}

/// sm_100a, the rotary forward at block size 128: one softmax warpgroup
/// takes both query halves of every block, in turn (the MMA warp names the
/// half in the S record, Sm100aRecipe.cpp), so that the CTA has four
/// warpgroups (512 threads, 128 registers each at launch) instead of five
/// (640, 96): with two softmax warpgroups beside the rotary one each would
/// keep about 140 registers, too few for a 64 x 128 S (64) next to its P
/// (32) and O (64 at head dim 128).
bool largeBlockRotaryForward(const KernelShape &shape) {
  return shape.hasRotary() && !shape.backward && shape.numQueryTiles() > 1;
}
/// Its registers: the rotary warpgroup turns two query halves, k (and v)
/// a block; at the b64 kernels' 56 ptxas spilled it (208-248 bytes at head
/// dim 128), at 104-120 4-48 bytes were still spilled in some variants, at
/// 136 none. The MMA warpgroup issues four products a block and tracks the
/// rotated ring: at kLargeBlockMmaRegs (96) it spilled 4 bytes, at 112
/// nothing. Load 48 (kRotaryProducerRegs) and the softmax warpgroup the rest
/// of the 512, 216 (S 64 + P 32 + O 64 at head dim 128): no spill in any of
/// the 128 variants (both layouts, positions, rotate_v, causal and lse, head
/// dims 32-128, bf16 and f16; ptxas, CUDA 13.0). Not timed: no Blackwell GPU.
constexpr int64_t kLargeBlockRotaryForwardRegs = 136,
                  kLargeBlockRotaryForwardMmaRegs = 112,
                  kLargeBlockRotaryForwardLoadRegs = 48;
/// sm_100a, the rotary backward at block size 128
/// (largeBlockRotaryBackward). The rotary warpgroup turns q's two halves, k
/// (and v) of 128 rows in place, reading (regs - 40) / (2 x pairs) passes of
/// tables ahead: at 104-120 ptxas spilled it (36-44 bytes at head dim 128,
/// the others generous), at 136-176 not. The softmax warpgroup holds S 64 +
/// dP 64 f32 at its peak. As in the plain block-128 backward, a producer and
/// an MMA warpgroup of different budgets spilled more often (48 / 104 / 112
/// / 248: 44 bytes; 88 / 120 / 88 / 216: 4-32 bytes in 3 of 64 kernels);
/// 88 / 152 / 88 / 184 spills nothing in any of the 128 kernels (head dims
/// 32-128, bf16 and f16, both layouts, positions, rotate_v, each with causal
/// and dlse; ptxas, CUDA 13.0). With angles from theta at head dim 128 the
/// rotary warpgroup spills (docs/block-sizes.md). Not timed: no Blackwell
/// GPU.
constexpr int64_t kLargeBlockRotaryBackwardLoadRegs = 88,
                  kLargeBlockRotaryBackwardRegs = 152,
                  kLargeBlockRotaryBackwardMmaRegs = 88;

/// Above head dim 128 (the slot rotated in place, O drained in 64-column
/// chunks): at 136 ptxas spilled 4 bytes in the bf16 half-split kernels at
/// 256 with rotate_v (plain and causal + lse); with the rotary warpgroup at
/// 144 and the softmax warpgroup at 208 (S 64 + P 32 + one O chunk 32)
/// none of the 64 table kernels spills (both layouts, positions, rotate_v,
/// causal and lse, 192 and 256, bf16 and f16; ptxas, CUDA 13.0).
constexpr int64_t kLargeBlockWideRotaryForwardRegs = 144;
/// With angles from theta (issue 20; k and v turned in a loop of passes,
/// Rotary.cpp) the rotary warpgroup takes the block-64 theta kernels'
/// kWideThetaRotaryForwardRegs (80) and the load warpgroup keeps 48 (at the
/// block-64 theta kernels' 40 ptxas spilled 8-40 bytes in all 32 kernels,
/// 48 with the rest unchanged spills nothing); the softmax warpgroup gets
/// the rest, 256. Found by
/// editing the PTX's setmaxnreg over the 64 kernels (192, 256, bf16, f16,
/// both layouts, positions, rotate_v, with and without causal + lse; ptxas,
/// CUDA 13.0): rotary 64-96 with softmax 232-256 spill nothing; with rotary
/// 104 / softmax 224 the eight half-split kernels at 256 without a positions
/// tensor spilled, and the table budgets (rotary 144, softmax 208) spilled
/// 8-28 bytes in 16 of them.
constexpr int64_t kMaxStages = 8;
/// Bytes the allocator needs besides the buffers: the run-time alignment
/// slack of the dynamic shared memory base, which also holds the barriers
/// and tile records (see warpspec-allocate-smem).
constexpr int64_t kSmemReserve = 1024;
/// A chunked launch gives each CTA about this many bytes of loads: enough
/// that its start (barrier setup, the search for its first tile, the first
/// load's latency) is small against its work, few enough that the hardware
/// hands out tiles in order (docs/performance-notes.md#chunked-launch).
constexpr int64_t kChunkLoadBytes = 192 * 1024;

/// The fewest registers a thread an sm_90a CTA may launch with (planSm90a).
constexpr int64_t kMinLaunchRegs = 64;

/// Tiles of a chunked CTA's kChunkLoadBytes, with slots of `slotBytes`.
int64_t tilesOfChunkLoads(int64_t slotBytes) {
  return std::max<int64_t>(1, kChunkLoadBytes / slotBytes);
}

/// Collects a failure's reason.
struct Failure {
  std::string &error;
  template <typename... Parts>
  LogicalResult operator()(const Parts &...parts) {
    llvm::raw_string_ostream os(error);
    (os << ... << parts);
    return failure();
  }
};

/// `num-stages` becomes the ring's depth, a count the allocator and the
/// lowering multiply and loop over: it is bounded by the deepest ring
/// whose barriers alone fit in shared memory.
bool validNumStages(const TuningOptions &options) {
  return options.numStages >= 0 && options.numStages <= SlotState::maxDepth;
}

LogicalResult numStagesError(Failure fail, const TuningOptions &options) {
  return fail("num-stages must be 0 (the recipe picks) or in [1, ",
              SlotState::maxDepth,
              "] (the slots whose barriers and tile records fit in shared "
              "memory), got ",
              options.numStages);
}

/// Whether `rotary-angles` asks for one set of angles per tile (per-tile or
/// after-softmax).
bool asksAnglesPerTile(const TuningOptions &options) {
  return options.rotaryAngles == RotaryAngles::per_tile ||
         options.rotaryAngles == RotaryAngles::after_softmax;
}

/// rotary-angles=per-tile (or after-softmax) refused for the rotary
/// backward above head dim 128 (both of its sm_90a plans): its gradients
/// are turned back a group of column chunks at a time (storeOutputInChunks),
/// each group reading its own angles.
LogicalResult perTileAnglesAboveMaxOutputCols(const TuningOptions &options,
                                              Failure fail) {
  return fail("rotary-angles=", stringifyRotaryAngles(options.rotaryAngles),
              " does not apply above head_dim ", KernelShape::kMaxOutputCols,
              ": the gradients are turned back a group of column chunks "
              "at a time, each group reading its own angles");
}

/// The launch: how tiles are dealt (`schedule`), how many CTAs share an
/// SM, and for a chunked launch how many tiles a CTA gets
/// (docs/performance-notes.md#chunked-launch).
LogicalResult planLaunch(Chip chip, const TuningOptions &options,
                         int64_t chunkTiles, bool chunkedByDefault,
                         int64_t chunkedCtasPerSm, KernelPlan &plan,
                         Failure fail) {
  bool sm90a = chip == Chip::sm_90a;
  if (options.ctasPerSm < 0 || options.ctasPerSm > 4)
    return fail("ctas-per-sm must be 0 (the recipe picks) or in [1, 4], got ",
                options.ctasPerSm);
  if (!sm90a && options.ctasPerSm > 1)
    return fail("ctas-per-sm above 1 is implemented for sm_90a only");
  if (options.tilesPerCta < 0 ||
      options.tilesPerCta > std::numeric_limits<int32_t>::max())
    return fail("tiles-per-cta must be 0 (the recipe picks) or in [1, ",
                std::numeric_limits<int32_t>::max(), "], got ",
                options.tilesPerCta);
  bool chunked = options.schedule == Schedule::chunked ||
                 (options.schedule == Schedule::automatic && chunkedByDefault);
  if (options.tilesPerCta > 0 && !chunked)
    return fail("tiles-per-cta applies to a chunked launch; this one is "
                "persistent (schedule '",
                stringifySchedule(options.schedule), "')");
  plan.contiguousSchedule = chunked || options.schedule == Schedule::contiguous;
  plan.dynamicSchedule = options.schedule == Schedule::dynamic;
  plan.ctasPerSm = options.ctasPerSm > 0
                       ? options.ctasPerSm
                       : (chunked && sm90a ? chunkedCtasPerSm : 1);
  if (chunked)
    plan.tilesPerCta =
        options.tilesPerCta > 0 ? options.tilesPerCta : chunkTiles;
  return success();
}

/// Whether `schedule=auto` makes the tile loop of a persistent sm_90a launch
/// claim its tiles (`dynamic`): the fused rotary kernels at block size 64
/// and head dims 64 and 128 with one query head per k/v head, not causal
/// (the kernels timed), whose SMs finished up to 5% apart with equal shares.
/// On an H100 dynamic made them 6-9% faster at 128 (performance-notes.md,
/// runs 31-32) and 1-6% at 64, where the half-split forward without
/// positions or rotate_v also beat its chunked launch, 0.995x against
/// 1.043x the plain forward (run 34).
bool dynamicByDefault(const KernelShape &shape, const KernelPlan &plan) {
  return plan.tilesPerCta == 0 && !plan.contiguousSchedule &&
         shape.hasRotary() && shape.blockSize == 64 && shape.group == 1 &&
         !shape.causal && (shape.headDim == 64 || shape.headDim == 128);
}

/// `l2-prefetch` under `auto` is on only where it measured faster and was
/// tested on the GPU (docs/performance-notes.md#l2-prefetch).
void planL2Prefetch(const TuningOptions &options, bool byDefault,
                    KernelPlan &plan) {
  plan.l2Prefetch = options.l2Prefetch == L2Prefetch::on ||
                    (options.l2Prefetch == L2Prefetch::automatic && byDefault);
}

/// The backward of a block larger than the 64-row MMA tile (block size 128):
/// its slot (q, k, v, dO of 128 rows: 128 KiB at D = 128) and the P and dS
/// of both query halves (64 KiB) leave room for one consumer and one CTA per
/// SM, launched persistent (docs/block-sizes.md).
bool largeBlockBackward(const KernelShape &shape) {
  return shape.backward && shape.numQueryTiles() > 1;
}

/// The forward of a block larger than the 64-row MMA tile (block size 128),
/// which launches persistent with two consumers under `auto`: its 96 KiB
/// slot (at head dim 128) leaves a chunked CTA one slot and one consumer,
/// whose block of two query halves then runs with nothing to hide its
/// stores and the next block's loads; persistent, two slots and two
/// consumers each take a block (H200, seed-b128, session 14: 1.64-1.68
/// against 1.80-1.84 ms at head dim 128, 1.03 against 1.08 at 64;
/// docs/block-sizes.md#measured-on-the-h200).
bool largeBlockForward(const KernelShape &shape) {
  return !shape.backward && shape.numQueryTiles() > 1;
}

/// The forward at block size 128 above head dim 128: O is made in 64-column
/// chunks per query half (Sm90aRecipe.cpp, buildForwardBody), and one slot
/// of q, k and v (144 KiB at head dim 192, 192 KiB at 256) is all that fits,
/// so one consumer takes every block (docs/head-dims.md).
bool largeBlockWideForward(const KernelShape &shape) {
  return largeBlockForward(shape) &&
         shape.headDim > KernelShape::kMaxOutputCols;
}

/// The sm_90a rotary forward at head dim 64 (block size 64, one query head
/// per k/v head): launched chunked (by default or when asked), a rotary
/// warpgroup in each of the two CTAs an SM holds.
bool rotaryForward64(const KernelShape &shape) {
  return !shape.backward && shape.hasRotary() && shape.headDim == 64 &&
         shape.blockSize == 64 && shape.group == 1;
}

/// The sm_90a rotary forward at head dim 64 (block size 64) that launches
/// chunked when tiles-per-cta is given (under `auto` from session 28 to 36),
/// with a rotary warpgroup in each of the two CTAs an SM holds, 16 tiles a
/// CTA: the half-split one without positions or rotate_v. H200, seed, run 13 of
/// the rotary log (docs/performance-notes.md#fused-rotary-embeddings-sm_90a):
/// 3-17% faster than the persistent launch with two rotary warpgroups, the
/// rotation of one CTA overlapping the other's products. Since the backward's
/// rotary warpgroup and the smem stores the balance has turned for the others
/// (run 17, H100s, seed-d64): persistent, the interleaved forwards and those
/// with positions or rotate_v run 1.01-1.05x the plain forward instead of
/// 1.04-1.13x (a rotary warpgroup of 104 registers, not 64 or 72, which
/// reads its tables further ahead); the half-split one 1.055 against 1.045.
/// Persistent with the dynamic schedule it took 0.995x (H100, run 34 of
/// docs/performance-notes.md#fused-rotary-embeddings-sm_90a).
bool chunkedRotaryForward(const KernelShape &shape) {
  return rotaryForward64(shape) && shape.rotary == RotaryMode::half_split &&
         !shape.hasPositions && !shape.rotateV;
}

/// The sm_90a rotary kernels at head dim 128 (block size 64, one query head
/// per k/v head, forward and backward) whose chunked launch (when asked:
/// `schedule=chunked` or `tiles-per-cta`) has one CTA per SM, 16 tiles a
/// CTA: the persistent launch's layout (producer, one or two rotary
/// warpgroups, one consumer of 256 registers) in a grid the hardware hands
/// out in order. H100, seed, two rounds alternated (run 23 of
/// docs/performance-notes.md#fused-rotary-embeddings-sm_90a): the forwards
/// 1.039-1.057x the plain forward instead of 1.052-1.074x persistent, the
/// backwards 1.030-1.050x instead of 1.038-1.059x; 8 tiles a CTA was as
/// good for the half-split kernels and worse for the interleaved ones with
/// positions or rotate_v, 32 and 64 worse. Not the default: a grid of fewer
/// CTAs than SMs (below 16 x 132 work items, a batch of 33k tokens at four
/// heads) leaves SMs idle that the persistent grid uses, so the launch must
/// choose it by the grid's size at run time. Two CTAs an SM leave no
/// registers for the rotary warpgroups here (run 21).
bool chunkedRotary128(const KernelShape &shape) {
  return shape.hasRotary() && shape.headDim == 128 && shape.blockSize == 64 &&
         shape.group == 1;
}

/// Tiles per CTA of chunkedRotary128's launch.
constexpr int64_t kChunkedRotary128Tiles = 16;

/// Which sm_90a kernels launch chunked unless told otherwise: those without
/// rotary embeddings (docs/performance-notes.md#chunked-launch), and when
/// tiles-per-cta is given the half-split rotary forward at head dim 64
/// without positions or rotate_v unless its rotary warpgroup is turned off
/// or asked for twice (chunkedRotaryForward: one fits each of two CTAs) and
/// the rotary kernels at head dim 128 (chunkedRotary128). Not at
/// head dim 96: there the chunked launch's one consumer (216 registers at two
/// CTAs per SM) spills 4 bytes, the persistent launch's two (232 each) do
/// not (ptxas, CUDA 13.0; not timed). The half-split rotary backward at head
/// dim 128 launched chunked until a rotary warpgroup and angles read once a
/// tile made the persistent launch faster (run 11 of the rotary log).
bool chunkedByDefault(const KernelShape &shape, const TuningOptions &options) {
  if (largeBlockBackward(shape) || largeBlockForward(shape))
    return false;
  if (chunkedRotaryForward(shape))
    return options.tilesPerCta > 0 &&
           options.rotaryWarpgroup != RotaryWarpgroup::off &&
           options.rotaryWarpgroups != 2;
  if (chunkedRotary128(shape))
    return options.tilesPerCta > 0 &&
           options.rotaryWarpgroup != RotaryWarpgroup::off &&
           options.ctasPerSm <= 1;
  return !shape.hasRotary();
}

/// Whether the sm_90a rotary warpgroup is replicated twice under `auto`
/// (with one consumer): the forward at head dim 128, where one rotary
/// warpgroup of 104 registers is busy the whole time (about 2.2 us a tile,
/// the SM's tile period; the timeline of
/// docs/performance-notes.md#rotary-warpgroup, run 10) and two measured
/// 3-17% faster on seed; at head dim 64 the half-split forwards (6-15%) and
/// those with a positions tensor (15% interleaved with v rotated), not the
/// interleaved ones without (1-2% slower).
///
/// Not the backward: at head dim 128 (one consumer, angles read once a
/// tile) one replica and a ring of three slots, not two replicas and two
/// slots, since its consumer stores through smem (storesRotaryBackwardBySmem;
/// two replicas then spill 12 bytes in the consumer). Interleaved with a
/// positions tensor had two until session 27 (run 11: 3.77 / 4.06 ms against
/// one's 4.20 / 4.19 without and with rotate_v); run 15 measured one with
/// smem stores 5.8% / 1.3% faster than two with bulk stores.
bool twoRotaryWarpgroupsByDefault(const KernelShape &shape) {
  if (shape.blockSize != 64 || shape.backward)
    return false;
  if (shape.headDim == 128)
    return true;
  return shape.headDim == 64 &&
         (shape.rotary == RotaryMode::half_split || shape.hasPositions);
}

/// Whether a rotary warpgroup rotates the slots of a persistent sm_90a
/// launch with rotary embeddings under `auto`, so that the table reads leave
/// the consumers' path: where it measured faster on the H200, seed
/// (docs/performance-notes.md#rotary-warpgroup, runs 7 and 8 of the rotary
/// log): the forward at head dim 128; at 64 the backward (every variant
/// 1-10% faster) and the interleaved forward (1-5%; the half-split `_pos`
/// forwards were 8-11% slower with one, but 15% faster with two: run 10),
/// and the forwards that twoRotaryWarpgroupsByDefault picks; and the
/// backward at 128, with one consumer that reads its angles once a tile
/// (anglesPerTileByDefault; run 11: 8-27% faster than the chunked or
/// two-consumer launch without; with the angles read before each product
/// the backward at 128 was 0-30% slower with a rotary warpgroup: runs 8, 10).
bool rotaryWarpgroupByDefault(const KernelShape &shape) {
  // At block size 128 its consumers' 184 registers do not hold a 64 x 128
  // S next to O at head dim 128 (ptxas spills 8-124 bytes); the consumers'
  // own rotation at 232 does not spill (docs/block-sizes.md).
  if (shape.blockSize > 64)
    return false;
  if (shape.headDim == 128)
    return true;
  if (shape.headDim == 64)
    return shape.backward || shape.rotary == RotaryMode::interleaved ||
           twoRotaryWarpgroupsByDefault(shape);
  return false;
}

/// The plain grouped-query forward: its launch was measured apart (G = 4).
bool isGroupedForward(const KernelShape &shape) {
  return !shape.backward && shape.group > 1 && !shape.hasRotary() &&
         shape.blockSize == 64;
}

/// CTAs per SM of a chunked sm_90a launch under `auto`: two; three for the
/// grouped forward at head dim 64 (H200, seed lengths, G = 4: 1.08 against
/// 1.28 ms; docs/pipeline.md#grouped-query-attention-issue-21) and for the
/// plain backward at head dim 32, whose 4 KiB tiles leave one consumer per
/// CTA too little work to keep two CTAs' loads in flight (H200, seed-d32:
/// 0.83 against 0.95 ms; docs/head-dims.md#launch).
int64_t chunkedCtasPerSm(const KernelShape &shape) {
  if (largeBlockBackward(shape) || chunkedRotary128(shape))
    return 1;
  // The backward above head dim 128: a slot of q, k, v, do (96 or 128 KiB)
  // fits one CTA's shared memory only.
  if (shape.backward && shape.headDim > KernelShape::kMaxOutputCols)
    return 1;
  if (isGroupedForward(shape) && shape.headDim == 64)
    return 3;
  return shape.backward && shape.headDim == 32 && !shape.hasRotary() ? 3 : 2;
}

int64_t chunkedConsumers(const KernelShape &shape);

/// Tiles per CTA of a chunked sm_90a launch under `auto`: about
/// kChunkLoadBytes of loads a consumer, twice that for the grouped forward at
/// head dim 128, whose k and v loads mostly hit L2 (H200, seed lengths, G =
/// 4: 2.05 against 2.26 ms; docs/pipeline.md#grouped-query-attention-issue-21).
int64_t chunkedTilesPerCta(const KernelShape &shape, int64_t slotBytes) {
  int64_t tiles = tilesOfChunkLoads(slotBytes);
  // With rotate_v (a third tile to rotate) twice as many again: 32 tiles
  // measured 1-14% faster than 16 there, the same without it (run 13).
  if (rotaryForward64(shape))
    return (shape.rotateV ? 4 : 2) * tiles;
  if (chunkedRotary128(shape))
    return kChunkedRotary128Tiles;
  // Two consumers a CTA (the plain forward at head dim 32) get the load
  // bytes of one each: 32 tiles measured 0.433-0.439 against 0.457-0.464 ms
  // for 16 (H200, seed-d32, session 14; 64: 0.453).
  if (chunkedConsumers(shape) > 1)
    return chunkedConsumers(shape) * tiles;
  return isGroupedForward(shape) && shape.headDim == 128 ? 2 * tiles : tiles;
}

/// Consumer warpgroups of a chunked sm_90a launch: one per CTA (two CTAs
/// share the SM), two for the plain forward at head dim 32 (H200, seed-d32:
/// 0.43 against 0.49 ms; docs/head-dims.md#launch).
int64_t chunkedConsumers(const KernelShape &shape) {
  // Not at block size 128: three warpgroups of two CTAs launch with 80
  // registers a thread, below the 90 ptxas needs for its 64 x 128 S product.
  return !shape.backward && shape.headDim == 32 && !shape.hasRotary() &&
                 shape.blockSize <= 64
             ? 2
             : 1;
}

/// Consumer warpgroups of a persistent sm_90a launch: two hide one tile's
/// math and stores behind the other's, but the plain backward at head dim
/// 64 does better with one and a deeper ring
/// (docs/performance-notes.md#consumer-warpgroups).
int64_t defaultConsumers(const KernelShape &shape) {
  // The backward above head dim 128: no two slots of the ring fit next to
  // two consumers' scratch buffers (a consumer takes every other slot).
  if ((shape.backward && shape.headDim > KernelShape::kMaxOutputCols) ||
      largeBlockBackward(shape) || largeBlockWideForward(shape))
    return 1;
  return shape.backward && shape.headDim <= 64 && !shape.hasRotary() ? 1 : 2;
}

/// Whether the sm_90a rotary backward's consumers read their tile's angles
/// once (KernelPlan::anglesPerTile) under `auto`: where a rotary warpgroup
/// rotates the slots and the consumers have the registers to hold the
/// angles through the tile (32 at head dim 64, next to two consumers of
/// 184; 64 at 128, with one of 256). The table reads then overlap the wait
/// for the tile and its first products instead of preceding dk's and dq's
/// (H200, seed, run 11 of the rotary log: 8-33% faster at 64, 8-27% at 128).
bool anglesPerTileByDefault(const KernelShape &shape, const KernelPlan &plan) {
  return plan.rotaryWarpgroup &&
         (shape.headDim == 64 ||
          (shape.headDim == 128 && plan.numConsumers == 1));
}

/// Whether the sm_90a rotary backward next to a rotary warpgroup has one
/// consumer warpgroup (of 256 registers, the rotary warpgroup taking the
/// rest of the pool, 208) under `auto`, not two of 184: at head dim 128
/// (run 11 of the rotary log), and at 64 with tables and without a
/// positions tensor (H100, seed-d64, run 18 of
/// docs/performance-notes.md#fused-rotary-embeddings-sm_90a: 1.008-1.027x
/// the plain backward instead of 1.031-1.054x). With a positions tensor one
/// consumer at 64 was 7-11% slower: the two hide each other's wait for the
/// positions.
bool oneRotaryBackwardConsumer(const KernelShape &shape) {
  if (!shape.backward || !shape.hasRotary())
    return false;
  return shape.headDim == 128 ||
         (shape.headDim == 64 && !shape.hasPositions && !shape.rotaryTheta);
}

/// Whether the per-tile angles are read after the softmax under `auto`
/// (KernelPlan::anglesAfterSoftmax): at head dim 64 with a positions tensor
/// and tables, without rotate_v. Read as the tile arrives, the table reads
/// wait for the positions' round trip first, and the consumer with them;
/// split, the positions are read as the tile arrives and the tables after
/// the softmax (H100, seed-d64, run 16 of docs/performance-notes.md:
/// half-split 4% and interleaved 3% faster). With rotate_v dv needs the
/// angles sooner (half-split 1% slower), and at head dim 128 the later
/// table reads cost more than the positions' wait saved (4% slower
/// half-split; every other placement of the split too).
bool anglesAfterSoftmaxByDefault(const KernelShape &shape) {
  return shape.headDim == 64 && shape.hasPositions && !shape.rotaryTheta &&
         !shape.rotateV;
}

/// Whether the producer copies each tile's positions into its slot under
/// `auto` (KernelPlan::positionsInSlot): the backward at head dim 128 and
/// every kernel with rotate_v, from tables. Read from the slot, the rotary
/// warpgroup's and the consumer's table reads wait for no global read of
/// the positions (H100, seed, run 19 of docs/performance-notes.md: the
/// backward at 128 2.5-11% faster, interleaved `_pos_rv` 1.187 -> 1.059x
/// the plain one; with rotate_v at 64 the backward 3.4-6%, the forwards
/// 0-1.6%). Not the others: at 64 without rotate_v the consumers already
/// read the positions as the tile arrives and the tables after the softmax
/// (interleaved 0.9% slower from the slot), and the forwards without
/// rotate_v did not move (0.3-0.5% slower interleaved). From theta: not
/// timed.
bool positionsInSlotByDefault(const KernelShape &shape) {
  return !shape.rotaryTheta &&
         (shape.rotateV || (shape.backward && shape.headDim == 128));
}

/// The grouped-query backward's rings: "kv" two slots deep when that leaves
/// "qdo" two as well (one item's K, V in use while the next one's arrive),
/// else one; "qdo" (streamed G times an item) gets the rest, or
/// `num-stages`.
LogicalResult planGroupedRings(const KernelShape &shape,
                               const TuningOptions &options, int64_t budget,
                               KernelPlan &plan, Failure fail) {
  if (!validNumStages(options))
    return numStagesError(fail, options);
  int64_t pairBytes = 2 * shape.tileBytes(shape.headDim);
  plan.numStages = budget >= 4 * pairBytes ? 2 : 1;
  int64_t rest = budget - plan.numStages * pairBytes;
  plan.groupStages = options.numStages > 0
                         ? options.numStages
                         : std::min(kMaxStages, rest / pairBytes);
  if (plan.groupStages < 1 || rest < pairBytes)
    return fail("no rings of 2-tile slots (", pairBytes,
                " bytes each) for K, V and Q, dO fit in shared memory");
  return success();
}

/// The sm_100a grouped-query backward: its producer tracks two rings, its
/// MMA warpgroup nine, both in a loop over the query heads of a group
/// (forEachGroupHead). At 56 and 96 they spill 20-68 bytes at head dim 128
/// (ptxas, CUDA 13.0); at 96 and 152 nothing spills, and the one softmax
/// warpgroup still gets 256 (three warpgroups launch with 168 a thread).
constexpr int64_t kGroupedProducerRegs = 96, kGroupedMmaRegs = 152;

/// Whether the grouped backward at blocks of up to 64 tokens loads
/// half-split rows above head dim 128 as pair-complete chunks of two 32-column
/// pieces (pairHalfRows in Recipe.cpp, docs/head-dims.md "Pair-complete
/// chunks as 64-byte-swizzled pieces"): two TMA boxes a chunk, D / 32 a tile.
bool groupedPieceRows(const KernelShape &shape) {
  return shape.backward && shape.group > 1 &&
         shape.rotary == RotaryMode::half_split &&
         shape.headDim > KernelShape::kMaxOutputCols;
}

/// The producer of those kernels (both chips): with a box per 32-column piece
/// at 96 registers ptxas spilled it 12-16 bytes at head dim 256 (every table
/// kernel of blocks 16-64 measured; CUDA 13.0), at 104 the tables spilled
/// nothing but rotary_theta kernels 4 bytes, at 112 nothing (found by editing
/// the PTX's setmaxnreg). sm_100a: 112 / 152 leave the softmax warpgroup 240
/// (replicaRegisters), at which nothing spills either.
constexpr int64_t kGroupedPieceProducerRegs = 112;

/// The sm_90a grouped-query backward's producer, which tracks two rings in
/// a loop over the group's query heads: at 40 registers ptxas spilled 4-8
/// bytes (CUDA 13.0), at 48 nothing.
constexpr int64_t kGroupedSm90aProducerRegs = 48;

/// CTAs per SM of the sm_90a grouped backward: one above head dim 64 (its
/// consumer holds dK and dV, 64 + 64 registers a thread, across the group
/// next to S, dP and the transient dQ: more than the 208 a consumer gets
/// with two CTAs), else two (at three, as the plain backward at head dim
/// 32, 112 registers spilled 40-352 bytes).
int64_t groupedCtasPerSm(const KernelShape &shape) {
  return shape.headDim > 64 ? 1 : 2;
}

/// The launch of a grouped-query backward, whose work item is a block's K
/// and V and the group's Q and dO, read `passes` times: persistent and
/// strided by default, no L2 prefetch by default, one consumer (both chips).
LogicalResult planGroupedItemLaunch(Chip chip, const KernelShape &shape,
                                    const TuningOptions &options,
                                    int64_t passes, KernelPlan &plan,
                                    Failure fail) {
  int64_t itemBytes =
      (2 + 2 * shape.group * passes) * shape.tileBytes(shape.headDim);
  if (failed(planLaunch(chip, options, tilesOfChunkLoads(itemBytes),
                        /*chunkedByDefault=*/false, /*chunkedCtasPerSm=*/1,
                        plan, fail)))
    return failure();
  planL2Prefetch(options, /*byDefault=*/false, plan);
  plan.numConsumers = 1;
  return success();
}

/// Slots of the sm_90a pipelined grouped backward's ring "pds" (P and dS of
/// one query head): two, so that the scores warpgroup makes the next head's
/// P and dS while the accumulate warpgroup reads this head's.
constexpr int64_t kPdsStages = 2;

/// The sm_90a grouped-query backward with `group-roles=pipelined`
/// (Sm90aRecipe.cpp, buildHopperGroupedBackward): the producer and two
/// consumer warpgroups of different roles, each taking every slot of "kv"
/// and "qdo". One CTA per SM by default (two leave each consumer too few
/// registers for S, dP and dQ at once). Shared memory: the "pds" ring and
/// the scores warpgroup's dQ staging buffer, then the rings as
/// planGroupedRings sizes them; the accumulate warpgroup stores dV and dK
/// once an item from its registers (no staging buffer).
FailureOr<KernelPlan> planSm90aPipelinedGroup(const KernelShape &shape,
                                              const TuningOptions &options,
                                              Failure fail) {
  if (shape.headDim != 64 && shape.headDim != 128)
    return fail("group-roles=", stringifyGroupRoles(options.groupRoles),
                " is implemented at head dims 64 and "
                "128 (the grouped-query backward of group ",
                shape.group, "), got head dim ", shape.headDim);
  if (options.numConsumers < 0 || options.numConsumers > 1)
    return fail("group-roles=", stringifyGroupRoles(options.groupRoles),
                " has one scores and one accumulate "
                "warpgroup; num-consumers must be 0 or 1, got ",
                options.numConsumers);
  KernelPlan plan;
  plan.pipelinedRoles = true;
  plan.dqInAccumulate = options.groupRoles == GroupRoles::pipelined_dq;
  plan.pdsStages = kPdsStages;
  if (failed(planGroupedItemLaunch(Chip::sm_90a, shape, options,
                                   /*passes=*/1, plan, fail)))
    return failure();
  if (plan.ctasPerSm > 2)
    return fail("group-roles=", stringifyGroupRoles(options.groupRoles),
                " takes one or two CTAs per SM (three "
                "warpgroups each), got ctas-per-sm ",
                plan.ctasPerSm);
  plan.stageOutput = options.oStore != OStore::registers;
  plan.bulkStore = options.oStore == OStore::tma;
  int64_t scratch = plan.pdsStages * 2 * shape.queryTileBytes(shape.tileRows());
  if (plan.stageOutput)
    scratch += shape.queryTileBytes(shape.headDim);
  int64_t budget =
      TargetLimits::sharedMemoryBudget(plan.ctasPerSm) - kSmemReserve - scratch;
  if (failed(planGroupedRings(shape, options, budget, plan, fail)))
    return failure();
  plan.registers.load = kGroupedSm90aProducerRegs;
  // An even split: with two CTAs per SM (96 each) ptxas spills 8-12 bytes
  // at head dim 64; 104 / 88 spilled 0.4 KB (the accumulate warpgroup), a
  // producer of 40 with 104 / 96 40-80 bytes.
  plan.registers.compute = replicaRegisters(
      /*single=*/1, plan.registers.load, /*replicas=*/2, plan.ctasPerSm);
  plan.accumulateRegisters = plan.registers.compute;
  if (plan.dqInAccumulate && plan.ctasPerSm == 1) {
    // dV, dK and dQ (3 x 64 a thread at head dim 128) in one warpgroup: at
    // 224 ptxas spilled 144 bytes. It gets 256, the scores warpgroup (S, dP,
    // dS) the rest.
    int64_t pool = TargetLimits::launchRegisterCap(3 * 128, 1) * 3;
    plan.accumulateRegisters = 256;
    plan.registers.compute =
        (pool - plan.registers.load - plan.accumulateRegisters) / 8 * 8;
  }
  return plan;
}

/// The roles of the sm_90a grouped-query backward: `group-roles`, or under
/// `auto` the pipelined roles with dQ in the accumulate warpgroup at head
/// dim 128 (H200, seed lengths, Hq = 8, session 14: G = 4 3.38-3.76 ms
/// against 4.32-4.44 serial, 85-92% of the floor against 71%; G = 8 3.25
/// against 4.12), except groups of 2, where it spilled 28 bytes (4.29
/// against 4.95 serial; 'pipelined' 5.27; session 20 hid the accumulate
/// warpgroup's trip count and it no longer spills, but untimed it stays
/// an option): serial there, at head dim 64
/// (2.21-2.50 against 2.24-2.44: no clear gain) and wherever other options
/// ask for more consumers or CTAs than the pipelined roles have.
/// With rotary embeddings at head dim 128 (the scores warpgroup rotates K,
/// V and each Q in place; docs/rotary.md, "Grouped-query backward"), picked
/// by ptxas (CUDA 13.0, G = 2, 4, 8, bf16 and f16, no GPU timing yet): the
/// serial consumer spills 4-172 bytes with rotate_v (dK, dV and the turned-
/// back dQ), pipelined-dq 12 bytes wherever a positions tensor is read
/// (dQ's table reads in the accumulate warpgroup, next to dK and dV), and
/// pipelined 20-56 bytes with rotate_v and the sequence's positions (dV
/// turned back in an accumulate warpgroup of 224): so pipelined, and
/// pipelined-dq (an accumulate warpgroup of 256) for rotate_v without a
/// positions tensor; none of them spills.
GroupRoles groupRolesOf(const KernelShape &shape,
                        const TuningOptions &options) {
  if (options.groupRoles != GroupRoles::automatic)
    return options.groupRoles;
  if (shape.headDim != 128 || options.numConsumers > 1 || options.ctasPerSm > 1)
    return GroupRoles::serial;
  if (shape.hasRotary())
    return shape.rotateV && !shape.hasPositions ? GroupRoles::pipelined_dq
                                                : GroupRoles::pipelined;
  return shape.group == 2 ? GroupRoles::serial : GroupRoles::pipelined_dq;
}

/// The producer of the sm_90a grouped-query backward above head dim 128,
/// which streams the group once a pass (a loop over the passes around the
/// loop over the query heads): at 48 ptxas spilled it (200 bytes at head
/// dim 256), at 64 72 bytes, at 96 nothing (found by editing the PTX's
/// setmaxnreg; CUDA 13.0). Its two warpgroups launch with the register
/// file's cap, so the one consumer still gets 256.
constexpr int64_t kGroupedPassProducerRegs = 96;

/// Passes of the grouped-query backward above head dim 128 (both chips):
/// one a 64-column chunk of the head dim (KernelPlan::groupPasses).
int64_t groupedPasses(const KernelShape &shape) {
  return shape.headDim > KernelShape::kMaxOutputCols
             ? shape.headDim / shape.outputChunkCols()
             : 1;
}

/// The sm_90a grouped-query backward above head dim 128 (Sm90aRecipe.cpp,
/// buildGroupedPassConsumer): one consumer of 256 registers makes an item
/// in D / 64 passes, each holding one 64-column chunk of dV and dK (32 + 32
/// registers a thread) across the group next to S and dP (32 + 32) and the
/// transient dQ chunk; dV and dK of the whole head dim (2 x 128 at 256)
/// would not fit. Shared memory: P, dS and one 64-column staging buffer,
/// then the rings as planGroupedRings sizes them (at 256: "kv" one slot of
/// 64 KiB, "qdo" two). Launched as the other grouped backwards (persistent,
/// strided, one CTA per SM).
FailureOr<KernelPlan> planSm90aGroupedPasses(const KernelShape &shape,
                                             const TuningOptions &options,
                                             Failure fail) {
  if (options.numConsumers < 0 || options.numConsumers > 1)
    return fail("the grouped-query backward (group ", shape.group,
                ") above head dim 128 has one consumer warpgroup, which makes "
                "dV, dK and dQ in passes over 64-column chunks of the head "
                "dim; num-consumers must be 0 or 1, got ",
                options.numConsumers);
  KernelPlan plan;
  plan.groupPasses = groupedPasses(shape);
  if (failed(planGroupedItemLaunch(Chip::sm_90a, shape, options,
                                   plan.groupPasses, plan, fail)))
    return failure();
  plan.stageOutput = options.oStore != OStore::registers;
  plan.bulkStore = options.oStore == OStore::tma;
  int64_t scratch = 2 * shape.queryTileBytes(shape.tileRows());
  if (plan.stageOutput)
    scratch += shape.queryTileBytes(shape.outputChunkCols());
  int64_t budget =
      TargetLimits::sharedMemoryBudget(plan.ctasPerSm) - kSmemReserve - scratch;
  if (failed(planGroupedRings(shape, options, budget, plan, fail)))
    return failure();
  plan.registers.load = groupedPieceRows(shape) ? kGroupedPieceProducerRegs
                                                : kGroupedPassProducerRegs;
  plan.registers.compute = replicaRegisters(
      /*single=*/1, plan.registers.load, /*replicas=*/1, plan.ctasPerSm);
  return plan;
}

/// The sm_90a grouped-query backward (Sm90aRecipe.cpp,
/// buildHopperGroupedBackward): `columnParts` consumer warpgroups (one
/// unless `num-consumers` says 2) each take whole items (a block and a k/v
/// head: K, V once, then Q, dO of each of the G query heads) and compute
/// their columns of the gradients. Launched persistent and strided, with
/// groupedCtasPerSm CTAs per SM: an item is long (2 + 2G tiles of loads and
/// 5G products), so the chunked launch's one item per CTA paid a CTA's
/// start per item, and two column parts that recompute S and dP lost to
/// one consumer (H200, seed lengths, G = 4, D = 128: chunked 6.48 ms with
/// two parts, 5.82 with one; strided 5.06 with two, 4.33 with one; D = 64:
/// chunked 2.47, strided 2.17-2.23; docs/pipeline.md).
FailureOr<KernelPlan> planSm90aGrouped(const KernelShape &shape,
                                       const TuningOptions &options,
                                       Failure fail) {
  GroupRoles roles = groupRolesOf(shape, options);
  if (shape.headDim > KernelShape::kMaxOutputCols &&
      roles == GroupRoles::serial)
    return planSm90aGroupedPasses(shape, options, fail);
  if (roles != GroupRoles::serial) {
    TuningOptions picked = options;
    picked.groupRoles = roles;
    return planSm90aPipelinedGroup(shape, picked, fail);
  }
  if (options.numConsumers < 0 || options.numConsumers > 2)
    return fail("num-consumers must be 0 (the recipe picks), 1 or 2 for the "
                "grouped-query backward (group ",
                shape.group,
                "): each consumer computes its column part of dV, dK and dQ, "
                "got ",
                options.numConsumers);
  KernelPlan plan;
  plan.columnParts = std::max<int64_t>(1, options.numConsumers);
  // Each part reads whole K and Q tiles for S and dP, and the rotation is in
  // place in the shared slots: two parts would both turn them.
  if (plan.columnParts > 1 && shape.hasRotary())
    return fail("num-consumers ", plan.columnParts,
                " splits the grouped-query backward into column parts, which "
                "it does not do with rotary embeddings (each part would "
                "rotate the shared K and Q tiles in place); num-consumers "
                "must be 0 or 1");
  if (plan.columnParts > 1 && shape.headDim % (64 * plan.columnParts) != 0)
    return fail("num-consumers ", plan.columnParts,
                " splits the grouped-query backward's head dim ", shape.headDim,
                " into column parts of whole 64-column chunks, which it does "
                "not have");
  int64_t itemBytes = (2 + 2 * shape.group) * shape.tileBytes(shape.headDim);
  if (failed(planLaunch(Chip::sm_90a, options, tilesOfChunkLoads(itemBytes),
                        /*chunkedByDefault=*/false, groupedCtasPerSm(shape),
                        plan, fail)))
    return failure();
  if (options.ctasPerSm == 0)
    plan.ctasPerSm = groupedCtasPerSm(shape);
  planL2Prefetch(options, /*byDefault=*/false, plan);
  plan.numConsumers = 1;
  plan.stageOutput = options.oStore != OStore::registers;
  plan.bulkStore = options.oStore == OStore::tma;
  int64_t partCols = shape.headDim / plan.columnParts;
  int64_t scratch = 2 * shape.queryTileBytes(shape.tileRows());
  if (plan.stageOutput)
    scratch += shape.queryTileBytes(partCols);
  scratch *= plan.columnParts;
  int64_t budget =
      TargetLimits::sharedMemoryBudget(plan.ctasPerSm) - kSmemReserve - scratch;
  if (failed(planGroupedRings(shape, options, budget, plan, fail)))
    return failure();
  plan.registers.load = kGroupedSm90aProducerRegs;
  plan.registers.compute = replicaRegisters(
      /*single=*/1, plan.registers.load, plan.columnParts, plan.ctasPerSm);
  return plan;
}

/// Passes of the sm_90a grouped-query backward at block size 128
/// (KernelPlan::groupPasses): up to head dim 64 one; above, the group's dV
/// and dK of 128 keys and the whole head dim, in two accumulate
/// warpgroups of D / 2 + D / 2 registers a thread next to the scores
/// warpgroup's 176, exceed the 512 four warpgroups share, so an item is
/// made in passes over column chunks of one width (docs/head-dims.md, "one
/// chunk width per tile"): 64 at 128 (two passes), 32 at 96 (three; its
/// tiles are 32-column chunks with the 64-byte swizzle). The accumulators
/// are then those of head dims 64 and 32.
int64_t groupedLargeBlockPasses(const KernelShape &shape) {
  if (shape.headDim <= 64)
    return 1;
  return shape.headDim / (shape.headDim % 64 == 0 ? 64 : 32);
}

/// The sm_90a grouped-query backward at block size 128's registers: two
/// accumulate warpgroups hold dV and dK of their key half (32 + 32 a
/// thread at head dim 64), and the producer tracks two rings in the group's
/// loop with four TMA boxes a query head. ptxas (CUDA 13.0, head dim 64):
/// the producer spilled 28 bytes at 48 and 4 at 56; an accumulate
/// warpgroup left at the launch's 128 (no setmaxnreg) spilled 0.5-0.8 KB.
/// 64 / 136 / 136 leave the scores warpgroup 176 (P 64 + dP 64 at its
/// peak), and none of the 64 kernels (head dims 32 and 64, bf16 and f16,
/// G = 2-16, causal, dlse) spills.
constexpr int64_t kGroupedLargeBlockAccumulateRegs = 136,
                  kGroupedLargeBlockProducerRegs = 64;
/// Above head dim 64, in passes (groupedLargeBlockPasses), the producer
/// streams the group once a pass (a loop over the passes around the loop
/// over the query heads): at 64 registers ptxas spilled it 88-92 bytes at
/// head dims 96 and 128 (G = 2, 8; at 72 64 bytes, at 80 36), at 96
/// nothing; the accumulate warpgroups hold one chunk of dV and dK (16 + 16
/// or 32 + 32 a thread) and keep 120 each, the scores warpgroup 176
/// (96 / 160 / 128 / 128 spilled 4-44 bytes). CUDA 13.0, setmaxnreg edited
/// in the PTX.
constexpr int64_t kGroupedLargeBlockPassAccumulateRegs = 120,
                  kGroupedLargeBlockPassProducerRegs = 96;
/// With rotary embeddings at head dim 128 (interleaved; each pass's dK and
/// dV chunk turned back after the group at its key half's rows) ptxas spilled
/// accumulate warpgroup 1 (key half 1, at row and position + 64) 4-16 bytes
/// at G = 2 with rotate_v: raising it alone to 160 removed the spill,
/// raising accumulate warpgroup 0 or the scores warpgroup did not, and
/// hiding the group loop's trip count or pinning the rows only moved it (to
/// the positions-tensor kernel). 96 / 168 / 120 / 128 (and 88 / 176 / 120 /
/// 128) spilled in none of the 32 bf16 and f16 kernels at G = 2-16 (CUDA
/// 13.0, setmaxnreg edited in the PTX); at 96 the passes' budgets do not
/// spill. 128 is the launch's budget, at which a partition gets no
/// setmaxnreg unless it asks (warpspec.partition `explicit_regs`, which the
/// recipe sets for this warpgroup): without the instruction ptxas spilled
/// it 176-320 bytes. With causal and dlse the scores warpgroup spilled 8
/// bytes at 168 (20 of the 32 kernels, G = 4-16) and 96 / 176 / 112 / 128
/// 16-36 bytes in 13 of 64; 88 / 176 / 120 / 128 spills nothing in all 64
/// (bf16 and f16, G = 2-16, plain / positions / rotate_v / both, plain and
/// causal + dlse; setmaxnreg edited in the PTX, then built).
constexpr int64_t kGroupedLargeBlockRotaryPassSecondAccumulateRegs = 128,
                  kGroupedLargeBlockRotaryPassProducerRegs = 88;
/// With half-split rotary embeddings at head dim 128 (session 21: pair-
/// complete chunks, each gradient chunk stored as two 32-column pieces) the
/// interleaved budgets spilled both accumulate warpgroups 12 bytes each with
/// rotate_v (G = 2, 3; 24-28 bytes in all): raising either alone to 200 left
/// the other's 12, 88 / 176 / 128 / 136 spilled nothing but exceeds the pool.
/// 72 / 176 / 128 / 136 (and 80 / 168 / 128 / 136) spill nothing there; the
/// scores warpgroup keeps the 176 that causal + dlse need (168 spilled it in
/// the interleaved kernels), the producer gives 16 (its loads are the
/// interleaved kernel's two boxes a tile). Accumulate warpgroup 0 at the
/// launch's 128 gets its setmaxnreg (explicit_regs). CUDA 13.0, setmaxnreg
/// edited in the PTX, then built.
/// Session 23 loads each pair-complete chunk as two 32-column pieces (two
/// boxes, chunk_cols = 32): with rotate_v the producer then spilled 16 bytes
/// at 72 (G = 2, 4), at 80 nothing, and 80 / 168 / 128 / 136 spilled nothing
/// there while without rotate_v causal + dlse still needs the scores
/// warpgroup's 176 (8 bytes at 168, G = 3, f16).
constexpr int64_t kGroupedLargeBlockHalfSplitPassProducerRegs = 72,
                  kGroupedLargeBlockHalfSplitRotateVPassProducerRegs = 80,
                  kGroupedLargeBlockHalfSplitPassAccumulateRegs = 128,
                  kGroupedLargeBlockHalfSplitPassSecondAccumulateRegs = 136;
/// With half-split rotary embeddings at head dim 96 (session 24: pair-complete
/// 32-column chunks, each two 16-column pieces, so six boxes a tile where the
/// interleaved kernel loads three) the passes' budgets 96 / 176 / 120 / 120
/// spilled the producer at G = 2 (92-100 bytes in every bf16 / f16 kernel,
/// plain and causal + dlse; none at G = 3): 88 / 184 raised it to 112 bytes,
/// 96 / 168 / 128 / 120 lowered it to 92, 104 / 176 / 120 / 112 to 52,
/// 112 / 176 / 112 / 112 to 8; 120 / 168 / 112 / 112 spills nothing (G = 2
/// and 3, causal + dlse). CUDA 13.0, setmaxnreg edited in the PTX.
constexpr int64_t kGroupedLargeBlockPieces16PassProducerRegs = 120,
                  kGroupedLargeBlockPieces16PassAccumulateRegs = 112;

/// Slots of the sm_90a grouped block-128 backward's ring "chunks" above
/// head dim 128 (KernelPlan::groupChunkStages): a slot is a query half's and
/// K's (or dO's and V's) 64-column chunk, 24 KiB; four (96 KiB) fit next to
/// one "qdo" slot of a pass's chunks (Q's and dO's halves and K, 48 KiB),
/// the "pds" slot (64 KiB) and the 8 KiB dQ staging buffer: 216 KiB of the
/// 227. Four are one query half's S (at head dim 256) ahead.
constexpr int64_t kGroupedChunkStages = 4;

/// Above head dim 128 the grouped-query backward at block size 128 streams
/// its inputs in 64-column chunks of the head dim, one pass a chunk (both
/// chips: planSm90aGroupedLargeBlockChunks,
/// planSm100aGroupedLargeBlockChunks).
LogicalResult planGroupedChunkPasses(const KernelShape &shape, KernelPlan &plan,
                                     Failure fail) {
  if (shape.headDim % 64 != 0)
    return fail("the grouped-query backward at block_size ", shape.blockSize,
                " above head dim ", KernelShape::kMaxOutputCols,
                " streams 64-column chunks of the head dim, got head dim ",
                shape.headDim);
  plan.groupPasses = shape.headDim / 64;
  return success();
}

/// The rings of the grouped-query backward at block size 128 above head dim
/// 128 (both chips): "kv" the item's record (no buffers), two deep so that
/// the next item's is announced while this one runs; "qdo" one slot of a
/// pass's chunks of Q's and dO's halves and K; "chunks" `num-stages` slots
/// (kGroupedChunkStages by default) of a query half's and K's 64-column
/// chunk. "qdo" and "chunks" must fit in `budget` bytes.
LogicalResult planGroupedChunkRings(const KernelShape &shape,
                                    const TuningOptions &options,
                                    int64_t budget, KernelPlan &plan,
                                    Failure fail) {
  if (!validNumStages(options))
    return numStagesError(fail, options);
  plan.numStages = 2;
  plan.groupStages = 1;
  plan.groupChunkStages =
      options.numStages > 0 ? options.numStages : kGroupedChunkStages;
  int64_t chunkSlot = shape.queryTileBytes(64) + shape.tileBytes(64);
  int64_t qdoSlot = 4 * shape.queryTileBytes(64) + shape.tileBytes(64);
  if (qdoSlot + plan.groupChunkStages * chunkSlot > budget)
    return fail("no ring of ", plan.groupChunkStages, " slots of ", chunkSlot,
                " bytes (64-column chunks of a query half and K) fits in "
                "shared memory next to a \"qdo\" slot of ",
                qdoSlot, " bytes");
  return success();
}

/// The sm_90a grouped block-128 backward above head dim 128 with rotary
/// embeddings, where ptxas spilled (session 24; CUDA 13.0, G = 2, bf16): every
/// partition pins its shared-memory bases at each use and the scores
/// warpgroup's dQ stores their row steps (KernelPlan::pinnedAddresses), at
/// the passes' budgets. With rotate_v interleaved 28-80 bytes -> 0-24 (rv
/// without positions 0 but causal + dlse at 192, 4), half-split 72-164 ->
/// 8-72; half-split at 256 without rotate_v 4 -> 0. Without rotate_v the
/// others spill nothing unpinned (docs/head-dims.md, "Session 24: where the
/// grouped block-128 backward spills").
bool pinsGroupedChunkAddresses(const KernelShape &shape) {
  return shape.hasRotary() &&
         (shape.rotateV ||
          (shape.rotary == RotaryMode::half_split && shape.headDim > 192));
}

/// The sm_90a grouped-query backward at block size 128 above head dim 128
/// (Sm90aRecipe.cpp, buildHopperGroupedLargeBlock with
/// KernelPlan::groupChunkStages; docs/head-dims.md): an item's K and V of
/// the whole head dim (96 or 128 KiB) and a query head's Q and dO (the same)
/// do not fit next to P and dS (64 KiB), so S and dP are accumulated over
/// 64-column chunks streamed through the ring "chunks", and each of the
/// D / 64 passes reads its chunk of Q, dO and K from "qdo"; "kv" carries the
/// item's record alone. The warpgroups and budgets are the passes' at head
/// dim 128: the scores warpgroup's peak is still P 64 + dP 64, the
/// accumulate warpgroups hold one 64-column chunk of dV and dK.
FailureOr<KernelPlan>
planSm90aGroupedLargeBlockChunks(const KernelShape &shape,
                                 const TuningOptions &options, Failure fail) {
  KernelPlan plan;
  if (failed(planGroupedChunkPasses(shape, plan, fail)) ||
      failed(planGroupedItemLaunch(Chip::sm_90a, shape, options,
                                   plan.groupPasses, plan, fail)))
    return failure();
  plan.pipelinedRoles = true;
  plan.pdsStages = 1;
  plan.stageOutput = options.oStore != OStore::registers;
  plan.bulkStore = options.oStore == OStore::tma;
  // One "pds" slot of both halves' P and dS, the 64-column dQ staging
  // buffer.
  int64_t scratch =
      2 * shape.numQueryTiles() * shape.queryTileBytes(shape.tileRows());
  if (plan.stageOutput)
    scratch += shape.queryTileBytes(64);
  int64_t budget =
      TargetLimits::sharedMemoryBudget(plan.ctasPerSm) - kSmemReserve - scratch;
  if (failed(planGroupedChunkRings(shape, options, budget, plan, fail)))
    return failure();
  plan.registers.load = kGroupedLargeBlockPassProducerRegs;
  plan.accumulateRegisters = kGroupedLargeBlockPassAccumulateRegs;
  int64_t pool = TargetLimits::launchRegisterCap(4 * 128, 1) * 4;
  plan.registers.compute =
      (pool - plan.registers.load - 2 * plan.accumulateRegisters) / 8 * 8;
  plan.pinnedAddresses = pinsGroupedChunkAddresses(shape);
  return plan;
}

/// The sm_90a grouped-query backward at block size 128 with
/// `group-roles=query-halves` (Sm90aRecipe.cpp,
/// buildHopperGroupedLargeBlockHalves): the producer and two consumer
/// warpgroups, one per 64-row query half, each taking every slot of "kv"
/// and "qdo"; per query head each makes its half's S, P, dP, dS and dQ
/// (the pass's chunk) and hands P and dS to the other through its one-slot
/// ring "pds<half>", and sums key half `half`'s dV and dK (the pass's
/// chunk: 32 + 32 registers a thread at head dims 64 and 128) over the
/// group from both halves' P and dS. The scores chain of
/// planSm90aGroupedLargeBlock (one warpgroup making both halves' S, P, dP,
/// dS and dQ in series) is split in two, as `large-block-consumers=2` split
/// the non-grouped block-128 backward. Column passes as there
/// (groupedLargeBlockPasses); no rotary embeddings (both consumers would
/// rotate the shared K and Q in place).
FailureOr<KernelPlan>
planSm90aGroupedLargeBlockHalves(const KernelShape &shape,
                                 const TuningOptions &options, Failure fail) {
  if (shape.hasRotary())
    return fail("group-roles=query-halves does not apply with rotary "
                "embeddings: both query-half warpgroups would rotate the "
                "shared K and Q tiles in place");
  if (options.numConsumers > 1)
    return fail("group-roles=query-halves has one consumer warpgroup per "
                "query half, got num-consumers=",
                options.numConsumers);
  if (options.ctasPerSm > 1)
    return fail("group-roles=query-halves has one CTA per SM, got "
                "ctas-per-sm=",
                options.ctasPerSm);
  if (options.largeBlockConsumers != 0)
    return fail("group-roles=query-halves has one consumer warpgroup per "
                "query half; large-block-consumers does not apply");
  KernelPlan plan;
  plan.groupPasses = groupedLargeBlockPasses(shape);
  if (failed(planGroupedItemLaunch(Chip::sm_90a, shape, options,
                                   plan.groupPasses, plan, fail)))
    return failure();
  plan.groupedQueryHalves = true;
  plan.stageOutput = options.oStore != OStore::registers;
  plan.bulkStore = options.oStore == OStore::tma;
  // P and dS of both query halves (the rings "pds0" and "pds1", one slot
  // each), and a staging buffer of one pass's chunk per consumer.
  int64_t scratch =
      2 * shape.numQueryTiles() * shape.queryTileBytes(shape.tileRows());
  if (plan.stageOutput)
    scratch += 2 * shape.queryTileBytes(shape.headDim / plan.groupPasses);
  int64_t budget =
      TargetLimits::sharedMemoryBudget(plan.ctasPerSm) - kSmemReserve - scratch;
  if (failed(planGroupedRings(shape, options, budget, plan, fail)))
    return failure();
  // The producer's budgets of planSm90aGroupedLargeBlock, the two consumers
  // the rest of a pool of 504 (three warpgroups): 216 at head dims 32 and
  // 64, 200 in passes. ptxas still spills them (CUDA 13.0, G = 4, bf16:
  // 108 bytes at 64, 524 at 128; at 64 they need 256 with setmaxnreg edited
  // in the PTX), docs/pipeline.md "Query halves".
  bool passes = plan.groupPasses > 1;
  plan.registers.load = passes ? kGroupedLargeBlockPassProducerRegs
                               : kGroupedLargeBlockProducerRegs;
  plan.registers.compute = replicaRegisters(
      /*single=*/1, plan.registers.load, /*replicas=*/2, plan.ctasPerSm);
  return plan;
}

/// The sm_90a grouped-query backward at block size 128 (Sm90aRecipe.cpp,
/// buildHopperGroupedLargeBlock): the grouped backward's work item (a block
/// and a k/v head) and rings, "kv" (K, V of 128 rows) and "qdo" (Q and dO
/// of a query head in 64-row halves), each slot 4 D x 128 bytes, as
/// planGroupedRings sizes them next to one "pds" slot (P and dS of both
/// query halves, 64 KiB) and the scores warpgroup's staging buffer; a
/// scores warpgroup and two accumulate warpgroups (one per key half).
/// Persistent and strided, one CTA per SM. Above head dim 64 the
/// accumulate warpgroups would hold 96 and 128 registers of dV and dK, so an
/// item is made in passes over column chunks of the head dim
/// (groupedLargeBlockPasses); above 128 the inputs are streamed in 64-column
/// chunks (planSm90aGroupedLargeBlockChunks).
FailureOr<KernelPlan> planSm90aGroupedLargeBlock(const KernelShape &shape,
                                                 const TuningOptions &options,
                                                 Failure fail) {
  if (options.groupRoles == GroupRoles::query_halves)
    return planSm90aGroupedLargeBlockHalves(shape, options, fail);
  if (options.groupRoles != GroupRoles::automatic)
    return fail("group-roles=", stringifyGroupRoles(options.groupRoles),
                " does not apply at block_size ", shape.blockSize,
                ": the grouped-query backward there has a scores warpgroup "
                "and an accumulate warpgroup per key half (group-roles must "
                "be auto or query-halves)");
  if (options.numConsumers > 1)
    return fail("the grouped-query backward at block_size ", shape.blockSize,
                " has a scores warpgroup and an accumulate warpgroup per key "
                "half, got num-consumers=",
                options.numConsumers);
  if (options.ctasPerSm > 1)
    return fail("the grouped-query backward at block_size ", shape.blockSize,
                " has one CTA per SM, got ctas-per-sm=", options.ctasPerSm);
  if (options.largeBlockConsumers != 0)
    return fail("the grouped-query backward at block_size ", shape.blockSize,
                " has a scores warpgroup and an accumulate warpgroup per key "
                "half; large-block-consumers does not apply");
  if (shape.headDim > KernelShape::kMaxOutputCols)
    return planSm90aGroupedLargeBlockChunks(shape, options, fail);
  KernelPlan plan;
  plan.groupPasses = groupedLargeBlockPasses(shape);
  if (failed(planGroupedItemLaunch(Chip::sm_90a, shape, options,
                                   plan.groupPasses, plan, fail)))
    return failure();
  plan.pipelinedRoles = true;
  plan.pdsStages = 1;
  plan.stageOutput = options.oStore != OStore::registers;
  plan.bulkStore = options.oStore == OStore::tma;
  // One "pds" slot of both halves' P and dS, the scores warpgroup's staging
  // buffer of one pass's dQ chunk (the accumulate warpgroups store from
  // their registers).
  int64_t scratch =
      2 * shape.numQueryTiles() * shape.queryTileBytes(shape.tileRows());
  if (plan.stageOutput)
    scratch += shape.queryTileBytes(shape.headDim / plan.groupPasses);
  int64_t budget =
      TargetLimits::sharedMemoryBudget(plan.ctasPerSm) - kSmemReserve - scratch;
  if (failed(planGroupedRings(shape, options, budget, plan, fail)))
    return failure();
  // Four warpgroups launch with 128 registers a thread, a pool of 512.
  bool passes = plan.groupPasses > 1;
  plan.registers.load = passes ? kGroupedLargeBlockPassProducerRegs
                               : kGroupedLargeBlockProducerRegs;
  plan.accumulateRegisters = passes ? kGroupedLargeBlockPassAccumulateRegs
                                    : kGroupedLargeBlockAccumulateRegs;
  if (passes && shape.hasRotary() && shape.headDim == 128) {
    plan.registers.load = kGroupedLargeBlockRotaryPassProducerRegs;
    plan.secondAccumulateRegisters =
        kGroupedLargeBlockRotaryPassSecondAccumulateRegs;
    if (shape.rotary == RotaryMode::half_split) {
      plan.registers.load =
          shape.rotateV ? kGroupedLargeBlockHalfSplitRotateVPassProducerRegs
                        : kGroupedLargeBlockHalfSplitPassProducerRegs;
      plan.accumulateRegisters = kGroupedLargeBlockHalfSplitPassAccumulateRegs;
      plan.secondAccumulateRegisters =
          kGroupedLargeBlockHalfSplitPassSecondAccumulateRegs;
      // Every partition pins its shared-memory bases at each use and the
      // scores warpgroup's dQ pieces their row steps: unpinned, LLVM held
      // the producer's 24 copy destinations (64-bit, loop-invariant: one
      // "kv" and one "qdo" slot) and the group's head rows from the
      // partition's entry, and ptxas spilled it (docs/head-dims.md,
      // "Session 25").
      plan.pinnedAddresses = true;
    }
  }
  if (passes && shape.rotary == RotaryMode::half_split && shape.headDim == 96) {
    plan.registers.load = kGroupedLargeBlockPieces16PassProducerRegs;
    plan.accumulateRegisters = kGroupedLargeBlockPieces16PassAccumulateRegs;
  }
  int64_t second = plan.secondAccumulateRegisters
                       ? plan.secondAccumulateRegisters
                       : plan.accumulateRegisters;
  int64_t pool = TargetLimits::launchRegisterCap(4 * 128, 1) * 4;
  plan.registers.compute =
      (pool - plan.registers.load - plan.accumulateRegisters - second) / 8 * 8;
  return plan;
}

/// The output store on sm_100a: O (and the gradients) come out of tensor
/// memory into registers, then through shared memory.
LogicalResult checkSm100aOStore(const TuningOptions &options, Failure fail) {
  if (options.oStore == OStore::tma || options.oStore == OStore::smem)
    return success();
  return fail("o-store must be 'tma' or 'smem' on sm_100a (O comes out of "
              "tensor memory into registers, then through shared memory), "
              "got '",
              stringifyOStore(options.oStore), "'");
}

/// What the sm_100a grouped-query backwards (at block sizes up to 64 and at
/// 128) share: the o-store, a launch whose item is K, V and the group's Q
/// and dO, and one softmax warpgroup that takes whole items and stores
/// through a staging buffer.
LogicalResult planSm100aGroupedLaunch(const KernelShape &shape,
                                      const TuningOptions &options,
                                      KernelPlan &plan, Failure fail) {
  if (failed(checkSm100aOStore(options, fail)))
    return failure();
  if (failed(planGroupedItemLaunch(Chip::sm_100a, shape, options,
                                   plan.groupPasses, plan, fail)))
    return failure();
  plan.softmaxReplicas = 1;
  plan.stageOutput = true;
  plan.bulkStore = options.oStore == OStore::tma;
  return success();
}

/// The sm_100a grouped-query backward (Sm100aRecipe.cpp,
/// buildBlackwellGroupedBackward): the load and MMA warpgroups and one
/// softmax warpgroup that takes whole items.
FailureOr<KernelPlan> planSm100aGrouped(const KernelShape &shape,
                                        const TuningOptions &options,
                                        Failure fail) {
  KernelPlan plan;
  if (failed(planSm100aGroupedLaunch(shape, options, plan, fail)))
    return failure();
  // Above head dim 128 an item is made in passes over 64-column chunks:
  // S 64 + dP 64 + one chunk of dV, dK and dQ (3 x 64) columns of tensor
  // memory instead of 2 x 64 + 3 D (704 at 192).
  plan.groupPasses = groupedPasses(shape);
  // One output staging buffer (one chunk wide), one P/dS slot.
  int64_t scratch = shape.queryTileBytes(shape.outputChunkCols()) +
                    2 * shape.tileBytes(shape.tileRows());
  int64_t budget = TargetLimits::maxSharedMemoryBytes - kSmemReserve - scratch;
  if (failed(planGroupedRings(shape, options, budget, plan, fail)))
    return failure();
  plan.registers.load = groupedPieceRows(shape) ? kGroupedPieceProducerRegs
                                                : kGroupedProducerRegs;
  plan.registers.mma = kGroupedMmaRegs;
  plan.registers.compute = replicaRegisters(
      2, plan.registers.load + plan.registers.mma, 1, /*ctasPerSm=*/1);
  return plan;
}

/// The sm_100a grouped-query backward at block size 128's load and MMA
/// warpgroups (Sm100aRecipe.cpp, buildBlackwellGroupedLargeBlock): both
/// track their rings through the group's loop (the MMA warp nine, with two
/// query halves a head), and with two softmax warpgroups (512 threads, a
/// pool of 512 registers a thread) ptxas (CUDA 13.0) spilled unless load and
/// MMA had 128 and about 120 next to softmax warpgroups of at least 160:
/// more than the pool. So one softmax warpgroup takes both query halves
/// (three warpgroups, 504); the budgets are set in planSm100aGroupedLargeBlock.
constexpr int64_t kSm100aGroupedLargeBlockLoadRegs = 96,
                  kSm100aGroupedLargeBlockMmaRegs = 152;
/// At G = 2 the group's loop has one head, which LLVM unrolls next to the
/// first: the MMA warp's straight-line code spilled 68-172 bytes up to 176
/// registers at head dim 64; at 200 (with the load warpgroup at 48, which
/// still fits its one head a loop) nothing spills.
constexpr int64_t kSm100aGroupedLargeBlockPairLoadRegs = 48,
                  kSm100aGroupedLargeBlockPairMmaRegs = 200;
/// Above head dim 64, in passes (groupedLargeBlockPasses; the MMA warp's
/// and the softmax warpgroup's passes unrolled, their operands and P/dS
/// slots pinned after the query head: PinOp's anchor). Found by editing
/// setmaxnreg in the PTX, each warpgroup alone (ptxas, CUDA 13.0): the
/// producer needs up to 104 (head dim 96, whose "qdo" has two slots of
/// three 32-column chunks a tile), the MMA warp 128-144 and the softmax
/// warpgroup 232-256 (G = 4, 8, 16; softmax 256 from the pool of 504).
/// A group of 2 takes the same budgets (session 20): it had spilled 28-88
/// bytes under every split tried (88 / 232 / 184 ... 96 / 200 / 208) since
/// ptxas read the MMA warp's loop over the other heads as one trip and laid
/// it out straight; with that count opaque to ptxas too (Sm100aRecipe.cpp,
/// buildBlackwellGroupedLargeBlock) none of the 32 G = 2 kernels spills.
/// With interleaved rotary embeddings (session 20) the same budgets: the
/// softmax warpgroup rotates and turns back at its 256, with K, V and Q turned
/// in a loop of passes and the outputs' copy-out row steps pinned (no spills
/// in the bf16 / f16 kernels at G = 2, 3, 4, 8, every table variant, causal +
/// dlse; docs/rotary.md). No rotary warpgroup: nothing is left of the pool.
constexpr int64_t kSm100aGroupedLargeBlockPassLoadRegs = 104,
                  kSm100aGroupedLargeBlockPassMmaRegs = 144;
/// With half-split rotary embeddings at head dim 96 (session 24: six
/// 16-column boxes a tile) the producer spilled 36 bytes at 104 at G = 2
/// (every bf16 / f16 kernel, plain and causal + dlse); 112 / 136 left 4
/// bytes, 120 / 136 / 248 and 120 / 128 / 256 none (CUDA 13.0, setmaxnreg
/// edited in the PTX). The MMA warp's 128 is the plain passes' lower bound.
constexpr int64_t kSm100aGroupedLargeBlockPieces16PassLoadRegs = 120,
                  kSm100aGroupedLargeBlockPieces16PassMmaRegs = 128;

/// The sm_100a grouped block-128 backward above head dim 128's load and MMA
/// warpgroups (planSm100aGroupedLargeBlockChunks): the producer streams a
/// pass's group (4 D / 64 + 1 slots a head, the passes unrolled), the MMA
/// warp's chunk loops are short. At the passes' 104 / 144 ptxas (CUDA 13.0)
/// spilled the producer of the G = 3 kernels at 192 (4 bytes stored, 340
/// loaded; raising the MMA warp to 152 did nothing, lowering the softmax
/// warpgroup to 248 spilled more); 112 / 136 / 256 spills nothing (found by
/// editing setmaxnreg in the PTX). Session 23 read the SASS: those spills,
/// and those left at 112 / 136 (G = 3, and dlse at 256), were the softmax
/// warpgroup's (its STL after its setmaxnreg; the producer and the MMA warp
/// only reloaded the shared-memory base, which ptxas had spilled at the
/// kernel's entry). With that warpgroup's loop over the heads opaque
/// (Sm100aRecipe.cpp) none of the 64 spills at 112 / 136 / 256, nor, by
/// editing setmaxnreg, at 104 / 144 / 256 (G = 3 with dlse at 192 and 256,
/// G = 4 with dlse at 256); the budgets stay.
constexpr int64_t kSm100aGroupedLargeBlockChunkLoadRegs = 112,
                  kSm100aGroupedLargeBlockChunkMmaRegs = 136;
/// With rotary embeddings (Sm100aRecipe.cpp,
/// buildGroupedChunkRotaryPartition) a fourth warpgroup rotates each
/// streamed chunk slot in place (one 64-column part at a time, in a loop of
/// passes) and the MMA warp also waits on its signals; the softmax
/// warpgroup turns dQ's, dV's and dK's chunks back in f32. Four warpgroups
/// share a pool of 512 registers a thread. Found by editing setmaxnreg in
/// the PTX (ptxas, CUDA 13.0): the MMA warp needs 128 (120 spilled 32 bytes,
/// 104 184) and then its own setmaxnreg (at the launch's 128 without one the
/// kernels spilled 392-572 bytes: explicit_regs), the softmax warpgroup 216
/// (208 spilled 16 bytes), 224 with half-split pairs, causal blocks and dlse
/// (at 216 12 bytes); load / rotary 88 / 80 spill nothing in the interleaved
/// kernels but the half-split producer (two boxes a chunk) 8-28 bytes; 96 /
/// 64 / 128 / 224 spills nothing in either layout.
constexpr int64_t kSm100aGroupedChunkRotaryLoadRegs = 96,
                  kSm100aGroupedChunkRotaryRegs = 64,
                  kSm100aGroupedChunkRotaryMmaRegs = 128;

/// The sm_100a budgets with a rotary warpgroup (load, rotary, MMA; five
/// roles in one CTA): the softmax warpgroup gets what the pool leaves.
void setRotaryRegisters(KernelPlan &plan, int64_t load, int64_t rotary,
                        int64_t mma) {
  plan.registers.load = load;
  plan.registers.rotary = rotary;
  plan.registers.mma = mma;
  plan.registers.compute =
      replicaRegisters(/*single=*/3, load + rotary + mma, plan.softmaxReplicas,
                       /*ctasPerSm=*/1);
}

/// The sm_100a grouped-query backward at block size 128 above head dim 128
/// (Sm100aRecipe.cpp, buildBlackwellGroupedLargeBlock with
/// KernelPlan::groupChunkStages; docs/head-dims.md): as on sm_90a
/// (planSm90aGroupedLargeBlockChunks) an item's K and V and a query head's Q
/// and dO of the whole head dim do not fit shared memory next to both
/// halves' P and dS, so the producer streams 64-column chunks (the same
/// buildGroupedChunkLoadPartition): "chunks" (four slots of a query half's
/// and K's, or dO's and V's, chunk: 96 KiB), "qdo" (one slot of a pass's
/// chunks of Q's and dO's halves and K: 48 KiB), "kv" the item's record two
/// deep, next to "pds" (64 KiB) and one 64-column staging buffer (8 KiB):
/// 216 KiB. The MMA warp accumulates S and dP over the chunks in tensor
/// memory; the columns are the passes' at head dim 128 (S 128 + dP 128 +
/// dQ, dV, dK 64 each = 448 of 512), the warpgroups too.
FailureOr<KernelPlan>
planSm100aGroupedLargeBlockChunks(const KernelShape &shape,
                                  const TuningOptions &options, Failure fail) {
  KernelPlan plan;
  if (failed(planGroupedChunkPasses(shape, plan, fail)) ||
      failed(planSm100aGroupedLaunch(shape, options, plan, fail)))
    return failure();
  // The 64-column staging buffer, the halves' P and dS.
  int64_t scratch =
      shape.queryTileBytes(64) +
      shape.numQueryTiles() * 2 * shape.queryTileBytes(shape.tileRows());
  int64_t budget = TargetLimits::maxSharedMemoryBytes - kSmemReserve - scratch;
  if (failed(planGroupedChunkRings(shape, options, budget, plan, fail)))
    return failure();
  if (shape.hasRotary()) {
    // A signal a "chunks" or "qdo" slot the rotary warpgroup rotates: never
    // more entries than slots.
    plan.rotaryDepth = plan.groupChunkStages + plan.groupStages;
    setRotaryRegisters(plan, kSm100aGroupedChunkRotaryLoadRegs,
                       kSm100aGroupedChunkRotaryRegs,
                       kSm100aGroupedChunkRotaryMmaRegs);
    return plan;
  }
  plan.registers.load = kSm100aGroupedLargeBlockChunkLoadRegs;
  plan.registers.mma = kSm100aGroupedLargeBlockChunkMmaRegs;
  plan.registers.compute =
      replicaRegisters(2, plan.registers.load + plan.registers.mma,
                       plan.softmaxReplicas, /*ctasPerSm=*/1);
  return plan;
}

FailureOr<KernelPlan> planSm100aGroupedLargeBlock(const KernelShape &shape,
                                                  const TuningOptions &options,
                                                  Failure fail) {
  if (shape.headDim > KernelShape::kMaxOutputCols)
    return planSm100aGroupedLargeBlockChunks(shape, options, fail);
  KernelPlan plan;
  plan.groupPasses = groupedLargeBlockPasses(shape);
  if (failed(planSm100aGroupedLaunch(shape, options, plan, fail)))
    return failure();
  // The staging buffer of one pass's chunk, the halves' P and dS.
  int64_t scratch =
      shape.queryTileBytes(shape.headDim / plan.groupPasses) +
      shape.numQueryTiles() * 2 * shape.queryTileBytes(shape.tileRows());
  int64_t budget = TargetLimits::maxSharedMemoryBytes - kSmemReserve - scratch;
  if (failed(planGroupedRings(shape, options, budget, plan, fail)))
    return failure();
  bool pair = shape.group == 2;
  plan.registers.load = pair ? kSm100aGroupedLargeBlockPairLoadRegs
                             : kSm100aGroupedLargeBlockLoadRegs;
  plan.registers.mma = pair ? kSm100aGroupedLargeBlockPairMmaRegs
                            : kSm100aGroupedLargeBlockMmaRegs;
  if (plan.groupPasses > 1) {
    plan.registers.load = kSm100aGroupedLargeBlockPassLoadRegs;
    plan.registers.mma = kSm100aGroupedLargeBlockPassMmaRegs;
    if (shape.rotary == RotaryMode::half_split && shape.headDim == 96) {
      plan.registers.load = kSm100aGroupedLargeBlockPieces16PassLoadRegs;
      plan.registers.mma = kSm100aGroupedLargeBlockPieces16PassMmaRegs;
    }
  }
  plan.registers.compute =
      replicaRegisters(2, plan.registers.load + plan.registers.mma,
                       plan.softmaxReplicas, /*ctasPerSm=*/1);
  return plan;
}

/// The rotary warpgroup's replicas (`rotary-warpgroups`): two take one
/// consumer, since the four warpgroups' pool of 512 registers a thread
/// holds the producer's 40, 2 x 104 and 256, and a fifth warpgroup would
/// cut the pool to 480 (ptxas then spilled 16-76 bytes in every forward).
LogicalResult planRotaryReplicas(const KernelShape &shape,
                                 const TuningOptions &options, KernelPlan &plan,
                                 Failure fail) {
  bool asked = options.rotaryWarpgroups > 0;
  plan.rotaryReplicas =
      asked ? options.rotaryWarpgroups
            : (options.numConsumers <= 1 && plan.ctasPerSm == 1 &&
                       twoRotaryWarpgroupsByDefault(shape)
                   ? 2
                   : 1);
  if (plan.rotaryReplicas > 1 && plan.ctasPerSm > 1)
    return fail("rotary-warpgroups=2 needs one CTA per SM (two CTAs of "
                "four warpgroups leave a consumer 88 registers), got "
                "ctas-per-sm=",
                plan.ctasPerSm);
  if (plan.rotaryReplicas > 1 && options.numConsumers > 1)
    return fail("rotary-warpgroups=2 takes one consumer warpgroup "
                "(num-consumers 0 or 1), got num-consumers=",
                options.numConsumers);
  return success();
}

/// Tiles per CTA of the chunked backward with half-depth slots
/// (`slot-parts=2`) under `auto`: the CTA owns the SM (one CTA per SM), so
/// its start and its last tile's drain are bubbles no other CTA fills; more
/// tiles amortize them. Timed on the H200 (seed-d192 / seed-d256, % of the
/// floor; docs/head-dims.md): 4 tiles 89.0 / 92.8, 8 89.3 / 91.9, 16 86.6 /
/// 90.4, 32 85.6 / 89.3 (session 12); session 13, with the 48-register
/// producer: 4 88.8 / 93.1, 6 90.6 / 92.5, 8 89.2-89.3 / 91.9-92.0.
constexpr int64_t kSplitSlotTilesPerCta = 6;

/// Whether `slot-parts=2` applies: the sm_90a backward above head dim 128
/// without rotary embeddings, at block size 64 (the one-CTA-per-SM kernels
/// whose whole-tile slot fits once or twice).
bool splitsSlots(const KernelShape &shape) {
  return shape.backward && shape.headDim > KernelShape::kMaxOutputCols &&
         !shape.hasRotary() && shape.blockSize == 64 && shape.group == 1;
}

/// Whether `slot-parts=auto` splits the slots: wherever it applies, unless
/// another option asks for what the split ring does not have (more than
/// one consumer or CTA per SM, a ring depth, the L2 prefetch). Timed on the
/// H200 (2026-12-03, seed-d192 / seed-d256): 79.0% -> 89.3% and 67.4% ->
/// 91.9% of the floor (docs/head-dims.md).
bool splitsSlotsByDefault(const KernelShape &shape,
                          const TuningOptions &options) {
  return options.slotParts == 0 && splitsSlots(shape) &&
         options.numConsumers <= 1 && options.ctasPerSm <= 1 &&
         options.numStages == 0 && options.l2Prefetch != L2Prefetch::on;
}

/// The sm_90a backward with the load ring split by columns of the head dim
/// (`slot-parts=2`, docs/head-dims.md "Half-depth slots"): a ring of the low
/// columns (whole 64-column chunks, at least half) two slots deep and a ring
/// of the rest as deep as fits (at most as deep). The consumer releases the
/// high part first, after the products that read it, so the next tile's
/// high part loads while this tile's low-column products run, and the next
/// tile's low part loads during the whole tile. One consumer, one CTA per
/// SM, chunked.
FailureOr<KernelPlan> planSm90aSplitSlots(const KernelShape &shape,
                                          const TuningOptions &options,
                                          Failure fail) {
  if (options.numConsumers > 1)
    return fail("slot-parts=2 has one consumer warpgroup, got "
                "num-consumers=",
                options.numConsumers);
  if (options.l2Prefetch == L2Prefetch::on)
    return fail("l2-prefetch=on does not apply with slot-parts=2 (the "
                "prefetch moves whole-width tiles)");
  if (!validNumStages(options))
    return numStagesError(fail, options);
  KernelPlan plan;
  if (failed(planLaunch(Chip::sm_90a, options, kSplitSlotTilesPerCta,
                        /*chunkedByDefault=*/true, /*chunkedCtasPerSm=*/1, plan,
                        fail)))
    return failure();
  plan.numConsumers = 1;
  plan.stageOutput = options.oStore != OStore::registers;
  plan.bulkStore = options.oStore == OStore::tma;
  if (options.stagingBuffers == 2 && !plan.bulkStore)
    return fail("staging-buffers=2 takes o-store=tma (the bulk stores read "
                "the buffers asynchronously), got o-store='",
                stringifyOStore(options.oStore), "'");
  plan.stagingBuffers = options.stagingBuffers == 2 ? 2 : 1;
  // P and dS, and one output chunk's staging buffer (or two).
  int64_t scratch = 2 * shape.queryTileBytes(shape.tileRows());
  if (plan.stageOutput)
    scratch +=
        plan.stagingBuffers * shape.queryTileBytes(shape.outputChunkCols());
  int64_t budget =
      TargetLimits::sharedMemoryBudget(plan.ctasPerSm) - kSmemReserve - scratch;
  int64_t chunks = shape.numOutputChunks();
  plan.lowSlotCols = (chunks + 1) / 2 * shape.outputChunkCols();
  int64_t lowBytes = shape.numLoads() * shape.tileBytes(plan.lowSlotCols);
  int64_t highBytes =
      shape.numLoads() * shape.tileBytes(shape.headDim - plan.lowSlotCols);
  plan.numStages = options.numStages > 0 ? options.numStages : 2;
  plan.highStages = std::min(plan.numStages,
                             (budget - plan.numStages * lowBytes) / highBytes);
  if (plan.highStages < 1)
    return fail("no rings of half-depth slots (", plan.numStages, " x ",
                lowBytes, " and at least 1 x ", highBytes,
                " bytes) fit in shared memory next to ", scratch,
                " bytes of scratch");
  plan.registers.load = kSplitSlotProducerRegs;
  plan.registers.compute = replicaRegisters(
      /*single=*/1, plan.registers.load, /*replicas=*/1, plan.ctasPerSm);
  return plan;
}

/// Whether `large-block-consumers=2` applies: the sm_90a backward at block
/// size 128 without rotary embeddings (each consumer would rotate the
/// shared slot in place) and with one query head per k/v head.
bool splitsLargeBlockHalves(const KernelShape &shape) {
  return largeBlockBackward(shape) && !shape.hasRotary() && shape.group == 1;
}

/// Whether `large-block-consumers=0` picks two consumers: wherever they
/// apply, unless other options ask for what they do not have (several
/// consumers of whole blocks, CTAs sharing an SM, a ring depth), except the
/// causal kernels at head dim 128, where ptxas spills one word of consumer
/// 0's mask predicates (4 bytes). H200, seed-b128, session 14: 3.61 against
/// 4.60 ms (75.5% against 59.2% of the floor) at head dim 128.
bool splitsLargeBlockHalvesByDefault(const KernelShape &shape,
                                     const TuningOptions &options) {
  return options.largeBlockConsumers == 0 && splitsLargeBlockHalves(shape) &&
         options.numConsumers <= 1 && options.ctasPerSm <= 1 &&
         options.numStages == 0 && !(shape.causal && shape.headDim == 128);
}

/// `large-block-rings`: 0 to 2, and 2 only where two consumers apply and
/// are not refused (the two rings are those consumers' protocol).
LogicalResult checkLargeBlockRings(const KernelShape &shape,
                                   const TuningOptions &options, Failure fail) {
  if (options.largeBlockRings < 0 || options.largeBlockRings > 2)
    return fail("large-block-rings must be 0 (the recipe picks), 1 (one load "
                "ring) or 2 (the rings \"qk\" and \"vdo\"), got ",
                options.largeBlockRings);
  if (options.largeBlockRings != 2)
    return success();
  // Above head dim 128 the block is streamed in column chunks (its own
  // ring, planSm90aLargeBlockColumnPasses).
  if (options.chip != Chip::sm_90a || !splitsLargeBlockHalves(shape) ||
      shape.headDim > KernelShape::kMaxOutputCols)
    return fail("large-block-rings=2 applies to the sm_90a backward at block "
                "size 128 up to head dim 128, without rotary embeddings and "
                "with one query head per k/v head");
  if (options.largeBlockConsumers == 1 || options.numConsumers > 1 ||
      options.ctasPerSm > 1)
    return fail("large-block-rings=2 splits the slot of two consumer "
                "partitions (one warpgroup a query half, one CTA per SM), "
                "got large-block-consumers=",
                options.largeBlockConsumers,
                ", num-consumers=", options.numConsumers,
                ", ctas-per-sm=", options.ctasPerSm);
  return success();
}

/// The sm_90a backward at block size 128 with one consumer warpgroup per
/// 64-row query half (`large-block-consumers=2`, docs/block-sizes.md "Two
/// consumers"): both take every slot of the load ring, and each hands its
/// half's P and dS to the other through a one-slot ring of [64, 128] P and
/// dS (the same 64 KiB as the one consumer's scratch); each has its own
/// output staging buffer. Persistent, one CTA per SM; the ring is the
/// deepest that fits (one slot at head dims 96 and 128). Registers: the
/// producer's 64 leave each consumer 216 (the peak is still P 64 + dP 64
/// at D = 128).
FailureOr<KernelPlan> planSm90aLargeBlockHalves(const KernelShape &shape,
                                                const TuningOptions &options,
                                                Failure fail) {
  if (options.numConsumers > 1)
    return fail("large-block-consumers=2 has one consumer warpgroup per "
                "query half, got num-consumers=",
                options.numConsumers);
  if (options.ctasPerSm > 1)
    return fail("large-block-consumers=2 has one CTA per SM, got "
                "ctas-per-sm=",
                options.ctasPerSm);
  if (!validNumStages(options))
    return numStagesError(fail, options);
  KernelPlan plan;
  int64_t slotBytes = shape.numLoads() * shape.tileBytes(shape.headDim);
  if (failed(planLaunch(
          Chip::sm_90a, options, chunkedTilesPerCta(shape, slotBytes),
          /*chunkedByDefault=*/false, chunkedCtasPerSm(shape), plan, fail)))
    return failure();
  planL2Prefetch(options, /*byDefault=*/false, plan);
  plan.largeBlockConsumers = 2;
  // Two rings hold the same tiles as one (q's halves and k, then v and dO's
  // halves), in the same bytes a slot: the depth below is each ring's.
  plan.largeBlockRings = options.largeBlockRings == 2 ? 2 : 1;
  plan.numConsumers = 1;
  plan.stageOutput = options.oStore != OStore::registers;
  plan.bulkStore = options.oStore == OStore::tma;
  // P and dS of both query halves (the rings "pds0" and "pds1"), and a
  // staging buffer per consumer.
  int64_t scratch =
      2 * shape.numQueryTiles() * shape.queryTileBytes(shape.tileRows());
  if (plan.stageOutput)
    scratch += 2 * shape.queryTileBytes(shape.outputChunkCols());
  int64_t budget =
      TargetLimits::sharedMemoryBudget(plan.ctasPerSm) - kSmemReserve - scratch;
  int64_t fits = std::min(kMaxStages, budget / slotBytes);
  plan.numStages = options.numStages > 0 ? options.numStages : fits;
  // Where the ring holds one slot (head dims 96 and 128) the next block's
  // loads wait for this block's last product unless the slot is split:
  // H200, seed lengths, 2026-12-04, 3.46 -> 3.20 ms at 128 and 3.48 -> 2.79
  // at 96; with two or more slots (64, 32) the split was 1-2% slower
  // (docs/block-sizes.md, "Two rings").
  if (options.largeBlockRings == 0 && options.numStages == 0 && fits == 1)
    plan.largeBlockRings = 2;
  if ((plan.numStages < 1 || plan.numStages > fits) &&
      plan.largeBlockRings == 2)
    return fail("no rings \"qk\" and \"vdo\" of ",
                std::max<int64_t>(plan.numStages, 1), " x ", slotBytes,
                " bytes together fit in shared memory next to ", scratch,
                " bytes of P, dS and staging buffers (large-block-rings=2)");
  if (plan.numStages < 1 || plan.numStages > fits)
    return fail(
        "no ring of ", std::max<int64_t>(plan.numStages, 1), " x ", slotBytes,
        " bytes fits in shared memory next to ", scratch,
        " bytes of P, dS and staging buffers (large-block-consumers=2)");
  plan.registers.load = kLargeBlockBackwardProducerRegs;
  plan.registers.compute = replicaRegisters(
      /*single=*/1, plan.registers.load, /*replicas=*/2, plan.ctasPerSm);
  return plan;
}

/// The sm_90a backward at block size 128 above head dim 128 (two passes over
/// column chunks, KernelPlan::columnPasses).
bool largeBlockWideBackward(const KernelShape &shape) {
  return largeBlockBackward(shape) &&
         shape.headDim > KernelShape::kMaxOutputCols;
}

/// The launch of the backward at block size 128 above head dim 128 (column
/// passes, both chips): the producer streams 64-column chunks of one block
/// at a time, one consumer (sm_90a) or the MMA warpgroup (sm_100a) taking
/// every slot, with one CTA per SM and no L2 prefetch.
LogicalResult planColumnPassLaunch(Chip chip, const KernelShape &shape,
                                   const TuningOptions &options,
                                   KernelPlan &plan, Failure fail) {
  if (options.l2Prefetch == L2Prefetch::on)
    return fail("l2-prefetch=on does not apply to the backward at block_size ",
                shape.blockSize, " above head_dim 128");
  if (!validNumStages(options))
    return numStagesError(fail, options);
  if (failed(planLaunch(chip, options, /*chunkedTilesPerCta=*/1,
                        /*chunkedByDefault=*/false, /*chunkedCtasPerSm=*/1,
                        plan, fail)))
    return failure();
  plan.columnPasses = true;
  plan.numConsumers = 1;
  return success();
}

/// The column-pass backward's chunk ring (both chips): `num-stages` slots of
/// `slotBytes`, by default two or as many as fit in `budget`, the shared
/// memory left next to `scratch` bytes of P, dS and staging buffers.
LogicalResult planColumnPassRing(const TuningOptions &options,
                                 int64_t slotBytes, int64_t budget,
                                 int64_t scratch, KernelPlan &plan,
                                 Failure fail) {
  int64_t fits = std::min<int64_t>(2, budget / slotBytes);
  plan.numStages = options.numStages > 0 ? options.numStages : fits;
  if (plan.numStages < 1 || plan.numStages * slotBytes > budget)
    return fail("no ring of ", std::max<int64_t>(plan.numStages, 1), " x ",
                slotBytes, " bytes fits in shared memory next to ", scratch,
                " bytes of P, dS and staging buffers");
  return success();
}

/// The sm_90a backward at block size 128 above head dim 128
/// (KernelPlan::columnPasses; docs/head-dims.md): the chunk ring's slot is
/// 64 columns of a block's q halves, k, v and dO halves (64 KiB), two slots
/// deep; P and dS of both query halves (the rings "pds0", "pds1") and a
/// staging buffer per consumer: 208 KiB. Persistent, one CTA per SM, two
/// consumers (one per query half) of 200 registers next to the producer's
/// 104 (kColumnPassProducerRegs).
FailureOr<KernelPlan>
planSm90aLargeBlockColumnPasses(const KernelShape &shape,
                                const TuningOptions &options, Failure fail) {
  if (options.numConsumers > 1)
    return fail("the backward at block_size ", shape.blockSize,
                " above head_dim 128 has one consumer warpgroup per query "
                "half, got num-consumers=",
                options.numConsumers);
  if (options.ctasPerSm > 1)
    return fail("the backward at block_size ", shape.blockSize,
                " above head_dim 128 has one CTA per SM, got ctas-per-sm=",
                options.ctasPerSm);
  if (options.slotParts == 2 || options.largeBlockConsumers == 1)
    return fail("the backward at block_size ", shape.blockSize,
                " above head_dim 128 streams 64-column chunks to two "
                "consumers; slot-parts=2 and large-block-consumers=1 do not "
                "apply");
  // The rotary kernels turn their gradients back a 64-column chunk at a
  // time, each reading its own angles.
  if (asksAnglesPerTile(options) && shape.hasRotary())
    return perTileAnglesAboveMaxOutputCols(options, fail);
  KernelPlan plan;
  if (failed(planColumnPassLaunch(Chip::sm_90a, shape, options, plan, fail)))
    return failure();
  int64_t chunkCols = shape.outputChunkCols();
  int64_t slotBytes = shape.numLoads() * shape.tileBytes(chunkCols);
  plan.stageOutput = options.oStore != OStore::registers;
  plan.bulkStore = options.oStore == OStore::tma;
  int64_t scratch =
      2 * shape.numQueryTiles() * shape.queryTileBytes(shape.tileRows());
  if (plan.stageOutput)
    scratch += 2 * shape.queryTileBytes(chunkCols);
  int64_t budget =
      TargetLimits::sharedMemoryBudget(plan.ctasPerSm) - kSmemReserve - scratch;
  if (failed(
          planColumnPassRing(options, slotBytes, budget, scratch, plan, fail)))
    return failure();
  plan.registers.load = kColumnPassProducerRegs;
  plan.registers.compute = replicaRegisters(
      /*single=*/1, plan.registers.load, /*replicas=*/2, plan.ctasPerSm);
  // The rotary kernels' budgets (the two consumers' add up to the pool's
  // rest: 504 = 3 x 168 a thread slot). The producer rotates the chunk
  // slots where that spills least (KernelPlan::producerRotates).
  if (pinsColumnPassAddresses(shape)) {
    plan.producerRotates = true;
    plan.pinnedAddresses = true;
    plan.registers.load = kRotaryColumnPassProducerRegs;
    plan.registers.compute = kRotaryColumnPassConsumerRegs;
    return plan;
  }
  plan.pinnedAddresses = pinsHalfSplitColumnPassAddresses(shape);
  if (producerRotatesColumnPasses(shape)) {
    plan.producerRotates = true;
    plan.registers.load = kRotaryColumnPassProducerRegs;
    plan.registers.compute = kRotaryColumnPassConsumerRegs;
  } else if (shape.rotateV) {
    plan.registers.load = kRotateVColumnPassProducerRegs;
    plan.registers.compute = kRotateVColumnPassConsumerRegs;
    plan.secondConsumerRegisters = kRotateVColumnPassSecondConsumerRegs;
  } else if (shape.hasRotary() && shape.headDim > 192) {
    plan.registers.load = kWideRotaryColumnPassProducerRegs;
    plan.registers.compute = kWideRotaryColumnPassConsumerRegs;
    plan.secondConsumerRegisters = kWideRotaryColumnPassSecondConsumerRegs;
    if (plan.pinnedAddresses) {
      plan.registers.compute = kPinnedHalfSplitColumnPassConsumerRegs;
      plan.secondConsumerRegisters =
          kPinnedHalfSplitColumnPassSecondConsumerRegs;
    }
  }
  return plan;
}

/// The sm_90a recipe: one TMA producer warpgroup and `numConsumers`
/// consumer warpgroups that each own whole tiles. A 64x64 tile is
/// memory-bound by ~7x (32 FLOP/byte forward, ~40 backward), so the plan is
/// about keeping loads in flight and stores out of the way.
FailureOr<KernelPlan> planSm90a(const KernelShape &shape,
                                const TuningOptions &options, Failure fail) {
  if (options.numConsumers < 0 || options.numConsumers > 3)
    return fail("num-consumers must be 0 (the recipe picks), 1, 2 or 3 "
                "(warpgroups of 128 threads next to the producer), got ",
                options.numConsumers);
  if (largeBlockWideBackward(shape))
    return planSm90aLargeBlockColumnPasses(shape, options, fail);
  if (options.slotParts == 2 || splitsSlotsByDefault(shape, options))
    return planSm90aSplitSlots(shape, options, fail);
  if (options.largeBlockConsumers == 2 || options.largeBlockRings == 2 ||
      splitsLargeBlockHalvesByDefault(shape, options))
    return planSm90aLargeBlockHalves(shape, options, fail);
  KernelPlan plan;
  int64_t slotBytes = shape.numLoads() * shape.tileBytes(shape.headDim);
  if (failed(planLaunch(Chip::sm_90a, options,
                        chunkedTilesPerCta(shape, slotBytes),
                        options.numConsumers <= chunkedConsumers(shape) &&
                            chunkedByDefault(shape, options),
                        chunkedCtasPerSm(shape), plan, fail)))
    return failure();
  planL2Prefetch(options,
                 shape.backward && !shape.hasRotary() && shape.headDim <= 64 &&
                     plan.tilesPerCta > 0,
                 plan);
  if (options.schedule == Schedule::automatic && dynamicByDefault(shape, plan))
    plan.dynamicSchedule = true;
  // Like the other options, `on` applies to the kernels it can: those with
  // rotary embeddings and one CTA per SM, or two at head dim 64 (a consumer
  // of 128 registers next to a rotary warpgroup of kSm90aChunkedRotaryRegs;
  // at 128 two CTAs of three warpgroups leave too few for the consumer).
  // Not the backward at block size 128: its one consumer rotates its slot
  // itself and keeps 256 registers (docs/block-sizes.md).
  bool roomForRotary =
      plan.ctasPerSm == 1 || (plan.ctasPerSm == 2 && shape.headDim == 64);
  plan.rotaryWarpgroup =
      shape.hasRotary() && roomForRotary && !largeBlockBackward(shape) &&
      (options.rotaryWarpgroup == RotaryWarpgroup::on ||
       (options.rotaryWarpgroup == RotaryWarpgroup::automatic &&
        rotaryWarpgroupByDefault(shape)));
  if (plan.rotaryWarpgroup &&
      failed(planRotaryReplicas(shape, options, plan, fail)))
    return failure();
  // Two CTAs per SM leave each 128 registers a thread at launch: one
  // consumer warpgroup (216 after setmaxnreg) next to the producer, except
  // where the tiles are small enough for two (chunkedConsumers). Two rotary
  // warpgroups leave registers for one; so does the rotary backward at head
  // dim 128, whose one consumer of 256 holds its tile's angles
  // (anglesPerTileByDefault), and the one at 64 with tables and without a
  // positions tensor (oneRotaryBackwardConsumer).
  bool oneConsumer = plan.rotaryWarpgroup && oneRotaryBackwardConsumer(shape);
  plan.numConsumers = options.numConsumers > 0  ? options.numConsumers
                      : plan.rotaryReplicas > 1 ? 1
                      : oneConsumer             ? 1
                      : plan.ctasPerSm > 1      ? chunkedConsumers(shape)
                                                : defaultConsumers(shape);
  // Not above head dim 128: the gradients are turned back chunk group by
  // chunk group there, each reading its own angles (storeOutputInChunks).
  if (asksAnglesPerTile(options) && shape.backward && shape.hasRotary() &&
      shape.headDim > KernelShape::kMaxOutputCols)
    return perTileAnglesAboveMaxOutputCols(options, fail);
  plan.anglesPerTile = shape.backward && shape.hasRotary() &&
                       !largeBlockBackward(shape) &&
                       shape.headDim <= KernelShape::kMaxOutputCols &&
                       (asksAnglesPerTile(options) ||
                        (options.rotaryAngles == RotaryAngles::automatic &&
                         anglesPerTileByDefault(shape, plan)));
  plan.anglesAfterSoftmax =
      plan.anglesPerTile &&
      (options.rotaryAngles == RotaryAngles::after_softmax ||
       (options.rotaryAngles == RotaryAngles::automatic &&
        anglesAfterSoftmaxByDefault(shape)));
  plan.pFromSmem = options.pOperand == POperand::smem;
  plan.stageOutput = options.oStore != OStore::registers;
  plan.outputsInSlot = options.oStore == OStore::slot;
  plan.bulkStore = options.oStore == OStore::tma || plan.outputsInSlot;
  // Where a rotary warpgroup turns the slots of 64-row tiles (every reader
  // of the positions then waits for the slot).
  plan.positionsInSlot = plan.rotaryWarpgroup && shape.hasPositions &&
                         (!shape.backward || plan.anglesPerTile) &&
                         shape.blockSize <= 64 && shape.group == 1 &&
                         (options.positionsLoad == PositionsLoad::producer ||
                          (options.positionsLoad == PositionsLoad::automatic &&
                           positionsInSlotByDefault(shape)));
  // 256 bytes of positions a slot, apart from its tiles.
  int64_t slotRowBytes = plan.positionsInSlot ? 4 * shape.tileRows() : 0;

  int64_t scratchPerConsumer = 0;
  if (shape.backward || plan.pFromSmem)
    scratchPerConsumer += shape.queryTileBytes(shape.tileRows());
  if (shape.backward)
    scratchPerConsumer += shape.queryTileBytes(shape.tileRows());
  // A large block's backward keeps P and dS of every query half.
  if (largeBlockBackward(shape))
    scratchPerConsumer += 2 * (shape.numQueryTiles() - 1) *
                          shape.queryTileBytes(shape.tileRows());
  if (plan.stageOutput)
    scratchPerConsumer += shape.queryTileBytes(shape.outputChunkCols());
  int64_t scratchBytes = plan.numConsumers * scratchPerConsumer;
  int64_t budget = TargetLimits::sharedMemoryBudget(plan.ctasPerSm) -
                   kSmemReserve - scratchBytes;
  // Consumers (and rotary warpgroups) take slots round-robin, so the depth
  // is a multiple of their number (see the warpspec.kernel verifier).
  int64_t takers = std::lcm(plan.numConsumers, plan.rotaryReplicas);
  int64_t fits = std::min(kMaxStages, budget / (slotBytes + slotRowBytes));
  fits -= fits % takers;
  if (!validNumStages(options))
    return numStagesError(fail, options);
  if (options.numStages % takers != 0)
    return fail("num-stages must be a non-negative multiple of "
                "num-consumers (",
                plan.numConsumers, ")",
                plan.rotaryReplicas > 1 ? " and of rotary-warpgroups (2)" : "",
                ", got ", options.numStages);
  plan.numStages = options.numStages > 0 ? options.numStages : fits;
  if (plan.numStages < 1)
    return fail("no ring of ", shape.numLoads(), "-tile slots (", slotBytes,
                " bytes each, a multiple of ", plan.numConsumers,
                " slots) fits in shared memory next to ", scratchBytes,
                " bytes of scratch");
  // The producer's few registers leave the consumers the rest of the CTA's
  // pool: 232 each with two of them (the forward holds S 32 + O 64 + P 16
  // accumulator registers at D=128; the backward at most one 64-register
  // output accumulator, dS and a few row values at a time).
  plan.registers.load = kProducerRegs;
  if (largeBlockBackward(shape))
    plan.registers.load = kLargeBlockBackwardProducerRegs;
  // Whole slots above head dim 128 (slot-parts=1): 12 or 16 boxes a tile;
  // at 40 ptxas spilled the producer (8 bytes at 256).
  if (shape.backward && shape.headDim > KernelShape::kMaxOutputCols)
    plan.registers.load = kSplitSlotProducerRegs;
  if (largeBlockWideForward(shape))
    plan.registers.load = kLargeBlockWideForwardLoadRegs;
  // ptxas compiles every warpgroup's code within the launch's registers
  // before setmaxnreg moves them: below 64 a thread it gives up (C7602
  // "insufficient registers", at 56 for three CTAs of a producer and two
  // consumers at head dim 32; 64 assembles).
  int64_t warpgroups =
      1 + plan.numConsumers + (plan.rotaryWarpgroup ? plan.rotaryReplicas : 0);
  int64_t launchRegs =
      TargetLimits::launchRegisterCap(128 * warpgroups, plan.ctasPerSm);
  if (launchRegs < kMinLaunchRegs)
    return fail(plan.ctasPerSm, " CTAs per SM of ", warpgroups,
                " warpgroups each launch with ", launchRegs,
                " registers a thread, fewer than the ", kMinLaunchRegs,
                " ptxas needs; ask for fewer CTAs per SM (ctas-per-sm) or "
                "consumers (num-consumers)");
  if (plan.rotaryWarpgroup) {
    plan.registers.rotary = plan.ctasPerSm == 1 ? kSm90aRotaryRegs
                            : shape.rotateV     ? kSm90aChunkedRotateVRotaryRegs
                                                : kSm90aChunkedRotaryRegs;
    plan.registers.compute = replicaRegisters(
        /*single=*/1 + plan.rotaryReplicas,
        kProducerRegs + plan.rotaryReplicas * plan.registers.rotary,
        plan.numConsumers, plan.ctasPerSm);
    // A lone rotary warpgroup takes what the producer and the consumers
    // leave of the pool: 104 next to two consumers of 184 (512 - 40 - 368),
    // 208 next to one of 256 (three warpgroups' 504 - 40 - 256), so that its
    // rotation does not spill (the f16 half-split backward with positions
    // spilled 4 bytes at 104 once its consumer stored through smem).
    if (plan.ctasPerSm == 1 && plan.rotaryReplicas == 1)
      plan.registers.rotary =
          std::min<int64_t>(256,
                            launchRegs * warpgroups - kProducerRegs -
                                plan.numConsumers * plan.registers.compute) /
          8 * 8;
    return plan;
  }
  plan.registers.compute = replicaRegisters(
      /*single=*/1, plan.registers.load, plan.numConsumers, plan.ctasPerSm);
  return plan;
}

/// sm_100a, the rotary backward at block size 128 (Sm100aRecipe.cpp,
/// buildBlackwellLargeBlockRotaryBackward; docs/block-sizes.md, "The rotary
/// backward at 128 on sm_100a"): four warpgroups, one softmax warpgroup
/// taking both query halves and both key halves of every block in turn, as
/// the rotary forward at 128 does (largeBlockRotaryForward): two beside the
/// rotary warpgroup would keep about 124 registers each, too few for a
/// half's S and dP (64 + 64 f32).
bool largeBlockRotaryBackward(const KernelShape &shape) {
  return shape.hasRotary() && largeBlockBackward(shape);
}

/// The plan of largeBlockRotaryBackward. The rotary warpgroup turns q's
/// halves, k (and v) in the load ring's slot, in place (a ring of rotated
/// tiles, 64 KiB at head dim 128, does not fit next to the 128 KiB slot and
/// the 64 KiB of both halves' P and dS): the ring "rotated" only signals.
/// Shared memory: the load ring as deep as fits next to the P/dS ring (two
/// [64, 128] tiles a half, both halves held) and one output staging buffer.
/// Persistent, one CTA per SM.
FailureOr<KernelPlan>
planSm100aLargeBlockRotaryBackward(const KernelShape &shape,
                                   const TuningOptions &options, Failure fail) {
  KernelPlan plan;
  int64_t slotBytes = shape.numLoads() * shape.tileBytes(shape.headDim);
  if (failed(planLaunch(Chip::sm_100a, options, tilesOfChunkLoads(slotBytes),
                        /*chunkedByDefault=*/false, /*chunkedCtasPerSm=*/1,
                        plan, fail)))
    return failure();
  planL2Prefetch(options, /*byDefault=*/false, plan);
  plan.numConsumers = 1; // the MMA warpgroup takes every slot
  plan.softmaxReplicas = 1;
  plan.pFromSmem = false;
  plan.stageOutput = true;
  plan.bulkStore = options.oStore == OStore::tma;
  int64_t halves = shape.numQueryTiles();
  int64_t scratch = shape.queryTileBytes(shape.headDim) +
                    halves * 2 * shape.queryTileBytes(shape.tileRows());
  int64_t budget = TargetLimits::maxSharedMemoryBytes - kSmemReserve - scratch;
  if (!validNumStages(options))
    return numStagesError(fail, options);
  int64_t fits = std::min(kMaxStages, budget / slotBytes);
  plan.numStages = options.numStages > 0 ? options.numStages : fits;
  if (plan.numStages < 1 || plan.numStages > fits)
    return fail("no ring of ", std::max<int64_t>(plan.numStages, 1), " x ",
                slotBytes, " bytes fits in shared memory next to ", scratch,
                " bytes of P, dS and the staging buffer");
  // A signal a load slot: never more entries than slots.
  plan.rotaryDepth = plan.numStages;
  plan.registers.load = kLargeBlockRotaryBackwardLoadRegs;
  plan.registers.rotary = kLargeBlockRotaryBackwardRegs;
  plan.registers.mma = kLargeBlockRotaryBackwardMmaRegs;
  plan.registers.compute = replicaRegisters(
      3, plan.registers.load + plan.registers.mma + plan.registers.rotary,
      plan.softmaxReplicas, /*ctasPerSm=*/1);
  return plan;
}

/// The sm_100a backward at block size 128 above head dim 128
/// (KernelPlan::columnPasses; docs/head-dims.md): the block does not fit
/// shared memory next to its P and dS, so the producer streams it in
/// 64-column chunk slots as on sm_90a (buildColumnPassLoadPartition, 64 KiB
/// a slot, two deep), the MMA warp accumulates both query halves' S and dP
/// over the chunks in tensor memory and makes the gradients in 64-column
/// chunks, and softmax replica r takes query half r and key half r. Shared
/// memory: the chunk ring 128 KiB, P and dS of both halves 64 KiB, a 64 x 64
/// staging buffer per replica. Tensor memory: S 128 + dP 128 + dQ, dV, dK
/// 64 each = 448 columns.
FailureOr<KernelPlan>
planSm100aLargeBlockColumnPasses(const KernelShape &shape,
                                 const TuningOptions &options, Failure fail) {
  KernelPlan plan;
  if (failed(planColumnPassLaunch(Chip::sm_100a, shape, options, plan, fail)))
    return failure();
  int64_t chunkCols = shape.outputChunkCols();
  int64_t slotBytes = shape.numLoads() * shape.tileBytes(chunkCols);
  // With rotary embeddings (either layout, tables or rotary_theta) one
  // softmax warpgroup takes both halves beside the rotary warpgroup.
  plan.softmaxReplicas = shape.hasRotary() ? 1 : kSoftmaxReplicas;
  plan.pFromSmem = false;
  plan.stageOutput = true;
  plan.bulkStore = options.oStore == OStore::tma;
  int64_t scratch =
      2 * shape.numQueryTiles() * shape.queryTileBytes(shape.tileRows()) +
      plan.softmaxReplicas * shape.queryTileBytes(chunkCols);
  int64_t budget = TargetLimits::maxSharedMemoryBytes - kSmemReserve - scratch;
  if (failed(
          planColumnPassRing(options, slotBytes, budget, scratch, plan, fail)))
    return failure();
  if (shape.hasRotary()) {
    // A signal a chunk slot: never more entries than slots.
    plan.rotaryDepth = plan.numStages;
    setRotaryRegisters(plan, kSm100aRotaryColumnPassLoadRegs,
                       kSm100aRotaryColumnPassRegs,
                       kSm100aRotaryColumnPassMmaRegs);
    return plan;
  }
  plan.registers.load = kSm100aColumnPassLoadRegs;
  plan.registers.mma = kSm100aColumnPassMmaRegs;
  plan.registers.compute =
      replicaRegisters(/*single=*/2, plan.registers.load + plan.registers.mma,
                       plan.softmaxReplicas, /*ctasPerSm=*/1);
  return plan;
}

/// The sm_100a recipe: the load, MMA (and rotary) warpgroups and the
/// softmax warpgroups (two, or one for the rotary backward at head dim above
/// 64: singleSoftmaxReplica); the load ring is the deepest that fits next to
/// the output staging buffers.
FailureOr<KernelPlan> planSm100a(const KernelShape &shape,
                                 const TuningOptions &options, Failure fail) {
  if (failed(checkSm100aOStore(options, fail)))
    return failure();
  // The block's columns streamed in passes, as on sm_90a (with rotary
  // embeddings of either layout).
  if (largeBlockWideBackward(shape))
    return planSm100aLargeBlockColumnPasses(shape, options, fail);
  if (largeBlockRotaryBackward(shape))
    return planSm100aLargeBlockRotaryBackward(shape, options, fail);
  KernelPlan plan;
  int64_t slotBytes = shape.numLoads() * shape.tileBytes(shape.headDim);
  if (failed(planLaunch(Chip::sm_100a, options, tilesOfChunkLoads(slotBytes),
                        /*chunkedByDefault=*/false, /*chunkedCtasPerSm=*/1,
                        plan, fail)))
    return failure();
  planL2Prefetch(options, /*byDefault=*/false, plan);
  plan.numConsumers = 1; // the MMA warpgroup takes every slot
  plan.softmaxReplicas =
      singleSoftmaxReplica(shape) || largeBlockRotaryForward(shape)
          ? 1
          : kSoftmaxReplicas;
  // The backward above head dim 128 makes each gradient in column chunks
  // through one ring per gradient, whose slots then follow each other by
  // chunk, not by tile: one softmax warpgroup takes them all in order.
  if (shape.backward && shape.headDim > KernelShape::kMaxOutputCols)
    plan.softmaxReplicas = 1;
  // A large block's query halves go to the softmax replicas round-robin,
  // replica r always taking half r (Sm100aRecipe.cpp); the rotary forward's
  // one replica takes both.
  if (!largeBlockRotaryForward(shape) &&
      plan.softmaxReplicas % shape.numQueryTiles() != 0)
    return fail("block_size ", shape.blockSize, " needs a multiple of ",
                shape.numQueryTiles(), " softmax warpgroups, got ",
                plan.softmaxReplicas);
  plan.pFromSmem = false;
  plan.stageOutput = true;
  plan.bulkStore = options.oStore == OStore::tma;
  // Two output staging buffers, and the backward's two P/dS slots (64
  // query rows by the tile's keys each).
  int64_t scratch = 2 * shape.queryTileBytes(shape.outputChunkCols());
  if (shape.backward)
    scratch += 2 * 2 * shape.queryTileBytes(shape.tileRows());
  int64_t budget = TargetLimits::maxSharedMemoryBytes - kSmemReserve - scratch;
  if (!validNumStages(options))
    return numStagesError(fail, options);
  // Rotary embeddings add the ring of rotated tiles: two slots deep when
  // the load ring still gets two, else one.
  // Above head dim 128 the rotary warpgroup rotates the load ring's slot in
  // place and the ring only signals (createRotaryRing, Sm100aRecipe.cpp).
  int64_t rotatedSlotBytes =
      shape.headDim > KernelShape::kMaxOutputCols
          ? 0
          : (shape.rotateV ? 3 : 2) * shape.tileBytes(shape.headDim);
  if (shape.hasRotary()) {
    plan.rotaryDepth = (budget - 2 * rotatedSlotBytes) / slotBytes >= 2 ? 2 : 1;
    budget -= plan.rotaryDepth * rotatedSlotBytes;
  }
  plan.numStages = options.numStages > 0
                       ? options.numStages
                       : std::min(kMaxStages, budget / slotBytes);
  if (plan.numStages < 1)
    return fail("no ring of ", shape.numLoads(), "-tile slots (", slotBytes,
                " bytes each) fits in shared memory");
  // 512 threads share the register file; the load and MMA warpgroups need
  // few, so each softmax warpgroup gets the rest (216 without rotary
  // embeddings: S 32 + O 64 + P 16 registers at D=128).
  plan.registers.load = shape.hasRotary() ? kRotaryProducerRegs : kProducerRegs;
  plan.registers.mma = shape.hasRotary() ? kRotaryMmaRegs : kMmaRegs;
  plan.registers.rotary = shape.hasRotary() ? kRotaryRegs : 0;
  if (shape.numQueryTiles() > 1)
    plan.registers.mma = kLargeBlockMmaRegs;
  if (largeBlockBackward(shape)) {
    bool causalBelow128 =
        shape.causal && shape.headDim < KernelShape::kMaxOutputCols;
    plan.registers.load = causalBelow128
                              ? kSm100aLargeBlockCausalBackwardLoadRegs
                              : kSm100aLargeBlockBackwardLoadRegs;
    plan.registers.mma = causalBelow128 ? kSm100aLargeBlockCausalBackwardMmaRegs
                                        : kSm100aLargeBlockBackwardMmaRegs;
  }
  // The backward above head dim 128 (kChunkedBackwardMmaRegs).
  if (shape.backward && shape.headDim > KernelShape::kMaxOutputCols) {
    plan.registers.mma = kChunkedBackwardMmaRegs;
    plan.registers.load = kChunkedBackwardLoadRegs;
  }
  if (largeBlockWideForward(shape)) {
    plan.registers.load = kLargeBlockWideForwardLoadRegs;
    plan.registers.mma = kSm100aLargeBlockWideForwardMmaRegs;
  }
  if (singleSoftmaxReplica(shape)) {
    plan.registers.mma = kWideRotaryBackwardMmaRegs;
    plan.registers.rotary = kWideRotaryBackwardRegs;
  }
  if (largeBlockRotaryForward(shape)) {
    plan.registers.rotary = shape.headDim > KernelShape::kMaxOutputCols
                                ? kLargeBlockWideRotaryForwardRegs
                                : kLargeBlockRotaryForwardRegs;
    plan.registers.mma = kLargeBlockRotaryForwardMmaRegs;
    plan.registers.load = kLargeBlockRotaryForwardLoadRegs;
  }
  if (shape.rotaryTheta && !shape.backward &&
      shape.headDim > KernelShape::kMaxOutputCols) {
    plan.registers.rotary = kWideThetaRotaryForwardRegs;
    // At block size 128 the load warpgroup keeps the table kernels' 48
    // (see kLargeBlockWideRotaryForwardRegs).
    if (!largeBlockRotaryForward(shape))
      plan.registers.load = kWideThetaRotaryForwardLoadRegs;
  }
  plan.registers.compute = replicaRegisters(
      shape.hasRotary() ? 3 : 2,
      plan.registers.load + plan.registers.mma + plan.registers.rotary,
      plan.softmaxReplicas, /*ctasPerSm=*/1);
  return plan;
}

/// Whether the sm_90a backward at head dim 128 and block size 64 with rotary
/// embeddings stores its gradients through the threads' own row stores
/// (`o-store=smem`): its one consumer then does not wait for a bulk store to
/// have read the staging buffer before the next gradient (H100, seed lengths,
/// session 27, two rounds each on two machines, ms: half-split 4.21 against
/// 4.14-4.15 with smem, `_pos` 4.33-4.34 against 4.21-4.23, `_rv` 4.41-4.45
/// against 4.21-4.25, `_pos_rv` 4.53-4.56 against 4.39-4.42, interleaved
/// 4.22 against 4.17; interleaved `_pos` 4.73-4.78 against 4.50-4.52 and
/// `_pos_rv` 4.80-4.82 against 4.74-4.76, with one rotary warpgroup;
/// docs/performance-notes.md, run 15). Interleaved `rv` without positions
/// too since session 29: 4.21-4.22 against 4.34 ms in one alternated run
/// (H100, run 20; session 27 had found 1% slower on one machine, 2% faster
/// on another). From theta it keeps bulk stores (not timed).
bool storesRotaryBackwardBySmem(const KernelShape &shape,
                                const TuningOptions &options) {
  if (options.chip != Chip::sm_90a || !shape.backward || !shape.hasRotary() ||
      shape.headDim != 128 || shape.blockSize != 64 || shape.group != 1)
    return false;
  bool interleavedThetaRv = shape.rotary == RotaryMode::interleaved &&
                            shape.rotateV && shape.rotaryTheta;
  return !interleavedThetaRv || shape.hasPositions;
}

/// How output tiles leave the registers under `o-store=auto`: the threads'
/// own 128-byte row stores (`smem`) for the sm_90a rotary forward at head
/// dim 128 and block size 64 without rotate_v, whose consumers then do not
/// wait for a bulk store to have read the staging buffer before the next
/// tile's O (H200, seed lengths, session 14: half-split 1.625-1.634 against
/// 1.657-1.660 ms, interleaved 1.617-1.619 against 1.673-1.678, interleaved
/// with positions 1.651-1.654 against 1.701-1.710; with rotate_v 2-8%
/// slower, the forwards at 64 2-4% slower; docs/rotary.md), and for most of
/// the rotary backwards there (storesRotaryBackwardBySmem); bulk tensor
/// stores (`tma`) elsewhere.
OStore oStoreOf(const KernelShape &shape, const TuningOptions &options) {
  if (options.oStore != OStore::automatic)
    return options.oStore;
  bool rotaryForward128 = options.chip == Chip::sm_90a && !shape.backward &&
                          shape.hasRotary() && !shape.rotateV &&
                          shape.headDim == 128 && shape.blockSize == 64 &&
                          shape.group == 1;
  return rotaryForward128 || storesRotaryBackwardBySmem(shape, options)
             ? OStore::smem
             : OStore::tma;
}

} // namespace

int64_t blockattn::replicaRegisters(int64_t single, int64_t otherRegs,
                                    int64_t replicas, int64_t ctasPerSm) {
  int64_t warpgroups = single + replicas;
  int64_t pool =
      TargetLimits::launchRegisterCap(128 * warpgroups, ctasPerSm) * warpgroups;
  return std::min<int64_t>(256, (pool - otherRegs) / replicas / 8 * 8);
}

/// The plan of the chip's recipe for the shape, before the choices that
/// every recipe takes alike.
static FailureOr<KernelPlan> planRecipe(const KernelShape &shape,
                                        const TuningOptions &requested,
                                        std::string &error) {
  Failure fail{error};
  TuningOptions options = requested;
  options.oStore = oStoreOf(shape, requested);
  if (options.oStore == OStore::slot &&
      (options.chip != Chip::sm_90a || !shape.backward ||
       shape.blockSize > 64 || shape.headDim > KernelShape::kMaxOutputCols ||
       shape.groupedBackward()))
    return fail("o-store=slot applies to the sm_90a backward at block sizes "
                "up to 64, head dims up to 128 and one query head per k/v "
                "head (its slot holds q, k, v and dO whole)");
  if (options.rotaryWarpgroups < 0 || options.rotaryWarpgroups > 2)
    return fail("rotary-warpgroups must be 0 (the recipe picks), 1 or 2, got ",
                options.rotaryWarpgroups);
  if (options.slotParts < 0 || options.slotParts > 2)
    return fail("slot-parts must be 0 (the recipe picks), 1 (whole tiles) "
                "or 2 (half-depth slots), got ",
                options.slotParts);
  if (options.stagingBuffers < 0 || options.stagingBuffers > 2)
    return fail("staging-buffers must be 0 (the recipe picks), 1 or 2, got ",
                options.stagingBuffers);
  if (options.stagingBuffers == 2 &&
      (options.chip != Chip::sm_90a || !splitsSlots(shape) ||
       (options.slotParts != 2 && !splitsSlotsByDefault(shape, options))))
    return fail("staging-buffers=2 applies to the sm_90a backward with "
                "half-depth slots (above head dim 128, slot-parts 0 or 2)");
  if (options.slotParts == 2 &&
      (options.chip != Chip::sm_90a || !splitsSlots(shape)))
    return fail("slot-parts=2 applies to the sm_90a backward above head dim "
                "128 without rotary embeddings, at block size 64 and one "
                "query head per k/v head");
  if (options.largeBlockConsumers < 0 || options.largeBlockConsumers > 2)
    return fail("large-block-consumers must be 0 (the recipe picks), 1 (one "
                "consumer warpgroup a block) or 2 (one a query half), got ",
                options.largeBlockConsumers);
  if (options.largeBlockConsumers == 2 &&
      (options.chip != Chip::sm_90a || !splitsLargeBlockHalves(shape)))
    return fail("large-block-consumers=2 applies to the sm_90a backward at "
                "block size 128 without rotary embeddings and with one query "
                "head per k/v head");
  if (failed(checkLargeBlockRings(shape, options, fail)))
    return failure();
  if (options.groupRoles == GroupRoles::query_halves &&
      (options.chip != Chip::sm_90a || !shape.groupedBackward() ||
       !largeBlockBackward(shape)))
    return fail("group-roles=query-halves applies to the sm_90a "
                "grouped-query backward at block size 128");
  if (shape.groupedBackward() && largeBlockBackward(shape))
    return options.chip == Chip::sm_90a
               ? planSm90aGroupedLargeBlock(shape, options, fail)
               : planSm100aGroupedLargeBlock(shape, options, fail);
  if (shape.groupedBackward())
    return options.chip == Chip::sm_90a
               ? planSm90aGrouped(shape, options, fail)
               : planSm100aGrouped(shape, options, fail);
  switch (options.chip) {
  case Chip::sm_90a:
    return planSm90a(shape, options, fail);
  case Chip::sm_100a:
    return planSm100a(shape, options, fail);
  }
  llvm_unreachable("unknown chip");
}

FailureOr<KernelPlan> blockattn::planKernel(const KernelShape &shape,
                                            const TuningOptions &options,
                                            std::string &error) {
  FailureOr<KernelPlan> plan = planRecipe(shape, options, error);
  if (failed(plan))
    return failure();
  // Off under auto: the branch doubles the softmax's code, and whether the
  // selects it saves pay for that is for a GPU to say
  // (docs/performance-notes.md).
  plan->softmaxFullTiles = options.softmaxFullTiles == SoftmaxFullTiles::on;
  // Off under auto: fewer instructions, the same bytes; a GPU has not timed
  // it yet (docs/performance-notes.md).
  plan->stmatrixWrites = options.stmatrixWrites == StmatrixWrites::on;
  return plan;
}
