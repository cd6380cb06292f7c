// RUN: split-file %s %t
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefixes=CHECK,SM90 --implicit-check-not=blockattn.forward
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefixes=CHECK,SM100 --implicit-check-not=blockattn.forward
// RUN: block-attn-opt %t/backward.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a"
// RUN: block-attn-opt %t/backward.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a"

// Grouped-query attention's forward (group 4: q and o with 8 heads, k and v
// with 2): the tile loop walks q's heads and the producer reads k and v at
// head / 4, q at the head itself; the consumers store o at the head. The
// kernel's info (and so its manifest) carries the group. Everything else is
// the plain forward's. The grouped backward is refused.

//--- forward.mlir
func.func @gqa_forward(%q: memref<?x8x128xbf16>, %k: memref<?x2x128xbf16>,
                       %v: memref<?x2x128xbf16>, %o: memref<?x8x128xbf16>,
                       %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x8x128xbf16>) k(%k : memref<?x2x128xbf16>)
      v(%v : memref<?x2x128xbf16>) o(%o : memref<?x8x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, group = 4 : i64}
  return
}

// CHECK-LABEL: func.func @gqa_forward
// CHECK-SAME: %[[Q:[a-z0-9_]+]]: memref<?x8x128xbf16> {blockattn.name = "q"}
// CHECK-SAME: %[[K:[a-z0-9_]+]]: memref<?x2x128xbf16> {blockattn.name = "k"}
// CHECK-SAME: %[[V:[a-z0-9_]+]]: memref<?x2x128xbf16> {blockattn.name = "v"}
// CHECK-SAME: %[[O:[a-z0-9_]+]]: memref<?x8x128xbf16> {blockattn.name = "o"}
// SM90: warpspec.kernel chip(sm_90a) attributes {{{.*}}info = {block_size = 64 : i64, element_type = bf16, group = 4 : i64, head_dim = 128 : i64, kind = "forward"
// SM100: warpspec.kernel chip(sm_100a) attributes {{{.*}}info = {block_size = 64 : i64, element_type = bf16, group = 4 : i64, head_dim = 128 : i64, kind = "forward"
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[H:.*]] = memref.dim %[[Q]], %[[ONE]]
// CHECK: warpspec.partition "load" role(load)
// CHECK-NEXT: warpspec.tile_loop (%[[ROW:.*]], %[[ROWS:.*]], %[[HEAD:.*]]) in %{{.*}} : memref<?xi32> heads(%[[H]])
// CHECK-NEXT: %[[G:.*]] = arith.constant 4 : i32
// CHECK-NEXT: %[[KVHEAD:.*]] = arith.divui %[[HEAD]], %[[G]] : i32
// CHECK-NEXT: %[[SLOT:.*]], %[[BUF:.*]]:3 = warpspec.acquire
// CHECK-NEXT: warpspec.tma_load %[[Q]][%[[ROW]], %[[HEAD]]] into %[[BUF]]#0
// CHECK-NEXT: warpspec.tma_load %[[K]][%[[ROW]], %[[KVHEAD]]] into %[[BUF]]#1
// CHECK-NEXT: warpspec.tma_load %[[V]][%[[ROW]], %[[KVHEAD]]] into %[[BUF]]#2
// CHECK-NEXT: warpspec.commit %[[SLOT]] tile(%[[ROW]], %[[ROWS]], %[[HEAD]])
// CHECK: warpspec.store %{{.*}} to %[[O]][%{{.*}}, %{{.*}}]

//--- backward.mlir
func.func @gqa_backward(%q: memref<?x?x64xbf16>, %k: memref<?x?x64xbf16>,
                        %v: memref<?x?x64xbf16>, %do: memref<?x?x64xbf16>,
                        %dq: memref<?x?x64xbf16>, %dk: memref<?x?x64xbf16>,
                        %dv: memref<?x?x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op with group 2 (grouped-query attention) has no sm_90a or sm_100a lowering yet: only the forward supports group > 1}}
  blockattn.backward q(%q : memref<?x?x64xbf16>) k(%k : memref<?x?x64xbf16>)
      v(%v : memref<?x?x64xbf16>) do(%do : memref<?x?x64xbf16>)
      dq(%dq : memref<?x?x64xbf16>) dk(%dk : memref<?x?x64xbf16>)
      dv(%dv : memref<?x?x64xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 2 : i64}
  return
}
