// RUN: block-attn-opt %s -warpspec-allocate-tmem | FileCheck %s
// The plan depends only on the kernel's channels: running the pass again on
// its own output writes the same slots.
// RUN: block-attn-opt %s -warpspec-allocate-tmem | block-attn-opt -warpspec-allocate-tmem | FileCheck %s
// The kernels blockattn-warp-specialize builds for sm_100a (at the end of
// this file): the forward and the backward, at head_dim 128 and 64.
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_100a}),warpspec-allocate-tmem)' | FileCheck %s --check-prefix=RECIPE

// warpspec-allocate-tmem: the lane and column of every slot of every
// tensor-memory channel (tmem_slots = [lane, column] per slot) and the
// kernel's allocation (tmem_columns). An M = 64 buffer uses half of the 128
// lanes, so slots 2k and 2k+1 of a ring share one column range, at lane
// alignments 0 and 16. A slot is as wide as its buffers side by side: one
// column per f32 element of a row, one per two 16-bit elements (rounded up).
// Channels take consecutive column ranges in declaration order (rings live
// for the whole kernel: no two share columns); tcgen05.alloc takes a power
// of two of at least 32 columns. Shared-memory channels take no columns, and
// a kernel without tensor-memory channels gets no tmem_columns.

// One f32 ring of two slots: both slots in columns [0, 64), at lanes 0 and
// 16; 64 columns.
// CHECK-LABEL: func.func @one_f32_ring
// CHECK: warpspec.kernel chip(sm_100a) attributes {tmem_columns = 64 : i64} {
// CHECK-NEXT: warpspec.channel "s" depth(2) {tmem_slots = array<i64: 0, 0, 16, 0>} : <[64x64xf32], tmem>
!s = !warpspec.channel<[64x64xf32], tmem>
func.func @one_f32_ring(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %s = warpspec.channel "s" depth(2) : !s
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s_slot, %b = warpspec.acquire %s : !s
      warpspec.commit %s_slot tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %s_slot1, %b = warpspec.get %s : !s
      warpspec.release %s_slot1
    }
  }
  return
}

// A 16-bit buffer (P, a tensor-memory A operand) packs two elements per
// column: 64x64 bf16 is 32 columns, which is also the smallest allocation.
// CHECK-LABEL: func.func @bf16_ring_minimum
// CHECK: warpspec.kernel chip(sm_100a) attributes {tmem_columns = 32 : i64} {
// CHECK-NEXT: warpspec.channel "p" depth(2) {tmem_slots = array<i64: 0, 0, 16, 0>} : <[64x64xbf16], tmem>
!p = !warpspec.channel<[64x64xbf16], tmem>
func.func @bf16_ring_minimum(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %p = warpspec.channel "p" depth(2) : !p
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) replicas(2) {
      %p_slot, %b = warpspec.acquire %p : !p
      warpspec.commit %p_slot tile(%i, %i, %i)
    }
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %p_slot1, %b = warpspec.get %p : !p
      warpspec.release %p_slot1 after_mma
    }
  }
  return
}

// Below 32 columns the allocation is still 32: one slot of 64x8 f32 is 8
// columns.
// CHECK-LABEL: func.func @narrow_minimum
// CHECK: warpspec.kernel chip(sm_100a) attributes {tmem_columns = 32 : i64} {
// CHECK-NEXT: warpspec.channel "n" depth(1) {tmem_slots = array<i64: 0, 0>} : <[64x8xf32], tmem>
!n = !warpspec.channel<[64x8xf32], tmem>
func.func @narrow_minimum(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %n = warpspec.channel "n" depth(1) : !n
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %n_slot, %b = warpspec.acquire %n : !n
      warpspec.commit %n_slot tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %n_slot1, %b = warpspec.get %n : !n
      warpspec.release %n_slot1
    }
  }
  return
}

// Several channels, in declaration order: the forward's S (64), P (32 for
// two bf16 slots) and O (128): columns 0, 64 and 96; 224 columns, 256
// allocated. The shared-memory channel between them takes no columns and
// gets no tmem_slots. Slot s has lane alignment 16 (s % 2) in every ring,
// so P and O of one tile agree (tcgen05.mma with A in tensor memory needs
// A and D at the same alignment).
// CHECK-LABEL: func.func @forward_rings
// CHECK: warpspec.kernel chip(sm_100a) attributes {tmem_columns = 256 : i64} {
// CHECK-NEXT: warpspec.channel "s" depth(2) {tmem_slots = array<i64: 0, 0, 16, 0>} : <[64x64xf32], tmem>
// CHECK-NEXT: warpspec.channel "e" depth(2) : <[64x64xbf16], smem>
// CHECK-NEXT: warpspec.channel "p" depth(2) {tmem_slots = array<i64: 0, 64, 16, 64>} : <[64x64xbf16], tmem>
// CHECK-NEXT: warpspec.channel "o" depth(2) {tmem_slots = array<i64: 0, 96, 16, 96>} : <[64x128xf32], tmem>
!o = !warpspec.channel<[64x128xf32], tmem>
!e = !warpspec.channel<[64x64xbf16], smem>
func.func @forward_rings(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %s = warpspec.channel "s" depth(2) : !s
    %e = warpspec.channel "e" depth(2) : !e
    %p = warpspec.channel "p" depth(2) : !p
    %o = warpspec.channel "o" depth(2) : !o
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s_slot, %sb = warpspec.acquire %s : !s
      warpspec.commit %s_slot tile(%i, %i, %i)
      %o_slot, %ob = warpspec.acquire %o : !o
      warpspec.commit %o_slot tile(%i, %i, %i)
      %e_slot, %eb = warpspec.acquire %e : !e
      warpspec.commit %e_slot tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %s_slot1, %sb = warpspec.get %s : !s
      warpspec.release %s_slot1
      %p_slot, %pb = warpspec.acquire %p : !p
      warpspec.commit %p_slot tile(%i, %i, %i)
      %o_slot1, %ob = warpspec.get %o : !o
      warpspec.release %o_slot1
      %e_slot1, %eb = warpspec.get %e : !e
      warpspec.release %e_slot1
    }
    warpspec.partition "p_reader" role(mma) warps(4) regs(40) {
      %p_slot1, %pb = warpspec.get %p : !p
      warpspec.release %p_slot1 after_mma
    }
  }
  return
}

// Odd depths: the last slot of a ring has its column range alone (lane 0).
// Three slots of 64 columns take two ranges (128 columns); one slot takes
// one; five 16-column slots take three ranges (48). 64 + 128 + 48 = 240
// columns, 256 allocated.
// CHECK-LABEL: func.func @odd_depths
// CHECK: warpspec.kernel chip(sm_100a) attributes {tmem_columns = 256 : i64} {
// CHECK-NEXT: warpspec.channel "one" depth(1) {tmem_slots = array<i64: 0, 0>} : <[64x64xf32], tmem>
// CHECK-NEXT: warpspec.channel "three" depth(3) {tmem_slots = array<i64: 0, 64, 16, 64, 0, 128>} : <[64x64xf32], tmem>
// CHECK-NEXT: warpspec.channel "five" depth(5) {tmem_slots = array<i64: 0, 192, 16, 192, 0, 208, 16, 208, 0, 224>} : <[64x16xf32], tmem>
!n16 = !warpspec.channel<[64x16xf32], tmem>
func.func @odd_depths(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %one = warpspec.channel "one" depth(1) : !s
    %three = warpspec.channel "three" depth(3) : !s
    %five = warpspec.channel "five" depth(5) : !n16
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %one_slot, %a = warpspec.acquire %one : !s
      warpspec.commit %one_slot tile(%i, %i, %i)
      %three_slot, %b = warpspec.acquire %three : !s
      warpspec.commit %three_slot tile(%i, %i, %i)
      %five_slot, %c = warpspec.acquire %five : !n16
      warpspec.commit %five_slot tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %one_slot1, %a = warpspec.get %one : !s
      warpspec.release %one_slot1
      %three_slot1, %b = warpspec.get %three : !s
      warpspec.release %three_slot1
      %five_slot1, %c = warpspec.get %five : !n16
      warpspec.release %five_slot1
    }
  }
  return
}

// A slot of several buffers is as wide as all of them (the lowering puts
// them side by side from the slot's column): 64 + 128 = 192 columns per
// slot range, 256 allocated.
// CHECK-LABEL: func.func @multi_buffer_slots
// CHECK: warpspec.kernel chip(sm_100a) attributes {tmem_columns = 256 : i64} {
// CHECK-NEXT: warpspec.channel "so" depth(2) {tmem_slots = array<i64: 0, 0, 16, 0>} : <[64x64xf32, 64x128xf32], tmem>
!so = !warpspec.channel<[64x64xf32, 64x128xf32], tmem>
func.func @multi_buffer_slots(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %so = warpspec.channel "so" depth(2) : !so
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %so_slot, %a, %b = warpspec.acquire %so : !so
      warpspec.commit %so_slot tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %so_slot1, %a, %b = warpspec.get %so : !so
      warpspec.release %so_slot1
    }
  }
  return
}

// Narrow elements, rounded up to whole columns: 64x64 f16 is 32 columns,
// 64x64 i8 is 16, and 64x3 bf16 (48 bits a row) needs 2 whole columns, not
// 1. One slot each: 32 + 2 + 16 = 50 columns, 64 allocated.
// CHECK-LABEL: func.func @narrow_elements
// CHECK: warpspec.kernel chip(sm_100a) attributes {tmem_columns = 64 : i64} {
// CHECK-NEXT: warpspec.channel "f16" depth(1) {tmem_slots = array<i64: 0, 0>} : <[64x64xf16], tmem>
// CHECK-NEXT: warpspec.channel "odd" depth(1) {tmem_slots = array<i64: 0, 32>} : <[64x3xbf16], tmem>
// CHECK-NEXT: warpspec.channel "i8" depth(1) {tmem_slots = array<i64: 0, 34>} : <[64x64xi8], tmem>
!h = !warpspec.channel<[64x64xf16], tmem>
!odd = !warpspec.channel<[64x3xbf16], tmem>
!b = !warpspec.channel<[64x64xi8], tmem>
func.func @narrow_elements(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %h = warpspec.channel "f16" depth(1) : !h
    %odd = warpspec.channel "odd" depth(1) : !odd
    %b = warpspec.channel "i8" depth(1) : !b
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %h_slot, %x = warpspec.acquire %h : !h
      warpspec.commit %h_slot tile(%i, %i, %i)
      %odd_slot, %y = warpspec.acquire %odd : !odd
      warpspec.commit %odd_slot tile(%i, %i, %i)
      %b_slot, %z = warpspec.acquire %b : !b
      warpspec.commit %b_slot tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %h_slot1, %x = warpspec.get %h : !h
      warpspec.release %h_slot1
      %odd_slot1, %y = warpspec.get %odd : !odd
      warpspec.release %odd_slot1
      %b_slot1, %z = warpspec.get %b : !b
      warpspec.release %b_slot1
    }
  }
  return
}

// Exactly the whole tensor memory: S and dP (64 each) and three 128-column
// gradients, two slots per ring: 512 columns, allocated as they are.
// CHECK-LABEL: func.func @whole_tensor_memory
// CHECK: warpspec.kernel chip(sm_100a) attributes {tmem_columns = 512 : i64} {
// CHECK-NEXT: warpspec.channel "a" depth(2) {tmem_slots = array<i64: 0, 0, 16, 0>} : <[64x64xf32, 64x64xf32], tmem>
// CHECK-NEXT: warpspec.channel "b" depth(2) {tmem_slots = array<i64: 0, 128, 16, 128>} : <[64x128xf32, 64x128xf32, 64x128xf32], tmem>
!ab = !warpspec.channel<[64x64xf32, 64x64xf32], tmem>
!grads = !warpspec.channel<[64x128xf32, 64x128xf32, 64x128xf32], tmem>
func.func @whole_tensor_memory(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %a = warpspec.channel "a" depth(2) : !ab
    %g = warpspec.channel "b" depth(2) : !grads
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %a_slot, %x, %y = warpspec.acquire %a : !ab
      warpspec.commit %a_slot tile(%i, %i, %i)
      %g_slot, %p, %q, %r = warpspec.acquire %g : !grads
      warpspec.commit %g_slot tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %a_slot1, %x, %y = warpspec.get %a : !ab
      warpspec.release %a_slot1
      %g_slot1, %p, %q, %r = warpspec.get %g : !grads
      warpspec.release %g_slot1
    }
  }
  return
}

// Each kernel is planned on its own, from column 0; a kernel without
// tensor-memory channels (on either chip) is left alone, its attributes
// kept.
// CHECK-LABEL: func.func @two_kernels
// CHECK: warpspec.kernel chip(sm_100a) attributes {tmem_columns = 32 : i64} {
// CHECK-NEXT: warpspec.channel "p" depth(2) {tmem_slots = array<i64: 0, 0, 16, 0>}
// CHECK: warpspec.kernel chip(sm_100a) attributes {tmem_columns = 64 : i64} {
// CHECK-NEXT: warpspec.channel "s" depth(1) {tmem_slots = array<i64: 0, 0>}
// CHECK-LABEL: func.func @no_tmem_channels
// CHECK: warpspec.kernel chip(sm_100a) attributes {smem_bytes = 2048 : i64} {
// CHECK-NEXT: warpspec.channel "e" depth(2) : <[64x64xbf16], smem>
// CHECK: warpspec.kernel chip(sm_90a) attributes {info = {kind = "none"}} {
module @two_kernels_module {
  func.func @two_kernels(%i: i32) {
    warpspec.kernel chip(sm_100a) {
      %p = warpspec.channel "p" depth(2) : !p
      warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
        %p_slot, %b = warpspec.acquire %p : !p
        warpspec.commit %p_slot tile(%i, %i, %i)
      }
      warpspec.partition "mma" role(mma) warps(4) regs(40) {
        %p_slot1, %b = warpspec.get %p : !p
        warpspec.release %p_slot1 after_mma
      }
    }
    warpspec.kernel chip(sm_100a) {
      %s = warpspec.channel "s" depth(1) : !s
      warpspec.partition "mma" role(mma) warps(4) regs(40) {
        %s_slot, %b = warpspec.acquire %s : !s
        warpspec.commit %s_slot tile(%i, %i, %i)
      }
      warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
        %s_slot1, %b = warpspec.get %s : !s
        warpspec.release %s_slot1
      }
    }
    return
  }
  func.func @no_tmem_channels(%i: i32) {
    warpspec.kernel chip(sm_100a) attributes {smem_bytes = 2048 : i64} {
      %e = warpspec.channel "e" depth(2) : !e
      warpspec.partition "load" role(load) warps(4) regs(40) {
        %e_slot, %b = warpspec.acquire %e : !e
        warpspec.commit %e_slot tile(%i, %i, %i)
      }
      warpspec.partition "mma" role(mma) warps(4) regs(40) {
        %e_slot1, %b = warpspec.get %e : !e
        warpspec.release %e_slot1 after_mma
      }
    }
    warpspec.kernel chip(sm_90a) attributes {info = {kind = "none"}} {
      warpspec.partition "a" role(compute) warps(4) regs(64) {
      }
    }
    return
  }
}

// The kernels blockattn-warp-specialize builds (RECIPE runs; the plain runs
// leave the blockattn ops alone).
//
// Forward, head_dim 128: S 64 + P 32 + O 128 = 224 columns -> 256, the
// budget of docs/blackwell.md ("Tensor memory") with S, P and O
// double-buffered at lane alignments 0 and 16 (no extra columns).
// RECIPE-LABEL: func.func @recipe_forward_d128
// RECIPE: warpspec.kernel chip(sm_100a) attributes {info = {{{.*}}}, tmem_columns = 256 : i64} {
// RECIPE: warpspec.channel "qkv" depth(4) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// RECIPE-NEXT: warpspec.channel "s" depth(2) {tmem_slots = array<i64: 0, 0, 16, 0>} : <[64x64xf32], tmem>
// RECIPE-NEXT: warpspec.channel "p" depth(2) {tmem_slots = array<i64: 0, 64, 16, 64>} : <[64x64xbf16], tmem>
// RECIPE-NEXT: warpspec.channel "o" depth(2) {tmem_slots = array<i64: 0, 96, 16, 96>} : <[64x128xf32], tmem>
!act = memref<?x4x128xbf16>
func.func @recipe_forward_d128(%q: !act, %k: !act, %v: !act, %o: !act,
                               %cu: memref<?xi32>) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

// Forward, head_dim 64: 64 + 32 + 64 = 160 columns -> 256.
// RECIPE-LABEL: func.func @recipe_forward_d64
// RECIPE: warpspec.kernel chip(sm_100a) attributes {info = {{{.*}}}, tmem_columns = 256 : i64} {
// RECIPE: warpspec.channel "o" depth(2) {tmem_slots = array<i64: 0, 96, 16, 96>} : <[64x64xf32], tmem>
!act64 = memref<?x4x64xf16>
func.func @recipe_forward_d64(%q: !act64, %k: !act64, %v: !act64, %o: !act64,
                              %cu: memref<?xi32>) {
  blockattn.forward q(%q : !act64) k(%k : !act64) v(%v : !act64) o(%o : !act64)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 64 : i64, element_type = f16}
  return
}

// Backward, head_dim 128: S 64 + dP 64 + dV, dK, dQ 3 x 128 = exactly the
// 512 columns of the tensor memory. P and dS go through shared memory (the
// "pds" ring), which takes no columns.
// RECIPE-LABEL: func.func @recipe_backward_d128
// RECIPE: warpspec.kernel chip(sm_100a) attributes {info = {{{.*}}}, tmem_columns = 512 : i64} {
// RECIPE: warpspec.channel "qkvdo" depth(2) : <[64x128xbf16, 64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// RECIPE-NEXT: warpspec.channel "s" depth(2) {tmem_slots = array<i64: 0, 0, 16, 0>} : <[64x64xf32], tmem>
// RECIPE-NEXT: warpspec.channel "dp" depth(2) {tmem_slots = array<i64: 0, 64, 16, 64>} : <[64x64xf32], tmem>
// RECIPE-NEXT: warpspec.channel "dv" depth(2) {tmem_slots = array<i64: 0, 128, 16, 128>} : <[64x128xf32], tmem>
// RECIPE-NEXT: warpspec.channel "dk" depth(2) {tmem_slots = array<i64: 0, 256, 16, 256>} : <[64x128xf32], tmem>
// RECIPE-NEXT: warpspec.channel "dq" depth(2) {tmem_slots = array<i64: 0, 384, 16, 384>} : <[64x128xf32], tmem>
// RECIPE-NEXT: warpspec.channel "pds" depth(2) : <[64x64xbf16, 64x64xbf16], smem>
func.func @recipe_backward_d128(%q: !act, %k: !act, %v: !act, %do: !act,
                                %dq: !act, %dk: !act, %dv: !act,
                                %cu: memref<?xi32>) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// Backward, head_dim 64: 64 + 64 + 3 x 64 = 320 columns -> 512.
// RECIPE-LABEL: func.func @recipe_backward_d64
// RECIPE: warpspec.kernel chip(sm_100a) attributes {info = {{{.*}}}, tmem_columns = 512 : i64} {
// RECIPE: warpspec.channel "dq" depth(2) {tmem_slots = array<i64: 0, 256, 16, 256>} : <[64x64xf32], tmem>
func.func @recipe_backward_d64(%q: !act64, %k: !act64, %v: !act64, %do: !act64,
                               %dq: !act64, %dk: !act64, %dv: !act64,
                               %cu: memref<?xi32>) {
  blockattn.backward q(%q : !act64) k(%k : !act64) v(%v : !act64)
      do(%do : !act64) dq(%dq : !act64) dk(%dk : !act64) dv(%dv : !act64)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 64 : i64, element_type = f16}
  return
}
