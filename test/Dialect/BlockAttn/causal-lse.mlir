// RUN: block-attn-opt %s | block-attn-opt | FileCheck %s
// RUN: block-attn-opt %s --mlir-print-op-generic | block-attn-opt | FileCheck %s

// Round trip of causal blocks and the log-sum-exp operands (issue 21).

// CHECK-LABEL: func.func @forward_causal_lse
// CHECK: blockattn.forward {{.*}} cu_seqlens(%{{.*}} : memref<?xi32>) lse(%{{.*}} : memref<4x?xf32>) {causal, element_type = bf16, head_dim = 128 : i64}
func.func @forward_causal_lse(%q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
                              %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>,
                              %cu: memref<?xi32>, %lse: memref<4x?xf32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) lse(%lse : memref<4x?xf32>)
      {head_dim = 128 : i64, element_type = bf16, causal}
  return
}

// A strided lse (a view of a wider [H, T'] buffer) is fine: unit-stride tokens.
// CHECK-LABEL: func.func @backward_dlse_rotary
// CHECK: blockattn.backward {{.*}} rotary(%{{.*}}, %{{.*}} : memref<?x32xf32>, memref<?x32xf32>) dlse(%{{.*}} : memref<?x?xf32, strided<[?, 1]>>) {element_type = f16, head_dim = 64 : i64, rotary = #blockattn.rotary<interleaved>}
func.func @backward_dlse_rotary(%q: memref<?x?x64xf16>, %k: memref<?x?x64xf16>,
                                %v: memref<?x?x64xf16>, %do: memref<?x?x64xf16>,
                                %dq: memref<?x?x64xf16>, %dk: memref<?x?x64xf16>,
                                %dv: memref<?x?x64xf16>, %cu: memref<?xi32>,
                                %cos: memref<?x32xf32>, %sin: memref<?x32xf32>,
                                %dlse: memref<?x?xf32, strided<[?, 1]>>) {
  blockattn.backward q(%q : memref<?x?x64xf16>) k(%k : memref<?x?x64xf16>)
      v(%v : memref<?x?x64xf16>) do(%do : memref<?x?x64xf16>)
      dq(%dq : memref<?x?x64xf16>) dk(%dk : memref<?x?x64xf16>)
      dv(%dv : memref<?x?x64xf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x32xf32>, memref<?x32xf32>)
      dlse(%dlse : memref<?x?xf32, strided<[?, 1]>>)
      {head_dim = 64 : i64, element_type = f16, rotary = #blockattn.rotary<interleaved>}
  return
}
