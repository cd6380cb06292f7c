// RUN: split-file %s %t
// RUN: block-attn-opt %t/sm90a.mlir -split-input-file -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a"
// RUN: block-attn-opt %t/sm100a.mlir -split-input-file -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a"
// RUN: block-attn-opt %t/sm80.mlir -split-input-file -verify-diagnostics -blockattn-warp-specialize="chip=sm_80"
// RUN: block-attn-opt %t/consumers0.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a num-consumers=0"
// RUN: block-attn-opt %t/consumers4.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a num-consumers=4"
// RUN: block-attn-opt %t/p-operand.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a p-operand=tmem"

// Every diagnostic of blockattn-warp-specialize, one part per set of pass
// options (split-file), one case per split (-split-input-file).
//
// Two messages of the pass cannot be reached from valid input and have no
// case: "operand '...' must be an argument of the enclosing function" (the
// op must already be the only operation of its function, so every operand
// is an entry-block argument), and "one slot of Q, K and V (...) does not
// fit in shared memory" (the largest slot the blockattn verifier allows is
// 48 KiB). A num-stages too deep for shared memory is not diagnosed here:
// warpspec-allocate-smem reports it (allocate-smem-invalid.mlir).

//--- sm90a.mlir

// Another operation next to the blockattn op: the function is not a kernel.
!act = memref<?x4x128xbf16>
func.func @negative_extra_op(%q: !act, %k: !act, %v: !act, %o: !act,
                             %cu: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'blockattn.forward' op must be the only operation of a function with no results (the function becomes the kernel)}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// A kernel function returns nothing.
!act = memref<?x4x128xbf16>
func.func @negative_function_result(%q: !act, %k: !act, %v: !act, %o: !act,
                                    %cu: memref<?xi32>) -> i32 {
  // expected-error @+1 {{'blockattn.forward' op must be the only operation of a function with no results (the function becomes the kernel)}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  %r = arith.constant 0 : i32
  return %r : i32
}

// -----

// Two kernels in one function: the first one is reported.
!act = memref<?x4x128xbf16>
func.func @negative_two_forwards(%q: !act, %k: !act, %v: !act, %o: !act,
                                 %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op must be the only operation of a function with no results}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// Fused rotary embeddings (here half-split with tables) are not lowered yet.
!act = memref<?x4x128xbf16>
!tab = memref<?x64xf32>
func.func @negative_forward_rotary(%q: !act, %k: !act, %v: !act, %o: !act,
                                   %cu: memref<?xi32>, %cos: !tab, %sin: !tab) {
  // expected-error @+1 {{'blockattn.forward' op fused rotary embeddings are not implemented yet by blockattn-warp-specialize}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) rotary(%cos, %sin : !tab, !tab)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// -----

// Rotary with in-kernel angles (rotary_theta) is not lowered yet either.
!act = memref<?x4x128xbf16>
func.func @negative_forward_rotary_theta(%q: !act, %k: !act, %v: !act,
                                         %o: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op fused rotary embeddings are not implemented yet by blockattn-warp-specialize}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<interleaved>, rotary_theta = 10000.0 : f32}
  return
}

// -----

// The backward kernel (the seed's) is not lowered yet.
!act = memref<?x4x128xbf16>
func.func @negative_backward(%q: !act, %k: !act, %v: !act, %do: !act,
                             %dq: !act, %dk: !act, %dv: !act,
                             %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op the backward kernel is not implemented yet by blockattn-warp-specialize}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- sm100a.mlir

// The Blackwell forward recipe does not exist yet.
!act = memref<?x4x128xbf16>
func.func @negative_forward_sm100a(%q: !act, %k: !act, %v: !act, %o: !act,
                                   %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op the forward kernel is not implemented yet for sm_100a}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// On sm_100a the backward is reported as not implemented too.
!act = memref<?x4x128xbf16>
func.func @negative_backward_sm100a(%q: !act, %k: !act, %v: !act, %do: !act,
                                    %dq: !act, %dk: !act, %dv: !act,
                                    %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op the backward kernel is not implemented yet by blockattn-warp-specialize}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- sm80.mlir

// Ampere is not a target; the error is on the function being lowered.
!act = memref<?x4x128xbf16>
// expected-error @+1 {{blockattn-warp-specialize: unsupported chip 'sm_80'; supported chips: sm_90a, sm_100a}}
func.func @negative_unsupported_chip(%q: !act, %k: !act, %v: !act, %o: !act,
                                     %cu: memref<?xi32>) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// A function without a blockattn op is not diagnosed, whatever the chip.
func.func @no_kernel_no_error() {
  return
}

//--- consumers0.mlir

// At least one consumer warpgroup.
!act = memref<?x4x128xbf16>
func.func @negative_zero_consumers(%q: !act, %k: !act, %v: !act, %o: !act,
                                   %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op num-consumers must be 1, 2 or 3 (warpgroups of 128 threads next to the producer), got 0}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- consumers4.mlir

// Four consumers and the producer would leave fewer than 24 registers each.
!act = memref<?x4x128xbf16>
func.func @negative_four_consumers(%q: !act, %k: !act, %v: !act, %o: !act,
                                   %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op num-consumers must be 1, 2 or 3 (warpgroups of 128 threads next to the producer), got 4}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- p-operand.mlir

// P feeds P V from registers or shared memory; Hopper has no tensor memory.
!act = memref<?x4x128xbf16>
func.func @negative_p_operand(%q: !act, %k: !act, %v: !act, %o: !act,
                              %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op p-operand must be 'registers' or 'smem', got 'tmem'}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}
