// RUN: block-attn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of warpspec.concat_columns, warpspec.extract_columns
// (ConcatColumnsOp::verify, ExtractColumnsOp::verify, verifyColumnTile) and of
// warpspec.rotate_tile's head_dim and pair_offset (RotateTileOp::verify), the
// ops that turn the gradients back above head dim 128 (docs/head-dims.md,
// "Rotary embeddings at 192 and 256"), and of warpspec.rotate's split_items and
// rotate_tile's narrow_index and pinned_table_rows (session 26).

// A valid part: chunks 1 and 3 of rows of head dim 256 (pairs 64-127).
func.func @rotate_tile_part(%c1: !warpspec.acc<64x64xf32>,
                            %c3: !warpspec.acc<64x64xf32>, %i: i32,
                            %cos: memref<?x128xf32>, %sin: memref<?x128xf32>) {
  %t = warpspec.concat_columns %c1, %c3
      : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32>
        -> !warpspec.acc<64x128xf32>
  %r = warpspec.rotate_tile %t rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {interleaved = false, inverse, head_dim = 256 : i64,
       pair_offset = 64 : i64}
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xf32>
  %e = warpspec.extract_columns %r[64]
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x64xf32>
  return
}

// -----

// The result is as wide as the inputs together.
func.func @negative_concat_width(%a: !warpspec.acc<64x64xf32>) {
  // expected-error @+1 {{'warpspec.concat_columns' op the result must have the inputs' 128 columns, got 192}}
  %t = warpspec.concat_columns %a, %a
      : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32>
        -> !warpspec.acc<64x192xf32>
  return
}

// -----

// Only f32 tiles: a 16-bit tile's registers hold packed pairs.
func.func @negative_concat_bf16(%a: !warpspec.acc<64x64xbf16>) {
  // expected-error @+1 {{'warpspec.concat_columns' op takes f32 register tiles of 64 rows and a multiple of 8 columns, got '!warpspec.acc<64x64xbf16>'}}
  %t = warpspec.concat_columns %a, %a
      : !warpspec.acc<64x64xbf16>, !warpspec.acc<64x64xbf16>
        -> !warpspec.acc<64x128xf32>
  return
}

// -----

// Tiles of the same rows only.
func.func @negative_concat_rows(%a: !warpspec.acc<64x64xf32>,
                                %b: !warpspec.acc<128x64xf32>) {
  // expected-error @+1 {{'warpspec.concat_columns' op takes f32 register tiles of 64 rows and a multiple of 8 columns, got '!warpspec.acc<128x64xf32>'}}
  %t = warpspec.concat_columns %a, %b
      : !warpspec.acc<64x64xf32>, !warpspec.acc<128x64xf32>
        -> !warpspec.acc<64x128xf32>
  return
}

// -----

func.func @negative_concat_none() {
  // expected-error @+1 {{'warpspec.concat_columns' op needs at least one input}}
  %t = "warpspec.concat_columns"() : () -> !warpspec.acc<64x128xf32>
  return
}

// -----

// A thread's columns repeat every 8: no split inside a run.
func.func @negative_extract_offset(%a: !warpspec.acc<64x128xf32>) {
  // expected-error @+1 {{'warpspec.extract_columns' op columns [4, 68) must start at a multiple of 8 within the source's 128}}
  %e = warpspec.extract_columns %a[4]
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x64xf32>
  return
}

// -----

func.func @negative_extract_past_end(%a: !warpspec.acc<64x128xf32>) {
  // expected-error @+1 {{'warpspec.extract_columns' op columns [96, 160) must start at a multiple of 8 within the source's 128}}
  %e = warpspec.extract_columns %a[96]
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x64xf32>
  return
}

// -----

func.func @negative_extract_width(%a: !warpspec.acc<64x128xf32>) {
  // expected-error @+1 {{'warpspec.extract_columns' op takes f32 register tiles of 64 rows and a multiple of 8 columns, got '!warpspec.acc<64x12xf32>'}}
  %e = warpspec.extract_columns %a[0]
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x12xf32>
  return
}

// -----

// The rows are at least as wide as the part.
func.func @negative_rotate_tile_head_dim_small(
    %a: !warpspec.acc<64x128xf32>, %i: i32, %cos: memref<?x32xf32>,
    %sin: memref<?x32xf32>) {
  // expected-error @+1 {{'warpspec.rotate_tile' op head_dim must be a multiple of 16 no smaller than the tile's 128 columns (also a multiple of 16), got 64}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x32xf32>, memref<?x32xf32>)
      {interleaved = false, inverse, head_dim = 64 : i64}
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xf32>
  return
}

// -----

// The part's pairs are pairs of the rows: 64 pairs from pair 96 pass the
// rows' 128.
func.func @negative_rotate_tile_pair_offset(
    %a: !warpspec.acc<64x128xf32>, %i: i32, %cos: memref<?x128xf32>,
    %sin: memref<?x128xf32>) {
  // expected-error @+1 {{'warpspec.rotate_tile' op pair_offset must be a multiple of 8 with the tile's 64 pairs within the rows' 128, got 96}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {interleaved = false, inverse, head_dim = 256 : i64,
       pair_offset = 96 : i64}
      : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xf32>
  return
}

// -----

func.func @negative_rotate_tile_pair_offset_unaligned(
    %a: !warpspec.acc<64x64xf32>, %i: i32, %cos: memref<?x128xf32>,
    %sin: memref<?x128xf32>) {
  // expected-error @+1 {{'warpspec.rotate_tile' op pair_offset must be a multiple of 8 with the tile's 32 pairs within the rows' 128, got 4}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {interleaved = true, inverse, head_dim = 256 : i64, pair_offset = 4 : i64}
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xf32>
  return
}

// -----

// The tables are the rows' [?, head_dim / 2], not the part's.
func.func @negative_rotate_tile_part_tables(
    %a: !warpspec.acc<64x64xf32>, %i: i32, %cos: memref<?x32xf32>,
    %sin: memref<?x32xf32>) {
  // expected-error @+1 {{'warpspec.rotate_tile' op rotary tables must be contiguous memref<?x128xf32>, got 'memref<?x32xf32>'}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x32xf32>, memref<?x32xf32>)
      {interleaved = true, inverse, head_dim = 256 : i64, pair_offset = 32 : i64}
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xf32>
  return
}

// -----

// A part reads its own angles: a rotary_angles tile is whole rows.
func.func @negative_rotate_tile_part_angles(
    %a: !warpspec.acc<64x64xf32>, %i: i32,
    %angles: !warpspec.acc<64x64xf32>) {
  // expected-error @+1 {{'warpspec.rotate_tile' op a part of wider rows (head_dim, pair_offset) reads its own angles, not angles(...)}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      angles(%angles : !warpspec.acc<64x64xf32>)
      {interleaved = true, inverse, head_dim = 256 : i64, pair_offset = 32 : i64}
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xf32>
  return
}

// -----

// warpspec.rotate of a part of wider rows: the tables are [?, head_dim / 2]
// of the rows, not of the part.
func.func @negative_rotate_part_tables(
    %k: !warpspec.buffer<128x64xbf16, smem>, %i: i32, %cos: memref<?x32xf32>,
    %sin: memref<?x32xf32>) {
  // expected-error @+1 {{'warpspec.rotate' op rotary tables must be contiguous memref<?x128xf32>, got 'memref<?x32xf32>'}}
  warpspec.rotate(%k) into(%k) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x32xf32>, memref<?x32xf32>)
      {interleaved = true, head_dim = 256 : i64, pair_offset = 32 : i64}
      : !warpspec.buffer<128x64xbf16, smem> into !warpspec.buffer<128x64xbf16, smem>
  return
}

// -----

// Its pairs are pairs of the rows: 32 pairs from pair 112 pass the rows' 128.
func.func @negative_rotate_part_pair_offset(
    %k: !warpspec.buffer<128x64xbf16, smem>, %i: i32, %cos: memref<?x128xf32>,
    %sin: memref<?x128xf32>) {
  // expected-error @+1 {{'warpspec.rotate' op pair_offset must be a multiple of 8 with the tile's 32 pairs within the rows' 128, got 112}}
  warpspec.rotate(%k) into(%k) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {interleaved = true, head_dim = 256 : i64, pair_offset = 112 : i64}
      : !warpspec.buffer<128x64xbf16, smem> into !warpspec.buffer<128x64xbf16, smem>
  return
}

// -----

// split_items turns half-split items in two runs, in the pass loop.
func.func @negative_rotate_split_items_interleaved(
    %k: !warpspec.buffer<128x64xbf16, smem>, %i: i32, %cos: memref<?x128xf32>,
    %sin: memref<?x128xf32>) {
  // expected-error @+1 {{'warpspec.rotate' op split_items turns half-split items in the pass_loop, got interleaved pairs}}
  warpspec.rotate(%k) into(%k) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {interleaved = true, head_dim = 256 : i64, pair_offset = 32 : i64,
       pass_loop, split_items}
      : !warpspec.buffer<128x64xbf16, smem> into !warpspec.buffer<128x64xbf16, smem>
  return
}

// -----

func.func @negative_rotate_split_items_no_pass_loop(
    %k: !warpspec.buffer<128x64xbf16, smem>, %i: i32, %cos: memref<?x128xf32>,
    %sin: memref<?x128xf32>) {
  // expected-error @+1 {{'warpspec.rotate' op split_items turns half-split items in the pass_loop, got no pass_loop}}
  warpspec.rotate(%k) into(%k) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {interleaved = false, head_dim = 256 : i64, pair_offset = 32 : i64,
       split_items}
      : !warpspec.buffer<128x64xbf16, smem> into !warpspec.buffer<128x64xbf16, smem>
  return
}

// -----

// narrow_index indexes tables: angles from theta have none.
func.func @negative_rotate_tile_narrow_index_theta(
    %a: !warpspec.acc<64x64xf32>, %i: i32) {
  // expected-error @+1 {{'warpspec.rotate_tile' op narrow_index applies to the cos and sin tables, got no tables}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      {interleaved = false, inverse, theta = 10000.0 : f32,
       head_dim = 256 : i64, pair_offset = 32 : i64, narrow_index}
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xf32>
  return
}

// -----

func.func @negative_rotate_tile_pinned_table_rows_theta(
    %a: !warpspec.acc<64x64xf32>, %i: i32) {
  // expected-error @+1 {{'warpspec.rotate_tile' op pinned_table_rows applies to the cos and sin tables, got no tables}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      {interleaved = false, inverse, theta = 10000.0 : f32,
       head_dim = 256 : i64, pair_offset = 32 : i64, pinned_table_rows}
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xf32>
  return
}
