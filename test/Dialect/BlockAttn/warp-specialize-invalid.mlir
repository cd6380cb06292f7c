// RUN: split-file %s %t
// RUN: block-attn-opt %t/sm90a.mlir -split-input-file -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a"
// RUN: block-attn-opt %t/sm100a.mlir -split-input-file -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a"
// RUN: block-attn-opt %t/sm100a-o-store.mlir -split-input-file -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a o-store=registers"
// RUN: block-attn-opt %t/sm100a-ctas-per-sm.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a ctas-per-sm=2"
// RUN: block-attn-opt %t/sm100a-rotary-b128-stages.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a num-stages=2"
// RUN: block-attn-opt %t/sm100a-stages-negative.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a num-stages=-2"
// RUN: block-attn-opt %t/consumers0.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a num-consumers=-1"
// RUN: block-attn-opt %t/consumers4.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a num-consumers=4"
// RUN: block-attn-opt %t/stages-odd.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a schedule=strided num-stages=3"
// RUN: block-attn-opt %t/stages-three.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a num-consumers=3 num-stages=4"
// RUN: block-attn-opt %t/stages-negative.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a num-stages=-1"
// RUN: block-attn-opt %t/ctas-per-sm.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a ctas-per-sm=5"
// RUN: block-attn-opt %t/launch-registers.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a ctas-per-sm=3 num-consumers=2 schedule=chunked"
// RUN: block-attn-opt %t/tiles-per-cta-negative.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a tiles-per-cta=-1"
// RUN: block-attn-opt %t/tiles-per-cta-strided.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a schedule=strided tiles-per-cta=4"
// RUN: block-attn-opt %t/backward-three.mlir -split-input-file -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a num-consumers=3"
// RUN: block-attn-opt %t/backward-three-oregs.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a num-consumers=3 o-store=registers"
// RUN: block-attn-opt %t/sm100a-b128-wide-stages.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a num-stages=3"
// RUN: block-attn-opt %t/sm100a-b128-wide-l2.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_100a l2-prefetch=on"

// Every diagnostic of blockattn-warp-specialize, one part per set of pass
// options (split-file), one case per split (-split-input-file). Option
// values that are not one of an enum option's are rejected when the options
// are parsed: warp-specialize-invalid-options.mlir.
//
// One message of the pass cannot be reached from valid input and has no
// case: "operand '...' must be an argument of the enclosing function" (the
// op must already be the only operation of its function, so every operand
// is an entry-block argument). "no ring of ... slots fits in shared memory"
// has its case in the backward: its 4-tile slots are 64 KiB at head_dim
// 128, and three consumers need a multiple of 3 of them, which never fits
// (in a persistent CTA the forward's largest slot is 48 KiB; the most
// forward scratch, three consumers staging both P and O, 72 KiB, leaves
// room for 3 slots; a chunked forward, which shares the SM with other
// CTAs, reaches it too, e.g. with schedule=chunked num-consumers=2). A
// num-stages too deep for shared memory is not diagnosed here:
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


// The backward is a kernel function like the forward: nothing else in it.
!act = memref<?x4x128xbf16>
func.func @negative_backward_extra_op(%q: !act, %k: !act, %v: !act, %do: !act,
                                      %dq: !act, %dk: !act, %dv: !act,
                                      %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op must be the only operation of a function with no results (the function becomes the kernel)}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  %c0 = arith.constant 0 : index
  return
}

//--- sm100a.mlir

// The kernel function checks come first on sm_100a too.
!act = memref<?x4x128xbf16>
func.func @negative_extra_op_sm100a(%q: !act, %k: !act, %v: !act, %o: !act,
                                    %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op must be the only operation of a function with no results (the function becomes the kernel)}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  %c0 = arith.constant 0 : index
  return
}

//--- sm100a-o-store.mlir

// On sm_100a the outputs come out of tensor memory into registers and leave
// through a staging buffer: o-store=registers is not a Blackwell option
// (forward and backward alike).
!act = memref<?x4x128xbf16>
func.func @negative_forward_o_store_registers_sm100a(%q: !act, %k: !act,
                                                     %v: !act, %o: !act,
                                                     %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op o-store must be 'tma' or 'smem' on sm_100a (O comes out of tensor memory into registers, then through shared memory), got 'registers'}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

!act = memref<?x4x128xbf16>
func.func @negative_backward_o_store_registers_sm100a(%q: !act, %k: !act,
                                                      %v: !act, %do: !act,
                                                      %dq: !act, %dk: !act,
                                                      %dv: !act,
                                                      %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op o-store must be 'tma' or 'smem' on sm_100a (O comes out of tensor memory into registers, then through shared memory), got 'registers'}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- sm100a-ctas-per-sm.mlir

// Sharing an SM between CTAs is a Hopper recipe: on sm_100a ctas-per-sm
// may only be 0 or 1.
!act = memref<?x4x128xbf16>
func.func @negative_ctas_per_sm_sm100a(%q: !act, %k: !act, %v: !act, %o: !act,
                                       %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op ctas-per-sm above 1 is implemented for sm_90a only}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- sm100a-rotary-b128-stages.mlir
// The sm_100a rotary backward at block size 128 at head dim 128: one slot of
// q, k, v and dO (128 KiB) is all that fits next to both halves' P and dS
// (64 KiB) and the staging buffer (16 KiB); the rotation is in place, so no
// ring of rotated tiles takes room.
!act = memref<?x4x128xbf16>
!tab = memref<?x64xf32>
func.func @rotary_backward_b128_two_slots(%q: !act, %k: !act, %v: !act, %do: !act,
                                          %dq: !act, %dk: !act, %dv: !act,
                                          %cu: memref<?xi32>, %cos: !tab, %sin: !tab) {
  // expected-error @+1 {{'blockattn.backward' op no ring of 2 x 131072 bytes fits in shared memory next to 81920 bytes of P, dS and the staging buffer}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : !tab, !tab)
      {block_size = 128 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

//--- sm100a-stages-negative.mlir

// A negative ring depth (the MMA warp is the ring's only consumer, so any
// positive depth is allowed on sm_100a; 0 picks one).
!act = memref<?x4x128xbf16>
func.func @negative_stages_sm100a(%q: !act, %k: !act, %v: !act, %do: !act,
                                  %dq: !act, %dk: !act, %dv: !act,
                                  %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op num-stages must be 0 (the recipe picks) or in [1, 7264] (the slots whose barriers and tile records fit in shared memory), got -2}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- consumers0.mlir

// At least one consumer warpgroup.
!act = memref<?x4x128xbf16>
func.func @negative_zero_consumers(%q: !act, %k: !act, %v: !act, %o: !act,
                                   %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op num-consumers must be 0 (the recipe picks), 1, 2 or 3 (warpgroups of 128 threads next to the producer), got -1}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- consumers4.mlir

// Four consumers and the producer would leave fewer than 24 registers each.
!act = memref<?x4x128xbf16>
func.func @negative_four_consumers(%q: !act, %k: !act, %v: !act, %o: !act,
                                   %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op num-consumers must be 0 (the recipe picks), 1, 2 or 3 (warpgroups of 128 threads next to the producer), got 4}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- stages-odd.mlir

// The two consumer replicas (the default of a persistent launch) take the
// slots round-robin: an odd ring would hand a slot to both in turn.
!act = memref<?x4x128xbf16>
func.func @negative_num_stages_odd(%q: !act, %k: !act, %v: !act, %o: !act,
                                   %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op num-stages must be a non-negative multiple of num-consumers (2), got 3}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- stages-three.mlir

// Three consumers need a multiple of 3 slots; 4 (the two-consumer default)
// is not one.
!act = memref<?x4x128xbf16>
func.func @negative_num_stages_three_consumers(%q: !act, %k: !act, %v: !act,
                                               %o: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op num-stages must be a non-negative multiple of num-consumers (3), got 4}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- stages-negative.mlir

// A negative depth is rejected (0 is the default: the pass picks one). The
// default forward is chunked, with one consumer.
!act = memref<?x4x128xbf16>
func.func @negative_num_stages_negative(%q: !act, %k: !act, %v: !act, %o: !act,
                                        %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op num-stages must be 0 (the recipe picks) or in [1, 7264] (the slots whose barriers and tile records fit in shared memory), got -1}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- ctas-per-sm.mlir

// At most four CTAs share an SM (0 lets the recipe pick).
!act = memref<?x4x128xbf16>
func.func @negative_ctas_per_sm(%q: !act, %k: !act, %v: !act, %o: !act,
                                %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op ctas-per-sm must be 0 (the recipe picks) or in [1, 4], got 5}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- launch-registers.mlir

// Three CTAs of a producer and two consumers launch with 56 registers a
// thread: ptxas cannot compile the consumers' code in that (C7602), so the
// plan refuses it first.
!act = memref<?x4x32xbf16>
func.func @negative_launch_registers(%q: !act, %k: !act, %v: !act, %o: !act,
                                     %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op 3 CTAs per SM of 3 warpgroups each launch with 56 registers a thread, fewer than the 64 ptxas needs; ask for fewer CTAs per SM (ctas-per-sm) or consumers (num-consumers)}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 32 : i64, element_type = bf16}
  return
}

//--- tiles-per-cta-negative.mlir

// A chunked CTA gets a positive number of tiles (0 lets the recipe pick).
!act = memref<?x4x128xbf16>
func.func @negative_tiles_per_cta(%q: !act, %k: !act, %v: !act, %o: !act,
                                  %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op tiles-per-cta must be 0 (the recipe picks) or in [1, 2147483647], got -1}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- tiles-per-cta-strided.mlir

// A persistent grid deals out every tile: tiles-per-cta has no meaning
// there.
!act = memref<?x4x128xbf16>
func.func @negative_tiles_per_cta_strided(%q: !act, %k: !act, %v: !act,
                                          %o: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op tiles-per-cta applies to a chunked launch; this one is persistent (schedule 'strided')}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- backward-three.mlir

// The backward at head_dim 128 with three consumers: a slot holds Q, K, V
// and dO (4 x 16 KiB), each consumer has 32 KiB of scratch (P, dS, the
// output staging buffer). 227 KiB - 1 KiB - 96 KiB leaves room for 2 slots,
// and three replicas need a multiple of 3.
!act = memref<?x4x128xbf16>
func.func @negative_backward_three_consumers(%q: !act, %k: !act, %v: !act,
                                             %do: !act, %dq: !act, %dk: !act,
                                             %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op no ring of 4-tile slots (65536 bytes each, a multiple of 3 slots) fits in shared memory next to 98304 bytes of scratch}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// At head_dim 64 the slots are half as large (32 KiB): next to three
// consumers' 72 KiB of scratch 4 fit, rounded down to 3 (warp-specialize.mlir
// checks the ring); no error.
!act64 = memref<?x8x64xf16>
func.func @backward_three_consumers_d64(%q: !act64, %k: !act64, %v: !act64,
                                        %do: !act64, %dq: !act64, %dk: !act64,
                                        %dv: !act64, %cu: memref<?xi32>) {
  blockattn.backward q(%q : !act64) k(%k : !act64) v(%v : !act64)
      do(%do : !act64) dq(%dq : !act64) dk(%dk : !act64) dv(%dv : !act64)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 64 : i64, element_type = f16}
  return
}

//--- backward-three-oregs.mlir

// Without the output staging buffers (16 KiB of scratch per consumer, P and
// dS) still only 2 slots fit: no multiple of 3.
!act = memref<?x4x128xbf16>
func.func @negative_backward_three_consumers_oregs(%q: !act, %k: !act,
                                                   %v: !act, %do: !act,
                                                   %dq: !act, %dk: !act,
                                                   %dv: !act,
                                                   %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op no ring of 4-tile slots (65536 bytes each, a multiple of 3 slots) fits in shared memory next to 49152 bytes of scratch}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- sm100a-b128-wide-stages.mlir

// The sm_100a backward at block size 128 above head dim 128 streams the block
// in 64-column chunk slots of 64 KiB: two fit next to both query halves' P
// and dS and the two staging buffers, three do not.
!act = memref<?x4x256xbf16>
func.func @negative_sm100a_b128_wide_three_stages(%q: !act, %k: !act, %v: !act,
                                                   %do: !act, %dq: !act,
                                                   %dk: !act, %dv: !act,
                                                   %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op no ring of 3 x 65536 bytes fits in shared memory next to 81920 bytes of P, dS and staging buffers}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 256 : i64, element_type = bf16}
  return
}

//--- sm100a-b128-wide-l2.mlir

// Its producer streams chunk slots with no L2 prefetch.
!act = memref<?x4x192xbf16>
func.func @negative_sm100a_b128_wide_l2_prefetch(%q: !act, %k: !act, %v: !act,
                                                 %do: !act, %dq: !act,
                                                 %dk: !act, %dv: !act,
                                                 %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.backward' op l2-prefetch=on does not apply to the backward at block_size 128 above head_dim 128}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 128 : i64, head_dim = 192 : i64, element_type = bf16}
  return
}
