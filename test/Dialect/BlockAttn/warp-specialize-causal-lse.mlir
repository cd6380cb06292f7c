// RUN: split-file %s %t
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=FWD
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=FWD
// RUN: block-attn-opt %t/backward.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=BWD
// RUN: block-attn-opt %t/backward.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=BWD
// RUN: block-attn-opt %t/causal-only.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=CAUSAL --implicit-check-not=store_rows --implicit-check-not=load_rows

// Causal blocks and the log-sum-exp (issue 21) on both chips: the softmax
// masks with `causal` (forward, and the backward's recomputation of P), the
// forward's softmax returns the log-sum-exp, which warpspec.store_rows writes
// to lse[head, row + i]; the backward reads dlse with warpspec.load_rows and
// hands it to the softmax gradient. The kernel's info says so (the manifest
// copies it).

//--- forward.mlir
// FWD-LABEL: func.func @forward
// FWD-SAME: %[[LSE:[a-z0-9_]+]]: memref<4x?xf32> {blockattn.name = "lse"}
// FWD: warpspec.kernel chip({{sm_90a|sm_100a}}) attributes {{{.*}}info = {block_size = 64 : i64, causal, element_type = bf16, head_dim = 128 : i64, kind = "forward", lse, rotary = "none"
// FWD: %{{.*}}, %{{.*}}, %[[L:[a-z0-9_]+]] = warpspec.softmax %{{.*}} valid_cols(%[[ROWS:[a-z0-9_]+]]) scale(%{{.*}}) causal : <64x64xf32> -> <64x64xbf16>, <64xf32>, !warpspec.rows<64xf32>
// FWD: warpspec.store_rows %[[L]], %[[LSE]][%{{.*}}, %{{.*}}] rows(%[[ROWS]]) : <64xf32>, memref<4x?xf32>
func.func @forward(%q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
                   %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>,
                   %cu: memref<?xi32>, %lse: memref<4x?xf32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) lse(%lse : memref<4x?xf32>)
      {head_dim = 128 : i64, element_type = bf16, causal}
  return
}

//--- backward.mlir
// BWD-LABEL: func.func @backward
// BWD-SAME: %[[DLSE:[a-z0-9_]+]]: memref<?x?xf32> {blockattn.name = "dlse"}
// BWD: info = {block_size = 64 : i64, causal, element_type = bf16, head_dim = 128 : i64, kind = "backward", lse, rotary = "none"
// BWD: %[[P:[a-z0-9_]+]], %{{.*}} = warpspec.softmax %{{.*}} valid_cols(%[[ROWS:[a-z0-9_]+]]) valid_rows(%[[ROWS]]) scale(%{{.*}}) normalize causal : <64x64xf32> -> <64x64xf32>, <64xf32>
// BWD: %[[G:[a-z0-9_]+]] = warpspec.load_rows %[[DLSE]][%{{.*}}, %{{.*}}] rows(%[[ROWS]]) : memref<?x?xf32> -> <64xf32>
// BWD: warpspec.softmax_grad %[[P]], %{{.*}} scale(%{{.*}}) dlse(%[[G]] : !warpspec.rows<64xf32>)
func.func @backward(%q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
                    %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
                    %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
                    %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>,
                    %dlse: memref<?x?xf32>) {
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      dlse(%dlse : memref<?x?xf32>)
      {head_dim = 128 : i64, element_type = bf16, causal}
  return
}

//--- causal-only.mlir
// Causal without the log-sum-exp: no third softmax result, no dlse.
// CAUSAL: info = {block_size = 64 : i64, causal, element_type = bf16
// CAUSAL: warpspec.softmax {{.*}} normalize causal : <64x64xf32> -> <64x64xf32>, <64xf32>{{$}}
// CAUSAL: warpspec.softmax_grad %{{.*}}, %{{.*}} scale(%{{.*}}) : <64x64xf32>
func.func @causal_only(%q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
                       %v: memref<?x4x128xbf16>, %do: memref<?x4x128xbf16>,
                       %dq: memref<?x4x128xbf16>, %dk: memref<?x4x128xbf16>,
                       %dv: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x4x128xbf16>)
      dv(%dv : memref<?x4x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16, causal}
  return
}
