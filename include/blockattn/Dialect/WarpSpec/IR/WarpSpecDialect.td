//===- WarpSpecDialect.td - warpspec dialect definition ----*- tablegen -*-===//
//
// The warpspec dialect: how one kernel runs on one SM. Warp-specialized
// partitions, typed channels (ring buffers) between them, asynchronous copies
// and matrix multiplies on tiles, and the persistent tile loop.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECDIALECT_TD
#define BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def WarpSpec_Dialect : Dialect {
  let name = "warpspec";
  let cppNamespace = "::mlir::warpspec";
  let summary = "Warp-specialized pipelines: partitions, channels, tiles";
  let description = [{
    The `warpspec` dialect is the pipeline level of the block-attn compiler,
    between the target-independent `blockattn` dialect and NVVM. A
    `warpspec.kernel` is made of:

    - **partitions** (`warpspec.partition`): groups of whole warpgroups that
      play one role (TMA producer, tensor-core consumer, MMA issuer, softmax
      and epilogue, rotary), each with a register budget that the lowering enforces with
      `setmaxnreg`;
    - **channels** (`warpspec.channel`): ring buffers of `depth` slots in
      shared or tensor memory through which one producer partition hands tiles
      to its consumers, with an acquire/commit (producer) and consume/release
      (consumer) protocol. `warpspec-lower-protocol` turns the protocol into
      ring positions carried as SSA values, their slot and phase
      (`warpspec.ring_slot`) and one op per access to a slot's pair of
      mbarriers (full/empty) or its tile record;
    - asynchronous **copies** (`warpspec.tma_load`) and **matrix multiplies**
      (`warpspec.mma`) on tiles, tile math (`warpspec.softmax`) on
      register tiles, and masked stores (`warpspec.store`);
    - the **persistent tile loop** (`warpspec.tile_loop`), which walks the
      (block, head) tiles of a jagged batch without host synchronization.

    The dialect is shared by the Hopper (`sm_90a`) and Blackwell (`sm_100a`)
    targets: only the recipe that `blockattn-warp-specialize` builds and the
    final `convert-warpspec-to-nvvm` step differ.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
}

class WarpSpec_Op<string mnemonic, list<Trait> traits = []>
    : Op<WarpSpec_Dialect, mnemonic, traits>;

#endif // BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECDIALECT_TD
