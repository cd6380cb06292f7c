// RUN: split-file %s %t
// RUN: block-attn-opt %t/rotary.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a group-roles=query-halves"
// RUN: block-attn-opt %t/block64.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a group-roles=query-halves"
// RUN: block-attn-opt %t/sm100a.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a group-roles=query-halves"
// RUN: block-attn-opt %t/consumers.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a group-roles=query-halves num-consumers=2"
// RUN: block-attn-opt %t/ctas.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a group-roles=query-halves ctas-per-sm=2"
// RUN: block-attn-opt %t/lbc.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a group-roles=query-halves large-block-consumers=1"

// The diagnostics of group-roles=query-halves (the sm_90a grouped-query
// backward at block size 128 with one consumer warpgroup per query half,
// docs/pipeline.md "Query halves"): one case per set of pass options.

//--- block64.mlir

!act = memref<?x?x64xbf16>
func.func @query_halves_block64(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op group-roles=query-halves applies to the sm_90a grouped-query backward at block size 128}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 64 : i64, element_type = bf16, group = 2 : i64}
  return
}

//--- sm100a.mlir

!act = memref<?x?x64xbf16>
func.func @query_halves_sm100a(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op group-roles=query-halves applies to the sm_90a grouped-query backward at block size 128}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 64 : i64, element_type = bf16, group = 2 : i64}
  return
}

//--- consumers.mlir

!act = memref<?x?x64xbf16>
func.func @query_halves_consumers(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op group-roles=query-halves has one consumer warpgroup per query half, got num-consumers=2}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 64 : i64, element_type = bf16, group = 2 : i64}
  return
}

//--- ctas.mlir

!act = memref<?x?x64xbf16>
func.func @query_halves_ctas(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op group-roles=query-halves has one CTA per SM, got ctas-per-sm=2}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 64 : i64, element_type = bf16, group = 2 : i64}
  return
}

//--- lbc.mlir

!act = memref<?x?x64xbf16>
func.func @query_halves_lbc(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op group-roles=query-halves has one consumer warpgroup per query half; large-block-consumers does not apply}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 64 : i64, element_type = bf16, group = 2 : i64}
  return
}

//--- rotary.mlir

!act = memref<?x?x64xbf16>
func.func @query_halves_rotary(%q: !act, %k: !act, %v: !act, %do: !act, %dq: !act,
    %dk: !act, %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op group-roles=query-halves does not apply with rotary embeddings: both query-half warpgroups would rotate the shared K and Q tiles in place}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 2 : i64,
       block_size = 128 : i64, rotary = #blockattn.rotary<half_split>,
       rotary_theta = 10000.0 : f32}
  return
}
