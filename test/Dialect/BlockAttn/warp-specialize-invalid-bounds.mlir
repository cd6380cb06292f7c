// RUN: split-file %s %t
// RUN: block-attn-opt %t/forward.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a num-stages=4611686018427387904"
// RUN: block-attn-opt %t/forward.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a num-stages=4611686018427387904"
// RUN: block-attn-opt %t/forward-7265.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a num-stages=7265"
// RUN: block-attn-opt %t/tiles.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a tiles-per-cta=4294967296"
// RUN: block-attn-opt %t/name.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a"

// Issue 15: pass options that become counts are bounded, with the limit in
// the diagnostic. num-stages=2^62 (either chip) used to wrap
// warpspec-allocate-smem's total to 1008 bytes and make the lowering emit
// barrier inits for 2^62 slots (a hang that ate gigabytes). A kernel name
// that is not a PTX identifier reached NVPTX's report_fatal_error.

//--- forward.mlir
!act = memref<?x4x128xbf16>
func.func @stages(%q: !act, %k: !act, %v: !act, %o: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op num-stages must be 0 (the recipe picks) or in [1, 7264] (the slots whose barriers and tile records fit in shared memory), got 4611686018427387904}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//--- forward-7265.mlir
!act = memref<?x4x128xbf16>
func.func @stages(%q: !act, %k: !act, %v: !act, %o: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op num-stages must be 0 (the recipe picks) or in [1, 7264]}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//--- tiles.mlir
!act = memref<?x4x128xbf16>
func.func @tiles(%q: !act, %k: !act, %v: !act, %o: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op tiles-per-cta must be 0 (the recipe picks) or in [1, 2147483647], got 4294967296}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//--- name.mlir
!act = memref<?x4x128xbf16>
func.func @"my-kernel"(%q: !act, %k: !act, %v: !act, %o: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'warpspec.kernel' op is the body of function @"my-kernel", which is not a valid PTX identifier}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}
