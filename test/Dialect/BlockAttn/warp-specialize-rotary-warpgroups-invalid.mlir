// RUN: split-file %s %t
// RUN: block-attn-opt %t/three.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a rotary-warpgroups=3"
// RUN: block-attn-opt %t/negative.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a rotary-warpgroups=-1"
// RUN: block-attn-opt %t/consumers.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a rotary-warpgroups=2 num-consumers=2"
// RUN: block-attn-opt %t/stages.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a rotary-warpgroups=2 num-stages=3"
// RUN: block-attn-opt %t/chunked.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a rotary-warpgroups=2 schedule=chunked"

// The diagnostics of rotary-warpgroups (the sm_90a rotary warpgroup's
// replicas, docs/rotary.md): one part per set of pass options (split-file).

//--- three.mlir

// One or two rotary warpgroups; 0 lets the recipe pick.
!act = memref<?x4x128xbf16>
!tab = memref<?x64xf32>
func.func @three(%q: !act, %k: !act, %v: !act, %o: !act, %cu: memref<?xi32>,
                 %cos: !tab, %sin: !tab) {
  // expected-error @+1 {{'blockattn.forward' op rotary-warpgroups must be 0 (the recipe picks), 1 or 2, got 3}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) rotary(%cos, %sin : !tab, !tab)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

//--- negative.mlir

// Negative counts are refused too, on any kernel.
!act = memref<?x4x128xbf16>
func.func @negative(%q: !act, %k: !act, %v: !act, %o: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op rotary-warpgroups must be 0 (the recipe picks), 1 or 2, got -1}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- consumers.mlir

// Two rotary warpgroups leave registers for one consumer.
!act = memref<?x4x128xbf16>
!tab = memref<?x64xf32>
func.func @consumers(%q: !act, %k: !act, %v: !act, %o: !act, %cu: memref<?xi32>,
                     %cos: !tab, %sin: !tab) {
  // expected-error @+1 {{'blockattn.forward' op rotary-warpgroups=2 takes one consumer warpgroup (num-consumers 0 or 1), got num-consumers=2}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) rotary(%cos, %sin : !tab, !tab)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

//--- stages.mlir

// The two replicas take the ring's slots in turn: its depth is even.
!act = memref<?x4x128xbf16>
!tab = memref<?x64xf32>
func.func @stages(%q: !act, %k: !act, %v: !act, %o: !act, %cu: memref<?xi32>,
                  %cos: !tab, %sin: !tab) {
  // expected-error @+1 {{'blockattn.forward' op num-stages must be a non-negative multiple of num-consumers (1) and of rotary-warpgroups (2), got 3}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) rotary(%cos, %sin : !tab, !tab)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

//--- chunked.mlir

// Two CTAs an SM (the forward at head dim 64, chunked) hold one rotary
// warpgroup each, not two.
!act64 = memref<?x4x64xbf16>
!tab32 = memref<?x32xf32>
func.func @chunked(%q: !act64, %k: !act64, %v: !act64, %o: !act64,
                   %cu: memref<?xi32>, %cos: !tab32, %sin: !tab32) {
  // expected-error @+1 {{'blockattn.forward' op rotary-warpgroups=2 needs one CTA per SM (two CTAs of four warpgroups leave a consumer 88 registers), got ctas-per-sm=2}}
  blockattn.forward q(%q : !act64) k(%k : !act64) v(%v : !act64) o(%o : !act64)
      cu_seqlens(%cu : memref<?xi32>) rotary(%cos, %sin : !tab32, !tab32)
      {head_dim = 64 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}
