// RUN: not block-attn-opt %s -split-input-file 2>&1 | FileCheck %s

// A rotation's tables come as a pair: cos and sin, both or neither. In the
// generic form the operand segments can give one without the other (which
// the custom form cannot print, and which the lowering could not bind);
// the verifiers reject both, with or without a theta.

// CHECK-COUNT-4: error: '{{warpspec.rotate|warpspec.rotate_tile}}' op {{cos and sin tables must be given together}}

!tile = !warpspec.buffer<64x128xbf16, smem>
!tab = memref<?x64xf32>

func.func @rotate_cos_without_sin(%t: !tile, %i: i32, %cos: !tab) {
  "warpspec.rotate"(%t, %t, %i, %i, %i, %cos)
      <{interleaved = false,
        operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0>}>
      : (!tile, !tile, i32, i32, i32, !tab) -> ()
  return
}

// -----

!tile = !warpspec.buffer<64x128xbf16, smem>
!tab = memref<?x64xf32>

func.func @rotate_sin_without_cos(%t: !tile, %i: i32, %sin: !tab) {
  "warpspec.rotate"(%t, %t, %i, %i, %i, %sin)
      <{interleaved = false, theta = 1.0e4 : f32,
        operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 1, 0>}>
      : (!tile, !tile, i32, i32, i32, !tab) -> ()
  return
}

// -----

!acc = !warpspec.acc<64x128xf32>
!tab = memref<?x64xf32>

func.func @rotate_tile_cos_without_sin(%a: !acc, %i: i32, %cos: !tab) {
  %r = "warpspec.rotate_tile"(%a, %i, %i, %i, %cos)
      <{interleaved = false, inverse,
        operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0>}>
      : (!acc, i32, i32, i32, !tab) -> !acc
  return
}

// -----

!acc = !warpspec.acc<64x128xf32>
!tab = memref<?x64xf32>

func.func @rotate_tile_sin_without_cos(%a: !acc, %i: i32, %sin: !tab) {
  %r = "warpspec.rotate_tile"(%a, %i, %i, %i, %sin)
      <{interleaved = false, inverse, theta = 1.0e4 : f32,
        operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1, 0, 0>}>
      : (!acc, i32, i32, i32, !tab) -> !acc
  return
}
