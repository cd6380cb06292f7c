// RUN: block-attn-opt %s -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a rotary-angles=after-softmax"

// rotary-angles=after-softmax, like per-tile, where it does not apply: above
// head dim 128 the gradients are turned back a group of 64-column chunks at a
// time, each group reading its own angles, so there is no tile's worth of
// angles to hold.

!act = memref<?x4x192xbf16>
!cu = memref<?xi32>
!tab = memref<?x96xf32>
func.func @after_softmax_above_128(%q: !act, %k: !act, %v: !act, %do: !act,
                                   %dq: !act, %dk: !act, %dv: !act, %cu: !cu,
                                   %cos: !tab, %sin: !tab) {
  // expected-error @+1 {{'blockattn.backward' op rotary-angles=after-softmax does not apply above head_dim 128: the gradients are turned back a group of column chunks at a time, each group reading its own angles}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act) cu_seqlens(%cu : !cu)
      rotary(%cos, %sin : !tab, !tab)
      {block_size = 64 : i64, head_dim = 192 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}
