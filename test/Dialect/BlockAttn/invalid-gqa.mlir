// RUN: block-attn-opt %s -split-input-file -verify-diagnostics

// Grouped-query attention's diagnostics (the `group` attribute): q (and o,
// do, dq) have group * Hkv heads where k and v (and dk, dv) have Hkv; each
// side agrees within itself. Dynamic head counts are checked at run time.

// q's heads must be a multiple of k's.
func.func @negative_forward_heads_not_a_multiple(
    %q: memref<?x6x64xbf16>, %k: memref<?x4x64xbf16>,
    %v: memref<?x4x64xbf16>, %o: memref<?x6x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'q' has 6 heads, which is not a multiple of the 4 heads of operand 'k'}}
  blockattn.forward q(%q : memref<?x6x64xbf16>) k(%k : memref<?x4x64xbf16>)
      v(%v : memref<?x4x64xbf16>) o(%o : memref<?x6x64xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 2 : i64}
  return
}

// -----

// The shapes' group must be the attribute's.
func.func @negative_forward_group_mismatch(
    %q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>,
    %v: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'q' has 8 heads and 'k' has 2: a group of 4, but group is 2}}
  blockattn.forward q(%q : memref<?x8x64xbf16>) k(%k : memref<?x2x64xbf16>)
      v(%v : memref<?x2x64xbf16>) o(%o : memref<?x8x64xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 2 : i64}
  return
}

// -----

// Without the attribute (group 1) every activation has q's heads.
func.func @negative_forward_grouped_shapes_without_group(
    %q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>,
    %v: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'k' has shape [?, 2, 64] but 'q' has shape [?, 8, 64]: heads differ}}
  blockattn.forward q(%q : memref<?x8x64xbf16>) k(%k : memref<?x2x64xbf16>)
      v(%v : memref<?x2x64xbf16>) o(%o : memref<?x8x64xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64}
  return
}

// -----

// k and v have the same heads.
func.func @negative_forward_k_v_heads_differ(
    %q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>,
    %v: memref<?x4x64xbf16>, %o: memref<?x8x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'v' has shape [?, 4, 64] but 'k' has shape [?, 2, 64]: heads differ}}
  blockattn.forward q(%q : memref<?x8x64xbf16>) k(%k : memref<?x2x64xbf16>)
      v(%v : memref<?x4x64xbf16>) o(%o : memref<?x8x64xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 4 : i64}
  return
}

// -----

// o has q's heads.
func.func @negative_forward_o_heads(
    %q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>,
    %v: memref<?x2x64xbf16>, %o: memref<?x2x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'o' has shape [?, 2, 64] but 'q' has shape [?, 8, 64]: heads differ}}
  blockattn.forward q(%q : memref<?x8x64xbf16>) k(%k : memref<?x2x64xbf16>)
      v(%v : memref<?x2x64xbf16>) o(%o : memref<?x2x64xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 4 : i64}
  return
}

// -----

// Tokens still agree across both sides.
func.func @negative_forward_grouped_tokens_differ(
    %q: memref<10x8x64xbf16>, %k: memref<12x2x64xbf16>,
    %v: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'k' has shape [12, 2, 64] but 'q' has shape [10, 8, 64]: tokens differ}}
  blockattn.forward q(%q : memref<10x8x64xbf16>) k(%k : memref<12x2x64xbf16>)
      v(%v : memref<?x2x64xbf16>) o(%o : memref<?x8x64xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 4 : i64}
  return
}

// -----

// group is at least 1.
func.func @negative_forward_group_zero(
    %q: memref<?x?x64xbf16>, %k: memref<?x?x64xbf16>,
    %v: memref<?x?x64xbf16>, %o: memref<?x?x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op group must be at least 1, got 0}}
  blockattn.forward q(%q : memref<?x?x64xbf16>) k(%k : memref<?x?x64xbf16>)
      v(%v : memref<?x?x64xbf16>) o(%o : memref<?x?x64xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 0 : i64}
  return
}

// -----

// The backward's gradients: dk and dv on the k/v side, dq and do on q's.
func.func @negative_backward_dk_heads(
    %q: memref<?x4x64xbf16>, %k: memref<?x2x64xbf16>,
    %v: memref<?x2x64xbf16>, %do: memref<?x4x64xbf16>,
    %dq: memref<?x4x64xbf16>, %dk: memref<?x4x64xbf16>,
    %dv: memref<?x2x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op operand 'dk' has shape [?, 4, 64] but 'k' has shape [?, 2, 64]: heads differ}}
  blockattn.backward q(%q : memref<?x4x64xbf16>) k(%k : memref<?x2x64xbf16>)
      v(%v : memref<?x2x64xbf16>) do(%do : memref<?x4x64xbf16>)
      dq(%dq : memref<?x4x64xbf16>) dk(%dk : memref<?x4x64xbf16>)
      dv(%dv : memref<?x2x64xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 2 : i64}
  return
}

// -----

// A valid grouped backward op (blockattn-warp-specialize lowers it, with or
// without rotary embeddings: warp-specialize-gqa.mlir).
func.func @grouped_backward_op_verifies(
    %q: memref<?x4x64xbf16>, %k: memref<?x1x64xbf16>,
    %v: memref<?x1x64xbf16>, %do: memref<?x4x64xbf16>,
    %dq: memref<?x4x64xbf16>, %dk: memref<?x1x64xbf16>,
    %dv: memref<?x1x64xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x4x64xbf16>) k(%k : memref<?x1x64xbf16>)
      v(%v : memref<?x1x64xbf16>) do(%do : memref<?x4x64xbf16>)
      dq(%dq : memref<?x4x64xbf16>) dk(%dk : memref<?x1x64xbf16>)
      dv(%dv : memref<?x1x64xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 4 : i64}
  return
}

// -----

// A valid grouped backward op with rotary embeddings and a positions tensor.
func.func @grouped_rotary_backward_op_verifies(
    %q: memref<?x4x64xbf16>, %k: memref<?x1x64xbf16>,
    %v: memref<?x1x64xbf16>, %do: memref<?x4x64xbf16>,
    %dq: memref<?x4x64xbf16>, %dk: memref<?x1x64xbf16>,
    %dv: memref<?x1x64xbf16>, %cu: memref<?xi32>,
    %cos: memref<?x32xf32>, %sin: memref<?x32xf32>, %pos: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x4x64xbf16>) k(%k : memref<?x1x64xbf16>)
      v(%v : memref<?x1x64xbf16>) do(%do : memref<?x4x64xbf16>)
      dq(%dq : memref<?x4x64xbf16>) dk(%dk : memref<?x1x64xbf16>)
      dv(%dv : memref<?x1x64xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x32xf32>, memref<?x32xf32>)
      positions(%pos : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 4 : i64,
       rotary = #blockattn.rotary<interleaved>, rotate_v}
  return
}
