// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=AUTO
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a rotary-angles=per-tile" | FileCheck %s --check-prefix=TILE
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a rotary-angles=after-softmax" | FileCheck %s --check-prefix=FORCED

// rotary-angles=after-softmax: the sm_90a rotary backward's consumer reads
// a positions tensor as the tile arrives (warpspec.load_positions) and the
// table rows at those positions after the softmax (warpspec.rotary_angles
// ... row_positions), so that the table reads never wait for the
// positions' round trip. What auto picks at head dim 64 with a positions
// tensor and tables, without rotate_v (@positions_d64); per-tile reads
// both as the tile arrives, in one op (TILE), as auto does with rotate_v
// (@positions_rotate_v_d64) and at head dim 128 (@positions_d128).
// docs/performance-notes.md, run 16.

// AUTO-LABEL: func.func @positions_d64(
// AUTO-SAME: %[[POSITIONS:[a-z0-9_]+]]: memref<?xi32> {blockattn.name = "positions"}, %{{[a-z0-9_]+}}: memref<2xi32> {blockattn.name = "schedule"})
// AUTO: warpspec.partition "compute" role(compute) warps(4)
// AUTO: warpspec.consume %{{[0-9]+}} (%{{[a-z0-9_]+}}, %[[ROW:[a-z0-9_]+]], %[[ROWS:[a-z0-9_]+]],
// AUTO: %[[READ:.*]] = warpspec.load_positions %[[POSITIONS]][%[[ROW]]] : memref<?xi32> -> <64xi32>
// AUTO-NEXT: %[[SIGNAL:.*]] = warpspec.get
// AUTO-NEXT: warpspec.release %[[SIGNAL]]
// AUTO-NEXT: warpspec.mma
// AUTO-NEXT: warpspec.softmax
// AUTO-NEXT: warpspec.write
// AUTO-NEXT: %[[ANGLES:.*]] = warpspec.rotary_angles rows(%[[ROWS]]) row(%[[ROW]]) position(%{{.*}}) cos(%{{.*}}, %{{.*}} : memref<?x32xf32>, memref<?x32xf32>) row_positions(%[[READ]] : !warpspec.rows<64xi32>) {interleaved = false} : <64x64xf32>
// AUTO-NEXT: warpspec.mma
// AUTO-NOT: warpspec.rotary_angles
// AUTO: warpspec.rotate_tile %{{.*}} angles(%[[ANGLES]] : !warpspec.acc<64x64xf32>) {interleaved = false, inverse}
// AUTO: warpspec.rotate_tile %{{.*}} angles(%[[ANGLES]] : !warpspec.acc<64x64xf32>) {interleaved = false, inverse}
// AUTO: return

// With rotate_v and at head dim 128 the positions are the tile's own,
// copied into its slot by the producer (positions-load=auto, session 29).
// AUTO-LABEL: func.func @positions_rotate_v_d64(
// AUTO-NOT: warpspec.load_positions
// AUTO: warpspec.rotary_angles {{.*}} positions(%{{.*}} : !warpspec.buffer<64xi32, smem>) {interleaved = true}
// AUTO-NEXT: warpspec.get
// AUTO: return

// AUTO-LABEL: func.func @positions_d128(
// AUTO-NOT: warpspec.load_positions
// AUTO: warpspec.rotary_angles {{.*}} positions(%{{.*}} : !warpspec.buffer<64xi32, smem>) {interleaved = false}
// AUTO-NEXT: warpspec.get
// AUTO: return

// TILE-LABEL: func.func @positions_d64(
// TILE-NOT: warpspec.load_positions
// TILE: warpspec.rotary_angles {{.*}} positions(%{{.*}} : memref<?xi32>) {interleaved = false}
// TILE-NEXT: warpspec.get

// Asked for, it applies at head dim 128 too.
// FORCED-LABEL: func.func @positions_d128(
// FORCED: warpspec.load_positions
// FORCED-NEXT: warpspec.get
// FORCED: warpspec.softmax
// FORCED-NEXT: warpspec.write
// FORCED-NEXT: warpspec.rotary_angles {{.*}} row_positions(%{{.*}} : !warpspec.rows<64xi32>) {interleaved = false} : <64x128xf32>

!act = memref<?x4x64xbf16>
!cu = memref<?xi32>
!tab = memref<?x32xf32>
func.func @positions_d64(%q: !act, %k: !act, %v: !act, %do: !act,
                         %dq: !act, %dk: !act, %dv: !act, %cu: !cu,
                         %cos: !tab, %sin: !tab, %positions: !cu) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act) cu_seqlens(%cu : !cu)
      rotary(%cos, %sin : !tab, !tab) positions(%positions : !cu)
      {block_size = 64 : i64, head_dim = 64 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

func.func @positions_rotate_v_d64(%q: !act, %k: !act, %v: !act, %do: !act,
                                  %dq: !act, %dk: !act, %dv: !act, %cu: !cu,
                                  %cos: !tab, %sin: !tab, %positions: !cu) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act) cu_seqlens(%cu : !cu)
      rotary(%cos, %sin : !tab, !tab) positions(%positions : !cu)
      {block_size = 64 : i64, head_dim = 64 : i64, element_type = bf16,
       rotary = #blockattn.rotary<interleaved>, rotate_v}
  return
}

!act128 = memref<?x4x128xbf16>
!tab128 = memref<?x64xf32>
func.func @positions_d128(%q: !act128, %k: !act128, %v: !act128,
                          %do: !act128, %dq: !act128, %dk: !act128,
                          %dv: !act128, %cu: !cu, %cos: !tab128,
                          %sin: !tab128, %positions: !cu) {
  blockattn.backward q(%q : !act128) k(%k : !act128) v(%v : !act128)
      do(%do : !act128) dq(%dq : !act128) dk(%dk : !act128)
      dv(%dv : !act128) cu_seqlens(%cu : !cu)
      rotary(%cos, %sin : !tab128, !tab128) positions(%positions : !cu)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}
