// RUN: block-attn-opt %s | block-attn-opt | FileCheck %s
// RUN: block-attn-opt %s --mlir-print-op-generic | block-attn-opt | FileCheck %s

// Round trip of warpspec.concat_columns, warpspec.extract_columns and
// warpspec.rotate_tile's head_dim and pair_offset, as the backward above head
// dim 128 uses them (docs/head-dims.md, "Rotary embeddings at 192 and 256"):
// chunks 1 and 3 of a 256-column gradient joined, turned back as pairs
// 64-127 of rows of head dim 256, and split again; warpspec.rotate's
// pass_loop and split_items, warpspec.rotate_tile's narrow_index and
// pinned_table_rows.

// CHECK-LABEL: func.func @second_group_of_256
// CHECK: %[[J:.*]] = warpspec.concat_columns %{{.*}}, %{{.*}} : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32> -> <64x128xf32>
// CHECK: %[[R:.*]] = warpspec.rotate_tile %[[J]] rows(%{{.*}}) row(%{{.*}}) position(%{{.*}}) cos(%{{.*}}, %{{.*}} : memref<?x128xf32>, memref<?x128xf32>) {head_dim = 256 : i64, interleaved = false, inverse, pair_offset = 64 : i64} : <64x128xf32> -> <64x128xf32>
// CHECK: warpspec.extract_columns %[[R]][0] : <64x128xf32> -> <64x64xf32>
// CHECK: warpspec.extract_columns %[[R]][64] : <64x128xf32> -> <64x64xf32>
func.func @second_group_of_256(%c1: !warpspec.acc<64x64xf32>,
                               %c3: !warpspec.acc<64x64xf32>, %i: i32,
                               %cos: memref<?x128xf32>,
                               %sin: memref<?x128xf32>)
    -> (!warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32>) {
  %j = warpspec.concat_columns %c1, %c3
      : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32>
        -> !warpspec.acc<64x128xf32>
  %r = warpspec.rotate_tile %j rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {interleaved = false, inverse, head_dim = 256 : i64,
       pair_offset = 64 : i64}
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xf32>
  %e1 = warpspec.extract_columns %r[0]
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x64xf32>
  %e3 = warpspec.extract_columns %r[64]
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x64xf32>
  return %e1, %e3 : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32>
}

// An interleaved chunk of 256-column rows from theta (pairs 96-127).
// CHECK-LABEL: func.func @interleaved_chunk_from_theta
// CHECK: warpspec.rotate_tile %{{.*}} rows(%{{.*}}) row(%{{.*}}) position(%{{.*}}) {head_dim = 256 : i64, interleaved = true, inverse, pair_offset = 96 : i64, theta = 1.000000e+04 : f32} : <64x64xf32> -> <64x64xf32>
func.func @interleaved_chunk_from_theta(%c: !warpspec.acc<64x64xf32>, %i: i32)
    -> !warpspec.acc<64x64xf32> {
  %r = warpspec.rotate_tile %c rows(%i) row(%i) position(%i)
      {interleaved = true, inverse, head_dim = 256 : i64,
       pair_offset = 96 : i64, theta = 10000.0 : f32}
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xf32>
  return %r : !warpspec.acc<64x64xf32>
}

// warpspec.rotate of a part of wider rows (head_dim, pair_offset): chunk 1
// of interleaved rows of head dim 256 (pairs 32-63), rotated in place in a
// shared-memory chunk slot, as the sm_90a backward at block size 128 above
// head dim 128 does (docs/head-dims.md).

// CHECK-LABEL: func.func @interleaved_chunk_in_place
// CHECK: warpspec.rotate(%{{.*}}) into(%{{.*}}) rows(%{{.*}}) row(%{{.*}}) position(%{{.*}}) cos(%{{.*}}, %{{.*}} : memref<?x128xf32>, memref<?x128xf32>) {head_dim = 256 : i64, interleaved = true, pair_offset = 32 : i64} : !warpspec.buffer<128x64xbf16, smem> into !warpspec.buffer<128x64xbf16, smem>
func.func @interleaved_chunk_in_place(%k: !warpspec.buffer<128x64xbf16, smem>,
                                      %i: i32, %cos: memref<?x128xf32>,
                                      %sin: memref<?x128xf32>) {
  warpspec.rotate(%k) into(%k) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {interleaved = true, head_dim = 256 : i64, pair_offset = 32 : i64}
      : !warpspec.buffer<128x64xbf16, smem> into !warpspec.buffer<128x64xbf16, smem>
  return
}

// warpspec.rotate's pass_loop: the whole 256-column rows of a grouped-query
// backward's K from theta, turned in a loop of passes that is not unrolled
// (docs/rotary.md, "Grouped-query backward").

// CHECK-LABEL: func.func @whole_rows_in_a_pass_loop
// CHECK: warpspec.rotate(%{{.*}}) into(%{{.*}}) rows(%{{.*}}) row(%{{.*}}) position(%{{.*}}) {interleaved = true, pass_loop, theta = 1.000000e+04 : f32} : !warpspec.buffer<64x256xbf16, smem> into !warpspec.buffer<64x256xbf16, smem>
func.func @whole_rows_in_a_pass_loop(%k: !warpspec.buffer<64x256xbf16, smem>,
                                     %i: i32) {
  warpspec.rotate(%k) into(%k) rows(%i) row(%i) position(%i)
      {interleaved = true, pass_loop, theta = 10000.0 : f32}
      : !warpspec.buffer<64x256xbf16, smem> into !warpspec.buffer<64x256xbf16, smem>
  return
}

// warpspec.rotate's split_items and warpspec.rotate_tile's narrow_index
// (session 26: the sm_90a grouped block-128 half-split backward above head
// dim 128 with rotate_v, docs/head-dims.md).

// CHECK-LABEL: func.func @split_items_and_narrow_index
// CHECK: warpspec.rotate(%{{.*}}) into(%{{.*}}) rows(%{{.*}}) row(%{{.*}}) position(%{{.*}}) cos(%{{.*}}, %{{.*}} : memref<?x128xf32>, memref<?x128xf32>) {head_dim = 256 : i64, interleaved = false, pair_offset = 32 : i64, pass_loop, split_items} : !warpspec.buffer<128x64xbf16, smem, chunk_cols = 32> into !warpspec.buffer<128x64xbf16, smem, chunk_cols = 32>
// CHECK: warpspec.rotate_tile %{{.*}} rows(%{{.*}}) row(%{{.*}}) position(%{{.*}}) cos(%{{.*}}, %{{.*}} : memref<?x128xf32>, memref<?x128xf32>) {head_dim = 256 : i64, interleaved = false, inverse, narrow_index, pair_offset = 32 : i64, pinned_table_rows} : <64x64xf32> -> <64x64xf32>
func.func @split_items_and_narrow_index(
    %v: !warpspec.buffer<128x64xbf16, smem, chunk_cols = 32>,
    %dv: !warpspec.acc<64x64xf32>, %i: i32, %cos: memref<?x128xf32>,
    %sin: memref<?x128xf32>) -> !warpspec.acc<64x64xf32> {
  warpspec.rotate(%v) into(%v) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {interleaved = false, head_dim = 256 : i64, pair_offset = 32 : i64,
       pass_loop, split_items}
      : !warpspec.buffer<128x64xbf16, smem, chunk_cols = 32>
        into !warpspec.buffer<128x64xbf16, smem, chunk_cols = 32>
  %r = warpspec.rotate_tile %dv rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {interleaved = false, inverse, head_dim = 256 : i64,
       pair_offset = 32 : i64, narrow_index, pinned_table_rows}
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xf32>
  return %r : !warpspec.acc<64x64xf32>
}
