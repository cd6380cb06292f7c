// RUN: split-file %s %t
// RUN: block-attn-opt %t/parts-three.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a slot-parts=3"
// RUN: block-attn-opt %t/parts-negative.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a slot-parts=-1"
// RUN: block-attn-opt %t/parts-d128.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a slot-parts=2"
// RUN: block-attn-opt %t/parts-forward.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a slot-parts=2"
// RUN: block-attn-opt %t/parts-sm100a.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a slot-parts=2"
// RUN: block-attn-opt %t/parts-consumers.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a slot-parts=2 num-consumers=2"
// RUN: block-attn-opt %t/parts-l2-prefetch.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a slot-parts=2 l2-prefetch=on"
// RUN: block-attn-opt %t/parts-stages.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a slot-parts=2 num-stages=3"
// RUN: block-attn-opt %t/parts-ctas.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a slot-parts=2 ctas-per-sm=2"

// The diagnostics of slot-parts (the sm_90a backward above head dim 128
// with half-depth slots, docs/head-dims.md): one part per set of pass
// options (split-file).

//--- parts-three.mlir

// A slot is whole (1) or in two parts (2); 0 lets the recipe pick.
!act = memref<?x4x256xbf16>
func.func @negative_parts_three(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op slot-parts must be 0 (the recipe picks), 1 (whole tiles) or 2 (half-depth slots), got 3}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 256 : i64, element_type = bf16}
  return
}

//--- parts-negative.mlir

// Negative counts are refused too.
!act = memref<?x4x256xbf16>
func.func @negative_parts_negative(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op slot-parts must be 0 (the recipe picks), 1 (whole tiles) or 2 (half-depth slots), got -1}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 256 : i64, element_type = bf16}
  return
}

//--- parts-d128.mlir

// At head dim 128 the outputs are not made in column chunks: no split.
!act = memref<?x4x128xbf16>
func.func @negative_parts_d128(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op slot-parts=2 applies to the sm_90a backward above head dim 128 without rotary embeddings, at block size 64 and one query head per k/v head}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- parts-forward.mlir

// The forward keeps whole slots.
!act = memref<?x4x256xbf16>
func.func @negative_parts_forward(%q: !act, %k: !act, %v: !act, %o: !act,
    %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op slot-parts=2 applies to the sm_90a backward above head dim 128 without rotary embeddings, at block size 64 and one query head per k/v head}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 256 : i64, element_type = bf16}
  return
}

//--- parts-sm100a.mlir

// Not built for sm_100a.
!act = memref<?x4x256xbf16>
func.func @negative_parts_sm100a(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op slot-parts=2 applies to the sm_90a backward above head dim 128 without rotary embeddings, at block size 64 and one query head per k/v head}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 256 : i64, element_type = bf16}
  return
}

//--- parts-consumers.mlir

// One consumer takes every tile (a second one's scratch and slots do not fit).
!act = memref<?x4x256xbf16>
func.func @negative_parts_consumers(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op slot-parts=2 has one consumer warpgroup, got num-consumers=2}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 256 : i64, element_type = bf16}
  return
}

//--- parts-l2-prefetch.mlir

// The L2 prefetch of warpspec.acquire moves whole-width tiles.
!act = memref<?x4x256xbf16>
func.func @negative_parts_l2_prefetch(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op l2-prefetch=on does not apply with slot-parts=2 (the prefetch moves whole-width tiles)}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 256 : i64, element_type = bf16}
  return
}

//--- parts-stages.mlir

// Three low slots of 64 KiB leave no room for a high one at head dim 256.
!act = memref<?x4x256xbf16>
func.func @negative_parts_stages(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op no rings of half-depth slots (3 x 65536 and at least 1 x 65536 bytes) fit in shared memory next to 24576 bytes of scratch}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 256 : i64, element_type = bf16}
  return
}

//--- parts-ctas.mlir

// Two CTAs per SM halve the shared memory: the rings do not fit.
!act = memref<?x4x256xbf16>
func.func @negative_parts_ctas(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op no rings of half-depth slots (2 x 65536 and at least 1 x 65536 bytes) fit in shared memory next to 24576 bytes of scratch}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 256 : i64, element_type = bf16}
  return
}
