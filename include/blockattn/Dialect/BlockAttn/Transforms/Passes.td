//===- Passes.td - blockattn transforms --------------------*- tablegen -*-===//

#ifndef BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PASSES_TD
#define BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PASSES_TD

include "blockattn/Dialect/BlockAttn/Transforms/PlanEnums.td"
include "blockattn/Dialect/WarpSpec/IR/WarpSpecAttrs.td"
include "mlir/Pass/PassBase.td"

def BlockAttnWarpSpecializePass
    : Pass<"blockattn-warp-specialize", "func::FuncOp"> {
  let summary = "Lower a blockattn kernel to a warp-specialized warpspec.kernel";
  let description = [{
    Replaces the `blockattn.forward` (or `blockattn.backward`) operation of a
    kernel function with a `warpspec.kernel` that implements it on `chip`:
    tiles over (64-token block, head) walked by `warpspec.tile_loop` (a
    persistent or a chunked launch, `schedule`), the partition into warp
    roles, and the channels between them. The plan (launch, ring depths,
    consumers, registers) is decided before any IR is built (Plan.h).

    #### Input invariant
    The function body is one `blockattn` op and a `return`, and the function
    has no results; every memref operand of the op (the rotary tables and
    positions included) and its run-time `scale` are arguments of the
    function (they become the kernel's parameters).

    #### Output IR
    - `sm_90a` (Hopper): a `load` partition (one warpgroup; one thread issues
      TMA) fills a ring (`qkv`, or `qkvdo` for the backward) of `num-stages`
      slots with the tiles of each (block, head) tile; a `compute` partition
      of one warpgroup, replicated `num-consumers` times, takes the slots
      round-robin and runs the whole tile with wgmma: forward S = Q K^T,
      exact softmax, O = P V, O divided by the row sums stored, masked to
      the tile's valid rows; backward dV, dK and dQ, one accumulator at a
      time. With rotary embeddings q and k (and v) are rotated in place in
      the slot, by each replica in its own slot or, with
      `rotary-warpgroup=on`, by a `rotary` warpgroup before the consumers
      take the slot (it signals them through a ring without buffers,
      "rotated"; `rotary-warpgroups=2` replicates it, each replica taking
      every second slot). By default the forward and the backward without
      rotary embeddings, and the half-split rotary backward at head dim 128,
      are launched chunked: one consumer, two CTAs per SM, a CTA per few
      tiles (`schedule`, `ctas-per-sm`, `tiles-per-cta`); the chunked
      backward at head dim 64 also prefetches each tile into L2 before its
      producer waits for a slot (`l2-prefetch`).
    - `sm_100a` (Blackwell): `load`, `mma` (one thread issues tcgen05.mma
      into tensor-memory channels) and a `softmax` partition replicated
      twice (once for the rotary backward at head dim 128), plus a `rotary`
      partition with rotary embeddings; launched persistent by default.
    - The function's arguments get a `blockattn.name` attribute ("q", "k",
      ...) that names them in the launch manifest.

    #### Invariants
    Register budgets, thread counts and the channel protocol satisfy the
    `warpspec.kernel` verifier; shared memory is placed by
    `warpspec-allocate-smem`, tensor memory by `warpspec-allocate-tmem`.
  }];
  let dependentDialects = ["warpspec::WarpSpecDialect", "arith::ArithDialect",
                           "memref::MemRefDialect", "scf::SCFDialect"];
  // blockattn-to-ptx and block-attn-compile take these options too, from
  // this list (blockattn-tblgen -gen-pass-option-list).
  let options = [
    EnumOption<"chip", "chip", WarpSpec_Chip, "sm_90a",
           "Target GPU: sm_90a (Hopper) or sm_100a (Blackwell)">,
    Option<"numStages", "num-stages", "int64_t", /*default=*/"0",
           "Slots of the Q/K/V ring; 0 picks the deepest ring that fits "
           "shared memory (up to 8)">,
    Option<"numConsumers", "num-consumers", "int64_t", /*default=*/"0",
           "sm_90a: consumer warpgroups, each owning whole tiles; 0 picks "
           "1 when CTAs share an SM (a chunked launch's default), for "
           "the persistent backward at head dim 64 without rotary "
           "embeddings (a deeper ring), next to two rotary warpgroups, and "
           "for the rotary backward at head dim 128 and at 64 with tables "
           "and without a positions tensor (next to one rotary warpgroup of "
           "208 registers), else 2 (sm_100a ignores it)">,
    EnumOption<"pOperand", "p-operand", BlockAttn_POperand, "registers",
           "sm_90a: where P = softmax(S) feeds O = P V from: 'registers' "
           "(wgmma with a register A operand) or 'smem' (P staged through a "
           "per-warpgroup shared-memory scratch buffer); sm_100a ignores it">,
    EnumOption<"schedule", "schedule", BlockAttn_Schedule, "automatic",
           "How tiles are dealt to CTAs: 'strided' (a persistent grid, "
           "round-robin), 'contiguous' (a persistent grid, one range each), "
           "'dynamic' (a persistent grid whose CTAs claim their next tile "
           "from a counter in the kernel's 'schedule' argument, a zeroed "
           "i32[2] that the kernel leaves zeroed), "
           "'chunked' (a CTA per tiles-per-cta tiles, handed out in order by "
           "the hardware) or 'auto' (the recipe picks: chunked for the "
           "sm_90a forward and backward without rotary embeddings, and "
           "when tiles-per-cta is given for the half-split rotary forward "
           "at head dim 64 without positions or rotate_v and the rotary "
           "kernels at head dim 128 (block size 64, with a rotary "
           "warpgroup), unless num-consumers asks for more than one; "
           "dynamic for the other sm_90a rotary kernels at head dims 64 "
           "and 128 and block size 64 without grouped-query attention or "
           "causal masking; else strided)">,
    Option<"ctasPerSm", "ctas-per-sm", "int64_t", /*default=*/"0",
           "sm_90a: CTAs sharing an SM, which divides its registers and "
           "shared memory among them; 0 picks 2 for a chunked launch "
           "(1 for the rotary kernels at head dim 128), else 1 (sm_100a: 0 "
           "or 1)">,
    Option<"tilesPerCta", "tiles-per-cta", "int64_t", /*default=*/"0",
           "Tiles per CTA of a chunked launch; 0 picks about 192 KiB of "
           "loads per CTA (forward: 4 tiles at head dim 128, 8 at 64; "
           "backward: 3 and 6; 16 for the rotary kernels at head dim 128, "
           "which launch chunked only when it or schedule=chunked asks)">,
    EnumOption<"oStore", "o-store", BlockAttn_OStore, "automatic",
           "How output tiles leave the registers: 'tma' (staged in a "
           "per-warpgroup buffer; full tiles leave with a bulk tensor store, "
           "partial ones as below), 'smem' (staged, then stored by the "
           "threads in whole 128-byte row segments), on sm_90a only "
           "'registers' (each thread stores its accumulator fragment), on "
           "the sm_90a backward at blocks of up to 64 tokens and head dims up "
           "to 128 "
           "'slot' (dV and dK staged in the tile's own ring slot, in v's and "
           "q's buffers, free once their last products have read them, and "
           "stored from there in bulk; the slot's release waits for those "
           "stores; dQ as 'tma'), or "
           "'auto' (the recipe picks: smem for the sm_90a rotary forward at "
           "head dim 128 and block size 64 without rotate_v, and for the "
           "rotary backward there except interleaved with rotate_v and no "
           "positions; else tma)">,
    EnumOption<"l2Prefetch", "l2-prefetch", BlockAttn_L2Prefetch, "automatic",
           "Whether the producer prefetches each tile into L2 before it "
           "waits for a free slot (warpspec.acquire {l2_prefetch}): 'on', "
           "'off', or 'auto' (the recipe picks: on for the sm_90a backward "
           "without rotary embeddings at head dim 64 when it is launched "
           "chunked, off elsewhere)">,
    EnumOption<"softmaxFullTiles", "softmax-full-tiles",
           BlockAttn_SoftmaxFullTiles, "automatic",
           "Whether each softmax without causal or packed-block masks "
           "branches on a full tile (every key and query valid) to a copy "
           "without the column and row masks' compares and selects "
           "(warpspec.softmax {full_tile_path}): 'on', 'off', or 'auto' "
           "(the recipe picks: off everywhere, until a GPU has timed it; "
           "docs/performance-notes.md)">,
    EnumOption<"stmatrixWrites", "stmatrix-writes",
           BlockAttn_StmatrixWrites, "automatic",
           "Whether the 16-bit register tiles written to shared memory (P "
           "and dS for the products that read them there, and the outputs "
           "staged for their stores) go with stmatrix.x4, 16 bytes a thread "
           "an instruction, instead of a 4-byte st.shared a pair "
           "(warpspec.write / warpspec.store {stmatrix}): 'on', 'off', or "
           "'auto' (the recipe picks: off everywhere, until a GPU has timed "
           "it; docs/performance-notes.md)">,
    EnumOption<"rotaryWarpgroup", "rotary-warpgroup",
           BlockAttn_RotaryWarpgroup, "automatic",
           "sm_90a kernels with rotary embeddings and one CTA per SM, or two "
           "at head dim 64 (others ignore it): 'on' adds a "
           "rotary warpgroup that rotates each slot of the load ring in place "
           "before the consumers take it (they wait on the signal ring "
           "\"rotated\"), 'off' has each consumer rotate its own slot, "
           "'auto' (the recipe picks: on at head dims 64 and 128 with blocks "
           "of up to 64 tokens, off elsewhere); "
           "sm_100a always has a rotary warpgroup">,
    Option<"rotaryWarpgroups", "rotary-warpgroups", "int64_t",
           /*default=*/"0",
           "sm_90a, with a rotary warpgroup: how many, 1 or 2 (replicas that "
           "take the load ring's slots in turn); 2 takes one consumer "
           "warpgroup (two rotary, two consumers and the producer would "
           "leave the consumers 160 registers); 0 picks 2 for the forward at "
           "head dim 128 (with one consumer) and, launched persistent, for "
           "the half-split forwards and those with positions at 64, else "
           "1; two CTAs an SM take 1">,
    EnumOption<"positionsLoad", "positions-load", BlockAttn_PositionsLoad,
           "automatic",
           "sm_90a rotary kernels with a positions tensor and a rotary "
           "warpgroup at block size 64: who reads each tile's positions: "
           "'producer' (the load warpgroup copies them into the tile's slot "
           "with cp.async, completing on the slot's full barrier; the rotary "
           "warpgroup and the consumers read them from shared memory, 256 "
           "bytes a slot), 'readers' (each warpgroup that needs them reads "
           "the tensor itself, a global read before its table reads) or "
           "'auto' (the recipe picks: producer for the backward at head dim "
           "128 and with rotate_v, from tables; else readers)">,
    EnumOption<"rotaryAngles", "rotary-angles", BlockAttn_RotaryAngles,
           "automatic",
           "sm_90a rotary backward at block size 64: when a consumer reads "
           "the angles that turn its gradients (dk, dq, and dv with rotate_v) "
           "back: 'per-product' (before each product, held through it), "
           "'per-tile' (once, as the tile arrives, held through the whole "
           "tile: 64 registers at head dim 128, for a consumer of 256; refused "
           "above 128, where each group of column chunks reads its own), "
           "'after-softmax' (once, after the tile's softmax, held through "
           "the gradients; a positions tensor is read as the tile arrives; "
           "refused above 128 as per-tile) or 'auto' (the recipe picks: "
           "after-softmax at head dim 64 with a positions tensor and tables "
           "without rotate_v, per-tile elsewhere where a rotary warpgroup "
           "rotates the slots at head dim 64, and at 128 with one consumer; "
           "else per-product)">,
    Option<"slotParts", "slot-parts", "int64_t", /*default=*/"0",
           "sm_90a backward above head dim 128 without rotary embeddings: "
           "the load ring's slot in parts of the head dimension, each its "
           "own ring, released separately: 1 (whole tiles, one ring) or 2 "
           "(a ring of the low columns, two slots deep, and one of the high "
           "columns, released first, so that the next tile's loads overlap "
           "this tile's products; docs/head-dims.md); 0 picks 2 where it "
           "applies, unless num-consumers, ctas-per-sm, num-stages or "
           "l2-prefetch=on ask for what it does not have">,
    Option<"largeBlockConsumers", "large-block-consumers", "int64_t",
           /*default=*/"0",
           "sm_90a backward at block size 128 without rotary embeddings and "
           "with one query head per k/v head: 1 (one consumer warpgroup "
           "runs the whole block), 2 (one consumer warpgroup per 64-row query "
           "half, both reading the block's slot; they hand each other their "
           "halves' P and dS through two one-slot rings, and consumer j makes "
           "key half j's dV and dK; docs/block-sizes.md) or 0 (the recipe "
           "picks: 2 where it applies, unless num-consumers, ctas-per-sm or "
           "num-stages ask for what it does not have, and except the causal "
           "kernels at head dim 128; else 1)">,
    Option<"largeBlockRings", "large-block-rings", "int64_t",
           /*default=*/"0",
           "sm_90a backward at block size 128 with two consumers (one per "
           "query half; large-block-consumers 0 or 2): the rings a block's "
           "tiles are loaded into: 1 (one ring: q's halves, k, v and dO's "
           "halves in one slot, released after both consumers' dK) or 2 (two "
           "rings: \"qk\", q's halves and k, released after both consumers' "
           "dK, and \"vdo\", v and dO's halves, released after their dV; "
           "each consumer makes dK before dV, so that the next block's q and "
           "k load during this block's dV and stores, and its v and dO "
           "during the next block's S and softmax; docs/block-sizes.md); 0 "
           "picks 2 where the ring holds one slot (head dims 96 and 128) "
           "and num-stages is 0, else 1; 2 asks for the two consumers where "
           "the recipe would pick one">,
    Option<"stagingBuffers", "staging-buffers", "int64_t", /*default=*/"0",
           "sm_90a backward with half-depth slots and o-store=tma: output "
           "staging buffers the gradients' column chunks alternate between: "
           "1 (one: each chunk's store waits for the previous bulk store to "
           "have read it) or 2 (two, 8 KiB more: it waits for the store "
           "before last; docs/head-dims.md); 0 picks 1">,
    EnumOption<"groupRoles", "group-roles", BlockAttn_GroupRoles, "automatic",
           "sm_90a grouped-query backward at head dims 64 and 128 (others "
           "ignore it): 'serial' (one consumer warpgroup computes each query "
           "head's S, softmax, dP, dS, dV, dK and dQ in turn) or 'pipelined' "
           "(a 'scores' warpgroup computes S, P, dP, dS and dQ and hands P "
           "and dS through a two-slot shared-memory ring \"pds\" to an "
           "'accumulate' warpgroup that holds dV and dK for the group, so "
           "that one head's accumulation overlaps the next head's scores; "
           "one CTA per SM unless ctas-per-sm says 2) or 'pipelined-dq' (the "
           "same, with dQ = dS K made and stored by the accumulate warpgroup "
           "from the \"pds\" slot: two products on each side) or 'auto' (the "
           "recipe picks: at head dim 128 'pipelined-dq', except for groups "
           "of 2, not timed since their spill was removed; else 'serial'); "
           "at block size 128 only 'auto' (a scores warpgroup and an "
           "accumulate warpgroup per key half) or 'query-halves' (two "
           "consumer warpgroups, one per 64-row query half, that hand each "
           "other P and dS through the rings \"pds0\" and \"pds1\" and each "
           "hold one key half's dV and dK over the group; no rotary "
           "embeddings; docs/pipeline.md)">,
  ];
}

#endif // BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PASSES_TD
