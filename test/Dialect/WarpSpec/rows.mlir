// RUN: block-attn-opt %s | block-attn-opt | FileCheck %s
// RUN: block-attn-opt %s --mlir-print-op-generic | block-attn-opt | FileCheck %s

// Round trip of the per-row forms of causal attention and the log-sum-exp:
// softmax with causal and its lse result, softmax_grad with dlse,
// store_rows and load_rows; load_positions and rotary_angles row_positions.

// CHECK-LABEL: func.func @rows
// CHECK: %{{.*}}, %{{.*}}, %[[LSE:.*]] = warpspec.softmax %{{.*}} valid_cols(%{{.*}}) scale(%{{.*}}) causal : <64x64xf32> -> <64x64xbf16>, <64xf32>, !warpspec.rows<64xf32>
// CHECK: warpspec.store_rows %[[LSE]], %{{.*}}[%{{.*}}, %{{.*}}] rows(%{{.*}}) : <64xf32>, memref<4x?xf32>
// CHECK: %[[P:.*]], %{{.*}} = warpspec.softmax %{{.*}} valid_cols(%{{.*}}) valid_rows(%{{.*}}) scale(%{{.*}}) normalize causal : <64x64xf32> -> <64x64xf32>, <64xf32>
// CHECK: %[[G:.*]] = warpspec.load_rows %{{.*}}[%{{.*}}, %{{.*}}] rows(%{{.*}}) : memref<?x?xf32> -> <64xf32>
// CHECK: warpspec.softmax_grad %[[P]], %{{.*}} scale(%{{.*}}) dlse(%[[G]] : !warpspec.rows<64xf32>) : <64x64xf32>, <64x64xf32> -> <64x64xbf16>
func.func @rows(%s: !warpspec.acc<64x64xf32>, %i: i32, %scale: f32,
                %lse: memref<4x?xf32>, %dlse: memref<?x?xf32>) {
  %p, %l, %x = warpspec.softmax %s valid_cols(%i) scale(%scale) causal
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>, !warpspec.rows<64xf32>
  warpspec.store_rows %x, %lse[%i, %i] rows(%i) : !warpspec.rows<64xf32>, memref<4x?xf32>
  %pn, %l2 = warpspec.softmax %s valid_cols(%i) valid_rows(%i) scale(%scale) normalize causal
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xf32>, !warpspec.rows<64xf32>
  %g = warpspec.load_rows %dlse[%i, %i] rows(%i) : memref<?x?xf32> -> !warpspec.rows<64xf32>
  %ds = warpspec.softmax_grad %pn, %pn scale(%scale) dlse(%g : !warpspec.rows<64xf32>)
      : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>
  return
}

// A later query half of a 128-token block: the causal mask's rows start at
// the block's token 64.
// CHECK-LABEL: func.func @causal_row_offset
// CHECK: warpspec.softmax %{{.*}} valid_cols(%{{.*}}) valid_rows(%{{.*}}) scale(%{{.*}}) normalize causal row_offset(64) : <64x128xf32> -> <64x128xf32>, <64xf32>
func.func @causal_row_offset(%s: !warpspec.acc<64x128xf32>, %i: i32, %scale: f32) {
  %p, %l = warpspec.softmax %s valid_cols(%i) valid_rows(%i) scale(%scale) normalize causal row_offset(64)
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xf32>, !warpspec.rows<64xf32>
  return
}

// sm_100a's query halves of a 128-token block: the softmax replica's half,
// known at run time (64 * warpspec.replica_id), offsets the causal mask's
// rows.
// CHECK-LABEL: func.func @causal_dynamic_row_offset
// CHECK-SAME: %{{.*}}: i32, %{{.*}}: f32, %[[OFF:.*]]: i32)
// CHECK: warpspec.softmax %{{.*}} valid_cols(%{{.*}}) scale(%{{.*}}) causal dynamic_row_offset(%[[OFF]]) : <64x128xf32> -> <64x128xbf16>, <64xf32>, !warpspec.rows<64xf32>
func.func @causal_dynamic_row_offset(%s: !warpspec.acc<64x128xf32>, %i: i32, %scale: f32,
                                     %off: i32) {
  %p, %l, %x = warpspec.softmax %s valid_cols(%i) scale(%scale) causal dynamic_row_offset(%off)
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xbf16>, !warpspec.rows<64xf32>, !warpspec.rows<64xf32>
  return
}

// The positions of a register tile's rows, read ahead of the angles that
// warpspec.rotary_angles then reads at them (row_positions).
// CHECK-LABEL: func.func @row_positions
// CHECK: %[[READ:.*]] = warpspec.load_positions %{{.*}}[%{{.*}}] : memref<?xi32> -> <64xi32>
// CHECK: warpspec.rotary_angles rows(%{{.*}}) row(%{{.*}}) position(%{{.*}}) cos(%{{.*}}, %{{.*}} : memref<?x64xf32>, memref<?x64xf32>) row_positions(%[[READ]] : !warpspec.rows<64xi32>) {interleaved = true} : <64x128xf32>
func.func @row_positions(%i: i32, %positions: memref<?xi32>,
                         %cos: memref<?x64xf32>, %sin: memref<?x64xf32>) {
  %read = warpspec.load_positions %positions[%i]
      : memref<?xi32> -> !warpspec.rows<64xi32>
  %angles = warpspec.rotary_angles rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
      row_positions(%read : !warpspec.rows<64xi32>) {interleaved = true}
      : !warpspec.acc<64x128xf32>
  return
}
