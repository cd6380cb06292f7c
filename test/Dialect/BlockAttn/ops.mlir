// RUN: block-attn-opt %s | block-attn-opt | FileCheck %s
// RUN: block-attn-opt %s --mlir-print-op-generic | block-attn-opt | FileCheck %s

// Round trip of every form of blockattn.forward and blockattn.backward: both
// element types, both head dims, static and dynamic tokens/heads, strided
// layouts, the run-time scale, softmax_scale, and every rotary variant.

!bf = memref<?x4x128xbf16>
!cu = memref<?xi32>
!tab = memref<?x64xf32>

//===----------------------------------------------------------------------===//
// blockattn.forward
//===----------------------------------------------------------------------===//

// The seed configuration; the default block_size (64) is elided when printed.
// CHECK-LABEL: func.func @forward_bf16_d128
// CHECK: blockattn.forward q(%{{[a-z0-9_]+}} : memref<?x4x128xbf16>) k(%{{[a-z0-9_]+}} : memref<?x4x128xbf16>) v(%{{[a-z0-9_]+}} : memref<?x4x128xbf16>) o(%{{[a-z0-9_]+}} : memref<?x4x128xbf16>) cu_seqlens(%{{[a-z0-9_]+}} : memref<?xi32>) {element_type = bf16, head_dim = 128 : i64}
func.func @forward_bf16_d128(%q: !bf, %k: !bf, %v: !bf, %o: !bf, %cu: !cu) {
  blockattn.forward q(%q : !bf) k(%k : !bf) v(%v : !bf) o(%o : !bf)
      cu_seqlens(%cu : !cu)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

// block_size left out: it defaults to 64 and stays out.
// CHECK-LABEL: func.func @forward_default_block_size
// CHECK: blockattn.forward
// CHECK-SAME: {element_type = bf16, head_dim = 128 : i64}
func.func @forward_default_block_size(%q: !bf, %k: !bf, %v: !bf, %o: !bf,
                                      %cu: !cu) {
  blockattn.forward q(%q : !bf) k(%k : !bf) v(%v : !bf) o(%o : !bf)
      cu_seqlens(%cu : !cu) {head_dim = 128 : i64, element_type = bf16}
  return
}

// f16, head_dim 64, dynamic tokens and heads.
// CHECK-LABEL: func.func @forward_f16_d64_dynamic
// CHECK: blockattn.forward q(%{{[a-z0-9_]+}} : memref<?x?x64xf16>)
// CHECK-SAME: o(%{{[a-z0-9_]+}} : memref<?x?x64xf16>)
// CHECK-SAME: {element_type = f16, head_dim = 64 : i64}
func.func @forward_f16_d64_dynamic(%q: memref<?x?x64xf16>,
                                   %k: memref<?x?x64xf16>,
                                   %v: memref<?x?x64xf16>,
                                   %o: memref<?x?x64xf16>, %cu: !cu) {
  blockattn.forward q(%q : memref<?x?x64xf16>) k(%k : memref<?x?x64xf16>)
      v(%v : memref<?x?x64xf16>) o(%o : memref<?x?x64xf16>)
      cu_seqlens(%cu : !cu) {head_dim = 64 : i64, element_type = f16}
  return
}

// Fully static shapes, mixed with dynamic ones in the same op.
// CHECK-LABEL: func.func @forward_static_shapes
// CHECK: blockattn.forward q(%{{[a-z0-9_]+}} : memref<256x8x64xbf16>)
// CHECK-SAME: v(%{{[a-z0-9_]+}} : memref<?x8x64xbf16>)
// CHECK-SAME: cu_seqlens(%{{[a-z0-9_]+}} : memref<5xi32>)
func.func @forward_static_shapes(%q: memref<256x8x64xbf16>,
                                 %k: memref<256x8x64xbf16>,
                                 %v: memref<?x8x64xbf16>,
                                 %o: memref<256x8x64xbf16>,
                                 %cu: memref<5xi32>) {
  blockattn.forward q(%q : memref<256x8x64xbf16>) k(%k : memref<256x8x64xbf16>)
      v(%v : memref<?x8x64xbf16>) o(%o : memref<256x8x64xbf16>)
      cu_seqlens(%cu : memref<5xi32>) {head_dim = 64 : i64, element_type = bf16}
  return
}

// q, k, v are views into a packed [T, 3, H, D] qkv tensor: strided tokens,
// unit innermost stride; o is contiguous.
// CHECK-LABEL: func.func @forward_strided_qkv
// CHECK: blockattn.forward q(%{{[a-z0-9_]+}} : memref<?x4x128xbf16, strided<[1536, 128, 1]>>)
// CHECK-SAME: k(%{{[a-z0-9_]+}} : memref<?x4x128xbf16, strided<[1536, 128, 1], offset: 512>>)
// CHECK-SAME: v(%{{[a-z0-9_]+}} : memref<?x4x128xbf16, strided<[?, ?, 1], offset: ?>>)
// CHECK-SAME: o(%{{[a-z0-9_]+}} : memref<?x4x128xbf16>)
func.func @forward_strided_qkv(
    %q: memref<?x4x128xbf16, strided<[1536, 128, 1]>>,
    %k: memref<?x4x128xbf16, strided<[1536, 128, 1], offset: 512>>,
    %v: memref<?x4x128xbf16, strided<[?, ?, 1], offset: ?>>,
    %o: !bf, %cu: !cu) {
  blockattn.forward q(%q : memref<?x4x128xbf16, strided<[1536, 128, 1]>>)
      k(%k : memref<?x4x128xbf16, strided<[1536, 128, 1], offset: 512>>)
      v(%v : memref<?x4x128xbf16, strided<[?, ?, 1], offset: ?>>)
      o(%o : !bf) cu_seqlens(%cu : !cu)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// The softmax scale as a run-time f32 operand.
// CHECK-LABEL: func.func @forward_scale_operand
// CHECK: blockattn.forward
// CHECK-SAME: cu_seqlens(%{{[a-z0-9_]+}} : memref<?xi32>) scale(%{{[a-z0-9_]+}} : f32) {element_type
func.func @forward_scale_operand(%q: !bf, %k: !bf, %v: !bf, %o: !bf, %cu: !cu,
                                 %scale: f32) {
  blockattn.forward q(%q : !bf) k(%k : !bf) v(%v : !bf) o(%o : !bf)
      cu_seqlens(%cu : !cu) scale(%scale : f32)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// The softmax scale as a compile-time attribute.
// CHECK-LABEL: func.func @forward_softmax_scale
// CHECK: blockattn.forward
// CHECK-SAME: softmax_scale = 1.250000e-01 : f32
func.func @forward_softmax_scale(%q: !bf, %k: !bf, %v: !bf, %o: !bf,
                                 %cu: !cu) {
  blockattn.forward q(%q : !bf) k(%k : !bf) v(%v : !bf) o(%o : !bf)
      cu_seqlens(%cu : !cu)
      {head_dim = 128 : i64, element_type = bf16, softmax_scale = 0.125 : f32}
  return
}

// Half-split rotary with cos/sin tables.
// CHECK-LABEL: func.func @forward_rotary_half_split_tables
// CHECK: blockattn.forward
// CHECK-SAME: rotary(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : memref<?x64xf32>, memref<?x64xf32>)
// CHECK-SAME: rotary = #blockattn.rotary<half_split>
func.func @forward_rotary_half_split_tables(%q: !bf, %k: !bf, %v: !bf, %o: !bf,
                                            %cu: !cu, %cos: !tab, %sin: !tab) {
  blockattn.forward q(%q : !bf) k(%k : !bf) v(%v : !bf) o(%o : !bf)
      cu_seqlens(%cu : !cu) rotary(%cos, %sin : !tab, !tab)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// Interleaved rotary with static-size tables (head_dim 64: 32 pairs).
// CHECK-LABEL: func.func @forward_rotary_interleaved_tables
// CHECK: blockattn.forward
// CHECK-SAME: rotary(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : memref<4096x32xf32>, memref<4096x32xf32>)
// CHECK-SAME: rotary = #blockattn.rotary<interleaved>
func.func @forward_rotary_interleaved_tables(
    %q: memref<?x2x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>,
    %o: memref<?x2x64xf16>, %cu: !cu, %cos: memref<4096x32xf32>,
    %sin: memref<4096x32xf32>) {
  blockattn.forward q(%q : memref<?x2x64xf16>) k(%k : memref<?x2x64xf16>)
      v(%v : memref<?x2x64xf16>) o(%o : memref<?x2x64xf16>)
      cu_seqlens(%cu : !cu)
      rotary(%cos, %sin : memref<4096x32xf32>, memref<4096x32xf32>)
      {head_dim = 64 : i64, element_type = f16,
       rotary = #blockattn.rotary<interleaved>}
  return
}

// Rotary tables indexed by explicit per-token positions.
// CHECK-LABEL: func.func @forward_rotary_positions
// CHECK: blockattn.forward
// CHECK-SAME: rotary(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : memref<?x64xf32>, memref<?x64xf32>) positions(%{{[a-z0-9_]+}} : memref<?xi32>)
func.func @forward_rotary_positions(%q: !bf, %k: !bf, %v: !bf, %o: !bf,
                                    %cu: !cu, %cos: !tab, %sin: !tab,
                                    %pos: memref<?xi32>) {
  blockattn.forward q(%q : !bf) k(%k : !bf) v(%v : !bf) o(%o : !bf)
      cu_seqlens(%cu : !cu) rotary(%cos, %sin : !tab, !tab)
      positions(%pos : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// Angles computed in the kernel from rotary_theta instead of tables.
// CHECK-LABEL: func.func @forward_rotary_theta
// CHECK: blockattn.forward
// CHECK-NOT: rotary(
// CHECK-SAME: rotary = #blockattn.rotary<interleaved>, rotary_theta = 1.000000e+04 : f32
func.func @forward_rotary_theta(%q: !bf, %k: !bf, %v: !bf, %o: !bf, %cu: !cu) {
  blockattn.forward q(%q : !bf) k(%k : !bf) v(%v : !bf) o(%o : !bf)
      cu_seqlens(%cu : !cu)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<interleaved>, rotary_theta = 10000.0 : f32}
  return
}

// rotary_theta with positions, rotating v too.
// CHECK-LABEL: func.func @forward_rotary_theta_positions_rotate_v
// CHECK: blockattn.forward
// CHECK-SAME: positions(%{{[a-z0-9_]+}} : memref<?xi32>)
// CHECK-SAME: rotary = #blockattn.rotary<half_split>, rotary_theta = 5.000000e+05 : f32, rotate_v
func.func @forward_rotary_theta_positions_rotate_v(%q: !bf, %k: !bf, %v: !bf,
                                                   %o: !bf, %cu: !cu,
                                                   %pos: memref<?xi32>) {
  blockattn.forward q(%q : !bf) k(%k : !bf) v(%v : !bf) o(%o : !bf)
      cu_seqlens(%cu : !cu) positions(%pos : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>, rotary_theta = 500000.0 : f32,
       rotate_v}
  return
}

// Every optional operand at once.
// CHECK-LABEL: func.func @forward_all_operands
// CHECK: blockattn.forward
// CHECK-SAME: scale(%{{[a-z0-9_]+}} : f32) rotary(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : memref<?x64xf32>, memref<?x64xf32>) positions(%{{[a-z0-9_]+}} : memref<?xi32>)
// CHECK-SAME: rotate_v
func.func @forward_all_operands(%q: !bf, %k: !bf, %v: !bf, %o: !bf, %cu: !cu,
                                %scale: f32, %cos: !tab, %sin: !tab,
                                %pos: memref<?xi32>) {
  blockattn.forward q(%q : !bf) k(%k : !bf) v(%v : !bf) o(%o : !bf)
      cu_seqlens(%cu : !cu) scale(%scale : f32) rotary(%cos, %sin : !tab, !tab)
      positions(%pos : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>, rotate_v}
  return
}

// rotary = none spelled out is the default and is elided.
// CHECK-LABEL: func.func @forward_rotary_none_elided
// CHECK: blockattn.forward
// CHECK-NOT: rotary
// CHECK: return
func.func @forward_rotary_none_elided(%q: !bf, %k: !bf, %v: !bf, %o: !bf,
                                      %cu: !cu) {
  blockattn.forward q(%q : !bf) k(%k : !bf) v(%v : !bf) o(%o : !bf)
      cu_seqlens(%cu : !cu)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<none>}
  return
}

//===----------------------------------------------------------------------===//
// blockattn.backward
//===----------------------------------------------------------------------===//

// The seed configuration's backward; block_size elided.
// CHECK-LABEL: func.func @backward_bf16_d128
// CHECK: blockattn.backward q(%{{[a-z0-9_]+}} : memref<?x4x128xbf16>) k(%{{[a-z0-9_]+}} : memref<?x4x128xbf16>) v(%{{[a-z0-9_]+}} : memref<?x4x128xbf16>) do(%{{[a-z0-9_]+}} : memref<?x4x128xbf16>) dq(%{{[a-z0-9_]+}} : memref<?x4x128xbf16>) dk(%{{[a-z0-9_]+}} : memref<?x4x128xbf16>) dv(%{{[a-z0-9_]+}} : memref<?x4x128xbf16>) cu_seqlens(%{{[a-z0-9_]+}} : memref<?xi32>) {element_type = bf16, head_dim = 128 : i64}
func.func @backward_bf16_d128(%q: !bf, %k: !bf, %v: !bf, %do: !bf, %dq: !bf,
                              %dk: !bf, %dv: !bf, %cu: !cu) {
  blockattn.backward q(%q : !bf) k(%k : !bf) v(%v : !bf) do(%do : !bf)
      dq(%dq : !bf) dk(%dk : !bf) dv(%dv : !bf) cu_seqlens(%cu : !cu)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

// f16, head_dim 64, dynamic tokens and heads, block_size left out.
// CHECK-LABEL: func.func @backward_f16_d64_dynamic
// CHECK: blockattn.backward q(%{{[a-z0-9_]+}} : memref<?x?x64xf16>)
// CHECK-SAME: dv(%{{[a-z0-9_]+}} : memref<?x?x64xf16>)
// CHECK-SAME: {element_type = f16, head_dim = 64 : i64}
func.func @backward_f16_d64_dynamic(
    %q: memref<?x?x64xf16>, %k: memref<?x?x64xf16>, %v: memref<?x?x64xf16>,
    %do: memref<?x?x64xf16>, %dq: memref<?x?x64xf16>, %dk: memref<?x?x64xf16>,
    %dv: memref<?x?x64xf16>, %cu: !cu) {
  blockattn.backward q(%q : memref<?x?x64xf16>) k(%k : memref<?x?x64xf16>)
      v(%v : memref<?x?x64xf16>) do(%do : memref<?x?x64xf16>)
      dq(%dq : memref<?x?x64xf16>) dk(%dk : memref<?x?x64xf16>)
      dv(%dv : memref<?x?x64xf16>) cu_seqlens(%cu : !cu)
      {head_dim = 64 : i64, element_type = f16}
  return
}

// Static shapes.
// CHECK-LABEL: func.func @backward_static_shapes
// CHECK: blockattn.backward q(%{{[a-z0-9_]+}} : memref<128x2x128xf16>)
// CHECK-SAME: cu_seqlens(%{{[a-z0-9_]+}} : memref<3xi32>)
func.func @backward_static_shapes(
    %q: memref<128x2x128xf16>, %k: memref<128x2x128xf16>,
    %v: memref<128x2x128xf16>, %do: memref<128x2x128xf16>,
    %dq: memref<128x2x128xf16>, %dk: memref<128x2x128xf16>,
    %dv: memref<128x2x128xf16>, %cu: memref<3xi32>) {
  blockattn.backward q(%q : memref<128x2x128xf16>) k(%k : memref<128x2x128xf16>)
      v(%v : memref<128x2x128xf16>) do(%do : memref<128x2x128xf16>)
      dq(%dq : memref<128x2x128xf16>) dk(%dk : memref<128x2x128xf16>)
      dv(%dv : memref<128x2x128xf16>) cu_seqlens(%cu : memref<3xi32>)
      {head_dim = 128 : i64, element_type = f16}
  return
}

// Gradients written into a packed [T, 3, H, D] dqkv buffer.
// CHECK-LABEL: func.func @backward_strided_dqkv
// CHECK: blockattn.backward
// CHECK-SAME: dq(%{{[a-z0-9_]+}} : memref<?x4x128xbf16, strided<[1536, 128, 1]>>)
// CHECK-SAME: dk(%{{[a-z0-9_]+}} : memref<?x4x128xbf16, strided<[1536, 128, 1], offset: 512>>)
// CHECK-SAME: dv(%{{[a-z0-9_]+}} : memref<?x4x128xbf16, strided<[1536, 128, 1], offset: 1024>>)
func.func @backward_strided_dqkv(
    %q: !bf, %k: !bf, %v: !bf, %do: !bf,
    %dq: memref<?x4x128xbf16, strided<[1536, 128, 1]>>,
    %dk: memref<?x4x128xbf16, strided<[1536, 128, 1], offset: 512>>,
    %dv: memref<?x4x128xbf16, strided<[1536, 128, 1], offset: 1024>>,
    %cu: !cu) {
  blockattn.backward q(%q : !bf) k(%k : !bf) v(%v : !bf) do(%do : !bf)
      dq(%dq : memref<?x4x128xbf16, strided<[1536, 128, 1]>>)
      dk(%dk : memref<?x4x128xbf16, strided<[1536, 128, 1], offset: 512>>)
      dv(%dv : memref<?x4x128xbf16, strided<[1536, 128, 1], offset: 1024>>)
      cu_seqlens(%cu : !cu) {head_dim = 128 : i64, element_type = bf16}
  return
}

// Run-time scale operand.
// CHECK-LABEL: func.func @backward_scale_operand
// CHECK: blockattn.backward
// CHECK-SAME: scale(%{{[a-z0-9_]+}} : f32)
func.func @backward_scale_operand(%q: !bf, %k: !bf, %v: !bf, %do: !bf,
                                  %dq: !bf, %dk: !bf, %dv: !bf, %cu: !cu,
                                  %scale: f32) {
  blockattn.backward q(%q : !bf) k(%k : !bf) v(%v : !bf) do(%do : !bf)
      dq(%dq : !bf) dk(%dk : !bf) dv(%dv : !bf) cu_seqlens(%cu : !cu)
      scale(%scale : f32) {head_dim = 128 : i64, element_type = bf16}
  return
}

// Compile-time softmax_scale.
// CHECK-LABEL: func.func @backward_softmax_scale
// CHECK: blockattn.backward
// CHECK-SAME: softmax_scale = 2.500000e-01 : f32
func.func @backward_softmax_scale(%q: !bf, %k: !bf, %v: !bf, %do: !bf,
                                  %dq: !bf, %dk: !bf, %dv: !bf, %cu: !cu) {
  blockattn.backward q(%q : !bf) k(%k : !bf) v(%v : !bf) do(%do : !bf)
      dq(%dq : !bf) dk(%dk : !bf) dv(%dv : !bf) cu_seqlens(%cu : !cu)
      {head_dim = 128 : i64, element_type = bf16, softmax_scale = 0.25 : f32}
  return
}

// The seed's fused half-split rotary backward with tables.
// CHECK-LABEL: func.func @backward_rotary_half_split_tables
// CHECK: blockattn.backward
// CHECK-SAME: rotary(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : memref<?x64xf32>, memref<?x64xf32>)
// CHECK-SAME: rotary = #blockattn.rotary<half_split>
func.func @backward_rotary_half_split_tables(%q: !bf, %k: !bf, %v: !bf,
                                             %do: !bf, %dq: !bf, %dk: !bf,
                                             %dv: !bf, %cu: !cu, %cos: !tab,
                                             %sin: !tab) {
  blockattn.backward q(%q : !bf) k(%k : !bf) v(%v : !bf) do(%do : !bf)
      dq(%dq : !bf) dk(%dk : !bf) dv(%dv : !bf) cu_seqlens(%cu : !cu)
      rotary(%cos, %sin : !tab, !tab)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// Interleaved rotary with tables and positions.
// CHECK-LABEL: func.func @backward_rotary_interleaved_positions
// CHECK: blockattn.backward
// CHECK-SAME: rotary(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : memref<?x64xf32>, memref<?x64xf32>) positions(%{{[a-z0-9_]+}} : memref<?xi32>)
// CHECK-SAME: rotary = #blockattn.rotary<interleaved>
func.func @backward_rotary_interleaved_positions(
    %q: !bf, %k: !bf, %v: !bf, %do: !bf, %dq: !bf, %dk: !bf, %dv: !bf,
    %cu: !cu, %cos: !tab, %sin: !tab, %pos: memref<?xi32>) {
  blockattn.backward q(%q : !bf) k(%k : !bf) v(%v : !bf) do(%do : !bf)
      dq(%dq : !bf) dk(%dk : !bf) dv(%dv : !bf) cu_seqlens(%cu : !cu)
      rotary(%cos, %sin : !tab, !tab) positions(%pos : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<interleaved>}
  return
}

// rotary_theta and rotate_v.
// CHECK-LABEL: func.func @backward_rotary_theta_rotate_v
// CHECK: blockattn.backward
// CHECK-SAME: rotary = #blockattn.rotary<half_split>, rotary_theta = 1.000000e+04 : f32, rotate_v
func.func @backward_rotary_theta_rotate_v(%q: !bf, %k: !bf, %v: !bf, %do: !bf,
                                          %dq: !bf, %dk: !bf, %dv: !bf,
                                          %cu: !cu) {
  blockattn.backward q(%q : !bf) k(%k : !bf) v(%v : !bf) do(%do : !bf)
      dq(%dq : !bf) dk(%dk : !bf) dv(%dv : !bf) cu_seqlens(%cu : !cu)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>, rotary_theta = 10000.0 : f32,
       rotate_v}
  return
}

// Every optional operand at once.
// CHECK-LABEL: func.func @backward_all_operands
// CHECK: blockattn.backward
// CHECK-SAME: scale(%{{[a-z0-9_]+}} : f32) rotary(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : memref<?x64xf32>, memref<?x64xf32>) positions(%{{[a-z0-9_]+}} : memref<?xi32>)
func.func @backward_all_operands(%q: !bf, %k: !bf, %v: !bf, %do: !bf,
                                 %dq: !bf, %dk: !bf, %dv: !bf, %cu: !cu,
                                 %scale: f32, %cos: !tab, %sin: !tab,
                                 %pos: memref<?xi32>) {
  blockattn.backward q(%q : !bf) k(%k : !bf) v(%v : !bf) do(%do : !bf)
      dq(%dq : !bf) dk(%dk : !bf) dv(%dv : !bf) cu_seqlens(%cu : !cu)
      scale(%scale : f32) rotary(%cos, %sin : !tab, !tab)
      positions(%pos : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<interleaved>}
  return
}
