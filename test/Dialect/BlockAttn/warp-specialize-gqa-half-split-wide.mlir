// The grouped-query backward above head dim 128 with half-split rotary
// embeddings (session 21; docs/rotary.md, "Grouped-query backward"): the
// producer loads every tile of Q, K, V and dO as whole rows in pair-complete
// 64-column chunks (warpspec.tma_load pair_halves: chunk j holds columns
// [32 j, 32 j + 32) and their partners D / 2 on), each chunk is rotated as a
// half-split part (head_dim = D, pair_offset = 32 j), and pass j's gradient
// chunk is turned back on its own and stored as two 32-column pieces, at
// 32 j and D / 2 + 32 j.
// RUN: split-file %s %t
// RUN: block-attn-opt %t/tables.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=SM90 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/theta.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=SM100 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/tables.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a l2-prefetch=on"
// RUN: block-attn-opt %t/tables.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a l2-prefetch=on"

//--- tables.mlir
func.func @gqa_half_split_256(%q: memref<?x?x256xbf16>, %k: memref<?x?x256xbf16>,
                              %v: memref<?x?x256xbf16>, %do: memref<?x?x256xbf16>,
                              %dq: memref<?x?x256xbf16>, %dk: memref<?x?x256xbf16>,
                              %dv: memref<?x?x256xbf16>, %cu: memref<?xi32>,
                              %cos: memref<?x128xf32>, %sin: memref<?x128xf32>) {
  // The only thing still refused: the L2 prefetch, which does not address
  // the rank-4 tensor map of the pair-complete chunks.
  // expected-error @below {{'blockattn.backward' op l2-prefetch=on does not apply to the grouped-query backward (group 2) with half-split rotary embeddings above head_dim 128: its tiles are loaded as pair-complete chunks through a rank-4 tensor map, which the prefetch does not address}}
  blockattn.backward q(%q : memref<?x?x256xbf16>) k(%k : memref<?x?x256xbf16>)
      v(%v : memref<?x?x256xbf16>) do(%do : memref<?x?x256xbf16>)
      dq(%dq : memref<?x?x256xbf16>) dk(%dk : memref<?x?x256xbf16>)
      dv(%dv : memref<?x?x256xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {element_type = bf16, head_dim = 256 : i64, group = 2 : i64,
       rotary = #blockattn.rotary<half_split>}
  return
}
// SM90: warpspec.partition "load"
// SM90: warpspec.tma_load %arg1[{{.*}}] into %{{.*}} {pair_halves} : memref<?x?x256xbf16>, <64x256xbf16, smem>
// SM90: warpspec.tma_load %arg2[{{.*}}] into %{{.*}} {pair_halves}
// SM90: scf.for
// SM90: warpspec.tma_load %arg0[{{.*}}] into %{{.*}} {pair_halves}
// SM90: warpspec.tma_load %arg3[{{.*}}] into %{{.*}} {pair_halves}
// SM90: warpspec.partition "compute" role(compute) warps(4) regs(256)
// SM90: %[[STAGING:[0-9]+]] = warpspec.scratch : <64x32xbf16, smem>
// SM90: %[[K0:[0-9]+]] = warpspec.subview %[[KBUF:[a-z0-9_#]+]][0] : <64x256xbf16, smem> -> <64x64xbf16, smem>
// SM90-NEXT: warpspec.rotate(%[[K0]]) into(%[[K0]]) {{.*}} {head_dim = 256 : i64, interleaved = false, pair_offset = 0 : i64, pass_loop}
// SM90: warpspec.subview %[[KBUF]][64]
// SM90-NEXT: warpspec.rotate({{.*}} pair_offset = 32 : i64, pass_loop}
// SM90: warpspec.subview %[[KBUF]][192]
// SM90-NEXT: warpspec.rotate({{.*}} pair_offset = 96 : i64, pass_loop}
// Pass 0: dQ's chunk (pairs 0-31) turned back, stored at columns 0 and 128.
// SM90: warpspec.rotate_tile {{.*}} {head_dim = 256 : i64, interleaved = false, inverse, pair_offset = 0 : i64}
// SM90: warpspec.store {{.*}} to %arg4{{.*}} via(%[[STAGING]]) bulk {col_offset = 0 : i64} : <64x32xf32>
// SM90: warpspec.store {{.*}} to %arg4{{.*}} via(%[[STAGING]]) bulk {col_offset = 128 : i64} : <64x32xf32>
// Pass 3: dK's chunk (pairs 96-127) at columns 96 and 224.
// SM90: warpspec.rotate_tile {{.*}} inverse, pair_offset = 96 : i64}
// SM90: warpspec.store {{.*}} to %arg5{{.*}} {col_offset = 96 : i64}
// SM90: warpspec.store {{.*}} to %arg5{{.*}} {col_offset = 224 : i64}

//--- theta.mlir
// sm_100a, angles from rotary_theta (each chunk turned in a loop of passes,
// pass_loop), block size 32 (two blocks in one 64-row tile).
func.func @gqa_half_split_theta_192(%q: memref<?x?x192xbf16>, %k: memref<?x?x192xbf16>,
                                    %v: memref<?x?x192xbf16>, %do: memref<?x?x192xbf16>,
                                    %dq: memref<?x?x192xbf16>, %dk: memref<?x?x192xbf16>,
                                    %dv: memref<?x?x192xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x?x192xbf16>) k(%k : memref<?x?x192xbf16>)
      v(%v : memref<?x?x192xbf16>) do(%do : memref<?x?x192xbf16>)
      dq(%dq : memref<?x?x192xbf16>) dk(%dk : memref<?x?x192xbf16>)
      dv(%dv : memref<?x?x192xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 192 : i64, group = 2 : i64,
       block_size = 32 : i64, rotary = #blockattn.rotary<half_split>,
       rotary_theta = 10000.0 : f32}
  return
}
// SM100: warpspec.tma_load %arg1[{{.*}}] into %{{.*}} {pair_halves} : memref<?x?x192xbf16>, <64x192xbf16, smem>
// SM100: warpspec.tma_load %arg0[{{.*}}] into %{{.*}} {pair_halves}
// SM100: warpspec.partition "softmax"
// SM100: warpspec.scratch : <64x32xbf16, smem>
// SM100: warpspec.rotate({{.*}} {head_dim = 192 : i64, interleaved = false, pair_offset = 0 : i64, pass_loop, theta = 1.000000e+04 : f32}
// SM100-NEXT: warpspec.subview
// SM100-NEXT: warpspec.rotate({{.*}} pair_offset = 32 : i64, pass_loop, theta
// SM100-NEXT: warpspec.subview
// SM100-NEXT: warpspec.rotate({{.*}} pair_offset = 64 : i64, pass_loop, theta
// SM100: warpspec.rotate_tile {{.*}} {head_dim = 192 : i64, interleaved = false, inverse, pair_offset = 32 : i64, theta = 1.000000e+04 : f32}
// SM100-NEXT: warpspec.extract_columns
// SM100-NEXT: warpspec.store {{.*}} to %arg4{{.*}} {col_offset = 32 : i64} : <64x32xf32>
// SM100-NEXT: warpspec.extract_columns
// SM100-NEXT: warpspec.store {{.*}} to %arg4{{.*}} {col_offset = 128 : i64} : <64x32xf32>
