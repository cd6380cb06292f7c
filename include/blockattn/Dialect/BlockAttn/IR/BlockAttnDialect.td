//===- BlockAttnDialect.td - blockattn dialect definition --*- tablegen -*-===//
//
// The blockattn dialect: target-independent description of fixed
// block-diagonal self-attention kernels.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNDIALECT_TD
#define BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def BlockAttn_Dialect : Dialect {
  let name = "blockattn";
  let cppNamespace = "::mlir::blockattn";
  let summary = "Fixed block-diagonal self-attention over jagged sequences";
  let description = [{
    The `blockattn` dialect says *what* a block-diagonal attention kernel
    computes, independent of any GPU: a jagged batch of sequences, packed
    along the token dimension and delimited by `cu_seqlens`, is cut into
    fixed blocks of `block_size` tokens (the last block of a sequence may be
    partial); each token attends only to the tokens of its own block.

    Ops work on memrefs `[tokens, heads, head_dim]`. Compile-time properties
    (block size, head dimension, element type, rotary mode) are attributes;
    the number of tokens, sequences and heads are run-time values, so one
    compiled kernel serves every batch.

    The dialect is the input of the `blockattn-to-ptx` pipeline:
    `blockattn-warp-specialize` lowers it to the `warpspec` dialect.
  }];
  let useDefaultAttributePrinterParser = 1;
}

class BlockAttn_Op<string mnemonic, list<Trait> traits = []>
    : Op<BlockAttn_Dialect, mnemonic, traits>;

#endif // BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNDIALECT_TD
