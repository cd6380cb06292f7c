//===- PlanTest.cpp - blockattn-warp-specialize's plan --------------------===//
//
// The plan decides from a kernel's shape and the tuning options alone; these
// tests state its defaults and its limits without building any IR. The
// expected numbers follow from the budgets in Plan.cpp (227 KiB of shared
// memory, 64K registers per SM) and match what the recipes' lit tests and
// block-attn-compile's resource table show.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Dialect/BlockAttn/Transforms/Plan.h"

#include "gtest/gtest.h"

#include <tuple>

using namespace mlir;
using namespace mlir::blockattn;
using mlir::warpspec::Chip;

namespace {

KernelShape shape(bool backward, int64_t headDim,
                  RotaryMode rotary = RotaryMode::none, bool rotateV = false) {
  KernelShape s;
  s.backward = backward;
  s.headDim = headDim;
  s.rotary = rotary;
  s.rotateV = rotateV;
  return s;
}

KernelPlan plan(Chip chip, const KernelShape &s, TuningOptions options = {}) {
  options.chip = chip;
  std::string error;
  FailureOr<KernelPlan> result = planKernel(s, options, error);
  EXPECT_TRUE(succeeded(result)) << error;
  EXPECT_TRUE(error.empty());
  return succeeded(result) ? *result : KernelPlan();
}

/// The reason the plan gives for rejecting `options`.
std::string failure(Chip chip, const KernelShape &s, TuningOptions options) {
  options.chip = chip;
  std::string error;
  FailureOr<KernelPlan> result = planKernel(s, options, error);
  EXPECT_TRUE(failed(result));
  return error;
}

KernelShape grouped(int64_t headDim, int64_t group) {
  KernelShape s = shape(/*backward=*/true, headDim);
  s.group = group;
  return s;
}

TEST(ReplicaRegisters, SplitsTheLaunchPoolEvenly) {
  // One CTA of three warpgroups: 168 registers each at launch; the
  // producer's 40 leave 232 to each of two consumers.
  EXPECT_EQ(replicaRegisters(1, 40, 2, 1), 232);
  // Two CTAs per SM: 128 each at launch, one consumer gets 216.
  EXPECT_EQ(replicaRegisters(1, 40, 1, 2), 216);
  // One consumer next to the producer, one CTA: capped at 256.
  EXPECT_EQ(replicaRegisters(1, 40, 1, 1), 256);
  // sm_100a: load and MMA warpgroups of 40 next to two softmax ones; with
  // rotary embeddings a third single warpgroup and 56 + 56.
  EXPECT_EQ(replicaRegisters(2, 80, 2, 1), 216);
  EXPECT_EQ(replicaRegisters(3, 152, 2, 1), 160);
}

TEST(Sm90aPlan, ForwardDefaultsToAChunkedLaunch) {
  KernelPlan p = plan(Chip::sm_90a, shape(false, 128));
  EXPECT_EQ(p.ctasPerSm, 2);
  EXPECT_EQ(p.tilesPerCta, 4); // 192 KiB of loads, 48 KiB a tile
  EXPECT_TRUE(p.contiguousSchedule);
  EXPECT_EQ(p.numConsumers, 1);
  EXPECT_EQ(p.numStages, 2);
  EXPECT_FALSE(p.l2Prefetch);
  EXPECT_FALSE(p.pFromSmem);
  EXPECT_TRUE(p.stageOutput);
  EXPECT_TRUE(p.bulkStore);
  EXPECT_EQ(p.softmaxReplicas, 0);
  EXPECT_EQ(p.registers.load, 40);
  EXPECT_EQ(p.registers.compute, 216);
  EXPECT_EQ(p.registers.mma, 0);
  EXPECT_EQ(p.registers.rotary, 0);

  EXPECT_EQ(plan(Chip::sm_90a, shape(false, 64)).tilesPerCta, 8);
}

// The grouped forward's k/v loads mostly hit L2: twice the tiles per CTA at
// head dim 128, three CTAs per SM at 64 (measured at G = 4); the grouped
// backward and the rotary grouped forward keep the rule.
TEST(Sm90aPlan, GroupedForwardLaunch) {
  KernelShape d128 = shape(false, 128);
  d128.group = 4;
  KernelPlan p = plan(Chip::sm_90a, d128);
  EXPECT_EQ(p.ctasPerSm, 2);
  EXPECT_EQ(p.tilesPerCta, 8);
  KernelShape d64 = shape(false, 64);
  d64.group = 4;
  p = plan(Chip::sm_90a, d64);
  EXPECT_EQ(p.ctasPerSm, 3);
  EXPECT_EQ(p.tilesPerCta, 8);
  EXPECT_EQ(p.numConsumers, 1);
  // The grouped rotary forward launches as the rotary forward: persistent.
  KernelShape rotary = shape(false, 128, RotaryMode::half_split);
  rotary.group = 4;
  EXPECT_EQ(plan(Chip::sm_90a, rotary).tilesPerCta, 0);
  TuningOptions explicitTiles;
  explicitTiles.tilesPerCta = 4;
  EXPECT_EQ(plan(Chip::sm_90a, d128, explicitTiles).tilesPerCta, 4);
}

// group-roles=pipelined: a scores and an accumulate warpgroup of 224
// registers next to the producer's 48, one CTA per SM; the ring "pds" (two
// slots of P and dS) leaves "qdo" three slots at head dim 128. The default
// (auto) is pipelined-dq at head dim 128 (serial for groups of 2), serial
// at 64.
TEST(Sm90aPlan, GroupedBackwardPipelinedRoles) {
  KernelShape d128 = shape(true, 128);
  d128.group = 4;
  KernelPlan byDefault = plan(Chip::sm_90a, d128);
  EXPECT_TRUE(byDefault.pipelinedRoles);
  EXPECT_TRUE(byDefault.dqInAccumulate);
  KernelShape pair = d128;
  pair.group = 2;
  EXPECT_FALSE(plan(Chip::sm_90a, pair).pipelinedRoles);
  KernelShape half = d128;
  half.headDim = 64;
  EXPECT_FALSE(plan(Chip::sm_90a, half).pipelinedRoles);
  TuningOptions serial;
  serial.groupRoles = GroupRoles::serial;
  EXPECT_FALSE(plan(Chip::sm_90a, d128, serial).pipelinedRoles);
  TuningOptions pipelined;
  pipelined.groupRoles = GroupRoles::pipelined;
  KernelPlan p = plan(Chip::sm_90a, d128, pipelined);
  EXPECT_TRUE(p.pipelinedRoles);
  EXPECT_EQ(p.pdsStages, 2);
  EXPECT_EQ(p.ctasPerSm, 1);
  EXPECT_EQ(p.tilesPerCta, 0);
  EXPECT_EQ(p.registers.load, 48);
  EXPECT_EQ(p.registers.compute, 224);
  EXPECT_EQ(p.numStages, 2);
  EXPECT_EQ(p.groupStages, 3);
  KernelShape d64 = shape(true, 64);
  d64.group = 4;
  EXPECT_EQ(plan(Chip::sm_90a, d64, pipelined).ctasPerSm, 1);
  // pipelined-dq: the accumulate warpgroup holds dV, dK and dQ.
  TuningOptions dq;
  dq.groupRoles = GroupRoles::pipelined_dq;
  p = plan(Chip::sm_90a, d128, dq);
  EXPECT_TRUE(p.pipelinedRoles);
  EXPECT_TRUE(p.dqInAccumulate);
  EXPECT_EQ(p.accumulateRegisters, 256);
  EXPECT_EQ(p.registers.compute, 200);
  KernelShape d32 = shape(true, 32);
  d32.group = 2;
  EXPECT_EQ(failure(Chip::sm_90a, d32, pipelined),
            "group-roles=pipelined is implemented at head dims 64 and 128 "
            "(the grouped-query backward of group 2), got head dim 32");
}

/// A plan field a GroupedCase leaves unchecked.
constexpr int64_t kAny = -1;

/// Shape flags of a GroupedCase.
enum GroupedFlags : unsigned {
  kPlain = 0,
  kCausal = 1,
  kRotateV = 2,
  kTheta = 4,
};

/// A grouped-query backward's shape and the plan's rings and register
/// budgets expected of it (kAny: not checked).
struct GroupedCase {
  Chip chip;
  int64_t blockSize, headDim, group;
  RotaryMode rotary;
  unsigned flags;
  int64_t groupPasses, groupChunkStages, numStages, groupStages;
  int64_t load, compute, accumulate, secondAccumulate, mma;
};

KernelShape groupedShape(const GroupedCase &c) {
  KernelShape s = shape(/*backward=*/true, c.headDim, c.rotary,
                        /*rotateV=*/c.flags & kRotateV);
  s.blockSize = c.blockSize;
  s.group = c.group;
  s.causal = c.flags & kCausal;
  s.rotaryTheta = c.flags & kTheta;
  return s;
}

void expectGroupedPlan(const GroupedCase &c) {
  SCOPED_TRACE(testing::Message()
               << (c.chip == Chip::sm_90a ? "sm_90a" : "sm_100a") << " block "
               << c.blockSize << " head dim " << c.headDim << " group "
               << c.group << " rotary " << static_cast<int>(c.rotary)
               << " flags " << c.flags);
  KernelPlan p = plan(c.chip, groupedShape(c));
  auto expect = [](const char *field, int64_t actual, int64_t expected) {
    if (expected != kAny) {
      EXPECT_EQ(actual, expected) << field;
    }
  };
  expect("groupPasses", p.groupPasses, c.groupPasses);
  expect("groupChunkStages", p.groupChunkStages, c.groupChunkStages);
  expect("numStages", p.numStages, c.numStages);
  expect("groupStages", p.groupStages, c.groupStages);
  expect("registers.load", p.registers.load, c.load);
  expect("registers.compute", p.registers.compute, c.compute);
  expect("accumulateRegisters", p.accumulateRegisters, c.accumulate);
  expect("secondAccumulateRegisters", p.secondAccumulateRegisters,
         c.secondAccumulate);
  expect("registers.mma", p.registers.mma, c.mma);
}

constexpr RotaryMode kNone = RotaryMode::none,
                     kInterleaved = RotaryMode::interleaved,
                     kHalfSplit = RotaryMode::half_split;

// The grouped backward at block size 128 and above head dim 128, both chips
// (sessions 19-22; the budgets are Plan.cpp's):
// - sm_90a, block 128, up to head dim 64: a producer of 64, a scores
//   warpgroup of 176 and two accumulate warpgroups of 136 (a pool of 512);
//   with rotary embeddings the same (the rotations' rows are pinned in the
//   loop over the heads instead; Sm90aRecipe.cpp).
// - sm_90a, block 128, above 64: passes over column chunks of one width (two
//   of 64 at 128, three of 32 at 96), producer 96, scores 176, accumulate
//   120 + 120; with rotary embeddings at 128 interleaved 88 / 176 / 120 /
//   128, half-split (pair-complete chunks, session 21) 72 / 176 / 128 / 136.
// - sm_90a, block 128, above 128: S and dP over 64-column chunks streamed
//   through "chunks" (four slots of 24 KiB), "qdo" one slot of a pass's
//   chunks, "kv" the record two deep; D / 64 passes; the passes' budgets at
//   128. Below 128 the kernels without the ring are unchanged.
// - sm_100a, block 128: one softmax warpgroup of 256 next to load 96 / MMA
//   152 (48 / 200 at G = 2) up to 64; above it the same passes, load 104,
//   MMA 144 (a group of 2 too, session 20); above 128 (session 22) the
//   sm_90a kernel's rings, load 112, MMA 136.
// - Block 64 above head dim 128: D / 64 passes over 64-column chunks, one
//   consumer of 256 registers next to a producer of 96 on sm_90a ("kv" one
//   slot and "qdo" two at 256); one pass (the plan of before) up to 128.
//   Half-split rotary embeddings (rows loaded in pair-complete chunks of
//   two 64-byte-swizzled pieces, session 23) give the producer 112 on both
//   chips (two boxes a chunk), tables or theta; at block 128 and head dim
//   128 with rotate_v 80 / 168 / 128 / 136.
const GroupedCase kGroupedCases[] = {
    // chip      block  D   G  rotary      flags
    //   passes chunks stages group load compute acc  acc2  mma
    {Chip::sm_90a, 128, 64, 4, kNone, kPlain, //
     1, kAny, 2, 2, 64, 176, 136, kAny, kAny},
    {Chip::sm_90a, 128, 64, 4, kHalfSplit, kPlain, //
     kAny, kAny, kAny, kAny, 64, 176, 136, kAny, kAny},
    {Chip::sm_90a, 128, 96, 4, kNone, kPlain, //
     3, kAny, kAny, 2, kAny, kAny, kAny, kAny, kAny},
    {Chip::sm_90a, 128, 128, 4, kNone, kPlain, //
     2, kAny, 1, 1, 96, 176, 120, kAny, kAny},
    {Chip::sm_90a, 128, 128, 4, kInterleaved, kPlain, //
     kAny, kAny, kAny, kAny, 88, 176, 120, 128, kAny},
    {Chip::sm_90a, 128, 128, 4, kHalfSplit, kPlain, //
     2, kAny, kAny, kAny, 72, 176, 128, 136, kAny},
    {Chip::sm_90a, 128, 128, 2, kNone, kCausal, //
     kAny, 0, kAny, kAny, kAny, kAny, kAny, kAny, kAny},
    {Chip::sm_90a, 128, 192, 2, kNone, kCausal, //
     3, kAny, kAny, kAny, kAny, kAny, kAny, kAny, kAny},
    {Chip::sm_90a, 128, 256, 2, kNone, kCausal, //
     4, 4, 2, 1, 96, 176, 120, 0, kAny},
    {Chip::sm_100a, 128, 64, 4, kNone, kPlain, //
     1, kAny, kAny, kAny, 96, 256, kAny, kAny, 152},
    {Chip::sm_100a, 128, 64, 2, kNone, kPlain, //
     kAny, kAny, kAny, kAny, 48, 256, kAny, kAny, 200},
    {Chip::sm_100a, 128, 64, 4, kHalfSplit, kPlain, //
     kAny, kAny, kAny, kAny, 96, 256, kAny, kAny, 152},
    {Chip::sm_100a, 128, 96, 4, kNone, kPlain, //
     3, kAny, kAny, kAny, kAny, kAny, kAny, kAny, kAny},
    {Chip::sm_100a, 128, 128, 4, kNone, kPlain, //
     2, kAny, kAny, kAny, 104, 256, kAny, kAny, 144},
    {Chip::sm_100a, 128, 128, 2, kNone, kPlain, //
     2, kAny, kAny, kAny, 104, 256, kAny, kAny, 144},
    {Chip::sm_100a, 128, 128, 3, kNone, kPlain, //
     kAny, 0, kAny, kAny, kAny, kAny, kAny, kAny, kAny},
    {Chip::sm_100a, 128, 192, 3, kNone, kPlain, //
     3, 4, 2, 1, 112, 256, kAny, kAny, 136},
    {Chip::sm_100a, 128, 256, 3, kNone, kPlain, //
     4, kAny, kAny, kAny, kAny, kAny, kAny, kAny, kAny},
    {Chip::sm_90a, 64, 128, 4, kNone, kPlain, //
     1, kAny, kAny, kAny, kAny, kAny, kAny, kAny, kAny},
    {Chip::sm_90a, 64, 192, 4, kNone, kPlain, //
     3, kAny, kAny, kAny, kAny, kAny, kAny, kAny, kAny},
    {Chip::sm_90a, 64, 256, 4, kNone, kPlain, //
     4, kAny, 1, 2, 96, 256, kAny, kAny, kAny},
    {Chip::sm_100a, 64, 128, 4, kNone, kPlain, //
     1, kAny, kAny, kAny, kAny, kAny, kAny, kAny, kAny},
    {Chip::sm_100a, 64, 192, 4, kNone, kPlain, //
     3, kAny, kAny, kAny, kAny, kAny, kAny, kAny, kAny},
    {Chip::sm_100a, 64, 256, 4, kNone, kPlain, //
     4, kAny, kAny, kAny, kAny, kAny, kAny, kAny, kAny},
    {Chip::sm_90a, 64, 256, 2, kHalfSplit, kRotateV, //
     4, kAny, kAny, kAny, 112, 256, kAny, kAny, kAny},
    {Chip::sm_100a, 64, 256, 2, kHalfSplit, kRotateV, //
     4, kAny, kAny, kAny, 112, 240, kAny, kAny, 152},
    {Chip::sm_90a, 128, 128, 2, kHalfSplit, kRotateV, //
     2, kAny, kAny, kAny, 80, 168, 128, 136, kAny},
    {Chip::sm_90a, 64, 192, 2, kHalfSplit, kRotateV | kTheta, //
     3, kAny, kAny, kAny, kAny, kAny, kAny, kAny, kAny},
    {Chip::sm_100a, 64, 192, 2, kHalfSplit, kRotateV | kTheta, //
     3, kAny, kAny, kAny, kAny, kAny, kAny, kAny, kAny},
};

TEST(GroupedPlan, RingsAndBudgets) {
  for (const GroupedCase &c : kGroupedCases)
    expectGroupedPlan(c);
}

// The warpgroups those plans launch: on sm_90a at block size 128 the
// pipelined roles (a scores and two accumulate warpgroups) with one "pds"
// slot of both halves' P and dS, one CTA per SM; on sm_100a at block size
// 128 one softmax warpgroup; at block size 64 above head dim 128 one
// consumer warpgroup, one CTA per SM.
TEST(GroupedPlan, Warpgroups) {
  for (const GroupedCase &c : kGroupedCases) {
    if (c.blockSize != 128)
      continue;
    SCOPED_TRACE(testing::Message()
                 << "head dim " << c.headDim << " group " << c.group
                 << " rotary " << static_cast<int>(c.rotary));
    KernelPlan p = plan(c.chip, groupedShape(c));
    if (c.chip == Chip::sm_100a) {
      EXPECT_EQ(p.softmaxReplicas, 1);
      continue;
    }
    EXPECT_TRUE(p.pipelinedRoles);
    EXPECT_EQ(p.pdsStages, 1);
    EXPECT_EQ(p.ctasPerSm, 1);
  }
  KernelPlan p = plan(Chip::sm_90a, grouped(256, 4));
  EXPECT_FALSE(p.pipelinedRoles);
  EXPECT_EQ(p.columnParts, 1);
  EXPECT_EQ(p.numConsumers, 1);
  EXPECT_EQ(p.ctasPerSm, 1);
}

// Options that ask the grouped block-128 backward for other consumers or
// roles are refused.
TEST(GroupedPlan, BlockSize128Refusals) {
  KernelShape b128 = grouped(64, 4);
  b128.blockSize = 128;
  TuningOptions two;
  two.numConsumers = 2;
  EXPECT_EQ(failure(Chip::sm_90a, b128, two),
            "the grouped-query backward at block_size 128 has a scores "
            "warpgroup and an accumulate warpgroup per key half, got "
            "num-consumers=2");
  TuningOptions serial;
  serial.groupRoles = GroupRoles::serial;
  EXPECT_EQ(failure(Chip::sm_90a, b128, serial),
            "group-roles=serial does not apply at block_size 128: the "
            "grouped-query backward there has a scores warpgroup and an "
            "accumulate warpgroup per key half (group-roles must be auto or "
            "query-halves)");
}

// Above head dim 128 at block size 128, num-stages sets the chunk ring's
// depth on both chips; five slots do not fit.
TEST(GroupedPlan, BlockSize128ChunkRingDepth) {
  KernelShape sm90a = grouped(192, 2), sm100a = grouped(256, 3);
  sm90a.blockSize = sm100a.blockSize = 128;
  sm90a.causal = true;
  TuningOptions three;
  three.numStages = 3;
  EXPECT_EQ(plan(Chip::sm_90a, sm90a, three).groupChunkStages, 3);
  TuningOptions five;
  five.numStages = 5;
  for (auto [chip, s] :
       {std::pair(Chip::sm_90a, sm90a), std::pair(Chip::sm_100a, sm100a)})
    EXPECT_EQ(failure(chip, s, five),
              "no ring of 5 slots of 24576 bytes (64-column chunks of a query "
              "half and K) fits in shared memory next to a \"qdo\" slot of "
              "49152 bytes");
}

// With rotary embeddings above head dim 128 at block size 128 on sm_100a
// (session 24): the chunk rings of the kernel without, a rotary warpgroup
// whose signal ring is as deep as "chunks" and "qdo" together, and load /
// rotary / MMA / softmax 96 / 64 / 128 / 224 (= 4 x 128), both layouts,
// tables or theta; with num-stages 3 the signal ring follows.
TEST(GroupedPlan, Sm100aBlockSize128RotaryAboveHeadDim128) {
  for (RotaryMode mode : {RotaryMode::interleaved, RotaryMode::half_split}) {
    for (int64_t headDim : {192, 256}) {
      for (bool theta : {false, true}) {
        KernelShape s = grouped(headDim, 3);
        s.blockSize = 128;
        s.rotary = mode;
        s.rotateV = true;
        s.rotaryTheta = theta;
        KernelPlan p = plan(Chip::sm_100a, s);
        EXPECT_EQ(p.groupPasses, headDim / 64);
        EXPECT_EQ(p.groupChunkStages, 4);
        EXPECT_EQ(p.groupStages, 1);
        EXPECT_EQ(p.rotaryDepth, 5);
        EXPECT_EQ(p.softmaxReplicas, 1);
        EXPECT_EQ(p.registers.load, 96);
        EXPECT_EQ(p.registers.rotary, 64);
        EXPECT_EQ(p.registers.mma, 128);
        EXPECT_EQ(p.registers.compute, 224);
      }
    }
  }
  KernelShape s = grouped(192, 2);
  s.blockSize = 128;
  s.rotary = RotaryMode::interleaved;
  TuningOptions three;
  three.numStages = 3;
  EXPECT_EQ(plan(Chip::sm_100a, s, three).rotaryDepth, 4);
  // Without rotary embeddings: no rotary warpgroup, the session-22 budgets.
  s.rotary = RotaryMode::none;
  KernelPlan plain = plan(Chip::sm_100a, s);
  EXPECT_EQ(plain.rotaryDepth, 0);
  EXPECT_EQ(plain.registers.rotary, 0);
  EXPECT_EQ(plain.registers.load, 112);
  EXPECT_EQ(plain.registers.mma, 136);
}

// The grouped backward above head dim 128 at block size 64 has one consumer
// warpgroup.
TEST(GroupedPlan, PassesAboveHeadDim128Refusals) {
  TuningOptions two;
  two.numConsumers = 2;
  EXPECT_EQ(failure(Chip::sm_90a, grouped(256, 4), two),
            "the grouped-query backward (group 4) above head dim 128 has one "
            "consumer warpgroup, which makes dV, dK and dQ in passes over "
            "64-column chunks of the head dim; num-consumers must be 0 or 1, "
            "got 2");
}

// With half-split rotary embeddings the grouped backward above head dim 128
// loads pair-complete chunks as pieces, boxes of the ordinary tensor map,
// which the L2 prefetch addresses as the loads do: on request it applies,
// as with interleaved rows.
TEST(GroupedPlan, HalfSplitRotaryAboveHeadDim128Prefetch) {
  KernelShape d256 = shape(true, 256, RotaryMode::half_split, true);
  d256.group = 2;
  EXPECT_FALSE(plan(Chip::sm_90a, d256).l2Prefetch);
  TuningOptions prefetch;
  prefetch.l2Prefetch = L2Prefetch::on;
  for (Chip chip : {Chip::sm_90a, Chip::sm_100a})
    EXPECT_TRUE(plan(chip, d256, prefetch).l2Prefetch);
  KernelShape interleaved = d256;
  interleaved.rotary = RotaryMode::interleaved;
  EXPECT_TRUE(plan(Chip::sm_90a, interleaved, prefetch).l2Prefetch);
}

// The sm_90a grouped block-128 half-split backward at head dim 128 pins its
// addresses (session 25: unpinned, ptxas spilled its producer at G = 4 and 8
// and with a positions tensor), at its budgets; the interleaved kernel there,
// the half-split one at 96 and sm_100a's do not.
TEST(GroupedPlan, HalfSplitBlockSize128AtHeadDim128Pins) {
  for (int64_t group : {2, 8})
    for (bool rotateV : {false, true}) {
      KernelShape s = shape(true, 128, RotaryMode::half_split, rotateV);
      s.blockSize = 128;
      s.group = group;
      s.hasPositions = true;
      KernelPlan p = plan(Chip::sm_90a, s);
      EXPECT_TRUE(p.pinnedAddresses) << group << rotateV;
      EXPECT_EQ(p.registers.load, rotateV ? 80 : 72);
      EXPECT_EQ(p.registers.compute, rotateV ? 168 : 176);
      EXPECT_FALSE(plan(Chip::sm_100a, s).pinnedAddresses);
      KernelShape interleaved = s;
      interleaved.rotary = RotaryMode::interleaved;
      EXPECT_FALSE(plan(Chip::sm_90a, interleaved).pinnedAddresses);
      KernelShape d96 = s;
      d96.headDim = 96;
      EXPECT_FALSE(plan(Chip::sm_90a, d96).pinnedAddresses);
    }
}

TEST(Sm90aPlan, StridedForwardHasTwoConsumers) {
  TuningOptions options;
  options.schedule = Schedule::strided;
  KernelPlan p = plan(Chip::sm_90a, shape(false, 128), options);
  EXPECT_EQ(p.ctasPerSm, 1);
  EXPECT_EQ(p.tilesPerCta, 0);
  EXPECT_FALSE(p.contiguousSchedule);
  EXPECT_EQ(p.numConsumers, 2);
  EXPECT_EQ(p.numStages, 4);
  EXPECT_EQ(p.registers.compute, 232);
}

TEST(Sm90aPlan, DynamicIsAStridedLaunchThatClaims) {
  // The dynamic schedule changes who takes which tile, not the kernel's
  // layout: the persistent (strided) plan, with its tiles claimed.
  TuningOptions strided, dynamic;
  strided.schedule = Schedule::strided;
  dynamic.schedule = Schedule::dynamic;
  for (RotaryMode rotary : {RotaryMode::none, RotaryMode::half_split}) {
    KernelPlan s = plan(Chip::sm_90a, shape(true, 128, rotary), strided);
    KernelPlan d = plan(Chip::sm_90a, shape(true, 128, rotary), dynamic);
    EXPECT_TRUE(d.dynamicSchedule);
    EXPECT_FALSE(s.dynamicSchedule);
    EXPECT_FALSE(d.contiguousSchedule);
    EXPECT_EQ(d.tilesPerCta, 0);
    EXPECT_EQ(d.ctasPerSm, s.ctasPerSm);
    EXPECT_EQ(d.numConsumers, s.numConsumers);
    EXPECT_EQ(d.numStages, s.numStages);
  }
  // The defaults: the persistent rotary kernels at head dims 128 and 64
  // claim (performance-notes.md, runs 32 and 34); the chunked plain ones,
  // those at other head dims and the sm_100a ones do not.
  EXPECT_TRUE(plan(Chip::sm_90a, shape(true, 128, RotaryMode::half_split))
                  .dynamicSchedule);
  EXPECT_TRUE(plan(Chip::sm_90a, shape(false, 128, RotaryMode::interleaved))
                  .dynamicSchedule);
  EXPECT_TRUE(plan(Chip::sm_90a, shape(true, 64, RotaryMode::half_split))
                  .dynamicSchedule);
  EXPECT_TRUE(plan(Chip::sm_90a, shape(false, 64, RotaryMode::interleaved))
                  .dynamicSchedule);
  EXPECT_FALSE(plan(Chip::sm_90a, shape(true, 128)).dynamicSchedule);
  EXPECT_FALSE(plan(Chip::sm_90a, shape(true, 32, RotaryMode::half_split))
                   .dynamicSchedule);
  EXPECT_FALSE(plan(Chip::sm_100a, shape(true, 128, RotaryMode::half_split))
                   .dynamicSchedule);
  TuningOptions chunked;
  chunked.tilesPerCta = 16;
  EXPECT_FALSE(
      plan(Chip::sm_90a, shape(true, 128, RotaryMode::half_split), chunked)
          .dynamicSchedule);
}

TEST(Sm90aPlan, TwoConsumersMeanAPersistentLaunch) {
  TuningOptions options;
  options.numConsumers = 2;
  KernelPlan p = plan(Chip::sm_90a, shape(false, 128), options);
  EXPECT_EQ(p.tilesPerCta, 0);
  EXPECT_EQ(p.ctasPerSm, 1);
  EXPECT_EQ(p.numConsumers, 2);
}

TEST(Sm90aPlan, BackwardAtHeadDim64PrefetchesIntoL2) {
  KernelPlan chunked = plan(Chip::sm_90a, shape(true, 64));
  EXPECT_EQ(chunked.tilesPerCta, 6);
  EXPECT_EQ(chunked.numStages, 2);
  EXPECT_TRUE(chunked.l2Prefetch);
  EXPECT_EQ(chunked.registers.compute, 216);

  // Persistent: one consumer of 256 registers and a ring of six, and no
  // prefetch (it is on by default for the chunked launch only).
  TuningOptions options;
  options.schedule = Schedule::strided;
  KernelPlan strided = plan(Chip::sm_90a, shape(true, 64), options);
  EXPECT_EQ(strided.numConsumers, 1);
  EXPECT_EQ(strided.numStages, 6);
  EXPECT_EQ(strided.registers.compute, 256);
  EXPECT_FALSE(strided.l2Prefetch);

  options.l2Prefetch = L2Prefetch::on;
  EXPECT_TRUE(plan(Chip::sm_90a, shape(true, 64), options).l2Prefetch);
  TuningOptions off;
  off.l2Prefetch = L2Prefetch::off;
  EXPECT_FALSE(plan(Chip::sm_90a, shape(true, 64), off).l2Prefetch);
}

TEST(Sm90aPlan, RotaryKernelsLaunchAsMeasured) {
  // Persistent at head dim 128, with one consumer next to the rotary
  // warpgroups (two in the forward, one in the backward); chunked when asked
  // (schedule=chunked or tiles-per-cta), one CTA an SM with the same
  // warpgroups, 16 tiles a CTA (run 23 of the rotary log).
  KernelPlan forward =
      plan(Chip::sm_90a, shape(false, 128, RotaryMode::half_split));
  EXPECT_EQ(forward.tilesPerCta, 0);
  EXPECT_EQ(forward.numConsumers, 1);
  TuningOptions chunkedAsked;
  chunkedAsked.schedule = Schedule::chunked;
  KernelPlan chunkedForward = plan(
      Chip::sm_90a, shape(false, 128, RotaryMode::half_split), chunkedAsked);
  EXPECT_EQ(chunkedForward.tilesPerCta, 16);
  EXPECT_EQ(chunkedForward.ctasPerSm, 1);
  EXPECT_TRUE(chunkedForward.rotaryWarpgroup);
  EXPECT_EQ(chunkedForward.rotaryReplicas, 2);
  EXPECT_EQ(chunkedForward.numConsumers, 1);
  TuningOptions eight;
  eight.tilesPerCta = 8;
  KernelPlan chunkedBackward =
      plan(Chip::sm_90a, shape(true, 128, RotaryMode::interleaved), eight);
  EXPECT_EQ(chunkedBackward.tilesPerCta, 8);
  EXPECT_EQ(chunkedBackward.ctasPerSm, 1);
  EXPECT_TRUE(chunkedBackward.rotaryWarpgroup);
  EXPECT_EQ(chunkedBackward.numConsumers, 1);
  // The half-split forward at head dim 64 without positions or rotate_v:
  // persistent, claiming its tiles, since session 37 (run 34: 0.995x the
  // plain forward against 1.043x chunked); chunked when tiles-per-cta is
  // given: two CTAs an SM, each a producer, a rotary warpgroup of 72
  // registers and a consumer of 128, 16 tiles.
  KernelPlan d64dynamic =
      plan(Chip::sm_90a, shape(false, 64, RotaryMode::half_split));
  EXPECT_EQ(d64dynamic.tilesPerCta, 0);
  EXPECT_EQ(d64dynamic.ctasPerSm, 1);
  EXPECT_TRUE(d64dynamic.dynamicSchedule);
  TuningOptions sixteen;
  sixteen.tilesPerCta = 16;
  KernelPlan d64 =
      plan(Chip::sm_90a, shape(false, 64, RotaryMode::half_split), sixteen);
  EXPECT_FALSE(d64.dynamicSchedule);
  EXPECT_EQ(d64.ctasPerSm, 2);
  EXPECT_EQ(d64.tilesPerCta, 16);
  EXPECT_TRUE(d64.rotaryWarpgroup);
  EXPECT_EQ(d64.numConsumers, 1);
  EXPECT_EQ(d64.registers.rotary, 72);
  EXPECT_EQ(d64.registers.compute, 128);
  // Launched chunked on request, with rotate_v: 64 and 136, 32 tiles.
  TuningOptions chunked;
  chunked.schedule = Schedule::chunked;
  KernelPlan d64v = plan(
      Chip::sm_90a, shape(false, 64, RotaryMode::interleaved, true), chunked);
  EXPECT_EQ(d64v.ctasPerSm, 2);
  EXPECT_EQ(d64v.tilesPerCta, 32);
  EXPECT_EQ(d64v.registers.rotary, 64);
  EXPECT_EQ(d64v.registers.compute, 136);
  // The others persistent (run 17): interleaved, one rotary warpgroup of
  // 104 registers and two consumers; with positions or rotate_v (and
  // half-split), two rotary warpgroups and one consumer of 256.
  KernelPlan interleaved64 =
      plan(Chip::sm_90a, shape(false, 64, RotaryMode::interleaved));
  EXPECT_EQ(interleaved64.tilesPerCta, 0);
  EXPECT_EQ(interleaved64.ctasPerSm, 1);
  EXPECT_TRUE(interleaved64.rotaryWarpgroup);
  EXPECT_EQ(interleaved64.rotaryReplicas, 1);
  EXPECT_EQ(interleaved64.registers.rotary, 104);
  EXPECT_EQ(interleaved64.numConsumers, 2);
  KernelShape positions64 = shape(false, 64, RotaryMode::half_split);
  positions64.hasPositions = true;
  KernelPlan withPositions = plan(Chip::sm_90a, positions64);
  EXPECT_EQ(withPositions.tilesPerCta, 0);
  EXPECT_EQ(withPositions.rotaryReplicas, 2);
  EXPECT_EQ(withPositions.numConsumers, 1);
  EXPECT_EQ(withPositions.registers.compute, 256);
  EXPECT_EQ(plan(Chip::sm_90a, shape(false, 64, RotaryMode::half_split, true))
                .tilesPerCta,
            0);
  // Without its rotary warpgroup it stays persistent, with two consumers.
  TuningOptions off;
  off.rotaryWarpgroup = RotaryWarpgroup::off;
  KernelPlan d64off =
      plan(Chip::sm_90a, shape(false, 64, RotaryMode::half_split), off);
  EXPECT_EQ(d64off.tilesPerCta, 0);
  EXPECT_EQ(d64off.numConsumers, 2);
  KernelPlan halfSplit =
      plan(Chip::sm_90a, shape(true, 128, RotaryMode::half_split));
  EXPECT_EQ(halfSplit.tilesPerCta, 0);
  EXPECT_EQ(halfSplit.ctasPerSm, 1);
  EXPECT_TRUE(halfSplit.rotaryWarpgroup);
  EXPECT_EQ(halfSplit.numConsumers, 1);
  EXPECT_FALSE(halfSplit.l2Prefetch);
  EXPECT_EQ(
      plan(Chip::sm_90a, shape(true, 64, RotaryMode::half_split)).tilesPerCta,
      0);
  KernelPlan interleaved =
      plan(Chip::sm_90a, shape(true, 128, RotaryMode::interleaved));
  EXPECT_EQ(interleaved.tilesPerCta, 0);
  EXPECT_EQ(interleaved.numConsumers, 1);
}

TEST(Sm90aPlan, RotaryBackwardReadsItsAnglesOncePerTile) {
  // By default where a rotary warpgroup rotates the slots: at head dim 64
  // next to one consumer of 256 registers (since session 28; two of 184
  // with a positions tensor), at 128 with one of 256 registers and one
  // rotary warpgroup (also for interleaved tables with a positions tensor
  // since session 27; two when asked).
  KernelPlan d64 = plan(Chip::sm_90a, shape(true, 64, RotaryMode::half_split));
  EXPECT_TRUE(d64.rotaryWarpgroup);
  EXPECT_TRUE(d64.anglesPerTile);
  EXPECT_EQ(d64.numConsumers, 1);
  EXPECT_EQ(d64.registers.compute, 256);
  EXPECT_EQ(d64.registers.rotary, 208);
  KernelShape d64Positions = shape(true, 64, RotaryMode::interleaved, true);
  d64Positions.hasPositions = true;
  KernelPlan twoConsumers64 = plan(Chip::sm_90a, d64Positions);
  EXPECT_TRUE(twoConsumers64.anglesPerTile);
  EXPECT_EQ(twoConsumers64.numConsumers, 2);
  EXPECT_EQ(twoConsumers64.registers.compute, 184);
  KernelPlan d128 =
      plan(Chip::sm_90a, shape(true, 128, RotaryMode::half_split, true));
  EXPECT_TRUE(d128.rotaryWarpgroup);
  EXPECT_TRUE(d128.anglesPerTile);
  EXPECT_EQ(d128.rotaryReplicas, 1);
  EXPECT_EQ(d128.numConsumers, 1);
  EXPECT_EQ(d128.registers.compute, 256);
  KernelShape positions = shape(true, 128, RotaryMode::interleaved);
  positions.hasPositions = true;
  EXPECT_EQ(plan(Chip::sm_90a, positions).rotaryReplicas, 1);
  TuningOptions twoReplicas;
  twoReplicas.rotaryWarpgroups = 2;
  KernelPlan two = plan(Chip::sm_90a, positions, twoReplicas);
  EXPECT_EQ(two.rotaryReplicas, 2);
  EXPECT_EQ(two.numConsumers, 1);
  EXPECT_TRUE(two.anglesPerTile);
  // Not where two consumers of 184 registers would hold 64 angle registers
  // at head dim 128, unless asked; never in the forward.
  TuningOptions twoConsumers;
  twoConsumers.rotaryWarpgroup = RotaryWarpgroup::on;
  twoConsumers.numConsumers = 2;
  EXPECT_FALSE(
      plan(Chip::sm_90a, shape(true, 128, RotaryMode::half_split), twoConsumers)
          .anglesPerTile);
  TuningOptions perTile;
  perTile.rotaryAngles = RotaryAngles::per_tile;
  EXPECT_FALSE(
      plan(Chip::sm_90a, shape(false, 128, RotaryMode::half_split), perTile)
          .anglesPerTile);
  TuningOptions perProduct;
  perProduct.rotaryAngles = RotaryAngles::per_product;
  EXPECT_FALSE(
      plan(Chip::sm_90a, shape(true, 64, RotaryMode::half_split), perProduct)
          .anglesPerTile);
}

TEST(Sm90aPlan, ProducerCopiesPositionsAsMeasured) {
  // auto: the producer copies a tile's positions into its slot for the
  // backward at head dim 128 and wherever v is rotated too (run 19).
  KernelShape backward128 = shape(true, 128, RotaryMode::interleaved);
  backward128.hasPositions = true;
  EXPECT_TRUE(plan(Chip::sm_90a, backward128).positionsInSlot);
  KernelShape forward64 = shape(false, 64, RotaryMode::half_split);
  forward64.hasPositions = true;
  forward64.rotateV = true;
  EXPECT_TRUE(plan(Chip::sm_90a, forward64).positionsInSlot);
  // Not where it was not faster (the backward at 64 without rotate_v, the
  // forwards without it), nor from theta (not timed), nor without a
  // positions tensor.
  KernelShape backward64 = shape(true, 64, RotaryMode::interleaved);
  backward64.hasPositions = true;
  EXPECT_FALSE(plan(Chip::sm_90a, backward64).positionsInSlot);
  KernelShape forward128 = shape(false, 128, RotaryMode::interleaved);
  forward128.hasPositions = true;
  EXPECT_FALSE(plan(Chip::sm_90a, forward128).positionsInSlot);
  KernelShape theta = backward128;
  theta.rotaryTheta = true;
  EXPECT_FALSE(plan(Chip::sm_90a, theta).positionsInSlot);
  EXPECT_FALSE(plan(Chip::sm_90a, shape(true, 128, RotaryMode::interleaved))
                   .positionsInSlot);
  // Asked for, wherever a rotary warpgroup turns 64-row tiles; never
  // without one (the block-128 backward's consumer turns its own slot).
  TuningOptions producer;
  producer.positionsLoad = PositionsLoad::producer;
  EXPECT_TRUE(plan(Chip::sm_90a, backward64, producer).positionsInSlot);
  KernelShape block128 = backward128;
  block128.blockSize = 128;
  EXPECT_FALSE(plan(Chip::sm_90a, block128, producer).positionsInSlot);
  TuningOptions readers;
  readers.positionsLoad = PositionsLoad::readers;
  EXPECT_FALSE(plan(Chip::sm_90a, backward128, readers).positionsInSlot);
}

TEST(Sm90aPlan, AnglesAfterTheSoftmaxAtHeadDim64WithPositions) {
  // auto: at head dim 64 with a positions tensor and tables, the positions
  // are read as the tile arrives and the angles after the softmax.
  KernelShape d64 = shape(true, 64, RotaryMode::interleaved);
  d64.hasPositions = true;
  KernelPlan split = plan(Chip::sm_90a, d64);
  EXPECT_TRUE(split.anglesPerTile);
  EXPECT_TRUE(split.anglesAfterSoftmax);
  // Not with rotate_v (dv needs the angles sooner), nor without positions,
  // nor from theta, nor at head dim 128 (each timed slower, or untimed).
  KernelShape rotateV = d64;
  rotateV.rotateV = true;
  EXPECT_FALSE(plan(Chip::sm_90a, rotateV).anglesAfterSoftmax);
  EXPECT_FALSE(plan(Chip::sm_90a, shape(true, 64, RotaryMode::interleaved))
                   .anglesAfterSoftmax);
  KernelShape theta = d64;
  theta.rotaryTheta = true;
  EXPECT_FALSE(plan(Chip::sm_90a, theta).anglesAfterSoftmax);
  KernelShape d128 = shape(true, 128, RotaryMode::half_split);
  d128.hasPositions = true;
  EXPECT_TRUE(plan(Chip::sm_90a, d128).anglesPerTile);
  EXPECT_FALSE(plan(Chip::sm_90a, d128).anglesAfterSoftmax);
  // Asked for, it applies wherever per-tile does, and is one set per tile.
  TuningOptions afterSoftmax;
  afterSoftmax.rotaryAngles = RotaryAngles::after_softmax;
  KernelPlan forced = plan(Chip::sm_90a, d128, afterSoftmax);
  EXPECT_TRUE(forced.anglesPerTile);
  EXPECT_TRUE(forced.anglesAfterSoftmax);
  EXPECT_FALSE(
      plan(Chip::sm_90a, shape(false, 64, RotaryMode::half_split), afterSoftmax)
          .anglesAfterSoftmax);
}

TEST(Sm90aPlan, RotaryWarpgroupTakesTheRotationOffTheConsumers) {
  TuningOptions on;
  on.rotaryWarpgroup = RotaryWarpgroup::on;
  TuningOptions one = on;
  one.rotaryWarpgroups = 1;
  // A rotary warpgroup of 104 registers; four warpgroups launch with 128
  // each, so the consumers get (512 - 40 - 104) / 2. The ring is the same.
  KernelPlan forward =
      plan(Chip::sm_90a, shape(false, 128, RotaryMode::interleaved, true), one);
  EXPECT_TRUE(forward.rotaryWarpgroup);
  EXPECT_EQ(forward.rotaryReplicas, 1);
  EXPECT_EQ(forward.numConsumers, 2);
  EXPECT_EQ(forward.registers.load, 40);
  EXPECT_EQ(forward.registers.rotary, 104);
  EXPECT_EQ(forward.registers.compute, 184);
  EXPECT_EQ(forward.numStages, 4);
  EXPECT_TRUE(plan(Chip::sm_90a, shape(false, 64, RotaryMode::half_split), on)
                  .rotaryWarpgroup);
  // By default (auto), where it timed faster: the forward at head dims 128
  // and 64, the backward at 64 and (reading its angles once a tile) at 128.
  EXPECT_TRUE(plan(Chip::sm_90a, shape(false, 128, RotaryMode::interleaved))
                  .rotaryWarpgroup);
  EXPECT_TRUE(plan(Chip::sm_90a, shape(false, 64, RotaryMode::interleaved))
                  .rotaryWarpgroup);
  EXPECT_TRUE(plan(Chip::sm_90a, shape(false, 64, RotaryMode::half_split))
                  .rotaryWarpgroup);
  EXPECT_TRUE(plan(Chip::sm_90a, shape(true, 64, RotaryMode::half_split))
                  .rotaryWarpgroup);
  EXPECT_TRUE(plan(Chip::sm_90a, shape(true, 128, RotaryMode::interleaved))
                  .rotaryWarpgroup);
  TuningOptions off;
  off.rotaryWarpgroup = RotaryWarpgroup::off;
  KernelPlan inConsumers =
      plan(Chip::sm_90a, shape(true, 128, RotaryMode::interleaved), off);
  EXPECT_FALSE(inConsumers.rotaryWarpgroup);
  EXPECT_EQ(inConsumers.registers.rotary, 0);
  EXPECT_EQ(inConsumers.registers.compute, 232);
  EXPECT_FALSE(
      plan(Chip::sm_90a, shape(false, 128, RotaryMode::half_split), off)
          .rotaryWarpgroup);
  // Not without rotary embeddings, and never where CTAs share an SM.
  EXPECT_TRUE(plan(Chip::sm_90a, shape(true, 128, RotaryMode::interleaved), on)
                  .rotaryWarpgroup);
  EXPECT_FALSE(plan(Chip::sm_90a, shape(false, 128), on).rotaryWarpgroup);
  TuningOptions chunkedOn = on;
  chunkedOn.schedule = Schedule::chunked;
  chunkedOn.ctasPerSm = 2;
  KernelPlan chunked =
      plan(Chip::sm_90a, shape(true, 128, RotaryMode::half_split), chunkedOn);
  EXPECT_EQ(chunked.ctasPerSm, 2);
  EXPECT_FALSE(chunked.rotaryWarpgroup);
  EXPECT_EQ(chunked.registers.compute, 216);
}

TEST(Sm90aPlan, RotaryForwardAt128StoresOThroughTheThreads) {
  // o-store=auto: the threads' row stores for the sm_90a rotary forward at
  // head dim 128 without rotate_v, bulk tensor stores everywhere else.
  for (RotaryMode mode : {RotaryMode::half_split, RotaryMode::interleaved}) {
    KernelPlan forward = plan(Chip::sm_90a, shape(false, 128, mode));
    EXPECT_TRUE(forward.stageOutput);
    EXPECT_FALSE(forward.bulkStore);
    EXPECT_TRUE(plan(Chip::sm_90a, shape(false, 128, mode, true)).bulkStore);
    EXPECT_TRUE(plan(Chip::sm_90a, shape(false, 64, mode)).bulkStore);
    EXPECT_TRUE(plan(Chip::sm_100a, shape(false, 128, mode)).bulkStore);
  }
  KernelShape grouped = shape(false, 128, RotaryMode::half_split);
  grouped.group = 4;
  EXPECT_TRUE(plan(Chip::sm_90a, grouped).bulkStore);
  // An explicit value is kept.
  TuningOptions tma;
  tma.oStore = OStore::tma;
  EXPECT_TRUE(plan(Chip::sm_90a, shape(false, 128, RotaryMode::half_split), tma)
                  .bulkStore);
}

TEST(Sm90aPlan, RotaryBackwardAt128StoresGradientsThroughTheThreads) {
  // o-store=auto: the sm_90a rotary backward at head dim 128 and block size
  // 64 stores through smem (interleaved with rotate_v and no positions
  // tensor too since session 29, but from theta: not timed); not at head
  // dim 64, on sm_100a, or grouped.
  for (RotaryMode mode : {RotaryMode::half_split, RotaryMode::interleaved})
    for (bool positions : {false, true})
      for (bool rotateV : {false, true}) {
        KernelShape backward = shape(true, 128, mode, rotateV);
        backward.hasPositions = positions;
        KernelPlan p = plan(Chip::sm_90a, backward);
        EXPECT_TRUE(p.stageOutput);
        EXPECT_FALSE(p.bulkStore);
        EXPECT_TRUE(plan(Chip::sm_100a, backward).bulkStore);
        KernelShape theta = backward;
        theta.rotaryTheta = true;
        EXPECT_EQ(plan(Chip::sm_90a, theta).bulkStore,
                  mode == RotaryMode::interleaved && rotateV && !positions);
      }
  EXPECT_TRUE(
      plan(Chip::sm_90a, shape(true, 64, RotaryMode::half_split)).bulkStore);
  EXPECT_TRUE(plan(Chip::sm_90a, shape(true, 128)).bulkStore);
  KernelShape grouped = shape(true, 128, RotaryMode::half_split);
  grouped.group = 2;
  EXPECT_TRUE(plan(Chip::sm_90a, grouped).bulkStore);
}

TEST(Sm90aPlan, OneRotaryWarpgroupTakesTheRestOfThreeWarpgroupsPool) {
  // The backward at head dim 128: a producer, one rotary warpgroup and one
  // consumer (384 threads at 168 registers, a pool of 504): the consumer's
  // 256 and the producer's 40 leave the rotary warpgroup 208, with
  // interleaved tables and a positions tensor too (two replicas until
  // session 27), and a ring of three slots.
  for (RotaryMode mode : {RotaryMode::half_split, RotaryMode::interleaved}) {
    KernelShape backward = shape(true, 128, mode, /*rotateV=*/true);
    backward.hasPositions = true;
    KernelPlan p = plan(Chip::sm_90a, backward);
    EXPECT_TRUE(p.rotaryWarpgroup);
    EXPECT_EQ(p.rotaryReplicas, 1);
    EXPECT_EQ(p.numConsumers, 1);
    EXPECT_EQ(p.registers.load, 40);
    EXPECT_EQ(p.registers.rotary, 208);
    EXPECT_EQ(p.registers.compute, 256);
    EXPECT_EQ(p.numStages, 3);
  }
  // Four warpgroups keep 104: two consumers, or two replicas.
  TuningOptions two;
  two.rotaryWarpgroups = 2;
  KernelShape interleaved = shape(true, 128, RotaryMode::interleaved);
  interleaved.hasPositions = true;
  KernelPlan replicas = plan(Chip::sm_90a, interleaved, two);
  EXPECT_EQ(replicas.rotaryReplicas, 2);
  EXPECT_EQ(replicas.registers.rotary, 104);
  EXPECT_EQ(replicas.numStages, 2);
  KernelShape positions64 = shape(true, 64, RotaryMode::half_split);
  positions64.hasPositions = true;
  EXPECT_EQ(plan(Chip::sm_90a, positions64).registers.rotary, 104);
}

TEST(Sm90aPlan, OptionsOverrideTheDefaults) {
  TuningOptions options;
  options.pOperand = POperand::smem;
  options.oStore = OStore::registers;
  options.tilesPerCta = 2;
  options.numStages = 1;
  KernelPlan p = plan(Chip::sm_90a, shape(false, 128), options);
  EXPECT_TRUE(p.pFromSmem);
  EXPECT_FALSE(p.stageOutput);
  EXPECT_FALSE(p.bulkStore);
  EXPECT_EQ(p.tilesPerCta, 2);
  EXPECT_EQ(p.numStages, 1);
}

TEST(Sm90aPlan, RejectsOptionsOutOfRange) {
  TuningOptions consumers;
  consumers.numConsumers = 4;
  EXPECT_EQ(failure(Chip::sm_90a, shape(false, 128), consumers),
            "num-consumers must be 0 (the recipe picks), 1, 2 or 3 "
            "(warpgroups of 128 threads next to the producer), got 4");
  TuningOptions ctas;
  ctas.ctasPerSm = 5;
  EXPECT_EQ(failure(Chip::sm_90a, shape(false, 128), ctas),
            "ctas-per-sm must be 0 (the recipe picks) or in [1, 4], got 5");
  TuningOptions stages;
  stages.numStages = -1;
  EXPECT_EQ(failure(Chip::sm_90a, shape(false, 128), stages),
            "num-stages must be 0 (the recipe picks) or in [1, 7264] (the "
            "slots whose barriers and tile records fit in shared memory), "
            "got -1");
  TuningOptions tiles;
  tiles.tilesPerCta = int64_t(1) << 32;
  EXPECT_EQ(failure(Chip::sm_90a, shape(false, 128), tiles),
            "tiles-per-cta must be 0 (the recipe picks) or in [1, "
            "2147483647], got 4294967296");
}

TEST(Sm90aPlan, RejectsOptionsThatContradictEachOther) {
  TuningOptions odd;
  odd.schedule = Schedule::strided;
  odd.numStages = 3;
  EXPECT_EQ(failure(Chip::sm_90a, shape(false, 128), odd),
            "num-stages must be a non-negative multiple of num-consumers "
            "(2), got 3");
  TuningOptions persistent;
  persistent.schedule = Schedule::strided;
  persistent.tilesPerCta = 4;
  EXPECT_EQ(failure(Chip::sm_90a, shape(false, 128), persistent),
            "tiles-per-cta applies to a chunked launch; this one is "
            "persistent (schedule 'strided')");
  // Three consumers' scratch leaves no room for a 64 KiB slot.
  TuningOptions three;
  three.numConsumers = 3;
  EXPECT_EQ(failure(Chip::sm_90a, shape(true, 128), three),
            "no ring of 4-tile slots (65536 bytes each, a multiple of 3 "
            "slots) fits in shared memory next to 98304 bytes of scratch");
}

TEST(Sm100aPlan, ForwardIsPersistentWithTwoSoftmaxWarpgroups) {
  KernelPlan p = plan(Chip::sm_100a, shape(false, 128));
  EXPECT_EQ(p.ctasPerSm, 1);
  EXPECT_EQ(p.tilesPerCta, 0);
  EXPECT_FALSE(p.contiguousSchedule);
  EXPECT_EQ(p.numConsumers, 1);
  EXPECT_EQ(p.softmaxReplicas, 2);
  EXPECT_EQ(p.numStages, 4);
  EXPECT_EQ(p.rotaryDepth, 0);
  EXPECT_TRUE(p.stageOutput);
  EXPECT_TRUE(p.bulkStore);
  EXPECT_FALSE(p.l2Prefetch);
  EXPECT_EQ(p.registers.load, 40);
  EXPECT_EQ(p.registers.mma, 40);
  EXPECT_EQ(p.registers.rotary, 0);
  EXPECT_EQ(p.registers.compute, 216);
}

TEST(Sm100aPlan, ChunkedOnRequest) {
  TuningOptions options;
  options.schedule = Schedule::chunked;
  KernelPlan p = plan(Chip::sm_100a, shape(false, 128), options);
  EXPECT_EQ(p.ctasPerSm, 1);
  EXPECT_EQ(p.tilesPerCta, 4);
  EXPECT_TRUE(p.contiguousSchedule);
}

TEST(Sm100aPlan, RotaryAddsARingAndAWarpgroup) {
  KernelPlan p = plan(Chip::sm_100a, shape(false, 128, RotaryMode::half_split));
  EXPECT_EQ(p.rotaryDepth, 2);
  EXPECT_EQ(p.numStages, 2);
  EXPECT_EQ(p.registers.load, 48);
  EXPECT_EQ(p.registers.mma, 56);
  EXPECT_EQ(p.registers.rotary, 56);
  EXPECT_EQ(p.registers.compute, 160);
  // 96 registers a thread at launch (640 threads): the plan uses the whole
  // pool, 48 + 56 + 56 + 2 x 160 = 5 x 96.
  EXPECT_EQ(p.registers.load + p.registers.rotary + p.registers.mma +
                2 * p.registers.compute,
            5 * 96);
  // The backward's P/dS slots leave room for one rotated slot only.
  KernelPlan backward =
      plan(Chip::sm_100a, shape(true, 128, RotaryMode::interleaved, true));
  EXPECT_EQ(backward.rotaryDepth, 1);
  EXPECT_GE(backward.numStages, 1);
}

TEST(Sm100aPlan, RotaryBackwardAtHeadDim128HasOneSoftmaxWarpgroup) {
  // Four warpgroups (512 threads, 128 registers each at launch): the rotary
  // and MMA warpgroups get 72 and 96, the softmax warpgroup 256; within the
  // pool (48 + 72 + 96 + 256 <= 4 x 128).
  for (bool rotateV : {false, true}) {
    KernelPlan p =
        plan(Chip::sm_100a, shape(true, 128, RotaryMode::half_split, rotateV));
    EXPECT_EQ(p.softmaxReplicas, 1);
    EXPECT_EQ(p.registers.load, 48);
    EXPECT_EQ(p.registers.rotary, 72);
    EXPECT_EQ(p.registers.mma, 96);
    EXPECT_EQ(p.registers.compute, 256);
    EXPECT_LE(p.registers.load + p.registers.rotary + p.registers.mma +
                  p.registers.compute,
              4 * 128);
  }
  // At head dim 64, and in the forward, two softmax warpgroups as before.
  KernelPlan d64 = plan(Chip::sm_100a, shape(true, 64, RotaryMode::half_split));
  EXPECT_EQ(d64.softmaxReplicas, 2);
  EXPECT_EQ(d64.registers.compute, 160);
  KernelPlan forward =
      plan(Chip::sm_100a, shape(false, 128, RotaryMode::interleaved, true));
  EXPECT_EQ(forward.softmaxReplicas, 2);
  EXPECT_EQ(forward.registers.compute, 160);
}

TEST(Sm100aPlan, WideRotaryBackwardAtBlock128StreamsColumnPasses) {
  // Rotary pairs above head dim 128 at block size 128, interleaved or
  // half-split (session 20: pair-complete chunks, the same plan): the column
  // passes with a rotary warpgroup and one softmax warpgroup (88 / 120 / 88
  // / 216 = 4 x 128), the signal ring as deep as the chunk ring, and one
  // staging buffer next to both halves' P and dS.
  for (RotaryMode mode : {RotaryMode::interleaved, RotaryMode::half_split}) {
    for (int64_t headDim : {192, 256}) {
      for (bool rotateV : {false, true}) {
        KernelShape s = shape(true, headDim, mode, rotateV);
        s.blockSize = 128;
        KernelPlan p = plan(Chip::sm_100a, s);
        EXPECT_TRUE(p.columnPasses);
        EXPECT_EQ(p.softmaxReplicas, 1);
        EXPECT_EQ(p.numStages, 2);
        EXPECT_EQ(p.rotaryDepth, 2);
        EXPECT_EQ(p.registers.load, 88);
        EXPECT_EQ(p.registers.rotary, 120);
        EXPECT_EQ(p.registers.mma, 88);
        EXPECT_EQ(p.registers.compute, 216);
      }
    }
  }
  // And on sm_90a: the column passes, with pinned addresses at 96 / 208 /
  // 200 since session 23 (the kernels without rotate_v at 256 before it:
  // 96 / 200 / 208).
  KernelShape halfSplit = shape(true, 256, RotaryMode::half_split);
  halfSplit.blockSize = 128;
  KernelPlan p = plan(Chip::sm_90a, halfSplit);
  EXPECT_TRUE(p.columnPasses);
  EXPECT_TRUE(p.pinnedAddresses);
  EXPECT_EQ(p.registers.load, 96);
  EXPECT_EQ(p.registers.compute, 208);
  EXPECT_EQ(p.secondConsumerRegisters, 200);
}

TEST(Sm100aPlan, RejectsWhatSm100aLacks) {
  TuningOptions registers;
  registers.oStore = OStore::registers;
  EXPECT_EQ(failure(Chip::sm_100a, shape(false, 128), registers),
            "o-store must be 'tma' or 'smem' on sm_100a (O comes out of "
            "tensor memory into registers, then through shared memory), got "
            "'registers'");
  TuningOptions ctas;
  ctas.ctasPerSm = 2;
  EXPECT_EQ(failure(Chip::sm_100a, shape(false, 128), ctas),
            "ctas-per-sm above 1 is implemented for sm_90a only");
  TuningOptions stages;
  stages.numStages = 7265;
  EXPECT_EQ(failure(Chip::sm_100a, shape(false, 128), stages),
            "num-stages must be 0 (the recipe picks) or in [1, 7264] (the "
            "slots whose barriers and tile records fit in shared memory), "
            "got 7265");
}

} // namespace

TEST(GroupedBackwardPlan, Sm100aHasOneSoftmaxWarpgroupAndTwoRings) {
  KernelPlan p = plan(Chip::sm_100a, grouped(128, 4));
  EXPECT_EQ(p.softmaxReplicas, 1);
  // "kv" two slots deep, "qdo" the rest next to one staging buffer and one
  // P/dS slot: (227 - 1 - 16 - 16 - 64) KiB over 32 KiB slots.
  EXPECT_EQ(p.numStages, 2);
  EXPECT_EQ(p.groupStages, 4);
  EXPECT_EQ(p.registers.load + p.registers.mma, 96 + 152);
  EXPECT_EQ(p.registers.compute, 256);
}

TEST(GroupedBackwardPlan, Sm90aLaunchesPersistent) {
  TuningOptions serial;
  serial.groupRoles = GroupRoles::serial;
  KernelPlan wide = plan(Chip::sm_90a, grouped(128, 8), serial);
  EXPECT_EQ(wide.numConsumers, 1);
  EXPECT_EQ(wide.columnParts, 1);
  EXPECT_EQ(wide.ctasPerSm, 1); // dK and dV stay live across the group
  EXPECT_EQ(wide.tilesPerCta, 0);
  EXPECT_FALSE(wide.contiguousSchedule);
  EXPECT_EQ(wide.registers.load, 48);
  EXPECT_EQ(wide.registers.compute, 256);
  EXPECT_GE(wide.groupStages, 2);
  KernelPlan narrow = plan(Chip::sm_90a, grouped(64, 2));
  EXPECT_EQ(narrow.ctasPerSm, 2);
  EXPECT_EQ(narrow.tilesPerCta, 0);
  EXPECT_FALSE(narrow.l2Prefetch);
  EXPECT_EQ(plan(Chip::sm_90a, grouped(32, 2)).ctasPerSm, 2);
  // Chunked on request: the chunk counts an item's loads, K, V and G times
  // Q, dO.
  TuningOptions chunked;
  chunked.schedule = Schedule::chunked;
  EXPECT_EQ(plan(Chip::sm_90a, grouped(64, 2), chunked).tilesPerCta,
            192 * 1024 / (6 * 64 * 64 * 2));
  TuningOptions two;
  two.numConsumers = 2;
  KernelPlan parts = plan(Chip::sm_90a, grouped(128, 8), two);
  EXPECT_EQ(parts.columnParts, 2);
  EXPECT_EQ(parts.registers.compute, 224);
  EXPECT_NE(failure(Chip::sm_90a, grouped(64, 2), two)
                .find("num-consumers 2 splits the grouped-query backward's "
                      "head dim 64"),
            std::string::npos);
  TuningOptions three;
  three.numConsumers = 3;
  EXPECT_NE(failure(Chip::sm_90a, grouped(128, 2), three)
                .find("num-consumers must be 0 (the recipe picks), 1 or 2 for "
                      "the grouped-query backward (group 2)"),
            std::string::npos);
}

TEST(Sm100aPlan, LargeBlockBackwardGivesEachSoftmaxWarpgroupAHalf) {
  // Block size 128: two softmax warpgroups (replica r takes query half r),
  // the producer and the MMA warpgroup at 88 registers each (the budgets
  // with which ptxas spills nothing); 168 each for the softmax warpgroups
  // (4 x 128 registers at launch).
  KernelShape b128 = shape(true, 128);
  b128.blockSize = 128;
  KernelPlan p = plan(Chip::sm_100a, b128);
  EXPECT_EQ(p.softmaxReplicas, 2);
  EXPECT_EQ(p.registers.load, 88);
  EXPECT_EQ(p.registers.mma, 88);
  EXPECT_EQ(p.registers.compute, 168);
  // Slots of q, k, v, dO (128 x D each) next to two [64, D] staging buffers
  // and two P/dS slots of [64, 128] each (64 KiB): one slot at D = 128 and
  // 96, two at 64, four at 32.
  EXPECT_EQ(p.numStages, 1);
  for (auto [headDim, stages] :
       {std::pair<int64_t, int64_t>{96, 1}, {64, 2}, {32, 4}}) {
    b128.headDim = headDim;
    EXPECT_EQ(plan(Chip::sm_100a, b128).numStages, stages) << headDim;
  }
  // Causal below head dim 128: 80 / 80 / 176 (the softmax warpgroups also
  // hold the mask's rows; 168 spilled at 96); at 128 the plain budgets (the
  // MMA warpgroup spills at 80 there).
  b128.causal = true;
  for (auto [headDim, others, softmax] :
       {std::tuple<int64_t, int64_t, int64_t>{32, 80, 176},
        {64, 80, 176},
        {96, 80, 176},
        {128, 88, 168}}) {
    b128.headDim = headDim;
    KernelPlan causal = plan(Chip::sm_100a, b128);
    EXPECT_EQ(causal.registers.load, others) << headDim;
    EXPECT_EQ(causal.registers.mma, others) << headDim;
    EXPECT_EQ(causal.registers.compute, softmax) << headDim;
  }
}

TEST(Sm100aPlan, LargeBlockRotaryBackwardHasOneSoftmaxWarpgroup) {
  // The rotary backward at block size 128: one softmax warpgroup takes both
  // halves of a block, next to the load, rotary and MMA warpgroups (512
  // registers a thread; ptxas spills nothing). The rotation is in place, so
  // the load ring is as deep as beside P/dS (64 KiB) and one staging buffer:
  // one slot at head dims 128 and 96, two at 64, four at 32; "rotated" (a
  // signal) as deep.
  for (auto [headDim, stages] :
       {std::pair<int64_t, int64_t>{128, 1}, {96, 1}, {64, 2}, {32, 4}}) {
    for (bool rotateV : {false, true}) {
      KernelShape b128 = shape(true, headDim, RotaryMode::interleaved, rotateV);
      b128.blockSize = 128;
      KernelPlan p = plan(Chip::sm_100a, b128);
      EXPECT_EQ(p.softmaxReplicas, 1) << headDim;
      EXPECT_EQ(p.numStages, stages) << headDim;
      EXPECT_EQ(p.rotaryDepth, stages) << headDim;
      EXPECT_EQ(p.registers.load, 88) << headDim;
      EXPECT_EQ(p.registers.rotary, 152) << headDim;
      EXPECT_EQ(p.registers.mma, 88) << headDim;
      EXPECT_EQ(p.registers.compute, 184) << headDim;
      EXPECT_EQ(p.registers.load + p.registers.rotary + p.registers.mma +
                    p.registers.compute,
                512)
          << headDim;
    }
  }
  // Two slots at head dim 128 do not fit.
  KernelShape b128 = shape(true, 128, RotaryMode::half_split);
  b128.blockSize = 128;
  TuningOptions two;
  two.numStages = 2;
  EXPECT_EQ(failure(Chip::sm_100a, b128, two),
            "no ring of 2 x 131072 bytes fits in shared memory next to 81920 "
            "bytes of P, dS and the staging buffer");
}

TEST(Sm100aPlan, LargeBlockRotaryForwardHasOneSoftmaxWarpgroup) {
  // The rotary forward at block size 128: one softmax warpgroup takes both
  // query halves, so that the CTA has four warpgroups (512 registers a
  // thread): load 48, rotary 136, MMA 112, softmax 216 (ptxas spills
  // nothing; two softmax warpgroups next to the rotary one would keep
  // about 140 each).
  for (int64_t headDim : {32, 64, 96, 128}) {
    for (bool rotateV : {false, true}) {
      KernelShape b128 = shape(false, headDim, RotaryMode::half_split, rotateV);
      b128.blockSize = 128;
      KernelPlan p = plan(Chip::sm_100a, b128);
      EXPECT_EQ(p.softmaxReplicas, 1) << headDim;
      EXPECT_EQ(p.registers.load, 48) << headDim;
      EXPECT_EQ(p.registers.rotary, 136) << headDim;
      EXPECT_EQ(p.registers.mma, 112) << headDim;
      EXPECT_EQ(p.registers.compute, 216) << headDim;
      EXPECT_EQ(p.registers.load + p.registers.rotary + p.registers.mma +
                    p.registers.compute,
                512);
    }
  }
  // One load slot and one rotated slot at head dim 128; three and two at 64.
  KernelShape d128 = shape(false, 128, RotaryMode::interleaved);
  d128.blockSize = 128;
  KernelPlan p128 = plan(Chip::sm_100a, d128);
  EXPECT_EQ(p128.numStages, 1);
  EXPECT_EQ(p128.rotaryDepth, 1);
  KernelShape d64 = shape(false, 64, RotaryMode::interleaved);
  d64.blockSize = 128;
  KernelPlan p64 = plan(Chip::sm_100a, d64);
  EXPECT_EQ(p64.numStages, 3);
  EXPECT_EQ(p64.rotaryDepth, 2);
}

TEST(Sm90aPlan, TwoRotaryWarpgroupsTakeOneConsumer) {
  // By default the forward at head dim 128 has two rotary warpgroups of 104
  // registers and one consumer of 256: 40 + 2 x 104 + 256 <= 512. The ring
  // (4 slots) is a multiple of both.
  KernelPlan forward =
      plan(Chip::sm_90a, shape(false, 128, RotaryMode::half_split));
  EXPECT_TRUE(forward.rotaryWarpgroup);
  EXPECT_EQ(forward.rotaryReplicas, 2);
  EXPECT_EQ(forward.numConsumers, 1);
  EXPECT_EQ(forward.registers.rotary, 104);
  EXPECT_EQ(forward.registers.compute, 256);
  EXPECT_EQ(forward.numStages, 4);
  // At head dim 64 the half-split forward launched chunked (tiles-per-cta
  // given), one rotary warpgroup in each of the two CTAs of an SM;
  // persistent (its default since session 37, or schedule=strided), the
  // half-split forwards and those with a positions tensor take two, the
  // interleaved forward without one, and every backward one.
  TuningOptions chunked;
  chunked.tilesPerCta = 16;
  EXPECT_EQ(
      plan(Chip::sm_90a, shape(false, 64, RotaryMode::half_split), chunked)
          .rotaryReplicas,
      1);
  EXPECT_EQ(plan(Chip::sm_90a, shape(false, 64, RotaryMode::half_split))
                .rotaryReplicas,
            2);
  TuningOptions persistent;
  persistent.schedule = Schedule::strided;
  EXPECT_EQ(
      plan(Chip::sm_90a, shape(false, 64, RotaryMode::half_split), persistent)
          .rotaryReplicas,
      2);
  KernelShape positions = shape(false, 64, RotaryMode::interleaved);
  positions.hasPositions = true;
  EXPECT_EQ(plan(Chip::sm_90a, positions, persistent).rotaryReplicas, 2);
  EXPECT_EQ(
      plan(Chip::sm_90a, shape(false, 64, RotaryMode::interleaved), persistent)
          .rotaryReplicas,
      1);
  EXPECT_EQ(plan(Chip::sm_90a, shape(true, 64, RotaryMode::half_split))
                .rotaryReplicas,
            1);
  // Asked for: at head dim 64 too; an explicit num-consumers=2 keeps one.
  TuningOptions two;
  two.rotaryWarpgroups = 2;
  KernelPlan at64 =
      plan(Chip::sm_90a, shape(true, 64, RotaryMode::half_split), two);
  EXPECT_EQ(at64.rotaryReplicas, 2);
  EXPECT_EQ(at64.numConsumers, 1);
  EXPECT_EQ(at64.numStages % 2, 0);
  TuningOptions twoConsumers;
  twoConsumers.numConsumers = 2;
  EXPECT_EQ(plan(Chip::sm_90a, shape(false, 128, RotaryMode::half_split),
                 twoConsumers)
                .rotaryReplicas,
            1);
}

TEST(Sm90aPlan, RotaryWarpgroupsDiagnostics) {
  TuningOptions three;
  three.rotaryWarpgroups = 3;
  EXPECT_EQ(
      failure(Chip::sm_90a, shape(false, 128, RotaryMode::half_split), three),
      "rotary-warpgroups must be 0 (the recipe picks), 1 or 2, got 3");
  TuningOptions crowded;
  crowded.rotaryWarpgroups = 2;
  crowded.numConsumers = 2;
  EXPECT_EQ(
      failure(Chip::sm_90a, shape(false, 128, RotaryMode::half_split), crowded),
      "rotary-warpgroups=2 takes one consumer warpgroup (num-consumers 0 "
      "or 1), got num-consumers=2");
  TuningOptions odd;
  odd.rotaryWarpgroups = 2;
  odd.numStages = 3;
  EXPECT_EQ(
      failure(Chip::sm_90a, shape(false, 128, RotaryMode::half_split), odd),
      "num-stages must be a non-negative multiple of num-consumers (1) and of "
      "rotary-warpgroups (2), got 3");
  TuningOptions chunked;
  chunked.rotaryWarpgroups = 2;
  chunked.schedule = Schedule::chunked;
  EXPECT_EQ(
      failure(Chip::sm_90a, shape(false, 64, RotaryMode::half_split), chunked),
      "rotary-warpgroups=2 needs one CTA per SM (two CTAs of four warpgroups "
      "leave a consumer 88 registers), got ctas-per-sm=2");
  // Asked for without a schedule, two make the forward at 64 persistent.
  TuningOptions two;
  two.rotaryWarpgroups = 2;
  EXPECT_EQ(plan(Chip::sm_90a, shape(false, 64, RotaryMode::half_split), two)
                .tilesPerCta,
            0);
}

TEST(Sm90aPlan, HalfDepthSlotsAboveHeadDim128) {
  TuningOptions split;
  split.slotParts = 2;
  // 256: a low ring of 2 x 64 KiB (columns 0-127) and a high ring of one
  // 64 KiB slot, next to 24 KiB of P, dS and one output chunk's staging.
  KernelPlan d256 = plan(Chip::sm_90a, shape(true, 256), split);
  EXPECT_EQ(d256.lowSlotCols, 128);
  EXPECT_EQ(d256.numStages, 2);
  EXPECT_EQ(d256.highStages, 1);
  EXPECT_EQ(d256.numConsumers, 1);
  EXPECT_EQ(d256.ctasPerSm, 1);
  EXPECT_EQ(d256.tilesPerCta, 6);
  EXPECT_TRUE(d256.contiguousSchedule);
  EXPECT_EQ(d256.registers.compute, 256);
  // Two rings to fill: at 40 registers ptxas spilled the producer.
  EXPECT_EQ(d256.registers.load, 48);
  // 192: columns 0-127 (64 KiB) and 128-191 (32 KiB), two slots each.
  KernelPlan d192 = plan(Chip::sm_90a, shape(true, 192), split);
  EXPECT_EQ(d192.lowSlotCols, 128);
  EXPECT_EQ(d192.numStages, 2);
  EXPECT_EQ(d192.highStages, 2);
  // The default splits them too (timed faster), but not where another
  // option asks for what the split ring does not have (here the L2
  // prefetch); slot-parts=1 keeps one ring of whole tiles.
  EXPECT_EQ(plan(Chip::sm_90a, shape(true, 256)).lowSlotCols, 128);
  EXPECT_EQ(plan(Chip::sm_90a, shape(true, 192)).highStages, 2);
  TuningOptions prefetch;
  prefetch.l2Prefetch = L2Prefetch::on;
  EXPECT_EQ(plan(Chip::sm_90a, shape(true, 256), prefetch).lowSlotCols, 0);
  TuningOptions whole;
  whole.slotParts = 1;
  EXPECT_EQ(plan(Chip::sm_90a, shape(true, 256), whole).lowSlotCols, 0);
  // Refused elsewhere.
  EXPECT_EQ(failure(Chip::sm_90a, shape(true, 128), split),
            "slot-parts=2 applies to the sm_90a backward above head dim 128 "
            "without rotary embeddings, at block size 64 and one query head "
            "per k/v head");
  EXPECT_EQ(failure(Chip::sm_100a, shape(true, 256), split),
            "slot-parts=2 applies to the sm_90a backward above head dim 128 "
            "without rotary embeddings, at block size 64 and one query head "
            "per k/v head");
  TuningOptions three;
  three.slotParts = 3;
  EXPECT_EQ(failure(Chip::sm_90a, shape(true, 256), three),
            "slot-parts must be 0 (the recipe picks), 1 (whole tiles) or 2 "
            "(half-depth slots), got 3");
}

TEST(Sm90aPlan, TwoStagingBuffersWithHalfDepthSlots) {
  // One staging buffer by default; two on request, 8 KiB more next to the
  // rings, which keep their depths at 192 and 256.
  EXPECT_EQ(plan(Chip::sm_90a, shape(true, 192)).stagingBuffers, 1);
  TuningOptions two;
  two.stagingBuffers = 2;
  KernelPlan d192 = plan(Chip::sm_90a, shape(true, 192), two);
  EXPECT_EQ(d192.stagingBuffers, 2);
  EXPECT_EQ(d192.highStages, 2);
  KernelPlan d256 = plan(Chip::sm_90a, shape(true, 256), two);
  EXPECT_EQ(d256.stagingBuffers, 2);
  EXPECT_EQ(d256.numStages, 2);
  EXPECT_EQ(d256.highStages, 1);
  EXPECT_EQ(failure(Chip::sm_90a, shape(true, 128), two),
            "staging-buffers=2 applies to the sm_90a backward with half-depth "
            "slots (above head dim 128, slot-parts 0 or 2)");
  two.oStore = OStore::smem;
  EXPECT_EQ(failure(Chip::sm_90a, shape(true, 256), two),
            "staging-buffers=2 takes o-store=tma (the bulk stores read the "
            "buffers asynchronously), got o-store='smem'");
}

// The rotary backward at block size 128 above head dim 128 (column
// passes): without rotate_v the two consumers rotate the chunk slots, at
// the plain kernel's 104 / 200 / 200 at 192 and 96 / 200 / 208 at 256; with
// rotate_v at 192 (session 21) the producer warpgroup rotates them
// (producerRotates) at 104 / 200 / 200; at 256 the consumers, at 80 / 208 /
// 216. Each adds up to the pool of 504 (docs/head-dims.md). Since session 23
// interleaved pairs at 256 take the producer rotation with pinned addresses
// at 104 / 200 / 200 (pinnedAddresses); half-split pairs keep the above.
TEST(Sm90aPlan, WideRotaryBackwardAtBlock128Budgets) {
  struct Expected {
    int64_t headDim;
    bool rotateV;
    int64_t load, compute, second;
    bool producerRotates;
  };
  for (Expected e : {Expected{192, false, 104, 200, 0, false},
                     Expected{256, false, 96, 200, 208, false},
                     Expected{192, true, 104, 200, 0, true},
                     Expected{256, true, 80, 208, 216, false}}) {
    for (RotaryMode mode : {RotaryMode::interleaved, RotaryMode::half_split}) {
      KernelShape s = shape(true, e.headDim, mode, e.rotateV);
      s.blockSize = 128;
      KernelPlan p = plan(Chip::sm_90a, s);
      EXPECT_TRUE(p.columnPasses) << e.headDim;
      bool pinned = mode == RotaryMode::interleaved && e.headDim == 256;
      // Half-split pieces pin their addresses at the same budgets, except
      // where the producer rotates (pinned, those spilled 24-40 bytes).
      bool halfPinned = mode == RotaryMode::half_split && !e.producerRotates;
      EXPECT_EQ(p.pinnedAddresses, pinned || halfPinned)
          << e.headDim << e.rotateV;
      if (pinned) {
        EXPECT_EQ(p.registers.load, 104) << e.rotateV;
        EXPECT_EQ(p.registers.compute, 200) << e.rotateV;
        EXPECT_EQ(p.secondConsumerRegisters, 0) << e.rotateV;
        EXPECT_TRUE(p.producerRotates) << e.rotateV;
        continue;
      }
      // Half-split at 256 without rotate_v, pinned: 96 / 208 / 200.
      bool swapped = halfPinned && e.headDim == 256 && !e.rotateV;
      EXPECT_EQ(p.registers.load, e.load) << e.headDim << e.rotateV;
      EXPECT_EQ(p.registers.compute, swapped ? e.second : e.compute)
          << e.headDim << e.rotateV;
      EXPECT_EQ(p.secondConsumerRegisters, swapped ? e.compute : e.second)
          << e.headDim << e.rotateV;
      EXPECT_EQ(p.producerRotates, e.producerRotates) << e.headDim << e.rotateV;
      int64_t second = p.secondConsumerRegisters ? p.secondConsumerRegisters
                                                 : p.registers.compute;
      EXPECT_EQ(p.registers.load + p.registers.compute + second, 504);
    }
  }
  // With angles from theta the producer rotated only with a positions
  // tensor (without one it spilled 48 bytes there); with pinned addresses
  // (session 23) it rotates every interleaved theta kernel, spilling nothing.
  for (bool positions : {false, true}) {
    KernelShape s = shape(true, 192, RotaryMode::interleaved, true);
    s.blockSize = 128;
    s.rotaryTheta = true;
    s.hasPositions = positions;
    KernelPlan p = plan(Chip::sm_90a, s);
    EXPECT_TRUE(p.pinnedAddresses);
    EXPECT_TRUE(p.producerRotates);
    EXPECT_EQ(p.registers.load, 104);
  }
  // Tables at 192: pinned only with a positions tensor, without rotate_v and
  // causal blocks.
  KernelShape pos = shape(true, 192, RotaryMode::interleaved, false);
  pos.blockSize = 128;
  pos.hasPositions = true;
  EXPECT_TRUE(plan(Chip::sm_90a, pos).pinnedAddresses);
  pos.causal = true;
  EXPECT_FALSE(plan(Chip::sm_90a, pos).pinnedAddresses);
  // Half-split with theta: pinned unless the producer rotates (rotate_v
  // with a positions tensor at 192).
  for (bool positions : {false, true}) {
    KernelShape s = shape(true, 192, RotaryMode::half_split, true);
    s.blockSize = 128;
    s.rotaryTheta = true;
    s.hasPositions = positions;
    KernelPlan p = plan(Chip::sm_90a, s);
    EXPECT_EQ(p.producerRotates, positions);
    EXPECT_EQ(p.pinnedAddresses, !positions);
  }
  // Without rotary embeddings the plain kernel's plan.
  KernelShape plain = shape(true, 256);
  plain.blockSize = 128;
  KernelPlan p = plan(Chip::sm_90a, plain);
  EXPECT_EQ(p.registers.load, 104);
  EXPECT_EQ(p.registers.compute, 200);
  EXPECT_EQ(p.secondConsumerRegisters, 0);
  EXPECT_FALSE(p.producerRotates);
}

TEST(Sm90aPlan, LargeBlockBackwardWithTwoConsumers) {
  // large-block-consumers=2: two consumer partitions of one warpgroup each
  // (one per query half) next to the producer's 64 registers: 216 each (168
  // at launch for three warpgroups). The P/dS rings (64 KiB) and a staging
  // buffer per consumer leave one slot at D = 128 and 96, two at 64, four at
  // 32; persistent, one CTA per SM.
  KernelShape b128 = shape(true, 128);
  b128.blockSize = 128;
  TuningOptions two;
  two.largeBlockConsumers = 2;
  KernelPlan p = plan(Chip::sm_90a, b128, two);
  EXPECT_EQ(p.largeBlockConsumers, 2);
  EXPECT_EQ(p.numConsumers, 1);
  EXPECT_EQ(p.registers.load, 64);
  EXPECT_EQ(p.registers.compute, 216);
  EXPECT_EQ(p.ctasPerSm, 1);
  EXPECT_EQ(p.tilesPerCta, 0);
  EXPECT_EQ(p.numStages, 1);
  for (auto [headDim, stages] :
       {std::pair<int64_t, int64_t>{96, 1}, {64, 2}, {32, 4}}) {
    KernelShape s = b128;
    s.headDim = headDim;
    EXPECT_EQ(plan(Chip::sm_90a, s, two).numStages, stages) << headDim;
  }
  // The default is two consumers, except the causal kernels at head dim
  // 128 (a 4-byte spill) and where other options ask for one.
  EXPECT_EQ(plan(Chip::sm_90a, b128).largeBlockConsumers, 2);
  KernelShape causal = b128;
  causal.causal = true;
  EXPECT_EQ(plan(Chip::sm_90a, causal).largeBlockConsumers, 0);
  causal.headDim = 64;
  EXPECT_EQ(plan(Chip::sm_90a, causal).largeBlockConsumers, 2);
  TuningOptions one;
  one.largeBlockConsumers = 1;
  EXPECT_EQ(plan(Chip::sm_90a, b128, one).largeBlockConsumers, 0);
  // Refusals: rotary embeddings (each consumer would rotate the shared
  // slot), block size 64, sm_100a, values other than 0-2.
  const char *applies =
      "large-block-consumers=2 applies to the sm_90a backward at block size "
      "128 without rotary embeddings and with one query head per k/v head";
  KernelShape rotary = b128;
  rotary.rotary = RotaryMode::half_split;
  EXPECT_EQ(failure(Chip::sm_90a, rotary, two), applies);
  EXPECT_EQ(failure(Chip::sm_90a, shape(true, 128), two), applies);
  EXPECT_EQ(failure(Chip::sm_100a, b128, two), applies);
  TuningOptions three;
  three.largeBlockConsumers = 3;
  EXPECT_EQ(failure(Chip::sm_90a, b128, three),
            "large-block-consumers must be 0 (the recipe picks), 1 (one "
            "consumer warpgroup a block) or 2 (one a query half), got 3");
  TuningOptions stages = two;
  stages.numStages = 2;
  EXPECT_EQ(failure(Chip::sm_90a, b128, stages),
            "no ring of 2 x 131072 bytes fits in shared memory next to 98304 "
            "bytes of P, dS and staging buffers (large-block-consumers=2)");
}

TEST(Sm90aPlan, LargeBlockBackwardWithTwoRings) {
  // large-block-rings=2: the two-consumer plan, its load slot in two rings
  // ("qk", "vdo") of the same bytes, each as deep as the one ring was (one
  // slot at D = 128 and 96, two at 64, four at 32), the same registers.
  KernelShape b128 = shape(true, 128);
  b128.blockSize = 128;
  TuningOptions rings;
  rings.largeBlockRings = 2;
  KernelPlan p = plan(Chip::sm_90a, b128, rings);
  EXPECT_EQ(p.largeBlockConsumers, 2);
  EXPECT_EQ(p.largeBlockRings, 2);
  EXPECT_EQ(p.numConsumers, 1);
  EXPECT_EQ(p.registers.load, 64);
  EXPECT_EQ(p.registers.compute, 216);
  EXPECT_EQ(p.ctasPerSm, 1);
  EXPECT_EQ(p.numStages, 1);
  for (auto [headDim, stages] :
       {std::pair<int64_t, int64_t>{96, 1}, {64, 2}, {32, 4}}) {
    KernelShape s = b128;
    s.headDim = headDim;
    EXPECT_EQ(plan(Chip::sm_90a, s, rings).numStages, stages) << headDim;
  }
  // The default takes two rings where the ring holds one slot (D = 128, 96)
  // and one elsewhere; 1 keeps one ring; with two consumers asked for too,
  // and for the causal kernels at 128 (one consumer by default), two rings.
  EXPECT_EQ(plan(Chip::sm_90a, b128).largeBlockRings, 2);
  for (auto [headDim, rings] :
       {std::pair<int64_t, int64_t>{96, 2}, {64, 1}, {32, 1}}) {
    KernelShape s = b128;
    s.headDim = headDim;
    EXPECT_EQ(plan(Chip::sm_90a, s).largeBlockRings, rings) << headDim;
  }
  TuningOptions one;
  one.largeBlockRings = 1;
  EXPECT_EQ(plan(Chip::sm_90a, b128, one).largeBlockRings, 1);
  TuningOptions both = rings;
  both.largeBlockConsumers = 2;
  EXPECT_EQ(plan(Chip::sm_90a, b128, both).largeBlockRings, 2);
  KernelShape causal = b128;
  causal.causal = true;
  EXPECT_EQ(plan(Chip::sm_90a, causal, rings).largeBlockConsumers, 2);
  EXPECT_EQ(plan(Chip::sm_90a, causal, rings).largeBlockRings, 2);
  // Refusals: where two consumers do not apply, with one consumer, several
  // consumer replicas or CTAs per SM, a ring too deep, values other than 0-2.
  const char *applies =
      "large-block-rings=2 applies to the sm_90a backward at block size 128 "
      "up to head dim 128, without rotary embeddings and with one query head "
      "per k/v head";
  KernelShape rotary = b128;
  rotary.rotary = RotaryMode::half_split;
  EXPECT_EQ(failure(Chip::sm_90a, rotary, rings), applies);
  EXPECT_EQ(failure(Chip::sm_90a, shape(true, 128), rings), applies);
  EXPECT_EQ(failure(Chip::sm_100a, b128, rings), applies);
  KernelShape wide = b128;
  wide.headDim = 192;
  EXPECT_EQ(failure(Chip::sm_90a, wide, rings), applies);
  KernelShape forward = b128;
  forward.backward = false;
  EXPECT_EQ(failure(Chip::sm_90a, forward, rings), applies);
  TuningOptions oneConsumer = rings;
  oneConsumer.largeBlockConsumers = 1;
  EXPECT_EQ(failure(Chip::sm_90a, b128, oneConsumer),
            "large-block-rings=2 splits the slot of two consumer partitions "
            "(one warpgroup a query half, one CTA per SM), got "
            "large-block-consumers=1, num-consumers=0, ctas-per-sm=0");
  TuningOptions ctas = rings;
  ctas.ctasPerSm = 2;
  EXPECT_EQ(failure(Chip::sm_90a, b128, ctas),
            "large-block-rings=2 splits the slot of two consumer partitions "
            "(one warpgroup a query half, one CTA per SM), got "
            "large-block-consumers=0, num-consumers=0, ctas-per-sm=2");
  TuningOptions deep = rings;
  deep.numStages = 2;
  EXPECT_EQ(failure(Chip::sm_90a, b128, deep),
            "no rings \"qk\" and \"vdo\" of 2 x 131072 bytes together fit "
            "in shared memory next to 98304 bytes of P, dS and staging buffers "
            "(large-block-rings=2)");
  TuningOptions three;
  three.largeBlockRings = 3;
  EXPECT_EQ(failure(Chip::sm_90a, b128, three),
            "large-block-rings must be 0 (the recipe picks), 1 (one load ring) "
            "or 2 (the rings \"qk\" and \"vdo\"), got 3");
}
