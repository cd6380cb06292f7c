// RUN: split-file %s %t
// RUN: block-attn-opt %t/three.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a staging-buffers=3"
// RUN: block-attn-opt %t/d128.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a staging-buffers=2"
// RUN: block-attn-opt %t/whole.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a slot-parts=1 staging-buffers=2"
// RUN: block-attn-opt %t/smem.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a o-store=smem staging-buffers=2"

// The diagnostics of staging-buffers (two output staging buffers for the
// sm_90a backward with half-depth slots, docs/head-dims.md).

//--- three.mlir

!act = memref<?x4x256xbf16>
func.func @negative_staging_three(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op staging-buffers must be 0 (the recipe picks), 1 or 2, got 3}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 256 : i64, element_type = bf16}
  return
}

//--- d128.mlir

// Head dim 128 has no half-depth slots (its outputs are one chunk wide).
!act = memref<?x4x128xbf16>
func.func @negative_staging_d128(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op staging-buffers=2 applies to the sm_90a backward with half-depth slots (above head dim 128, slot-parts 0 or 2)}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- whole.mlir

// Whole slots leave no room for a second staging buffer at 256.
!act = memref<?x4x256xbf16>
func.func @negative_staging_whole(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op staging-buffers=2 applies to the sm_90a backward with half-depth slots (above head dim 128, slot-parts 0 or 2)}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 256 : i64, element_type = bf16}
  return
}

//--- smem.mlir

// The threads' own copies leave the buffer before the next store: nothing
// to alternate.
!act = memref<?x4x192xbf16>
func.func @negative_staging_smem(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op staging-buffers=2 takes o-store=tma (the bulk stores read the buffers asynchronously), got o-store='smem'}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 192 : i64, element_type = bf16}
  return
}
