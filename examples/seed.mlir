// The seed configuration: the kernels of the TLX Block Attention article
// (forward, backward, backward with fused half-split rotary) and the forward
// with fused rotary, which TLX does not have; head_dim 128,
// 64-token blocks, bf16, 4 heads. Tokens (T) and sequences (B) are run-time
// values: one compiled kernel serves every jagged batch.
//
//   block-attn-opt examples/seed.mlir                 # parse, verify, print
//   block-attn-compile examples/seed.mlir --chip=sm_90a -o out/

!act = memref<?x4x128xbf16>

func.func @seed_forward(%q: !act, %k: !act, %v: !act, %o: !act,
                        %cu_seqlens: memref<?xi32>) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

func.func @seed_forward_rope(%q: !act, %k: !act, %v: !act, %o: !act,
                             %cu_seqlens: memref<?xi32>,
                             %cos: memref<?x64xf32>, %sin: memref<?x64xf32>) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>)
      rotary(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

func.func @seed_backward(%q: !act, %k: !act, %v: !act, %do: !act,
                         %dq: !act, %dk: !act, %dv: !act,
                         %cu_seqlens: memref<?xi32>) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

func.func @seed_backward_rope(%q: !act, %k: !act, %v: !act, %do: !act,
                              %dq: !act, %dk: !act, %dv: !act,
                              %cu_seqlens: memref<?xi32>,
                              %cos: memref<?x64xf32>, %sin: memref<?x64xf32>) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>)
      rotary(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}
