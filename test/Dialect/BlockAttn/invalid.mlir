// RUN: block-attn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of blockattn.forward and blockattn.backward: the
// ODS constraints (required and typed attributes, operand kinds) and every
// message of the verifiers in lib/Dialect/BlockAttn/IR/BlockAttnOps.cpp, for
// both ops where the operands are named differently (o vs do/dq/dk/dv).

// head_dim is a required attribute.
func.func @negative_forward_missing_head_dim(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op requires attribute 'head_dim'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16}
  return
}

// -----

// head_dim is a required attribute of the backward too.
func.func @negative_backward_missing_head_dim(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op requires attribute 'head_dim'}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16}
  return
}

// -----

// element_type is a required attribute.
func.func @negative_forward_missing_element_type(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op requires attribute 'element_type'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64}
  return
}

// -----

// The run-time scale must be a float (the verifier then requires f32).
func.func @negative_forward_scale_integer(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %scale: i32) {
  // expected-error @below {{'blockattn.forward' op operand #5 must be floating-point, but got 'i32'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) scale(%scale : i32)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// Activations are memrefs; a tensor fails the operand type constraint.
!bf = memref<?x4x128xbf16>
func.func @negative_forward_tensor_operand(%a: !bf, %t: tensor<?x4x128xbf16>,
                                           %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand #0 must be memref of any type values, but got 'tensor<?x4x128xbf16>'}}
  "blockattn.forward"(%t, %a, %a, %a, %cu)
      <{element_type = bf16, head_dim = 128 : i64,
        operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>}>
      : (tensor<?x4x128xbf16>, !bf, !bf, !bf, memref<?xi32>) -> ()
  return
}

// -----

// The operand segment sizes must add up to the number of operands.
!bf = memref<?x4x128xbf16>
func.func @negative_backward_segment_sizes(%a: !bf, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op operand count (8) does not match with the total size (9) specified in attribute 'operandSegmentSizes'}}
  "blockattn.backward"(%a, %a, %a, %a, %a, %a, %a, %cu)
      <{element_type = bf16, head_dim = 128 : i64,
        operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}>
      : (!bf, !bf, !bf, !bf, !bf, !bf, !bf, memref<?xi32>) -> ()
  return
}

// -----

// head_dim must be an i64 attribute, not i32.
func.func @negative_forward_head_dim_i32(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
  // expected-error @below {{'blockattn.forward' op attribute 'head_dim' failed to satisfy constraint: 64-bit signless integer attribute}}
      {head_dim = 128 : i32, element_type = bf16}
  return
}

// -----

// block_size must be an i64 attribute, not a string.
func.func @negative_backward_block_size_string(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
  // expected-error @below {{'blockattn.backward' op attribute 'block_size' failed to satisfy constraint: 64-bit signless integer attribute}}
      {block_size = "64", head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// element_type must be a type, not an integer.
func.func @negative_forward_element_type_not_a_type(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
  // expected-error @below {{'blockattn.forward' op attribute 'element_type' failed to satisfy constraint: any type attribute}}
      {head_dim = 128 : i64, element_type = 16 : i64}
  return
}

// -----

// softmax_scale must be an f32 attribute, not f64.
func.func @negative_forward_softmax_scale_f64(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
  // expected-error @below {{'blockattn.forward' op attribute 'softmax_scale' failed to satisfy constraint: 32-bit float attribute}}
      {head_dim = 128 : i64, element_type = bf16, softmax_scale = 0.125 : f64}
  return
}

// -----

// rotary_theta must be an f32 attribute, not an integer.
func.func @negative_backward_rotary_theta_integer(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
  // expected-error @below {{'blockattn.backward' op attribute 'rotary_theta' failed to satisfy constraint: 32-bit float attribute}}
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>, rotary_theta = 10000 : i64}
  return
}

// -----

// rotary must be a #blockattn.rotary attribute, not an integer.
func.func @negative_forward_rotary_integer(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
  // expected-error @below {{'blockattn.forward' op attribute 'rotary' failed to satisfy constraint: rotary position embedding layout}}
      {head_dim = 128 : i64, element_type = bf16, rotary = 1 : i32}
  return
}

// -----

// rotate_v is a unit attribute, not a bool.
func.func @negative_forward_rotate_v_bool(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
  // expected-error @below {{'blockattn.forward' op attribute 'rotate_v' failed to satisfy constraint: unit attribute}}
      {head_dim = 128 : i64, element_type = bf16, rotate_v = true}
  return
}

// -----

// o is an unranked memref.
func.func @negative_forward_o_unranked(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<*xbf16>, %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
  // expected-error @below {{custom op 'blockattn.forward' invalid kind of type specified: expected builtin.memref, but found 'memref<*xbf16>'}}
      v(%v : memref<?x4x128xbf16>) o(%o : memref<*xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// dq is an unranked memref.
func.func @negative_backward_dq_unranked(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>, %dq: memref<*xbf16>,
    %dk: memref<?x4x128xbf16>, %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
  // expected-error @below {{custom op 'blockattn.backward' invalid kind of type specified: expected builtin.memref, but found 'memref<*xbf16>'}}
      dq(%dq : memref<*xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// cu_seqlens is an unranked memref.
func.func @negative_backward_cu_seqlens_unranked(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<*xi32>) {
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
  // expected-error @below {{custom op 'blockattn.backward' invalid kind of type specified: expected builtin.memref, but found 'memref<*xi32>'}}
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<*xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// The sin table is an unranked memref (an optional operand).
func.func @negative_backward_sin_table_unranked(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>, %cos: memref<?x64xf32>,
    %sin: memref<*xf32>) {
  // expected-error @below {{'blockattn.backward' op operand #9 must be memref of any type values, but got 'memref<*xf32>'}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x64xf32>, memref<*xf32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// -----

// positions are an unranked memref (an optional operand).
func.func @negative_backward_positions_unranked(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>, %pos: memref<*xi32>) {
  // expected-error @below {{'blockattn.backward' op operand #8 must be memref of any type values, but got 'memref<*xi32>'}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      positions(%pos : memref<*xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>, rotary_theta = 10000.0 : f32}
  return
}

// -----

// Blocks of 16, 32, 64 or 128 tokens only.
func.func @negative_forward_block_size_256(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op unsupported block_size 256; supported block sizes: 16, 32, 64, 128}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 256 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// Block sizes below 64 are powers of two that divide the 64-row tile: not
// 48 (backward).
func.func @negative_backward_block_size_48(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op unsupported block_size 48; supported block sizes: 16, 32, 64, 128}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {block_size = 48 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// Blocks of 8 tokens are not supported (forward): the accumulator layouts
// hold 8-column groups, and no user asked for them.
func.func @negative_forward_block_size_8(
    %q: memref<?x4x64xbf16>, %k: memref<?x4x64xbf16>, %v: memref<?x4x64xbf16>,
    %o: memref<?x4x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op unsupported block_size 8; supported block sizes: 16, 32, 64}}
  blockattn.forward q(%q : memref<?x4x64xbf16>) k(%k : memref<?x4x64xbf16>)
      v(%v : memref<?x4x64xbf16>) o(%o : memref<?x4x64xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 8 : i64, head_dim = 64 : i64, element_type = bf16}
  return
}

// -----

// head_dim 80 is not supported, even when the operands agree (not a whole
// number of 32-column chunks).
func.func @negative_forward_head_dim_80(
    %q: memref<?x4x80xbf16>, %k: memref<?x4x80xbf16>, %v: memref<?x4x80xbf16>,
    %o: memref<?x4x80xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op unsupported head_dim 80; supported head dims: 32, 64, 96, 128, 192, 256}}
  blockattn.forward q(%q : memref<?x4x80xbf16>) k(%k : memref<?x4x80xbf16>)
      v(%v : memref<?x4x80xbf16>) o(%o : memref<?x4x80xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 80 : i64, element_type = bf16}
  return
}

// -----

// head_dim 512 is not supported (backward).
func.func @negative_backward_head_dim_512(
    %q: memref<?x4x512xbf16>, %k: memref<?x4x512xbf16>,
    %v: memref<?x4x512xbf16>, %do: memref<?x4x512xbf16>,
    %dq: memref<?x4x512xbf16>, %dk: memref<?x4x512xbf16>,
    %dv: memref<?x4x512xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op unsupported head_dim 512; supported head dims: 32, 64, 96, 128, 192, 256}}
  blockattn.backward q(%q : memref<?x4x512xbf16>) k(%k : memref<?x4x512xbf16>)
      v(%v : memref<?x4x512xbf16>) do(%do : memref<?x4x512xbf16>)
      dq(%dq : memref<?x4x512xbf16>) dk(%dk : memref<?x4x512xbf16>)
      dv(%dv : memref<?x4x512xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 512 : i64, element_type = bf16}
  return
}

// -----

// f32 activations are not supported: bf16 and f16 only.
func.func @negative_forward_element_type_f32(
    %q: memref<?x4x128xf32>, %k: memref<?x4x128xf32>, %v: memref<?x4x128xf32>,
    %o: memref<?x4x128xf32>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op unsupported element_type 'f32'; supported element types: bf16, f16}}
  blockattn.forward q(%q : memref<?x4x128xf32>) k(%k : memref<?x4x128xf32>)
      v(%v : memref<?x4x128xf32>) o(%o : memref<?x4x128xf32>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = f32}
  return
}

// -----

// fp8 activations are not supported (backward).
func.func @negative_backward_element_type_f8(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op unsupported element_type 'f8E4M3FN'; supported element types: bf16, f16}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = f8E4M3FN}
  return
}

// -----

// q is missing the heads dimension.
func.func @negative_forward_q_rank_2(
    %q: memref<?x128xbf16>, %k: memref<?x4x128xbf16>, %v: memref<?x4x128xbf16>,
    %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'q' must be a rank-3 memref [tokens, heads, head_dim], got 'memref<?x128xbf16>'}}
  blockattn.forward q(%q : memref<?x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// dv is missing the heads dimension.
func.func @negative_backward_dv_rank_2(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op operand 'dv' must be a rank-3 memref [tokens, heads, head_dim], got 'memref<?x128xbf16>'}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// do has an extra dimension (named `do`, not `dout`, in the message).
func.func @negative_backward_do_rank_4(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x2x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op operand 'do' must be a rank-3 memref [tokens, heads, head_dim], got 'memref<?x4x2x128xbf16>'}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x2x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// k is f16 but the kernel is bf16.
func.func @negative_forward_k_element_type(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xf16>, %v: memref<?x4x128xbf16>,
    %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'k' has element type 'f16', but element_type is 'bf16'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// v is f16 but the kernel is bf16.
func.func @negative_forward_v_element_type(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>, %v: memref<?x4x128xf16>,
    %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'v' has element type 'f16', but element_type is 'bf16'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// o is f32 (an f32 output is not supported).
func.func @negative_forward_o_element_type(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xf32>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'o' has element type 'f32', but element_type is 'bf16'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xf32>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// All activations are f16 but element_type says bf16.
func.func @negative_forward_element_type_attr_mismatch(
    %q: memref<?x4x128xf16>, %k: memref<?x4x128xf16>, %v: memref<?x4x128xf16>,
    %o: memref<?x4x128xf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'q' has element type 'f16', but element_type is 'bf16'}}
  blockattn.forward q(%q : memref<?x4x128xf16>) k(%k : memref<?x4x128xf16>)
      v(%v : memref<?x4x128xf16>) o(%o : memref<?x4x128xf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// do is f16 but the kernel is bf16.
func.func @negative_backward_do_element_type(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op operand 'do' has element type 'f16', but element_type is 'bf16'}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// dk is f32: gradients have the activations' type.
func.func @negative_backward_dk_element_type(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xf32>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op operand 'dk' has element type 'f32', but element_type is 'bf16'}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xf32>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// The head dimension must be static.
func.func @negative_forward_q_dynamic_head_dim(
    %q: memref<?x4x?xbf16>, %k: memref<?x4x128xbf16>, %v: memref<?x4x128xbf16>,
    %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'q' must have a static head dimension (128)}}
  blockattn.forward q(%q : memref<?x4x?xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// The head dimension of dv must be static.
func.func @negative_backward_dv_dynamic_head_dim(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x?xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op operand 'dv' must have a static head dimension (128)}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x?xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// v has head_dim 64 but the kernel is 128.
func.func @negative_forward_v_head_dim_mismatch(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>, %v: memref<?x4x64xbf16>,
    %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'v' has head dimension 64, but head_dim is 128}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x64xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// dq has head_dim 64 but the kernel is 128.
func.func @negative_backward_dq_head_dim_mismatch(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x64xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op operand 'dq' has head dimension 64, but head_dim is 128}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x64xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// All activations have head_dim 64 but the attribute says 128.
func.func @negative_forward_head_dim_attr_mismatch(
    %q: memref<?x4x64xbf16>, %k: memref<?x4x64xbf16>, %v: memref<?x4x64xbf16>,
    %o: memref<?x4x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'q' has head dimension 64, but head_dim is 128}}
  blockattn.forward q(%q : memref<?x4x64xbf16>) k(%k : memref<?x4x64xbf16>)
      v(%v : memref<?x4x64xbf16>) o(%o : memref<?x4x64xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// k's head_dim dimension has stride 2.
func.func @negative_forward_k_non_unit_stride(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16, strided<[1024, 256, 2]>>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'k' must have a unit-stride head_dim dimension}}
  blockattn.forward q(%q : memref<?x4x128xbf16>)
      k(%k : memref<?x4x128xbf16, strided<[1024, 256, 2]>>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// o's innermost stride is dynamic, so it may not be 1.
func.func @negative_forward_o_dynamic_inner_stride(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16, strided<[?, ?, ?]>>,
    %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'o' must have a unit-stride head_dim dimension}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>)
      o(%o : memref<?x4x128xbf16, strided<[?, ?, ?]>>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// q's layout is a permutation: heads are innermost.
func.func @negative_forward_q_permuted_layout(
    %q: memref<?x4x128xbf16, affine_map<(d0, d1, d2) -> (d0, d2, d1)>>,
    %k: memref<?x4x128xbf16>, %v: memref<?x4x128xbf16>,
    %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'q' must have a unit-stride head_dim dimension}}
  blockattn.forward q(%q : memref<?x4x128xbf16, affine_map<(d0, d1, d2) -> (d0, d2, d1)>>)
      k(%k : memref<?x4x128xbf16>) v(%v : memref<?x4x128xbf16>)
      o(%o : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// dk's head_dim dimension has stride 2.
func.func @negative_backward_dk_non_unit_stride(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>,
    %dk: memref<?x4x128xbf16, strided<[1024, 256, 2]>>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op operand 'dk' must have a unit-stride head_dim dimension}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>)
      dk(%dk : memref<?x4x128xbf16, strided<[1024, 256, 2]>>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// q has 256 tokens, o 128.
func.func @negative_forward_tokens_differ(
    %q: memref<256x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<128x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'o' has shape [128, 4, 128] but 'q' has shape [256, 4, 128]: tokens differ}}
  blockattn.forward q(%q : memref<256x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<128x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// k has 8 heads, q 4; dynamic sizes print as '?'.
func.func @negative_forward_heads_differ(
    %q: memref<?x4x128xbf16>, %k: memref<?x8x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'k' has shape [?, 8, 128] but 'q' has shape [?, 4, 128]: heads differ}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x8x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// q's token count is dynamic; k and v are static and disagree with each other.
func.func @negative_forward_tokens_differ_behind_dynamic(
    %q: memref<?x4x128xbf16>, %k: memref<128x4x128xbf16>,
    %v: memref<256x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op operand 'v' has shape [256, 4, 128] but 'k' has shape [128, 4, 128]: tokens differ}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<128x4x128xbf16>)
      v(%v : memref<256x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// do has 64 tokens, q 128.
func.func @negative_backward_do_tokens_differ(
    %q: memref<128x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<64x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op operand 'do' has shape [64, 4, 128] but 'q' has shape [128, 4, 128]: tokens differ}}
  blockattn.backward q(%q : memref<128x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<64x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// dv has 2 heads, q 4.
func.func @negative_backward_dv_heads_differ(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x2x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op operand 'dv' has shape [?, 2, 128] but 'q' has shape [?, 4, 128]: heads differ}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x2x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// Only dq and dk have static head counts, and they disagree.
func.func @negative_backward_heads_differ_behind_dynamic(
    %q: memref<?x?x128xbf16>, %k: memref<?x?x128xbf16>,
    %v: memref<?x?x128xbf16>, %do: memref<?x?x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x2x128xbf16>,
    %dv: memref<?x?x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op operand 'dk' has shape [?, 2, 128] but 'dq' has shape [?, 4, 128]: heads differ}}
  blockattn.backward q(%q : memref<?x?x128xbf16>) k(%k : memref<?x?x128xbf16>)
      v(%v : memref<?x?x128xbf16>) do(%do : memref<?x?x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x2x128xbf16>)
      dv(%dv : memref<?x?x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// cu_seqlens is one-dimensional.
func.func @negative_forward_cu_seqlens_rank_2(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?x2xi32>) {
  // expected-error @below {{'blockattn.forward' op cu_seqlens must be a rank-1 memref [num_sequences + 1], got 'memref<?x2xi32>'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?x2xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// cu_seqlens holds i32 offsets, not i64.
func.func @negative_forward_cu_seqlens_i64(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi64>) {
  // expected-error @below {{'blockattn.forward' op cu_seqlens must have i32 elements, got 'i64'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi64>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// cu_seqlens is signless i32, not ui32.
func.func @negative_backward_cu_seqlens_ui32(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xui32>) {
  // expected-error @below {{'blockattn.backward' op cu_seqlens must have i32 elements, got 'ui32'}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xui32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// The run-time scale is f32.
func.func @negative_forward_scale_bf16(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %scale: bf16) {
  // expected-error @below {{'blockattn.forward' op scale operand must be f32, got 'bf16'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) scale(%scale : bf16)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// The run-time scale is f32 (backward).
func.func @negative_backward_scale_f64(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>, %scale: f64) {
  // expected-error @below {{'blockattn.backward' op scale operand must be f32, got 'f64'}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      scale(%scale : f64)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// A run-time scale and softmax_scale together.
func.func @negative_forward_scale_and_softmax_scale(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %scale: f32) {
  // expected-error @below {{'blockattn.forward' op the softmax_scale attribute and the scale operand are mutually exclusive}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) scale(%scale : f32)
      {head_dim = 128 : i64, element_type = bf16, softmax_scale = 0.125 : f32}
  return
}

// -----

// A run-time scale and softmax_scale together (backward).
func.func @negative_backward_scale_and_softmax_scale(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>, %scale: f32) {
  // expected-error @below {{'blockattn.backward' op the softmax_scale attribute and the scale operand are mutually exclusive}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      scale(%scale : f32)
      {head_dim = 128 : i64, element_type = bf16, softmax_scale = 0.125 : f32}
  return
}

// -----

// softmax_scale must be positive.
func.func @negative_forward_softmax_scale_negative(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op softmax_scale must be finite and positive, got -1.250000e-01}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16, softmax_scale = -0.125 : f32}
  return
}

// -----

// softmax_scale must not be zero.
func.func @negative_forward_softmax_scale_zero(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op softmax_scale must be finite and positive, got 0.000000e+00}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16, softmax_scale = 0.0 : f32}
  return
}

// -----

// softmax_scale must be finite (+inf as hex).
func.func @negative_backward_softmax_scale_inf(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op softmax_scale must be finite and positive, got INF}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       softmax_scale = 0x7F800000 : f32}
  return
}

// -----

// softmax_scale must not be NaN.
func.func @negative_forward_softmax_scale_nan(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op softmax_scale must be finite and positive, got nan}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       softmax_scale = 0x7FC00000 : f32}
  return
}

// -----

// A cos table without a sin table (only the generic form can say this).
!bf = memref<?x4x128xbf16>
func.func @negative_forward_rotary_cos_only(%a: !bf, %cu: memref<?xi32>,
                                            %cos: memref<?x64xf32>) {
  // expected-error @below {{'blockattn.forward' op rotary cos and sin tables must be given together}}
  "blockattn.forward"(%a, %a, %a, %a, %cu, %cos)
      <{element_type = bf16, head_dim = 128 : i64,
        operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 1, 0, 0, 0>,
        rotary = #blockattn.rotary<half_split>}>
      : (!bf, !bf, !bf, !bf, memref<?xi32>, memref<?x64xf32>) -> ()
  return
}

// -----

// A sin table without a cos table (backward, generic form).
!bf = memref<?x4x128xbf16>
func.func @negative_backward_rotary_sin_only(%a: !bf, %cu: memref<?xi32>,
                                             %sin: memref<?x64xf32>) {
  // expected-error @below {{'blockattn.backward' op rotary cos and sin tables must be given together}}
  "blockattn.backward"(%a, %a, %a, %a, %a, %a, %a, %cu, %sin)
      <{element_type = bf16, head_dim = 128 : i64,
        operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0>,
        rotary = #blockattn.rotary<half_split>}>
      : (!bf, !bf, !bf, !bf, !bf, !bf, !bf, memref<?xi32>, memref<?x64xf32>) -> ()
  return
}

// -----

// Tables are given but rotary defaults to none.
func.func @negative_forward_tables_without_rotary(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %cos: memref<?x64xf32>, %sin: memref<?x64xf32>) {
  // expected-error @below {{'blockattn.forward' op rotary tables are given but the rotary mode is none}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// Tables are given with an explicit rotary = none.
func.func @negative_backward_tables_rotary_none(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>, %cos: memref<?x64xf32>,
    %sin: memref<?x64xf32>) {
  // expected-error @below {{'blockattn.backward' op rotary tables are given but the rotary mode is none}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<none>}
  return
}

// -----

// rotary_theta is given but rotary is none.
func.func @negative_forward_theta_without_rotary(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op rotary_theta is given but the rotary mode is none}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16, rotary_theta = 10000.0 : f32}
  return
}

// -----

// rotary_theta is given but rotary is none (backward).
func.func @negative_backward_theta_without_rotary(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op rotary_theta is given but the rotary mode is none}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16, rotary_theta = 10000.0 : f32}
  return
}

// -----

// positions are given but rotary is none.
func.func @negative_forward_positions_without_rotary(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %pos: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op positions are given but the rotary mode is none}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) positions(%pos : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// positions are given but rotary is none (backward).
func.func @negative_backward_positions_without_rotary(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>, %pos: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op positions are given but the rotary mode is none}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      positions(%pos : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// rotate_v is set but rotary is none.
func.func @negative_forward_rotate_v_without_rotary(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op rotate_v is set but the rotary mode is none}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16, rotate_v}
  return
}

// -----

// rotate_v is set but rotary is none (backward).
func.func @negative_backward_rotate_v_without_rotary(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op rotate_v is set but the rotary mode is none}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16, rotate_v}
  return
}

// -----

// Both tables and rotary_theta: which angles?
func.func @negative_forward_tables_and_theta(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %cos: memref<?x64xf32>, %sin: memref<?x64xf32>) {
  // expected-error @below {{'blockattn.forward' op rotary tables and rotary_theta are mutually exclusive}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>, rotary_theta = 10000.0 : f32}
  return
}

// -----

// Both tables and rotary_theta (backward).
func.func @negative_backward_tables_and_theta(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>, %cos: memref<?x64xf32>,
    %sin: memref<?x64xf32>) {
  // expected-error @below {{'blockattn.backward' op rotary tables and rotary_theta are mutually exclusive}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>, rotary_theta = 10000.0 : f32}
  return
}

// -----

// half_split rotary with neither tables nor rotary_theta.
func.func @negative_forward_half_split_no_angles(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op rotary mode half_split needs rotary(%cos, %sin) tables or a rotary_theta}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// -----

// interleaved rotary with only positions: still no angles.
func.func @negative_backward_interleaved_no_angles(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>, %pos: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op rotary mode interleaved needs rotary(%cos, %sin) tables or a rotary_theta}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      positions(%pos : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<interleaved>}
  return
}

// -----

// rotary_theta = 1 makes every angle zero.
func.func @negative_forward_rotary_theta_one(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op rotary_theta must be finite and greater than 1, got 1.000000e+00}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>, rotary_theta = 1.0 : f32}
  return
}

// -----

// A negative rotary_theta (backward).
func.func @negative_backward_rotary_theta_negative(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op rotary_theta must be finite and greater than 1, got -1.000000e+04}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>, rotary_theta = -10000.0 : f32}
  return
}

// -----

// rotary_theta must be finite.
func.func @negative_forward_rotary_theta_inf(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.forward' op rotary_theta must be finite and greater than 1, got INF}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>, rotary_theta = 0x7F800000 : f32}
  return
}

// -----

// The cos table is f16; tables are f32.
func.func @negative_forward_cos_table_f16(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %cos: memref<?x64xf16>, %sin: memref<?x64xf16>) {
  // expected-error @below {{'blockattn.forward' op rotary cos table must be a contiguous memref<?x64xf32> ([max_position, head_dim/2] of f32), got 'memref<?x64xf16>'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x64xf16>, memref<?x64xf16>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// -----

// The tables have head_dim columns instead of head_dim/2.
func.func @negative_forward_cos_table_full_head_dim(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %cos: memref<?x128xf32>, %sin: memref<?x128xf32>) {
  // expected-error @below {{'blockattn.forward' op rotary cos table must be a contiguous memref<?x64xf32> ([max_position, head_dim/2] of f32), got 'memref<?x128xf32>'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// -----

// The tables' column count must be static.
func.func @negative_forward_cos_table_dynamic_columns(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %cos: memref<?x?xf32>, %sin: memref<?x?xf32>) {
  // expected-error @below {{'blockattn.forward' op rotary cos table must be a contiguous memref<?x64xf32> ([max_position, head_dim/2] of f32), got 'memref<?x?xf32>'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x?xf32>, memref<?x?xf32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// -----

// A flat cos table (backward).
func.func @negative_backward_cos_table_rank_1(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>, %cos: memref<?xf32>,
    %sin: memref<?xf32>) {
  // expected-error @below {{'blockattn.backward' op rotary cos table must be a contiguous memref<?x64xf32> ([max_position, head_dim/2] of f32), got 'memref<?xf32>'}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?xf32>, memref<?xf32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// -----

// The sin table is a strided view, not contiguous.
func.func @negative_forward_sin_table_strided(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %cos: memref<?x64xf32>, %sin: memref<?x64xf32, strided<[128, 1]>>) {
  // expected-error @below {{'blockattn.forward' op rotary sin table must be a contiguous memref<?x64xf32> ([max_position, head_dim/2] of f32), got 'memref<?x64xf32, strided<[128, 1]>>'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x64xf32>, memref<?x64xf32, strided<[128, 1]>>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// -----

// head_dim 64 needs 32 columns; the sin table has 64.
func.func @negative_forward_sin_table_d64(
    %q: memref<?x4x64xf16>, %k: memref<?x4x64xf16>, %v: memref<?x4x64xf16>,
    %o: memref<?x4x64xf16>, %cu: memref<?xi32>, %cos: memref<?x32xf32>,
    %sin: memref<?x64xf32>) {
  // expected-error @below {{'blockattn.forward' op rotary sin table must be a contiguous memref<?x32xf32> ([max_position, head_dim/2] of f32), got 'memref<?x64xf32>'}}
  blockattn.forward q(%q : memref<?x4x64xf16>) k(%k : memref<?x4x64xf16>)
      v(%v : memref<?x4x64xf16>) o(%o : memref<?x4x64xf16>)
      cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x32xf32>, memref<?x64xf32>)
      {head_dim = 64 : i64, element_type = f16,
       rotary = #blockattn.rotary<interleaved>}
  return
}

// -----

// cos and sin tables have different numbers of positions.
func.func @negative_forward_tables_type_differ(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %cos: memref<4096x64xf32>, %sin: memref<?x64xf32>) {
  // expected-error @below {{'blockattn.forward' op rotary cos and sin tables must have the same type, got 'memref<4096x64xf32>' and 'memref<?x64xf32>'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<4096x64xf32>, memref<?x64xf32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// -----

// cos and sin tables have different sizes (backward).
func.func @negative_backward_tables_type_differ(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>, %cos: memref<2048x64xf32>,
    %sin: memref<4096x64xf32>) {
  // expected-error @below {{'blockattn.backward' op rotary cos and sin tables must have the same type, got 'memref<2048x64xf32>' and 'memref<4096x64xf32>'}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<2048x64xf32>, memref<4096x64xf32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// -----

// positions are i32.
func.func @negative_forward_positions_i64(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %pos: memref<?xi64>) {
  // expected-error @below {{'blockattn.forward' op positions must be a rank-1 memref of i32 [tokens], got 'memref<?xi64>'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) positions(%pos : memref<?xi64>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>, rotary_theta = 10000.0 : f32}
  return
}

// -----

// positions are one per token (backward).
func.func @negative_backward_positions_rank_2(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>, %cos: memref<?x64xf32>,
    %sin: memref<?x64xf32>, %pos: memref<?x4xi32>) {
  // expected-error @below {{'blockattn.backward' op positions must be a rank-1 memref of i32 [tokens], got 'memref<?x4xi32>'}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
      positions(%pos : memref<?x4xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}


// -----

// The log-sum-exp is f32 [heads, tokens].
func.func @negative_forward_lse_bf16(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %lse: memref<4x?xbf16>) {
  // expected-error @below {{'blockattn.forward' op operand 'lse' must be an f32 memref [heads, tokens] with a unit-stride token dimension, got 'memref<4x?xbf16>'}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) lse(%lse : memref<4x?xbf16>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// [heads, tokens], not [tokens, heads].
func.func @negative_forward_lse_transposed(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %lse: memref<8x4xf32>) {
  // expected-error @below {{'blockattn.forward' op operand 'lse' has shape [8, 4] but 'q' has shape [?, 4, 128]: 'lse' must be [heads, tokens] of q}}
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) lse(%lse : memref<8x4xf32>)
      {head_dim = 128 : i64, element_type = bf16, causal}
  return
}

// -----

// The token dimension of the log-sum-exp's gradient has unit stride.
func.func @negative_backward_dlse_strided(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>,
    %dlse: memref<4x?xf32, strided<[?, 2]>>) {
  // expected-error @below {{'blockattn.backward' op operand 'dlse' must be an f32 memref [heads, tokens] with a unit-stride token dimension, got 'memref<4x?xf32, strided<[?, 2]>>'}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      dlse(%dlse : memref<4x?xf32, strided<[?, 2]>>)
      {head_dim = 128 : i64, element_type = bf16, causal}
  return
}

// -----

// One value per token and head.
func.func @negative_backward_dlse_rank_1(
    %q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>, %dlse: memref<?xf32>) {
  // expected-error @below {{'blockattn.backward' op operand 'dlse' must be an f32 memref [heads, tokens] with a unit-stride token dimension, got 'memref<?xf32>'}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      dlse(%dlse : memref<?xf32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}
