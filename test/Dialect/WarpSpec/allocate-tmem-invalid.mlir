// RUN: split-file %s %t
// RUN: block-attn-opt %t/kernels.mlir -split-input-file -verify-diagnostics -warpspec-allocate-tmem
// RUN: block-attn-opt %t/hopper.mlir -verify-diagnostics -warpspec-allocate-tmem

// warpspec-allocate-tmem diagnoses a plan above the 512 columns of the
// tensor memory, with one note per tensor-memory channel (every ring is live
// for the whole kernel, so all of them are live at the peak): its depth,
// slot width and columns; and a tensor-memory buffer that is not an M = 64
// tile. A tensor-memory channel on sm_90a is rejected by the warpspec.kernel
// verifier before the pass runs (hopper.mlir), so the pass's own "has
// tensor-memory channels, but sm_90a has no tensor memory" cannot be reached
// from textual IR.

//--- kernels.mlir

// The backward's rings at head_dim 256 (which the blockattn verifier does
// not accept, so hand-written): S and dP 64 each, three 256-column
// gradients: 64 + 64 + 3 x 256 = 896 columns.
!sq = !warpspec.channel<[64x64xf32], tmem>
!grad = !warpspec.channel<[64x256xf32], tmem>
func.func @negative_backward_d256(%i: i32) {
  // expected-error @+6 {{'warpspec.kernel' op needs 896 tensor-memory columns, more than the 512 of an SM; live at the peak:}}
  // expected-note @+5 {{channel "s": 2 slots of 64 columns = 64 columns}}
  // expected-note @+4 {{channel "dp": 2 slots of 64 columns = 64 columns}}
  // expected-note @+3 {{channel "dv": 2 slots of 256 columns = 256 columns}}
  // expected-note @+2 {{channel "dk": 2 slots of 256 columns = 256 columns}}
  // expected-note @+1 {{channel "dq": 2 slots of 256 columns = 256 columns}}
  warpspec.kernel chip(sm_100a) {
    %s = warpspec.channel "s" depth(2) : !sq
    %dp = warpspec.channel "dp" depth(2) : !sq
    %dv = warpspec.channel "dv" depth(2) : !grad
    %dk = warpspec.channel "dk" depth(2) : !grad
    %dq = warpspec.channel "dq" depth(2) : !grad
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s_slot, %a = warpspec.acquire %s : !sq
      warpspec.commit %s_slot tile(%i, %i, %i)
      %dp_slot, %b = warpspec.acquire %dp : !sq
      warpspec.commit %dp_slot tile(%i, %i, %i)
      %dv_slot, %c = warpspec.acquire %dv : !grad
      warpspec.commit %dv_slot tile(%i, %i, %i)
      %dk_slot, %d = warpspec.acquire %dk : !grad
      warpspec.commit %dk_slot tile(%i, %i, %i)
      %dq_slot, %e = warpspec.acquire %dq : !grad
      warpspec.commit %dq_slot tile(%i, %i, %i)
    }
    warpspec.partition "compute" role(softmax) warps(4) regs(160) {
      %s_slot1, %a = warpspec.get %s : !sq
      warpspec.release %s_slot1
      %dp_slot1, %b = warpspec.get %dp : !sq
      warpspec.release %dp_slot1
      %dv_slot1, %c = warpspec.get %dv : !grad
      warpspec.release %dv_slot1
      %dk_slot1, %d = warpspec.get %dk : !grad
      warpspec.release %dk_slot1
      %dq_slot1, %e = warpspec.get %dq : !grad
      warpspec.release %dq_slot1
    }
  }
  return
}

// -----

// One column over: an odd depth (3 slots of 128 columns take two column
// ranges, 256) next to a slot of 16-bit buffers, two elements a column:
// 64x512 bf16 is 256 columns, and 64x1 bf16 (half a column) still takes a
// whole one: 256 + 257 = 513.
!o = !warpspec.channel<[64x128xf32], tmem>
!p = !warpspec.channel<[64x512xbf16, 64x1xbf16], tmem>
func.func @negative_one_column_over(%i: i32) {
  // expected-error @+3 {{'warpspec.kernel' op needs 513 tensor-memory columns, more than the 512 of an SM; live at the peak:}}
  // expected-note @+2 {{channel "o": 3 slots of 128 columns = 256 columns}}
  // expected-note @+1 {{channel "p": 1 slots of 257 columns = 257 columns}}
  warpspec.kernel chip(sm_100a) {
    %o = warpspec.channel "o" depth(3) : !o
    %p = warpspec.channel "p" depth(1) : !p
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %o_slot, %a = warpspec.acquire %o : !o
      warpspec.commit %o_slot tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %o_slot1, %a = warpspec.get %o : !o
      warpspec.release %o_slot1
      %p_slot, %b, %c = warpspec.acquire %p : !p
      warpspec.commit %p_slot tile(%i, %i, %i)
    }
    warpspec.partition "reader" role(mma) warps(4) regs(40) {
      %p_slot1, %b, %c = warpspec.get %p : !p
      warpspec.release %p_slot1 after_mma
    }
  }
  return
}

// -----

// An M = 128 accumulator uses all 128 lanes: two of them cannot share
// columns the way the M = 64 tiles of these kernels do.
!s128 = !warpspec.channel<[128x64xf32], tmem>
func.func @negative_128_rows(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    // expected-error @+1 {{'warpspec.channel' op tensor-memory buffers are M = 64 tiles (64 rows), got '!warpspec.buffer<128x64xf32, tmem>'}}
    %s = warpspec.channel "s" depth(2) : !s128
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s_slot, %a = warpspec.acquire %s : !s128
      warpspec.commit %s_slot tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %s_slot1, %a = warpspec.get %s : !s128
      warpspec.release %s_slot1
    }
  }
  return
}

// -----

// Every buffer of a slot is checked: the second one here has 32 rows.
!mixed = !warpspec.channel<[64x64xf32, 32x64xf32], tmem>
func.func @negative_second_buffer_32_rows(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    // expected-error @+1 {{'warpspec.channel' op tensor-memory buffers are M = 64 tiles (64 rows), got '!warpspec.buffer<32x64xf32, tmem>'}}
    %s = warpspec.channel "s" depth(1) : !mixed
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s_slot, %a, %b = warpspec.acquire %s : !mixed
      warpspec.commit %s_slot tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %s_slot1, %a, %b = warpspec.get %s : !mixed
      warpspec.release %s_slot1
    }
  }
  return
}

//--- hopper.mlir

// Hopper has no tensor memory: the kernel verifier rejects the channel.
!s = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_tmem_channel_on_hopper(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op lives in tensor memory, which sm_90a does not have}}
    %s = warpspec.channel "s" depth(2) : !s
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %s_slot, %a = warpspec.acquire %s : !s
      warpspec.commit %s_slot tile(%i, %i, %i)
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %s_slot1, %a = warpspec.get %s : !s
      warpspec.release %s_slot1
    }
  }
  return
}
