// RUN: split-file %s %t
// RUN: block-attn-opt %t/three.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a large-block-rings=3"
// RUN: block-attn-opt %t/negative.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a large-block-rings=-1"
// RUN: block-attn-opt %t/block64.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a large-block-rings=2"
// RUN: block-attn-opt %t/forward.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a large-block-rings=2"
// RUN: block-attn-opt %t/rotary.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a large-block-rings=2"
// RUN: block-attn-opt %t/sm100a.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a large-block-rings=2"
// RUN: block-attn-opt %t/d192.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a large-block-rings=2"
// RUN: block-attn-opt %t/one.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a large-block-rings=2 large-block-consumers=1"
// RUN: block-attn-opt %t/consumers.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a large-block-rings=2 num-consumers=2"
// RUN: block-attn-opt %t/ctas.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a large-block-rings=2 ctas-per-sm=2"
// RUN: block-attn-opt %t/stages.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a large-block-rings=2 num-stages=2"

// The diagnostics of large-block-rings (the sm_90a backward at block size
// 128 with two consumers, its load slot split into the rings "qk" and "vdo";
// docs/block-sizes.md "Two rings"): one case per set of pass options
// (split-file).

//--- three.mlir

!act = memref<?x4x128xbf16>
func.func @negative_three(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op large-block-rings must be 0 (the recipe picks), 1 (one load ring) or 2 (the rings "qk" and "vdo"), got 3}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//--- negative.mlir

!act = memref<?x4x128xbf16>
func.func @negative_negative(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op large-block-rings must be 0 (the recipe picks), 1 (one load ring) or 2 (the rings "qk" and "vdo"), got -1}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//--- block64.mlir

!act = memref<?x4x128xbf16>
func.func @negative_block64(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op large-block-rings=2 applies to the sm_90a backward at block size 128 up to head dim 128, without rotary embeddings and with one query head per k/v head}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//--- forward.mlir

!act = memref<?x4x128xbf16>
func.func @negative_forward(%q: !act, %k: !act, %v: !act, %o: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op large-block-rings=2 applies to the sm_90a backward at block size 128 up to head dim 128, without rotary embeddings and with one query head per k/v head}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//--- rotary.mlir

!act = memref<?x4x128xbf16>
func.func @negative_rotary(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op large-block-rings=2 applies to the sm_90a backward at block size 128 up to head dim 128, without rotary embeddings and with one query head per k/v head}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>, rotary_theta = 10000.0 : f32}
  return
}

//--- sm100a.mlir

!act = memref<?x4x128xbf16>
func.func @negative_sm100a(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op large-block-rings=2 applies to the sm_90a backward at block size 128 up to head dim 128, without rotary embeddings and with one query head per k/v head}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//--- d192.mlir

!act = memref<?x4x192xbf16>
func.func @negative_d192(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op large-block-rings=2 applies to the sm_90a backward at block size 128 up to head dim 128, without rotary embeddings and with one query head per k/v head}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 192 : i64, element_type = bf16}
  return
}

//--- one.mlir

!act = memref<?x4x128xbf16>
func.func @negative_one(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op large-block-rings=2 splits the slot of two consumer partitions (one warpgroup a query half, one CTA per SM), got large-block-consumers=1, num-consumers=0, ctas-per-sm=0}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//--- consumers.mlir

!act = memref<?x4x128xbf16>
func.func @negative_consumers(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op large-block-rings=2 splits the slot of two consumer partitions (one warpgroup a query half, one CTA per SM), got large-block-consumers=0, num-consumers=2, ctas-per-sm=0}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//--- ctas.mlir

!act = memref<?x4x128xbf16>
func.func @negative_ctas(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op large-block-rings=2 splits the slot of two consumer partitions (one warpgroup a query half, one CTA per SM), got large-block-consumers=0, num-consumers=0, ctas-per-sm=2}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//--- stages.mlir

!act = memref<?x4x128xbf16>
func.func @negative_stages(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op no rings "qk" and "vdo" of 2 x 131072 bytes together fit in shared memory next to 98304 bytes of P, dS and staging buffers (large-block-rings=2)}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}
