//===- BlockAttnOps.td - blockattn operations --------------*- tablegen -*-===//
//
// blockattn.forward and blockattn.backward: the two kernels the compiler
// builds. Everything a kernel computes is described here; how it runs on a GPU
// is decided by the passes.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNOPS_TD
#define BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNOPS_TD

include "blockattn/Dialect/BlockAttn/IR/BlockAttnDialect.td"
include "blockattn/Dialect/BlockAttn/IR/BlockAttnEnums.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

// Attributes and optional operands shared by both kernels.
class BlockAttn_AttentionOp<string mnemonic>
    : BlockAttn_Op<mnemonic, [AttrSizedOperandSegments]> {
  code commonAttributesDoc = [{
    Attributes (compile-time properties of the kernel):
    - `block_size` (default 64): tokens per block. Supported: 16, 32, 64,
      and 128 (the forward; not yet with `causal` or the log-sum-exp, and
      on sm_100a not with rotary embeddings). Blocks smaller than the 64-row
      tile share it: a tile holds 64 / `block_size` blocks of one sequence,
      and each query row sees only the keys of its own block; a block of 128
      is one work item whose two 64-row query halves see all of its keys
      (docs/block-sizes.md).
    - `head_dim`: elements per head; must equal the last dimension of every
      activation memref. Supported: 64, 128.
    - `element_type`: element type of every activation memref. Supported:
      `bf16`, `f16`. Accumulation and softmax are always in f32.
    - `softmax_scale` (optional): the constant `scale` in
      `softmax(scale * Q K^T)`; default `1/sqrt(head_dim)`. Mutually exclusive
      with the `scale(...)` operand, which makes the scale a run-time value.
    - `rotary` (default `none`): rotary embedding layout applied to q and k
      (see `#blockattn.rotary`). Needs either the `rotary(%cos, %sin)` tables
      (f32 `[max_position, head_dim/2]`) or `rotary_theta` (angles computed
      in the kernel: pair `i` of position `p` turns by
      `p * rotary_theta^(-2i/head_dim)`). A token's position is its index
      inside its sequence, or `positions[token]` when `positions(...)` is given.
    - `rotate_v` (unit): rotate v as well.
    - `group` (default 1): query heads per k/v head (grouped-query
      attention; multi-query when k and v have one head). q (and o, do, dq)
      have `Hq = group * Hkv` heads, k and v (and dk, dv) `Hkv`; query head
      `h` attends with k/v head `h / group`. Where both head counts are
      static they must agree with `group`.
    - `causal` (unit): causal attention inside each block: token `i` of a
      block attends to tokens `0..i` of its block (scores with `j > i` are
      masked before the softmax, forward and backward).
  }];

  code commonVerifierDecl = [{
    /// The softmax scale the kernel uses when no run-time `scale` is given.
    double getEffectiveSoftmaxScale();
    /// True if the op rotates q and k.
    bool hasRotary() { return getRotary() != RotaryMode::none; }
  }];
}

def BlockAttn_ForwardOp : BlockAttn_AttentionOp<"forward"> {
  let summary = "block-diagonal attention forward: o = softmax(scale q k^T) v per block";
  let description = [{
    The `blockattn.forward` operation computes fixed block-diagonal
    self-attention over a packed jagged batch. Sequence `b` owns token rows
    `[cu_seqlens[b], cu_seqlens[b+1])`; it is cut into blocks of `block_size`
    tokens starting at its first token (the last block may be partial). For
    every block and every head `h`, with `Q`, `K`, `V` the block's rows of
    head `h`:

    ```
    S = scale * Q K^T        (n x n, n = rows in the block)
    P = softmax(S) row-wise  (exact: the whole row is one block)
    O = P V
    ```

    and `O` is written to the block's rows of `o`. Rows of `o` that belong to
    no block (there are none when `cu_seqlens[B] = T`) are not written.
    Nothing else is written unless `lse(%lse)` is given: then the
    log-sum-exp of every query row, `lse[h, t] = log(sum_j exp(S[t, j]))`
    (natural log, f32, over the row's unmasked keys), is written to the
    f32 memref `[H, T]` (unit-stride token dimension) as well.

    Operands: `q`, `k`, `v`, `o` are memrefs `[T, H, head_dim]` (T tokens,
    H heads) with a unit-stride last dimension; `cu_seqlens` is an i32 memref
    `[B+1]` with `cu_seqlens[0] = 0`, non-decreasing, `cu_seqlens[B] = T`.
    Empty sequences are legal and contribute no block.

    }] # commonAttributesDoc # [{

    Example, the seed configuration's forward kernel:

    ```mlir
    func.func @seed_forward(%q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
                            %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>,
                            %cu: memref<?xi32>) {
      blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
          v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
          cu_seqlens(%cu : memref<?xi32>)
          {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64}
      return
    }
    ```
  }];

  let arguments = (ins
    Arg<AnyMemRef, "queries [T, H, D]", [MemRead]>:$q,
    Arg<AnyMemRef, "keys [T, H, D]", [MemRead]>:$k,
    Arg<AnyMemRef, "values [T, H, D]", [MemRead]>:$v,
    Arg<AnyMemRef, "output [T, H, D]", [MemWrite]>:$o,
    Arg<AnyMemRef, "sequence offsets [B+1]", [MemRead]>:$cu_seqlens,
    Optional<AnyFloat>:$scale,
    Arg<Optional<AnyMemRef>, "rotary cosines [P, D/2]", [MemRead]>:$rotary_cos,
    Arg<Optional<AnyMemRef>, "rotary sines [P, D/2]", [MemRead]>:$rotary_sin,
    Arg<Optional<AnyMemRef>, "token positions [T]", [MemRead]>:$positions,
    Arg<Optional<AnyMemRef>, "log-sum-exp [H, T] (f32)", [MemWrite]>:$lse,
    DefaultValuedAttr<I64Attr, "64">:$block_size,
    I64Attr:$head_dim,
    TypeAttr:$element_type,
    OptionalAttr<F32Attr>:$softmax_scale,
    DefaultValuedAttr<BlockAttn_RotaryModeAttr, "RotaryMode::none">:$rotary,
    OptionalAttr<F32Attr>:$rotary_theta,
    UnitAttr:$rotate_v,
    DefaultValuedAttr<I64Attr, "1">:$group,
    UnitAttr:$causal
  );

  let assemblyFormat = [{
    `q` `(` $q `:` type($q) `)`
    `k` `(` $k `:` type($k) `)`
    `v` `(` $v `:` type($v) `)`
    `o` `(` $o `:` type($o) `)`
    `cu_seqlens` `(` $cu_seqlens `:` type($cu_seqlens) `)`
    (`scale` `(` $scale^ `:` type($scale) `)`)?
    (`rotary` `(` $rotary_cos^ `,` $rotary_sin `:` type($rotary_cos) `,` type($rotary_sin) `)`)?
    (`positions` `(` $positions^ `:` type($positions) `)`)?
    (`lse` `(` $lse^ `:` type($lse) `)`)?
    attr-dict
  }];

  let hasVerifier = 1;
  let extraClassDeclaration = commonVerifierDecl;
}

def BlockAttn_BackwardOp : BlockAttn_AttentionOp<"backward"> {
  let summary = "block-diagonal attention backward: dq, dk, dv from q, k, v, do";
  let description = [{
    The `blockattn.backward` operation computes the gradients of
    `blockattn.forward` (same blocks, same attributes) with respect to q, k
    and v, given the gradient `do` of the output. Per block and head:

    ```
    S  = scale * Q K^T,  P = softmax(S)       (recomputed)
    dP = dO V^T
    Di = rowsum(P * dP)                       (= rowsum(dO * O): O is not read)
    dS = P * (dP - Di)
    dV = P^T dO
    dK = scale * dS^T Q
    dQ = scale * dS K
    ```

    It reads q, k, v, do and writes dq, dk, dv, each exactly once per row:
    no forward output, no logsumexp, no preprocessing, no atomics, so the
    result is deterministic.

    With `dlse(%dlse)` (f32 `[H, T]`, unit-stride token dimension: the
    gradient of the forward's log-sum-exp output), its term is added:
    `d lse_i / d S_ij = P_ij`, so `dS = P * (dP - Di + dlse_i)`.

    With rotary embeddings, q and k are rotated in the kernel before S is
    recomputed, and dq, dk are rotated back (the transpose of the rotation)
    in f32 before the single rounding to `element_type`: the gradients are
    with respect to the un-rotated inputs.

    }] # commonAttributesDoc # [{

    Example, the seed configuration's backward with fused half-split rotary:

    ```mlir
    blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
        v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
        dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
        dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
        rotary(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
        {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64,
         rotary = #blockattn.rotary<half_split>}
    ```
  }];

  let arguments = (ins
    Arg<AnyMemRef, "queries [T, H, D]", [MemRead]>:$q,
    Arg<AnyMemRef, "keys [T, H, D]", [MemRead]>:$k,
    Arg<AnyMemRef, "values [T, H, D]", [MemRead]>:$v,
    Arg<AnyMemRef, "output gradient [T, H, D]", [MemRead]>:$dout,
    Arg<AnyMemRef, "query gradient [T, H, D]", [MemWrite]>:$dq,
    Arg<AnyMemRef, "key gradient [T, H, D]", [MemWrite]>:$dk,
    Arg<AnyMemRef, "value gradient [T, H, D]", [MemWrite]>:$dv,
    Arg<AnyMemRef, "sequence offsets [B+1]", [MemRead]>:$cu_seqlens,
    Optional<AnyFloat>:$scale,
    Arg<Optional<AnyMemRef>, "rotary cosines [P, D/2]", [MemRead]>:$rotary_cos,
    Arg<Optional<AnyMemRef>, "rotary sines [P, D/2]", [MemRead]>:$rotary_sin,
    Arg<Optional<AnyMemRef>, "token positions [T]", [MemRead]>:$positions,
    Arg<Optional<AnyMemRef>, "log-sum-exp gradient [H, T] (f32)", [MemRead]>:$dlse,
    DefaultValuedAttr<I64Attr, "64">:$block_size,
    I64Attr:$head_dim,
    TypeAttr:$element_type,
    OptionalAttr<F32Attr>:$softmax_scale,
    DefaultValuedAttr<BlockAttn_RotaryModeAttr, "RotaryMode::none">:$rotary,
    OptionalAttr<F32Attr>:$rotary_theta,
    UnitAttr:$rotate_v,
    DefaultValuedAttr<I64Attr, "1">:$group,
    UnitAttr:$causal
  );

  let assemblyFormat = [{
    `q` `(` $q `:` type($q) `)`
    `k` `(` $k `:` type($k) `)`
    `v` `(` $v `:` type($v) `)`
    `do` `(` $dout `:` type($dout) `)`
    `dq` `(` $dq `:` type($dq) `)`
    `dk` `(` $dk `:` type($dk) `)`
    `dv` `(` $dv `:` type($dv) `)`
    `cu_seqlens` `(` $cu_seqlens `:` type($cu_seqlens) `)`
    (`scale` `(` $scale^ `:` type($scale) `)`)?
    (`rotary` `(` $rotary_cos^ `,` $rotary_sin `:` type($rotary_cos) `,` type($rotary_sin) `)`)?
    (`positions` `(` $positions^ `:` type($positions) `)`)?
    (`dlse` `(` $dlse^ `:` type($dlse) `)`)?
    attr-dict
  }];

  let hasVerifier = 1;
  let extraClassDeclaration = commonVerifierDecl;
}

#endif // BLOCKATTN_DIALECT_BLOCKATTN_IR_BLOCKATTNOPS_TD
