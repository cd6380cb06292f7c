// RUN: block-attn-opt %s -split-input-file -verify-diagnostics

// The verifiers of the per-row ops of causal attention and the log-sum-exp:
// warpspec.store_rows, warpspec.load_rows, the softmax's lse result and the
// softmax gradient's dlse operand.

// The log-sum-exp memref is f32 [heads, tokens].
func.func @negative_store_rows_bf16(%l: !warpspec.rows<64xf32>,
                                    %m: memref<?x?xbf16>, %i: i32) {
  // expected-error @+1 {{'warpspec.store_rows' op memref must be f32 [heads, tokens] with a unit-stride token dimension, got 'memref<?x?xbf16>'}}
  warpspec.store_rows %l, %m[%i, %i] rows(%i) : !warpspec.rows<64xf32>, memref<?x?xbf16>
  return
}

// -----

func.func @negative_load_rows_strided(%m: memref<?x?xf32, strided<[?, 2]>>,
                                      %i: i32) {
  // expected-error @+1 {{'warpspec.load_rows' op memref must be f32 [heads, tokens] with a unit-stride token dimension, got 'memref<?x?xf32, strided<[?, 2]>>'}}
  %g = warpspec.load_rows %m[%i, %i] rows(%i) : memref<?x?xf32, strided<[?, 2]>> -> !warpspec.rows<64xf32>
  return
}

// -----

func.func @negative_load_rows_f16(%m: memref<?x?xf32>, %i: i32) {
  // expected-error @+1 {{'warpspec.load_rows' op row values must be f32, got 'f16'}}
  %g = warpspec.load_rows %m[%i, %i] rows(%i) : memref<?x?xf32> -> !warpspec.rows<64xf16>
  return
}

// -----

// One log-sum-exp per row of the scores.
func.func @negative_softmax_lse_rows(%s: !warpspec.acc<64x64xf32>, %i: i32,
                                     %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op the log-sum-exp must be !warpspec.rows<64xf32>}}
  %p, %l, %lse = warpspec.softmax %s valid_cols(%i) scale(%scale) causal
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>, !warpspec.rows<32xf32>
  return
}

// -----

func.func @negative_softmax_grad_dlse_rows(%p: !warpspec.acc<64x64xf32>,
                                           %g: !warpspec.rows<32xf32>,
                                           %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax_grad' op dlse must be !warpspec.rows<64xf32>, got '!warpspec.rows<32xf32>'}}
  %ds = warpspec.softmax_grad %p, %p scale(%scale) dlse(%g : !warpspec.rows<32xf32>)
      : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>
  return
}

// -----

// row_offset shifts the causal mask's rows: meaningless without causal.
func.func @negative_row_offset_without_causal(%s: !warpspec.acc<64x128xf32>,
                                              %i: i32, %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op row_offset needs causal (it shifts the causal mask's rows)}}
  %p, %l = warpspec.softmax %s valid_cols(%i) scale(%scale) row_offset(64)
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xbf16>, !warpspec.rows<64xf32>
  return
}

// -----

// The tile's first row is one of the block's tokens, so a column of the tile.
func.func @negative_row_offset_past_columns(%s: !warpspec.acc<64x128xf32>,
                                            %i: i32, %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op row_offset(128) must be below the tile's 128 columns}}
  %p, %l = warpspec.softmax %s valid_cols(%i) scale(%scale) causal row_offset(128)
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xbf16>, !warpspec.rows<64xf32>
  return
}

// -----

// dynamic_row_offset, like row_offset, shifts the causal mask's rows.
func.func @negative_dynamic_row_offset_without_causal(%s: !warpspec.acc<64x128xf32>,
                                                      %i: i32, %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op dynamic_row_offset needs causal (it shifts the causal mask's rows)}}
  %p, %l = warpspec.softmax %s valid_cols(%i) scale(%scale) dynamic_row_offset(%i)
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xbf16>, !warpspec.rows<64xf32>
  return
}

// -----

// One offset or the other: the lowering would not add both.
func.func @negative_both_row_offsets(%s: !warpspec.acc<64x128xf32>,
                                     %i: i32, %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op takes row_offset or dynamic_row_offset, not both}}
  %p, %l = warpspec.softmax %s valid_cols(%i) scale(%scale) causal row_offset(64) dynamic_row_offset(%i)
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xbf16>, !warpspec.rows<64xf32>
  return
}

// -----

// A constant dynamic offset is checked as row_offset is: a column of the tile.
func.func @negative_dynamic_row_offset_past_columns(%s: !warpspec.acc<64x128xf32>,
                                                    %i: i32, %scale: f32) {
  %c128 = arith.constant 128 : i32
  // expected-error @+1 {{'warpspec.softmax' op dynamic_row_offset(128) must be in [0, 128), the tile's columns}}
  %p, %l = warpspec.softmax %s valid_cols(%i) scale(%scale) causal dynamic_row_offset(%c128)
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xbf16>, !warpspec.rows<64xf32>
  return
}

// -----

func.func @negative_dynamic_row_offset_negative(%s: !warpspec.acc<64x128xf32>,
                                                %i: i32, %scale: f32) {
  %cm1 = arith.constant -1 : i32
  // expected-error @+1 {{'warpspec.softmax' op dynamic_row_offset(-1) must be in [0, 128), the tile's columns}}
  %p, %l = warpspec.softmax %s valid_cols(%i) scale(%scale) causal dynamic_row_offset(%cm1)
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xbf16>, !warpspec.rows<64xf32>
  return
}

// -----

// The causal mask applies to a full tile too: a branch to a copy without
// masks would have nothing to drop.
func.func @negative_full_tile_path_causal(%s: !warpspec.acc<64x128xf32>,
                                          %i: i32, %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op full_tile_path does not go with causal (its mask applies to full tiles too)}}
  %p, %l = warpspec.softmax %s valid_cols(%i) scale(%scale) causal {full_tile_path}
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xbf16>, !warpspec.rows<64xf32>
  return
}

// -----

// So does the mask of the blocks that share a tile.
func.func @negative_full_tile_path_block(%s: !warpspec.acc<64x64xf32>,
                                         %i: i32, %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op full_tile_path does not go with block (its mask applies to full tiles too)}}
  %p, %l = warpspec.softmax %s valid_cols(%i) scale(%scale) block(16) {full_tile_path}
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
  return
}
