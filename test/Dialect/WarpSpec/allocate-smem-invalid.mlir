// RUN: split-file %s %t
// RUN: block-attn-opt %t/kernels.mlir -split-input-file -verify-diagnostics -warpspec-allocate-smem
// RUN: block-attn-opt %t/num-stages.mlir -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a schedule=strided num-stages=6}),warpspec-allocate-smem)'
// RUN: block-attn-opt %t/sm100a-num-stages.mlir -verify-diagnostics --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_100a num-stages=3}),warpspec-allocate-tmem,warpspec-allocate-smem)'
// RUN: block-attn-opt %t/num-stages-registers.mlir -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a schedule=strided num-stages=6 o-store=registers}),warpspec-allocate-smem)'

// warpspec-allocate-smem diagnoses a plan above the 232448 bytes (227 KiB)
// of shared memory a CTA can have, with one note per placement: each channel
// (depth x slot stride), each partition's scratch (replicas x replica
// stride), and the barriers and tile records with the base alignment slack
// that holds them (max(1008, 2 x their bytes - 16)).

//--- kernels.mlir

// Six 48 KiB slots of Q, K, V (the next depth after four that two replicas
// can share), the 192 bytes of barriers and records inside the slack:
// 294912 + 1008 = 295920 bytes.
!qkv = !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
func.func @negative_ring_too_deep(%i: i32) {
  // expected-error @+3 {{'warpspec.kernel' op needs 295920 bytes of shared memory, more than the 232448 a CTA can have (1 per SM)}}
  // expected-note @+2 {{channel "qkv": 6 x 49152 bytes = 294912}}
  // expected-note @+1 {{barriers and tile records (192 bytes) and the alignment slack of the base = 1008}}
  warpspec.kernel chip(sm_90a) {
    %qkv = warpspec.channel "qkv" depth(6) : !qkv
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %qkv_slot, %q, %k, %v = warpspec.acquire %qkv : !qkv
      warpspec.commit %qkv_slot tile(%i, %i, %i)
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %q, %k, %v) : !qkv {
        warpspec.release %qkv_slot1
      }
    }
  }
  return
}

// -----

// The ring alone fits (4 slots, 192 KiB), but four replicas of a 16 KiB
// scratch buffer do not fit next to it; two channels are listed in order.
// 196608 + 8192 + 65536 + 1008 = 271344 bytes.
!qkv = !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
!o = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_scratch_overflows(%i: i32) {
  // expected-error @+5 {{'warpspec.kernel' op needs 271344 bytes of shared memory, more than the 232448 a CTA can have (1 per SM)}}
  // expected-note @+4 {{channel "qkv": 4 x 49152 bytes = 196608}}
  // expected-note @+3 {{channel "o": 1 x 8192 bytes = 8192}}
  // expected-note @+2 {{scratch of partition "compute": 4 x 16384 bytes = 65536}}
  // expected-note @+1 {{barriers and tile records (160 bytes) and the alignment slack of the base = 1008}}
  warpspec.kernel chip(sm_90a) {
    %qkv = warpspec.channel "qkv" depth(4) : !qkv
    %o = warpspec.channel "o" depth(1) : !o
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %qkv_slot, %q, %k, %v = warpspec.acquire %qkv : !qkv
      warpspec.commit %qkv_slot tile(%i, %i, %i)
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "compute" role(compute) warps(4) regs(104) replicas(4) {
      %p = warpspec.scratch : !warpspec.buffer<64x128xbf16, smem>
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %q, %k, %v) : !qkv {
        warpspec.release %qkv_slot1
      }
    }
    warpspec.partition "store" role(compute) warps(4) regs(24) {
      %o_slot, %ob = warpspec.acquire %o : !o
      warpspec.commit %o_slot tile(%i, %i, %i)
      warpspec.close %o : !o
    }
    warpspec.partition "sink" role(compute) warps(4) regs(24) {
      warpspec.consume %o (%o_slot1, %row, %rows, %head, %ob) : !o {
        warpspec.release %o_slot1
      }
    }
  }
  return
}

// -----

// With two CTAs per SM a CTA gets half the SM's 228 KiB less the 1 KiB the
// hardware reserves: 115712 bytes. Three 48 KiB slots do not fit:
// 147456 + 1008 = 148464 bytes.
!qkv = !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
func.func @negative_two_ctas_ring_too_deep(%i: i32) {
  // expected-error @+3 {{'warpspec.kernel' op needs 148464 bytes of shared memory, more than the 115712 a CTA can have (2 per SM)}}
  // expected-note @+2 {{channel "qkv": 3 x 49152 bytes = 147456}}
  // expected-note @+1 {{barriers and tile records (96 bytes) and the alignment slack of the base = 1008}}
  warpspec.kernel chip(sm_90a) attributes {ctas_per_sm = 2 : i64} {
    %qkv = warpspec.channel "qkv" depth(3) : !qkv
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %qkv_slot, %q, %k, %v = warpspec.acquire %qkv : !qkv
      warpspec.commit %qkv_slot tile(%i, %i, %i)
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "compute" role(compute) warps(4) regs(216) {
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %q, %k, %v) : !qkv {
        warpspec.release %qkv_slot1
      }
    }
  }
  return
}

//--- num-stages.mlir

// blockattn-warp-specialize, with a persistent launch (schedule=strided:
// one CTA per SM and two consumers, not the chunked default), takes
// num-stages=6 (a multiple of its two consumers) as given at head_dim 128
// (the default would pick 4); the ring does not fit next to the two compute
// replicas' 16 KiB O staging buffers (o-store=smem, the default), and the
// diagnostic comes from warpspec-allocate-smem, on the kernel built at the
// forward's location:
// 294912 + 32768 + 1008 = 328688 bytes.
!act = memref<?x4x128xbf16>
func.func @negative_num_stages_too_deep(%q: !act, %k: !act, %v: !act, %o: !act,
                                        %cu: memref<?xi32>) {
  // expected-error @+4 {{'warpspec.kernel' op needs 328688 bytes of shared memory, more than the 232448 a CTA can have (1 per SM)}}
  // expected-note @+3 {{channel "qkv": 6 x 49152 bytes = 294912}}
  // expected-note @+2 {{scratch of partition "compute": 2 x 16384 bytes = 32768}}
  // expected-note @+1 {{barriers and tile records (192 bytes) and the alignment slack of the base = 1008}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

// -----

// At head_dim 64 six slots (24 KiB each) fit next to the 8 KiB staging
// buffers: no diagnostic.
!act64 = memref<?x4x64xbf16>
func.func @num_stages_fit_d64(%q: !act64, %k: !act64, %v: !act64, %o: !act64,
                              %cu: memref<?xi32>) {
  blockattn.forward q(%q : !act64) k(%k : !act64) v(%v : !act64) o(%o : !act64)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 64 : i64, element_type = bf16}
  return
}

//--- num-stages-registers.mlir

// With o-store=registers (persistent, as above) there is no scratch: the
// six-slot ring alone does not fit (294912 + 1008 = 295920 bytes).
!act = memref<?x4x128xbf16>
func.func @negative_num_stages_too_deep_registers(%q: !act, %k: !act, %v: !act,
                                                  %o: !act, %cu: memref<?xi32>) {
  // expected-error @+3 {{'warpspec.kernel' op needs 295920 bytes of shared memory, more than the 232448 a CTA can have (1 per SM)}}
  // expected-note @+2 {{channel "qkv": 6 x 49152 bytes = 294912}}
  // expected-note @+1 {{barriers and tile records (192 bytes) and the alignment slack of the base = 1008}}
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//--- sm100a-num-stages.mlir

// The sm_100a backward with a 3-slot Q/K/V/dO ring (the default picks 2):
// next to the P/dS ring and the two softmax warpgroups' staging buffers it
// does not fit. The tensor-memory rings take no shared memory but their
// barriers and records do, and so does the tensor-memory address: 15
// slots (3 + 5 x 2 + 2) of 2 x 8 bytes of barriers and 16 of record, and 16
// bytes for the address = 496, inside the slack (max(1008, 2 x 496 - 16));
// 196608 + 32768 + 32768 + 1008 = 263152 bytes.
!act = memref<?x4x128xbf16>
func.func @negative_sm100a_backward_num_stages(%q: !act, %k: !act, %v: !act,
                                               %do: !act, %dq: !act, %dk: !act,
                                               %dv: !act, %cu: memref<?xi32>) {
  // expected-error @+5 {{'warpspec.kernel' op needs 263152 bytes of shared memory, more than the 232448 a CTA can have (1 per SM)}}
  // expected-note @+4 {{channel "qkvdo": 3 x 65536 bytes = 196608}}
  // expected-note @+3 {{channel "pds": 2 x 16384 bytes = 32768}}
  // expected-note @+2 {{scratch of partition "softmax": 2 x 16384 bytes = 32768}}
  // expected-note @+1 {{barriers and tile records (496 bytes) and the alignment slack of the base = 1008}}
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}
