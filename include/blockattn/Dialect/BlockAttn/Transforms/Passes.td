//===- Passes.td - blockattn transforms --------------------*- tablegen -*-===//

#ifndef BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PASSES_TD
#define BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def BlockAttnWarpSpecializePass
    : Pass<"blockattn-warp-specialize", "func::FuncOp"> {
  let summary = "Lower a blockattn kernel to a warp-specialized warpspec.kernel";
  let description = [{
    Replaces the `blockattn.forward` (or `blockattn.backward`) operation of a
    kernel function with a `warpspec.kernel` that implements it on `chip`:
    tiles over (64-token block, head), the persistent jagged schedule
    (`warpspec.tile_loop`), the partition into warp roles, and the channels
    between them.

    #### Input invariant
    The function body is one `blockattn` op and a `return`; every memref
    operand of the op, and its run-time `scale`, are arguments of the
    function (they become the kernel's parameters).

    #### Output IR
    - `sm_90a` (Hopper), forward: a `load` partition (one warpgroup; one
      thread issues TMA) fills a ring `qkv` of `num-stages` slots with the Q, K
      and V tiles of each (block, head) tile; a `compute` partition of one
      warpgroup, replicated `num-consumers` times, takes the slots
      round-robin: S = Q K^T with wgmma into registers, exact softmax in
      registers, O = P V with P as the register A operand, then O divided by
      the row sums is stored, masked to the tile's valid rows. By default
      the forward and the backward without rotary embeddings, and the
      half-split rotary backward at head dim 128, are launched chunked: one
      consumer, two CTAs per SM, a CTA per few tiles (`schedule`,
      `ctas-per-sm`, `tiles-per-cta`). The chunked backward at head dim 64
      also prefetches each tile into L2 before its producer waits for a
      slot (`l2-prefetch`).
    - The function's arguments get a `blockattn.name` attribute ("q", "k",
      ...) that names them in the launch manifest.

    #### Invariants
    Register budgets, thread counts and the channel protocol satisfy the
    `warpspec.kernel` verifier; shared memory is placed by
    `warpspec-allocate-smem`.
  }];
  let dependentDialects = ["warpspec::WarpSpecDialect", "arith::ArithDialect",
                           "memref::MemRefDialect"];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "Target GPU: sm_90a (Hopper) or sm_100a (Blackwell)">,
    Option<"numStages", "num-stages", "int64_t", /*default=*/"0",
           "Slots of the Q/K/V ring; 0 picks the deepest ring that fits shared memory (up to 8)">,
    Option<"numConsumers", "num-consumers", "int64_t", /*default=*/"0",
           "Hopper: consumer warpgroups, each owning whole tiles; 0 picks "
           "1 for a chunked launch and for the persistent backward at head "
           "dim 64 without rotary embeddings (a deeper ring), else 2">,
    Option<"pOperand", "p-operand", "std::string", /*default=*/"\"registers\"",
           "Hopper: where P = softmax(S) feeds O = P V from: 'registers' "
           "(wgmma with a register A operand) or 'smem' (P staged through a "
           "per-warpgroup shared-memory scratch buffer)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"auto\"",
           "How tiles are dealt to CTAs: 'strided' (a persistent grid, "
           "round-robin), 'contiguous' (a persistent grid, one range each), "
           "'chunked' (a CTA per tiles-per-cta tiles, handed out in order by "
           "the hardware) or 'auto' (the recipe picks: chunked for the "
           "sm_90a forward and backward without rotary embeddings and the "
           "half-split rotary backward at head dim 128, else strided)">,
    Option<"ctasPerSm", "ctas-per-sm", "int64_t", /*default=*/"0",
           "Hopper: CTAs sharing an SM, which divides its registers and "
           "shared memory among them; 0 picks 2 for a chunked launch, "
           "else 1">,
    Option<"tilesPerCta", "tiles-per-cta", "int64_t", /*default=*/"0",
           "Tiles per CTA of a chunked launch; 0 picks about 192 KiB of "
           "loads per CTA (forward: 4 tiles at head dim 128, 8 at 64; "
           "backward: 3 and 6)">,
    Option<"oStore", "o-store", "std::string", /*default=*/"\"tma\"",
           "Hopper: how O leaves the registers: 'tma' (staged in a "
           "per-warpgroup buffer; full tiles leave with a bulk tensor store, "
           "partial ones as below), 'smem' (staged, then stored by the "
           "threads in whole 128-byte row segments) or 'registers' (each "
           "thread stores its accumulator fragment)">,
    Option<"l2Prefetch", "l2-prefetch", "std::string", /*default=*/"\"auto\"",
           "Whether the producer prefetches each tile into L2 before it "
           "waits for a free slot (warpspec.acquire {l2_prefetch}): 'on', "
           "'off', or 'auto' (the recipe picks: on for the sm_90a backward "
           "without rotary embeddings at head dim 64 when it is launched "
           "chunked, off elsewhere)">,
  ];
}

#endif // BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PASSES_TD
