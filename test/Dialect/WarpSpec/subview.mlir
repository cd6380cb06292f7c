// RUN: block-attn-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// warpspec.subview and warpspec.store's col_offset: the column chunks of the
// head dim that head dims 192 and 256 make their outputs in
// (docs/head-dims.md). Valid forms round-trip; each diagnostic has a case.

// CHECK-LABEL: func.func @chunks
// CHECK: warpspec.subview %{{.*}}[192] : <64x256xbf16, smem> -> <64x64xbf16, smem>
// CHECK: warpspec.subview %{{.*}}[0] : <64x256xbf16, smem> -> <64x256xbf16, smem>
// CHECK: warpspec.subview %{{.*}}[64] : <64x96xbf16, smem> -> <64x32xbf16, smem>
// CHECK: warpspec.subview %{{.*}}[128] : <64x256xf32, tmem> -> <64x128xf32, tmem>
// CHECK: warpspec.store %{{.*}} {col_offset = 192 : i64} : <64x64xf32>, memref<?x4x256xbf16>
func.func @chunks(%s: !warpspec.buffer<64x256xbf16, smem>,
                  %n: !warpspec.buffer<64x96xbf16, smem>,
                  %t: !warpspec.buffer<64x256xf32, tmem>,
                  %v: !warpspec.acc<64x64xf32>, %o: memref<?x4x256xbf16>,
                  %i: i32) {
  %a = warpspec.subview %s[192] : <64x256xbf16, smem> -> <64x64xbf16, smem>
  %b = warpspec.subview %s[0] : <64x256xbf16, smem> -> <64x256xbf16, smem>
  %c = warpspec.subview %n[64] : <64x96xbf16, smem> -> <64x32xbf16, smem>
  %d = warpspec.subview %t[128] : <64x256xf32, tmem> -> <64x128xf32, tmem>
  warpspec.store %v to %o[%i, %i] rows(%i) {col_offset = 192 : i64}
      : !warpspec.acc<64x64xf32>, memref<?x4x256xbf16>
  return
}

// -----

// A view past the source's columns.
func.func @negative_subview_past_the_end(%s: !warpspec.buffer<64x256xbf16, smem>) {
  // expected-error @+1 {{'warpspec.subview' op columns [256, 320) are not inside the source's 256}}
  %a = warpspec.subview %s[256] : <64x256xbf16, smem> -> <64x64xbf16, smem>
  return
}

// -----

// Half a 64-column chunk: the view would need another swizzle.
func.func @negative_subview_half_chunk(%s: !warpspec.buffer<64x256xbf16, smem>) {
  // expected-error @+1 {{'warpspec.subview' op a shared-memory view covers whole 64-column chunks of the source}}
  %a = warpspec.subview %s[32] : <64x256xbf16, smem> -> <64x32xbf16, smem>
  return
}

// -----

// Another row count, element type or memory space is no view.
func.func @negative_subview_rows(%s: !warpspec.buffer<64x256xbf16, smem>) {
  // expected-error @+1 {{'warpspec.subview' op result must be a 2-D buffer of the source's rows, element type and memory space}}
  %a = warpspec.subview %s[0] : <64x256xbf16, smem> -> <32x64xbf16, smem>
  return
}

// -----

// Tensor-memory views are of f32 accumulators.
func.func @negative_subview_tmem_bf16(%t: !warpspec.buffer<64x128xbf16, tmem>) {
  // expected-error @+1 {{'warpspec.subview' op tensor-memory views are of f32 buffers}}
  %a = warpspec.subview %t[64] : <64x128xbf16, tmem> -> <64x64xbf16, tmem>
  return
}

// -----

// A chunk's columns must stay inside the head dimension.
func.func @negative_store_col_offset_past_head_dim(%v: !warpspec.acc<64x64xf32>,
                                                   %o: memref<?x4x256xbf16>, %i: i32) {
  // expected-error @+1 {{'warpspec.store' op col_offset 224 with a tile of 64 columns must be a multiple of 16 and stay inside the destination's static head dimension}}
  warpspec.store %v to %o[%i, %i] rows(%i) {col_offset = 224 : i64}
      : !warpspec.acc<64x64xf32>, memref<?x4x256xbf16>
  return
}

// -----

// A buffer of 32-column chunks (chunk_cols = 32, the half-split pair-complete
// pieces): a view of whole 64-column chunks keeps the layout, one 32-column
// piece is an ordinary 32-column tile (the same 64-byte swizzle).
// CHECK-LABEL: func.func @pieces
// CHECK: warpspec.subview %{{.*}}[64] : <64x128xbf16, smem, chunk_cols = 32> -> <64x64xbf16, smem, chunk_cols = 32>
// CHECK: warpspec.subview %{{.*}}[32] : <64x128xbf16, smem, chunk_cols = 32> -> <64x32xbf16, smem>
func.func @pieces(%s: !warpspec.buffer<64x128xbf16, smem, chunk_cols = 32>) {
  %a = warpspec.subview %s[64] : <64x128xbf16, smem, chunk_cols = 32> -> <64x64xbf16, smem, chunk_cols = 32>
  %b = warpspec.subview %s[32] : <64x128xbf16, smem, chunk_cols = 32> -> <64x32xbf16, smem>
  return
}

// -----

// A view of 64 columns of 32-column chunks in the 128-byte-swizzled layout
// would read the pieces as one chunk.
func.func @negative_subview_drops_chunk_cols(%s: !warpspec.buffer<64x128xbf16, smem, chunk_cols = 32>) {
  // expected-error @+1 {{'warpspec.subview' op a shared-memory view covers whole 32-column chunks of the source}}
  %a = warpspec.subview %s[0] : <64x128xbf16, smem, chunk_cols = 32> -> <64x64xbf16, smem>
  return
}
