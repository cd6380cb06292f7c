//===- BlockAttnEnums.td - blockattn enums and attributes --*- tablegen -*-===//

#ifndef BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNENUMS_TD
#define BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNENUMS_TD

include "blockattn/Dialect/BlockAttn/IR/BlockAttnDialect.td"
include "mlir/IR/EnumAttr.td"

def BlockAttn_RotaryNone : I32EnumAttrCase<"none", 0>;
def BlockAttn_RotaryHalfSplit : I32EnumAttrCase<"half_split", 1>;
def BlockAttn_RotaryInterleaved : I32EnumAttrCase<"interleaved", 2>;

def BlockAttn_RotaryMode : I32EnumAttr<"RotaryMode",
    "rotary position embedding layout",
    [BlockAttn_RotaryNone, BlockAttn_RotaryHalfSplit,
     BlockAttn_RotaryInterleaved]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::blockattn";
  let description = [{
    How rotary position embeddings (RoPE) pair the elements of a head:
    - `none`: no rotation.
    - `half_split` (GPT-NeoX): element `i` pairs with `i + head_dim/2`.
    - `interleaved` (GPT-J): element `2i` pairs with `2i + 1`.
    Pair `i` is rotated by the angle whose cosine and sine are
    `cos[pos, i]` and `sin[pos, i]`, where `pos` is the token's position.
  }];
}

def BlockAttn_RotaryModeAttr
    : EnumAttr<BlockAttn_Dialect, BlockAttn_RotaryMode, "rotary"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNENUMS_TD
