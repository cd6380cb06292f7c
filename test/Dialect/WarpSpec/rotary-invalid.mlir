// RUN: block-attn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the rotary operations' verifiers
// (RotateOp::verify, RotateTileOp::verify, verifyRotaryOperands in
// lib/Dialect/WarpSpec/IR/WarpSpecOps.cpp) and of the fourth block argument
// of warpspec.tile_loop (TileLoopOp::verify), plus the ODS constraints on
// the i32 position of warpspec.commit and warpspec.tile_position. The ops
// take their operands from function arguments: their verifiers check the
// operands alone.

!tile = !warpspec.buffer<64x128xbf16, smem>
!tab = memref<?x64xf32>

//===----------------------------------------------------------------------===//
// warpspec.rotate: sources and destinations
//===----------------------------------------------------------------------===//

// Two sources, one destination.
func.func @negative_rotate_fewer_dests(%q: !tile, %k: !tile, %i: i32,
                                       %cos: !tab, %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate' op needs as many destinations as sources (at least one), got 2 and 1}}
  warpspec.rotate(%q, %k) into(%q) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false}
      : !tile, !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>
!tab = memref<?x64xf32>

// One source, three destinations.
func.func @negative_rotate_more_dests(%q: !tile, %i: i32, %cos: !tab,
                                      %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate' op needs as many destinations as sources (at least one), got 1 and 3}}
  warpspec.rotate(%q) into(%q, %q, %q) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false}
      : !tile into !tile, !tile, !tile
  return
}

// -----

!tab = memref<?x64xf32>

// Nothing to rotate (the generic form: the custom one has no empty type
// list).
func.func @negative_rotate_no_tiles(%i: i32, %cos: !tab, %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate' op needs as many destinations as sources (at least one), got 0 and 0}}
  "warpspec.rotate"(%i, %i, %i, %cos, %sin)
      <{interleaved = false,
        operandSegmentSizes = array<i32: 0, 0, 1, 1, 1, 1, 1, 0>}>
      : (i32, i32, i32, !tab, !tab) -> ()
  return
}

//===----------------------------------------------------------------------===//
// warpspec.rotate: tile types
//===----------------------------------------------------------------------===//

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>
!tab = memref<?x64xf32>

// Every tile has the type of the first source: not a narrower destination.
func.func @negative_rotate_mixed_shapes(%q: !tile,
                                        %d: !warpspec.buffer<64x64xbf16, smem>,
                                        %i: i32, %cos: !tab, %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate' op rotates 16-bit shared-memory tiles of one type, got '!warpspec.buffer<64x128xbf16, smem>' and '!warpspec.buffer<64x64xbf16, smem>'}}
  warpspec.rotate(%q) into(%d) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false}
      : !tile into !warpspec.buffer<64x64xbf16, smem>
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>
!tab = memref<?x64xf32>

// bf16 and f16 are both 16-bit, but the tiles share one element type.
func.func @negative_rotate_mixed_element_types(
    %q: !tile, %k: !warpspec.buffer<64x128xf16, smem>, %i: i32, %cos: !tab,
    %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate' op rotates 16-bit shared-memory tiles of one type, got '!warpspec.buffer<64x128xbf16, smem>' and '!warpspec.buffer<64x128xf16, smem>'}}
  warpspec.rotate(%q, %k) into(%q, %k) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false}
      : !tile, !warpspec.buffer<64x128xf16, smem>
        into !tile, !warpspec.buffer<64x128xf16, smem>
  return
}

// -----

!f32tile = !warpspec.buffer<64x128xf32, smem>
!tab = memref<?x64xf32>

// f32 tiles are not rotated in shared memory (rotate_tile turns f32 register
// tiles).
func.func @negative_rotate_f32_tiles(%t: !f32tile, %i: i32, %cos: !tab,
                                     %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate' op rotates 16-bit shared-memory tiles of one type, got '!warpspec.buffer<64x128xf32, smem>' and '!warpspec.buffer<64x128xf32, smem>'}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false}
      : !f32tile into !f32tile
  return
}

// -----

!i16tile = !warpspec.buffer<64x128xi16, smem>
!tab = memref<?x64xf32>

// 16-bit integers are not 16-bit floats.
func.func @negative_rotate_i16_tiles(%t: !i16tile, %i: i32, %cos: !tab,
                                     %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate' op rotates 16-bit shared-memory tiles of one type, got '!warpspec.buffer<64x128xi16, smem>' and '!warpspec.buffer<64x128xi16, smem>'}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false}
      : !i16tile into !i16tile
  return
}

// -----

!tmemtile = !warpspec.buffer<64x128xbf16, tmem>
!tab = memref<?x64xf32>

// Tensor-memory tiles are out of the threads' reach.
func.func @negative_rotate_tmem_tiles(%t: !tmemtile, %i: i32, %cos: !tab,
                                      %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate' op rotates 16-bit shared-memory tiles of one type, got '!warpspec.buffer<64x128xbf16, tmem>' and '!warpspec.buffer<64x128xbf16, tmem>'}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false}
      : !tmemtile into !tmemtile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>
!tab = memref<?x64xf32>

// A shared-memory source into a tensor-memory destination of the same shape.
func.func @negative_rotate_tmem_dest(%q: !tile,
                                     %d: !warpspec.buffer<64x128xbf16, tmem>,
                                     %i: i32, %cos: !tab, %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate' op rotates 16-bit shared-memory tiles of one type, got '!warpspec.buffer<64x128xbf16, smem>' and '!warpspec.buffer<64x128xbf16, tmem>'}}
  warpspec.rotate(%q) into(%d) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false}
      : !tile into !warpspec.buffer<64x128xbf16, tmem>
  return
}

// -----

!vec = !warpspec.buffer<128xbf16, smem>
!tab = memref<?x64xf32>

// Tiles are 2-D: rows of head_dim elements.
func.func @negative_rotate_1d_tiles(%t: !vec, %i: i32, %cos: !tab,
                                    %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate' op rotates 16-bit shared-memory tiles of one type, got '!warpspec.buffer<128xbf16, smem>' and '!warpspec.buffer<128xbf16, smem>'}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false} : !vec into !vec
  return
}

//===----------------------------------------------------------------------===//
// warpspec.rotate: angles (verifyRotaryOperands)
//===----------------------------------------------------------------------===//

// -----

!tile72 = !warpspec.buffer<64x72xbf16, smem>
!tab36 = memref<?x36xf32>

// head_dim 72 is even, but not a multiple of 16 (the 16-byte units of the
// rotation and the 128-byte swizzle rows).
func.func @negative_rotate_head_dim_72(%t: !tile72, %i: i32, %cos: !tab36,
                                       %sin: !tab36) {
  // expected-error @+1 {{'warpspec.rotate' op rotary embeddings need a head dim that is a multiple of 16, got 72}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab36, !tab36) {interleaved = true}
      : !tile72 into !tile72
  return
}

// -----

!tile8 = !warpspec.buffer<64x8xbf16, smem>

// head_dim 8, below 16; checked before the angles (here a theta).
func.func @negative_rotate_head_dim_8(%t: !tile8, %i: i32) {
  // expected-error @+1 {{'warpspec.rotate' op rotary embeddings need a head dim that is a multiple of 16, got 8}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      {interleaved = false, theta = 10000.0 : f32} : !tile8 into !tile8
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>
!tab = memref<?x64xf32>

// Tables and theta: which angles?
func.func @negative_rotate_tables_and_theta(%t: !tile, %i: i32, %cos: !tab,
                                            %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate' op needs either cos/sin tables or a theta, not both or neither}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false, theta = 10000.0 : f32}
      : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>

// Neither tables nor theta: no angles.
func.func @negative_rotate_no_angles(%t: !tile, %i: i32) {
  // expected-error @+1 {{'warpspec.rotate' op needs either cos/sin tables or a theta, not both or neither}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      {interleaved = false} : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>

// Explicit positions do not replace the angles.
func.func @negative_rotate_positions_no_angles(%t: !tile, %i: i32,
                                               %pos: memref<?xi32>) {
  // expected-error @+1 {{'warpspec.rotate' op needs either cos/sin tables or a theta, not both or neither}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      positions(%pos : memref<?xi32>) {interleaved = false}
      : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>

// theta = 1: every frequency would be 1.
func.func @negative_rotate_theta_one(%t: !tile, %i: i32) {
  // expected-error @+1 {{'warpspec.rotate' op theta must be finite and greater than 1, got 1.000000e+00}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      {interleaved = false, theta = 1.0 : f32} : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>

// A theta below 1.
func.func @negative_rotate_theta_half(%t: !tile, %i: i32) {
  // expected-error @+1 {{'warpspec.rotate' op theta must be finite and greater than 1, got 5.000000e-01}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      {interleaved = false, theta = 0.5 : f32} : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>

// A negative theta.
func.func @negative_rotate_theta_negative(%t: !tile, %i: i32) {
  // expected-error @+1 {{'warpspec.rotate' op theta must be finite and greater than 1, got -1.000000e+04}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      {interleaved = false, theta = -10000.0 : f32} : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>

// An infinite theta (0x7F800000 is +inf in f32).
func.func @negative_rotate_theta_inf(%t: !tile, %i: i32) {
  // expected-error @+1 {{'warpspec.rotate' op theta must be finite and greater than 1, got INF}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      {interleaved = false, theta = 0x7F800000 : f32} : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>

// A NaN theta (0x7FC00000 is a quiet NaN in f32).
func.func @negative_rotate_theta_nan(%t: !tile, %i: i32) {
  // expected-error @+1 {{'warpspec.rotate' op theta must be finite and greater than 1, got nan}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      {interleaved = false, theta = 0x7FC00000 : f32} : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>

// Tables of head_dim columns instead of head_dim / 2 (one entry per pair).
func.func @negative_rotate_table_full_width(%t: !tile, %i: i32,
                                            %cos: memref<?x128xf32>,
                                            %sin: memref<?x128xf32>) {
  // expected-error @+1 {{'warpspec.rotate' op rotary tables must be contiguous memref<?x64xf32>, got 'memref<?x128xf32>'}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {interleaved = false} : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>

// A dynamic pair dimension: the row stride is not known to be head_dim / 2.
func.func @negative_rotate_table_dynamic_width(%t: !tile, %i: i32,
                                               %cos: memref<?x?xf32>,
                                               %sin: memref<?x?xf32>) {
  // expected-error @+1 {{'warpspec.rotate' op rotary tables must be contiguous memref<?x64xf32>, got 'memref<?x?xf32>'}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x?xf32>, memref<?x?xf32>)
      {interleaved = false} : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>

// Tables are f32, not bf16.
func.func @negative_rotate_table_bf16(%t: !tile, %i: i32,
                                      %cos: memref<?x64xbf16>,
                                      %sin: memref<?x64xbf16>) {
  // expected-error @+1 {{'warpspec.rotate' op rotary tables must be contiguous memref<?x64xf32>, got 'memref<?x64xbf16>'}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x64xbf16>, memref<?x64xbf16>)
      {interleaved = false} : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>

// A flat table (rank 1).
func.func @negative_rotate_table_rank_1(%t: !tile, %i: i32,
                                        %cos: memref<?xf32>,
                                        %sin: memref<?xf32>) {
  // expected-error @+1 {{'warpspec.rotate' op rotary tables must be contiguous memref<?x64xf32>, got 'memref<?xf32>'}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?xf32>, memref<?xf32>)
      {interleaved = false} : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>
!tab = memref<?x64xf32>
!strided = memref<?x64xf32, strided<[128, 1]>>

// The sin table is checked too: a strided view (every other row of a wider
// table) is not contiguous.
func.func @negative_rotate_sin_strided(%t: !tile, %i: i32, %cos: !tab,
                                       %sin: !strided) {
  // expected-error @+1 {{'warpspec.rotate' op rotary tables must be contiguous memref<?x64xf32>, got 'memref<?x64xf32, strided<[128, 1]>>'}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !strided) {interleaved = false}
      : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>
!tab = memref<?x64xf32>

// Positions are i32 token positions, not i64.
func.func @negative_rotate_positions_i64(%t: !tile, %i: i32, %cos: !tab,
                                         %sin: !tab, %pos: memref<?xi64>) {
  // expected-error @+1 {{'warpspec.rotate' op positions must be a rank-1 memref of i32, got 'memref<?xi64>'}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) positions(%pos : memref<?xi64>)
      {interleaved = false} : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>

// Positions over the tokens are rank 1, not [batch, tokens].
func.func @negative_rotate_positions_rank_2(%t: !tile, %i: i32,
                                            %pos: memref<?x?xi32>) {
  // expected-error @+1 {{'warpspec.rotate' op positions must be a rank-1 memref of i32, got 'memref<?x?xi32>'}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      positions(%pos : memref<?x?xi32>)
      {interleaved = false, theta = 10000.0 : f32} : !tile into !tile
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>
!tab = memref<?x64xf32>

// The position is an i32 (ODS); in the generic form it can be mistyped.
func.func @negative_rotate_position_index(%t: !tile, %i: i32, %p: index,
                                          %cos: !tab, %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate' op operand #4 must be 32-bit signless integer, but got 'index'}}
  "warpspec.rotate"(%t, %t, %i, %i, %p, %cos, %sin)
      <{interleaved = false,
        operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0>}>
      : (!tile, !tile, i32, i32, index, !tab, !tab) -> ()
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>
!tab = memref<?x64xf32>

// interleaved is required: the layout of the pairs is never implicit.
func.func @negative_rotate_no_layout(%t: !tile, %i: i32, %cos: !tab,
                                     %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate' op requires attribute 'interleaved'}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) : !tile into !tile
  return
}

//===----------------------------------------------------------------------===//
// warpspec.rotate_tile
//===----------------------------------------------------------------------===//

// -----

!acc = !warpspec.acc<64x128xf32>
!tab = memref<?x64xf32>

// The result has the type of the value.
func.func @negative_rotate_tile_result_type(%a: !acc, %i: i32, %cos: !tab,
                                            %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate_tile' op rotates an f32 register tile into one of the same type, got '!warpspec.acc<64x128xf32>' and '!warpspec.acc<64x64xf32>'}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false}
      : !acc -> !warpspec.acc<64x64xf32>
  return
}

// -----

!acc = !warpspec.acc<64x128xbf16>
!tab = memref<?x64xf32>

// A 16-bit register tile (an MMA A operand) is not rotated; the gradients
// are, in f32, before their rounding.
func.func @negative_rotate_tile_bf16(%a: !acc, %i: i32, %cos: !tab,
                                     %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate_tile' op rotates an f32 register tile into one of the same type, got '!warpspec.acc<64x128xbf16>' and '!warpspec.acc<64x128xbf16>'}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false, inverse}
      : !acc -> !acc
  return
}

// -----

!acc = !warpspec.acc<128xf32>
!tab = memref<?x64xf32>

// A 1-D register tile has no rows.
func.func @negative_rotate_tile_1d(%a: !acc, %i: i32, %cos: !tab,
                                   %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate_tile' op rotates an f32 register tile into one of the same type, got '!warpspec.acc<128xf32>' and '!warpspec.acc<128xf32>'}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false} : !acc -> !acc
  return
}

// -----

!acc = !warpspec.acc<64x40xf32>
!tab = memref<?x20xf32>

// The head dim rule applies to register tiles too.
func.func @negative_rotate_tile_head_dim_40(%a: !acc, %i: i32, %cos: !tab,
                                            %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate_tile' op rotary embeddings need a head dim that is a multiple of 16, got 40}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false, inverse}
      : !acc -> !acc
  return
}

// -----

!acc = !warpspec.acc<64x128xf32>
!tab = memref<?x64xf32>

// Tables and theta.
func.func @negative_rotate_tile_tables_and_theta(%a: !acc, %i: i32,
                                                 %cos: !tab, %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate_tile' op needs either cos/sin tables or a theta, not both or neither}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false, inverse,
                                    theta = 10000.0 : f32}
      : !acc -> !acc
  return
}

// -----

!acc = !warpspec.acc<64x128xf32>

// Neither.
func.func @negative_rotate_tile_no_angles(%a: !acc, %i: i32) {
  // expected-error @+1 {{'warpspec.rotate_tile' op needs either cos/sin tables or a theta, not both or neither}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      {interleaved = false, inverse} : !acc -> !acc
  return
}

// -----

!acc = !warpspec.acc<64x128xf32>

// theta = 1.
func.func @negative_rotate_tile_theta_one(%a: !acc, %i: i32) {
  // expected-error @+1 {{'warpspec.rotate_tile' op theta must be finite and greater than 1, got 1.000000e+00}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      {interleaved = true, inverse, theta = 1.0 : f32} : !acc -> !acc
  return
}

// -----

!acc = !warpspec.acc<64x128xf32>

// Tables of f16.
func.func @negative_rotate_tile_table_f16(%a: !acc, %i: i32,
                                          %cos: memref<?x64xf16>,
                                          %sin: memref<?x64xf16>) {
  // expected-error @+1 {{'warpspec.rotate_tile' op rotary tables must be contiguous memref<?x64xf32>, got 'memref<?x64xf16>'}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      cos(%cos, %sin : memref<?x64xf16>, memref<?x64xf16>)
      {interleaved = false, inverse} : !acc -> !acc
  return
}

// -----

!acc = !warpspec.acc<64x64xf32>
!tab = memref<?x64xf32>

// Tables sized for head_dim 128 on a head_dim-64 tile (32 pairs).
func.func @negative_rotate_tile_table_width(%a: !acc, %i: i32, %cos: !tab,
                                            %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate_tile' op rotary tables must be contiguous memref<?x32xf32>, got 'memref<?x64xf32>'}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = true} : !acc -> !acc
  return
}

// -----

!acc = !warpspec.acc<64x128xf32>

// Positions of f32.
func.func @negative_rotate_tile_positions_f32(%a: !acc, %i: i32,
                                              %pos: memref<?xf32>) {
  // expected-error @+1 {{'warpspec.rotate_tile' op positions must be a rank-1 memref of i32, got 'memref<?xf32>'}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      positions(%pos : memref<?xf32>)
      {interleaved = false, inverse, theta = 10000.0 : f32} : !acc -> !acc
  return
}

//===----------------------------------------------------------------------===//
// Positions of tiles: tile_loop, commit, tile_position
//===----------------------------------------------------------------------===//

// -----

// Five loop arguments: row, rows, head, position and one too many.
func.func @negative_tile_loop_five_args(%cu: memref<?xi32>, %n: index) {
  // expected-error @+1 {{'warpspec.tile_loop' op body must take three i32 arguments (row, rows, head), and optionally a fourth (the position of the row inside its sequence)}}
  warpspec.tile_loop (%row, %rows, %head, %pos, %extra) in %cu : memref<?xi32>
      heads(%n) tokens(%n) block_size(64) {
  }
  return
}

// -----

// In the generic form the fourth argument can be mistyped: an i64 position.
func.func @negative_tile_loop_i64_position(%cu: memref<?xi32>, %n: index) {
  // expected-error @+1 {{'warpspec.tile_loop' op body must take three i32 arguments (row, rows, head), and optionally a fourth (the position of the row inside its sequence)}}
  "warpspec.tile_loop"(%cu, %n, %n) <{block_size = 64 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}> ({
  ^bb0(%row: i32, %rows: i32, %head: i32, %pos: i64):
  }) : (memref<?xi32>, index, index) -> ()
  return
}

// -----

// An index position.
func.func @negative_tile_loop_index_position(%cu: memref<?xi32>, %n: index) {
  // expected-error @+1 {{'warpspec.tile_loop' op body must take three i32 arguments (row, rows, head), and optionally a fourth (the position of the row inside its sequence)}}
  "warpspec.tile_loop"(%cu, %n, %n) <{block_size = 64 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}> ({
  ^bb0(%row: i32, %rows: i32, %head: i32, %pos: index):
  }) : (memref<?xi32>, index, index) -> ()
  return
}

// -----

// The committed position is an i32, like the tile's other coordinates.
func.func @negative_commit_position_i64(%s: !warpspec.slot, %i: i32, %p: i64) {
  // expected-error @+1 {{'warpspec.commit' op operand #4 must be 32-bit signless integer, but got 'i64'}}
  "warpspec.commit"(%s, %i, %i, %i, %p) : (!warpspec.slot, i32, i32, i32, i64) -> ()
  return
}

// -----

// tile_position returns an i32.
func.func @negative_tile_position_index(%s: !warpspec.slot) {
  // expected-error @+1 {{'warpspec.tile_position' op result #0 must be 32-bit signless integer, but got 'index'}}
  %p = "warpspec.tile_position"(%s) : (!warpspec.slot) -> index
  return
}

//===----------------------------------------------------------------------===//
// warpspec.rotary_angles and rotate_tile ... angles(...)
//===----------------------------------------------------------------------===//

// -----

!acc = !warpspec.acc<64x128xf32>
!tab = memref<?x64xf32>

// The angles of a rotation are read once: from an angles tile, or from
// tables (or theta), not both.
func.func @negative_rotate_tile_angles_and_tables(%a: !acc, %g: !acc, %i: i32,
                                                  %cos: !tab, %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotate_tile' op takes its angles either from angles(...) or from tables or theta, not both}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) angles(%g : !acc) {interleaved = false}
      : !acc -> !acc
  return
}

// -----

!acc = !warpspec.acc<64x128xf32>

// An angles tile has the rotated tile's shape (one angle per pair).
func.func @negative_rotate_tile_angles_type(%a: !acc,
                                            %g: !warpspec.acc<64x64xf32>,
                                            %i: i32) {
  // expected-error @+1 {{'warpspec.rotate_tile' op angles must be a tile of the rotated tile's type '!warpspec.acc<64x128xf32>', got '!warpspec.acc<64x64xf32>'}}
  %r = warpspec.rotate_tile %a rows(%i) row(%i) position(%i)
      angles(%g : !warpspec.acc<64x64xf32>) {interleaved = false} : !acc -> !acc
  return
}

// -----

!tab = memref<?x64xf32>

// rotary_angles produces f32 (cosines and sines).
func.func @negative_rotary_angles_bf16(%i: i32, %cos: !tab, %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotary_angles' op produces an f32 register tile, got '!warpspec.acc<64x128xbf16>'}}
  %g = warpspec.rotary_angles rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false}
      : !warpspec.acc<64x128xbf16>
  return
}

// -----

!tab = memref<?x64xf32>

// Its table checks are rotate_tile's.
func.func @negative_rotary_angles_tables_and_theta(%i: i32, %cos: !tab,
                                                   %sin: !tab) {
  // expected-error @+1 {{'warpspec.rotary_angles' op needs either cos/sin tables or a theta, not both or neither}}
  %g = warpspec.rotary_angles rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) {interleaved = false, theta = 1.0e4 : f32}
      : !warpspec.acc<64x128xf32>
  return
}

// -----

!tab = memref<?x64xf32>

// The rows' positions come from one place: read here from a positions
// tensor, or read before by warpspec.load_positions.
func.func @negative_rotary_angles_positions_twice(
    %i: i32, %cos: !tab, %sin: !tab, %positions: memref<?xi32>,
    %read: !warpspec.rows<64xi32>) {
  // expected-error @+1 {{'warpspec.rotary_angles' op takes its rows' positions from a positions tensor or from row_positions, not both}}
  %g = warpspec.rotary_angles rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab) positions(%positions : memref<?xi32>)
      row_positions(%read : !warpspec.rows<64xi32>) {interleaved = false}
      : !warpspec.acc<64x128xf32>
  return
}

// -----

!tab = memref<?x64xf32>

// row_positions are i32 positions of the tile's rows.
func.func @negative_rotary_angles_row_positions_f32(
    %i: i32, %cos: !tab, %sin: !tab, %read: !warpspec.rows<64xf32>) {
  // expected-error @+1 {{'warpspec.rotary_angles' op row_positions must be !warpspec.rows<64xi32>, got '!warpspec.rows<64xf32>'}}
  %g = warpspec.rotary_angles rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab)
      row_positions(%read : !warpspec.rows<64xf32>) {interleaved = false}
      : !warpspec.acc<64x128xf32>
  return
}

// -----

// warpspec.load_positions reads an i32 positions tensor [T].
func.func @negative_load_positions_f32(%i: i32, %positions: memref<?xf32>) {
  // expected-error @+1 {{'warpspec.load_positions' op positions must be a rank-1 memref of i32, got 'memref<?xf32>'}}
  %p = warpspec.load_positions %positions[%i]
      : memref<?xf32> -> !warpspec.rows<64xi32>
  return
}

// -----

// ... into the i32 per-row values of one warpgroup's 64-row register tile.
func.func @negative_load_positions_rows(%i: i32, %positions: memref<?xi32>) {
  // expected-error @+1 {{'warpspec.load_positions' op reads the positions of a 64-row register tile into !warpspec.rows<64xi32>, got '!warpspec.rows<128xi32>'}}
  %p = warpspec.load_positions %positions[%i]
      : memref<?xi32> -> !warpspec.rows<128xi32>
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>
!tab = memref<?x64xf32>

// A tile's positions in shared memory (a slot's buffer that
// warpspec.copy_positions filled) hold one per row of the rotated tiles.
func.func @negative_rotate_slot_positions_short(%t: !tile, %i: i32, %cos: !tab,
                                                %sin: !tab,
                                                %pos: !warpspec.buffer<32xi32, smem>) {
  // expected-error @+1 {{'warpspec.rotate' op positions in shared memory must be a 1-D i32 buffer of at least the tile's 64 rows, got '!warpspec.buffer<32xi32, smem>'}}
  warpspec.rotate(%t) into(%t) rows(%i) row(%i) position(%i)
      cos(%cos, %sin : !tab, !tab)
      positions(%pos : !warpspec.buffer<32xi32, smem>)
      {interleaved = false} : !tile into !tile
  return
}

// -----

// warpspec.load_positions from a slot reads i32 positions.
func.func @negative_load_positions_slot_f32(%i: i32,
                                            %pos: !warpspec.buffer<64xf32, smem>) {
  // expected-error @+1 {{'warpspec.load_positions' op positions in shared memory must be a 1-D i32 buffer of at least the tile's 64 rows, got '!warpspec.buffer<64xf32, smem>'}}
  %p = warpspec.load_positions %pos[%i]
      : !warpspec.buffer<64xf32, smem> -> !warpspec.rows<64xi32>
  return
}

// -----

// warpspec.copy_positions copies from an i32 positions tensor [T].
func.func @negative_copy_positions_i64(%i: i32, %positions: memref<?xi64>,
                                       %b: !warpspec.buffer<64xi32, smem>) {
  // expected-error @+1 {{'warpspec.copy_positions' op positions must be a rank-1 memref of i32, got 'memref<?xi64>'}}
  warpspec.copy_positions %positions[%i] into %b
      : memref<?xi64>, !warpspec.buffer<64xi32, smem>
  return
}

// -----

// ... into one i32 per row.
func.func @negative_copy_positions_2d(%i: i32, %positions: memref<?xi32>,
                                      %b: !warpspec.buffer<64x2xi32, smem>) {
  // expected-error @+1 {{'warpspec.copy_positions' op copies into a 1-D i32 shared-memory buffer, got '!warpspec.buffer<64x2xi32, smem>'}}
  warpspec.copy_positions %positions[%i] into %b
      : memref<?xi32>, !warpspec.buffer<64x2xi32, smem>
  return
}

// -----

// ... of a slot the producer holds: the copy completes on its full barrier.
func.func @negative_copy_positions_no_slot(%i: i32, %positions: memref<?xi32>,
                                           %b: !warpspec.buffer<64xi32, smem>) {
  // expected-error @+1 {{'warpspec.copy_positions' op destination must be a buffer of a slot acquired by the producer (or, lowered, of a warpspec.slot_buffers)}}
  warpspec.copy_positions %positions[%i] into %b
      : memref<?xi32>, !warpspec.buffer<64xi32, smem>
  return
}
