// The grouped-query backward above head dim 128 with half-split rotary
// embeddings loads whole rows in pair-complete 64-column chunks (columns
// [32 j, 32 j + 32) and their partners D / 2 on, pair_halves). Session 21 loaded
// each chunk as one TMA box of two 64-byte pieces under the 128-byte swizzle,
// which missed the float64 reference on an H100 (the hardware lands each
// 64-byte row of such a box in a 128-byte line; refused in session 22,
// docs/head-dims.md, "The pair-halves layout on hardware"). Since session 23
// its buffers are 32-column pieces under the 64-byte swizzle (chunk_cols = 32,
// two boxes a chunk that fill their span): built on both chips, with tables and
// with rotary_theta, at every block size, at block size 128 streamed in
// 64-column chunks of that layout (both chips; sm_100a since session 24, with
// a rotary warpgroup).
// RUN: split-file %s %t
// RUN: block-attn-opt %t/tables.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %t/tables.mlir
// RUN: block-attn-opt %t/theta.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %t/theta.mlir
// RUN: block-attn-opt %t/b128.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %t/b128.mlir

//--- tables.mlir
func.func @gqa_half_split_256(%q: memref<?x?x256xbf16>, %k: memref<?x?x256xbf16>,
                              %v: memref<?x?x256xbf16>, %do: memref<?x?x256xbf16>,
                              %dq: memref<?x?x256xbf16>, %dk: memref<?x?x256xbf16>,
                              %dv: memref<?x?x256xbf16>, %cu: memref<?xi32>,
                              %cos: memref<?x128xf32>, %sin: memref<?x128xf32>) {
  // Whole rows of K, V, Q and dO in 32-column pieces, each chunk's two pieces
  // loaded by pair_halves; the consumers' views of a pass's chunk keep the
  // layout.
  // CHECK: warpspec.channel "kv" {{.*}}<[64x256xbf16 chunk_cols = 32, 64x256xbf16 chunk_cols = 32], smem>
  // CHECK: warpspec.channel "qdo" {{.*}}<[64x256xbf16 chunk_cols = 32, 64x256xbf16 chunk_cols = 32], smem>
  // CHECK: warpspec.tma_load {{.*}} {pair_halves} : memref<?x?x256xbf16>, <64x256xbf16, smem, chunk_cols = 32>
  // CHECK: warpspec.subview {{.*}}[64] : <64x256xbf16, smem, chunk_cols = 32> -> <64x64xbf16, smem, chunk_cols = 32>
  blockattn.backward q(%q : memref<?x?x256xbf16>) k(%k : memref<?x?x256xbf16>)
      v(%v : memref<?x?x256xbf16>) do(%do : memref<?x?x256xbf16>)
      dq(%dq : memref<?x?x256xbf16>) dk(%dk : memref<?x?x256xbf16>)
      dv(%dv : memref<?x?x256xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {element_type = bf16, head_dim = 256 : i64, group = 2 : i64,
       rotary = #blockattn.rotary<half_split>}
  return
}

//--- theta.mlir
// sm_100a, angles from rotary_theta, block size 32.
func.func @gqa_half_split_theta_192(%q: memref<?x?x192xbf16>, %k: memref<?x?x192xbf16>,
                                    %v: memref<?x?x192xbf16>, %do: memref<?x?x192xbf16>,
                                    %dq: memref<?x?x192xbf16>, %dk: memref<?x?x192xbf16>,
                                    %dv: memref<?x?x192xbf16>, %cu: memref<?xi32>) {
  // CHECK: warpspec.channel "kv" {{.*}}<[64x192xbf16 chunk_cols = 32, 64x192xbf16 chunk_cols = 32], smem>
  // CHECK: warpspec.tma_load {{.*}} {pair_halves} : memref<?x?x192xbf16>, <64x192xbf16, smem, chunk_cols = 32>
  blockattn.backward q(%q : memref<?x?x192xbf16>) k(%k : memref<?x?x192xbf16>)
      v(%v : memref<?x?x192xbf16>) do(%do : memref<?x?x192xbf16>)
      dq(%dq : memref<?x?x192xbf16>) dk(%dk : memref<?x?x192xbf16>)
      dv(%dv : memref<?x?x192xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 192 : i64, group = 2 : i64,
       block_size = 32 : i64, rotary = #blockattn.rotary<half_split>,
       rotary_theta = 10000.0 : f32}
  return
}

//--- b128.mlir
// At block size 128 the streamed chunks ("chunks") and a pass's chunks
// ("qdo") are 64-column buffers of two pieces.
func.func @half_split_b128_192(%q: memref<?x?x192xbf16>, %k: memref<?x?x192xbf16>,
                               %v: memref<?x?x192xbf16>, %do: memref<?x?x192xbf16>,
                               %dq: memref<?x?x192xbf16>, %dk: memref<?x?x192xbf16>,
                               %dv: memref<?x?x192xbf16>, %cu: memref<?xi32>,
                               %cos: memref<?x96xf32>, %sin: memref<?x96xf32>) {
  // CHECK: warpspec.channel "chunks" {{.*}}<[64x64xbf16 chunk_cols = 32, 128x64xbf16 chunk_cols = 32], smem>
  // CHECK: warpspec.channel "qdo" {{.*}}<[64x64xbf16 chunk_cols = 32, 64x64xbf16 chunk_cols = 32, 64x64xbf16 chunk_cols = 32, 64x64xbf16 chunk_cols = 32, 128x64xbf16 chunk_cols = 32], smem>
  // Without rotate_v at 192 nothing spills unpinned: no pins.
  // CHECK: warpspec.partition "load" role(load) warps(4) regs(96) {
  // CHECK: warpspec.tma_load {{.*}} {col_offset = 128 : i64, pair_halves} : memref<?x?x192xbf16>, <64x64xbf16, smem, chunk_cols = 32>
  // CHECK: warpspec.partition "scores" role(compute) warps(4) regs(176) {
  blockattn.backward q(%q : memref<?x?x192xbf16>) k(%k : memref<?x?x192xbf16>)
      v(%v : memref<?x?x192xbf16>) do(%do : memref<?x?x192xbf16>)
      dq(%dq : memref<?x?x192xbf16>) dk(%dk : memref<?x?x192xbf16>)
      dv(%dv : memref<?x?x192xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x96xf32>, memref<?x96xf32>)
      {element_type = bf16, head_dim = 192 : i64, block_size = 128 : i64,
       group = 2 : i64, rotary = #blockattn.rotary<half_split>}
  return
}

// At 256 (and with rotate_v) every partition pins its shared-memory bases at
// each use and the scores warpgroup's dQ pieces their copy-out row steps
// (session 24, pinsGroupedChunkAddresses: ptxas spilled 4 bytes without).
func.func @half_split_b128_256(%q: memref<?x?x256xbf16>, %k: memref<?x?x256xbf16>,
                               %v: memref<?x?x256xbf16>, %do: memref<?x?x256xbf16>,
                               %dq: memref<?x?x256xbf16>, %dk: memref<?x?x256xbf16>,
                               %dv: memref<?x?x256xbf16>, %cu: memref<?xi32>,
                               %cos: memref<?x128xf32>, %sin: memref<?x128xf32>) {
  // CHECK-LABEL: func.func @half_split_b128_256
  // CHECK: warpspec.partition "load" role(load) warps(4) regs(96) pinned_bases {
  // CHECK: warpspec.partition "scores" role(compute) warps(4) regs(176) pinned_bases {
  // CHECK: warpspec.store {{.*}} {col_offset = 0 : i64, pinned_steps} : <64x32xf32>, memref<?x?x256xbf16>, !warpspec.buffer<64x32xbf16, smem>
  // CHECK: warpspec.store {{.*}} {col_offset = 128 : i64, pinned_steps} : <64x32xf32>, memref<?x?x256xbf16>, !warpspec.buffer<64x32xbf16, smem>
  // CHECK: warpspec.partition "accumulate" role(compute) warps(4) regs(120) pinned_bases {
  // CHECK: warpspec.partition "accumulate1" role(compute) warps(4) regs(120) pinned_bases {
  blockattn.backward q(%q : memref<?x?x256xbf16>) k(%k : memref<?x?x256xbf16>)
      v(%v : memref<?x?x256xbf16>) do(%do : memref<?x?x256xbf16>)
      dq(%dq : memref<?x?x256xbf16>) dk(%dk : memref<?x?x256xbf16>)
      dv(%dv : memref<?x?x256xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {element_type = bf16, head_dim = 256 : i64, block_size = 128 : i64,
       group = 2 : i64, rotary = #blockattn.rotary<half_split>}
  return
}
