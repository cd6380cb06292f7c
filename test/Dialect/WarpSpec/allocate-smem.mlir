// RUN: block-attn-opt %s -warpspec-allocate-smem | FileCheck %s
// The plan depends only on the kernel's shape: running the pass again on its
// own output rewrites the same offsets.
// RUN: block-attn-opt %s -warpspec-allocate-smem | block-attn-opt -warpspec-allocate-smem | FileCheck %s
// The plans of the kernels blockattn-warp-specialize builds (the forward at
// the end of this file), with its defaults, P staged (p-operand=smem) and
// three consumers; the kernels above are planned again, unchanged.
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a}),warpspec-allocate-smem)' | FileCheck %s --check-prefix=PIPE
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a p-operand=smem}),warpspec-allocate-smem)' | FileCheck %s --check-prefix=PIPE-P
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a num-consumers=3}),warpspec-allocate-smem)' | FileCheck %s --check-prefix=PIPE-3
// The sm_100a forward, planned as blockattn-to-ptx does (tensor memory
// first); allocate-smem keeps what allocate-tmem wrote.
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_100a}),warpspec-allocate-tmem,warpspec-allocate-smem)' | FileCheck %s --check-prefix=PIPE-BW

// warpspec-allocate-smem: the offsets it writes on every channel
// (buffer_offset, slot_stride, barrier_offset, info_offset) and scratch
// buffer (offset, replica_stride), and the kernel's smem_bytes. The layout,
// from offset 0: the slots of every shared-memory channel, each slot
// 1024-byte aligned; the row values of the channels that have them (a
// tile's positions: rows_offset), 16-byte aligned; every scratch buffer, one 1024-byte aligned copy per
// replica; every channel's full/empty mbarriers (2 x depth x 8 bytes); every
// channel's tile records (depth x 16 bytes); in a kernel with
// tensor-memory channels, 16 bytes for the address tcgen05.alloc writes and
// the teardown barrier (tmem_base_offset). The barriers, records and
// address (the metadata) go into the bytes the run-time alignment of the
// dynamic shared memory base skips, so smem_bytes is the offset where the
// barriers start plus max(1008, 2 x metadata - 16) bytes of slack. Each
// kernel is planned on its own, from 0.

!tile = !warpspec.buffer<64x128xbf16, smem>
!qkv = !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>

// The seed forward's ring: 4 slots of Q, K, V (3 x 16 KiB = 48 KiB each),
// then 64 bytes of barriers and 64 bytes of tile records, inside the slack:
// 196608 + max(1008, 2 x 128 - 16) = 197616.
// CHECK-LABEL: func.func @allocate_one_channel
// CHECK: warpspec.kernel chip(sm_90a) attributes {smem_bytes = 197616 : i64} {
// CHECK: warpspec.channel "qkv" depth(4) {barrier_offset = 196608 : i64, buffer_offset = 0 : i64, info_offset = 196672 : i64, slot_stride = 49152 : i64}
func.func @allocate_one_channel(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    %qkv = warpspec.channel "qkv" depth(4) : !qkv
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

// A slot with the tile's positions (a 64xi32 buffer after the tiles,
// warpspec.copy_positions): the tiles keep their 49152-byte stride, and the
// row values of every slot (256 bytes each) follow the channels' slots at
// rows_offset, 16-byte aligned, so they cost 4 x 256 bytes, not a 1 KiB step
// of each slot: 196608 + 1024 + 1008 = 198640.
// CHECK-LABEL: func.func @allocate_slot_positions
// CHECK: warpspec.kernel chip(sm_90a) attributes {smem_bytes = 198640 : i64} {
// CHECK: warpspec.channel "qkv" depth(4) {barrier_offset = 197632 : i64, buffer_offset = 0 : i64, info_offset = 197696 : i64, rows_offset = 196608 : i64, slot_stride = 49152 : i64}
!qkvp = !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16, 64xi32], smem>
func.func @allocate_slot_positions(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    %qkv = warpspec.channel "qkv" depth(4) : !qkvp
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %qkv_slot, %q, %k, %v, %p = warpspec.acquire %qkv : !qkvp
      warpspec.commit %qkv_slot tile(%i, %i, %i)
      warpspec.close %qkv : !qkvp
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %q, %k, %v, %p) : !qkvp {
        warpspec.release %qkv_slot1
      }
    }
  }
  return
}

// Two channels, placed in declaration order. A slot of "a" is 100x64 bf16 =
// 12800 bytes, padded to a 13312-byte (13 KiB) stride so that every slot
// starts 1024-byte aligned; "b" starts after a's three slots (39936).
// Barriers follow the slots (a: 48 bytes, b: 32), then the records (a: 48,
// b: 32), 160 bytes inside the slack: 72704 + 1008 = 73712. (One compute
// warpgroup: two replicas could not share a's three slots.)
// CHECK-LABEL: func.func @allocate_two_channels
// CHECK: warpspec.kernel chip(sm_90a) attributes {smem_bytes = 73712 : i64} {
// CHECK: warpspec.channel "a" depth(3) {barrier_offset = 72704 : i64, buffer_offset = 0 : i64, info_offset = 72784 : i64, slot_stride = 13312 : i64}
// CHECK: warpspec.channel "b" depth(2) {barrier_offset = 72752 : i64, buffer_offset = 39936 : i64, info_offset = 72832 : i64, slot_stride = 16384 : i64}
!a = !warpspec.channel<[100x64xbf16], smem>
!b = !warpspec.channel<[64x64xbf16, 64x64xbf16], smem>
func.func @allocate_two_channels(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    %a = warpspec.channel "a" depth(3) : !a
    %b = warpspec.channel "b" depth(2) : !b
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %a_slot, %x = warpspec.acquire %a : !a
      warpspec.commit %a_slot tile(%i, %i, %i)
      %b_slot, %y, %z = warpspec.acquire %b : !b
      warpspec.commit %b_slot tile(%i, %i, %i)
      warpspec.close %a : !a
      warpspec.close %b : !b
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %a (%a_slot1, %row, %rows, %head, %x) : !a {
        warpspec.release %a_slot1
      }
      warpspec.consume %b (%b_slot1, %row, %rows, %head, %y, %z) : !b {
        warpspec.release %b_slot1
      }
    }
  }
  return
}

// Scratch buffers come after the channels, one copy per replica of their
// partition: after a three-slot ring (one slot per replica), a 10x64 bf16
// buffer (1280 bytes) gets a 2048-byte replica stride, 3 replicas from
// 147456; the next buffer (8 KiB) starts at 147456 + 3 x 2048 = 153600 and
// takes 3 x 8192. Barriers and records follow, inside the slack: 178176 +
// 1008 = 179184.
// CHECK-LABEL: func.func @allocate_scratch_replicas
// CHECK: warpspec.kernel chip(sm_90a) attributes {smem_bytes = 179184 : i64} {
// CHECK: warpspec.channel "qkv" depth(3) {barrier_offset = 178176 : i64, buffer_offset = 0 : i64, info_offset = 178224 : i64, slot_stride = 49152 : i64}
// CHECK: warpspec.partition "compute" role(compute) warps(4) regs(152) replicas(3) {
// CHECK-NEXT: warpspec.scratch {offset = 147456 : i64, replica_stride = 2048 : i64} : <10x64xbf16, smem>
// CHECK-NEXT: warpspec.scratch {offset = 153600 : i64, replica_stride = 8192 : i64} : <64x64xbf16, smem>
func.func @allocate_scratch_replicas(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    %qkv = warpspec.channel "qkv" depth(3) : !qkv
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %qkv_slot, %q, %k, %v = warpspec.acquire %qkv : !qkv
      warpspec.commit %qkv_slot tile(%i, %i, %i)
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "compute" role(compute) warps(4) regs(152) replicas(3) {
      %small = warpspec.scratch : !warpspec.buffer<10x64xbf16, smem>
      %p = warpspec.scratch : !warpspec.buffer<64x64xbf16, smem>
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %q, %k, %v) : !qkv {
        warpspec.release %qkv_slot1
      }
    }
  }
  return
}

// The seed forward as blockattn-warp-specialize builds it by default: the
// two compute replicas' 16 KiB O staging buffers (o-store=smem) follow the
// four-slot ring. smem_bytes = 196608 + 2 x 16384 + 1008 = 230384, 2064
// bytes under the limit.
// CHECK-LABEL: func.func @allocate_hopper_forward_staged_o
// CHECK: smem_bytes = 230384 : i64
// CHECK: warpspec.channel "qkv" depth(4) {barrier_offset = 229376 : i64, buffer_offset = 0 : i64, info_offset = 229440 : i64, slot_stride = 49152 : i64}
// CHECK: warpspec.scratch {offset = 196608 : i64, replica_stride = 16384 : i64} : <64x128xbf16, smem>
func.func @allocate_hopper_forward_staged_o(%i: i32) {
  warpspec.kernel chip(sm_90a) attributes {
      info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64,
              kind = "forward", rotary = "none"}} {
    %qkv = warpspec.channel "qkv" depth(4) : !qkv
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %qkv_slot, %q, %k, %v = warpspec.acquire %qkv : !qkv
      warpspec.commit %qkv_slot tile(%i, %i, %i)
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
      %obuf = warpspec.scratch : !warpspec.buffer<64x128xbf16, smem>
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %q, %k, %v) : !qkv {
        warpspec.release %qkv_slot1
      }
    }
  }
  return
}

// The seed forward with P staged in shared memory too, as
// blockattn-warp-specialize{p-operand=smem} builds it: both scratch buffers
// leave room for three slots only, and two replicas share an even number, so
// the ring has two. The P buffers (2 x 8 KiB) and the O buffers (2 x 16 KiB)
// follow it in order: smem_bytes = 98304 + 16384 + 32768 + 1008 = 148464.
// CHECK-LABEL: func.func @allocate_hopper_forward_scratch
// CHECK: smem_bytes = 148464 : i64
// CHECK: warpspec.channel "qkv" depth(2) {barrier_offset = 147456 : i64, buffer_offset = 0 : i64, info_offset = 147488 : i64, slot_stride = 49152 : i64}
// CHECK: warpspec.scratch {offset = 98304 : i64, replica_stride = 8192 : i64} : <64x64xbf16, smem>
// CHECK-NEXT: warpspec.scratch {offset = 114688 : i64, replica_stride = 16384 : i64} : <64x128xbf16, smem>
func.func @allocate_hopper_forward_scratch(%i: i32) {
  warpspec.kernel chip(sm_90a) attributes {
      info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64,
              kind = "forward", rotary = "none"}} {
    %qkv = warpspec.channel "qkv" depth(2) : !qkv
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %qkv_slot, %q, %k, %v = warpspec.acquire %qkv : !qkv
      warpspec.commit %qkv_slot tile(%i, %i, %i)
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
      %pbuf = warpspec.scratch : !warpspec.buffer<64x64xbf16, smem>
      %obuf = warpspec.scratch : !warpspec.buffer<64x128xbf16, smem>
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %q, %k, %v) : !qkv {
        warpspec.release %qkv_slot1
      }
    }
  }
  return
}

// A tensor-memory channel gets no shared-memory buffers (no buffer_offset,
// no slot_stride) but its barriers and tile records are in shared memory,
// after those of the channels declared before it; then 16 bytes for the
// tensor-memory address tcgen05.alloc writes and the teardown barrier
// (tmem_base_offset), 144 bytes inside the slack: 98304 + 1008 = 99312.
// CHECK-LABEL: func.func @allocate_tmem_channel
// CHECK: warpspec.kernel chip(sm_100a) attributes {smem_bytes = 99312 : i64, tmem_base_offset = 98432 : i64} {
// CHECK: warpspec.channel "qkv" depth(2) {barrier_offset = 98304 : i64, buffer_offset = 0 : i64, info_offset = 98368 : i64, slot_stride = 49152 : i64}
// CHECK: warpspec.channel "s" depth(2) {barrier_offset = 98336 : i64, info_offset = 98400 : i64} : <[64x64xf32], tmem>
!s = !warpspec.channel<[64x64xf32], tmem>
func.func @allocate_tmem_channel(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %qkv = warpspec.channel "qkv" depth(2) : !qkv
    %s = warpspec.channel "s" depth(2) : !s
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %qkv_slot, %q, %k, %v = warpspec.acquire %qkv : !qkv
      warpspec.commit %qkv_slot tile(%i, %i, %i)
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %q, %k, %v) : !qkv {
        %s_slot, %sb = warpspec.acquire %s : !s
        warpspec.commit %s_slot tile(%row, %rows, %head)
        warpspec.release %qkv_slot1
      }
      warpspec.close %s : !s
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) replicas(2) {
      warpspec.consume %s (%s_slot1, %row, %rows, %head, %sb) : !s {
        warpspec.release %s_slot1
      }
    }
  }
  return
}

// Only tensor-memory channels: the barriers start at offset 0 (2 x 8 bytes),
// the record follows (16 bytes), then the tensor-memory address (16 bytes):
// all 48 inside the slack, 0 + 1008 = 1008.
// CHECK-LABEL: func.func @allocate_only_tmem
// CHECK: warpspec.kernel chip(sm_100a) attributes {smem_bytes = 1008 : i64, tmem_base_offset = 32 : i64} {
// CHECK: warpspec.channel "s" depth(1) {barrier_offset = 0 : i64, info_offset = 16 : i64} : <[64x64xf32], tmem>
func.func @allocate_only_tmem(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %s = warpspec.channel "s" depth(1) : !s
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s_slot, %sb = warpspec.acquire %s : !s
      warpspec.commit %s_slot tile(%i, %i, %i)
      warpspec.close %s : !s
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      warpspec.consume %s (%s_slot1, %row, %rows, %head, %sb) : !s {
        warpspec.release %s_slot1
      }
    }
  }
  return
}

// A kernel without channels or scratch still reserves the alignment slack
// (1008 bytes),
// and existing attributes (info) are kept.
// CHECK-LABEL: func.func @allocate_no_channels
// CHECK: warpspec.kernel chip(sm_90a) attributes {info = {kind = "none"}, smem_bytes = 1008 : i64} {
func.func @allocate_no_channels() {
  warpspec.kernel chip(sm_90a) attributes {info = {kind = "none"}} {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// The seed forward through blockattn-warp-specialize, then this pass (the
// PIPE runs; the plain runs leave it alone): the plans of the kernels it
// builds.
// Default: a chunked launch, two CTAs per SM, each with one consumer: 2
// slots and its O staging buffer, 98304 + 16384 + 1008 = 115696 bytes, 16
// under the 115712 a CTA can have when two share an SM.
// PIPE-LABEL: func.func @pipeline_forward
// PIPE: ctas_per_sm = 2 : i64, {{.*}}smem_bytes = 115696 : i64, tiles_per_cta = 4 : i64
// PIPE: warpspec.channel "qkv" depth(2) {barrier_offset = 114688 : i64, buffer_offset = 0 : i64, info_offset = 114720 : i64, slot_stride = 49152 : i64}
// PIPE: warpspec.partition "compute" role(compute) warps(4) regs(216) {
// PIPE-NEXT: %[[O:.*]] = warpspec.scratch {offset = 98304 : i64, replica_stride = 16384 : i64} : <64x128xbf16, smem>
// PIPE: warpspec.store {{.*}} via(%[[O]])
// P staged too (still chunked): the P and O buffers leave room for one
// slot, which they follow, P then O: 49152 + 8192 + 16384 + 1008 = 74736
// bytes.
// PIPE-P-LABEL: func.func @pipeline_forward
// PIPE-P: ctas_per_sm = 2 : i64, {{.*}}smem_bytes = 74736 : i64, tiles_per_cta = 4 : i64
// PIPE-P: warpspec.channel "qkv" depth(1) {barrier_offset = 73728 : i64, buffer_offset = 0 : i64, info_offset = 73744 : i64, slot_stride = 49152 : i64}
// PIPE-P: warpspec.partition "compute" role(compute) warps(4) regs(216) {
// PIPE-P-NEXT: warpspec.scratch {offset = 49152 : i64, replica_stride = 8192 : i64} : <64x64xbf16, smem>
// PIPE-P-NEXT: warpspec.scratch {offset = 57344 : i64, replica_stride = 16384 : i64} : <64x128xbf16, smem>
// Three consumers (a persistent launch): their three O buffers (48 KiB)
// leave room for 3 slots, one per replica: 147456 + 49152 + 1008 = 197616
// bytes.
// PIPE-3-LABEL: func.func @pipeline_forward
// PIPE-3: smem_bytes = 197616 : i64
// PIPE-3: warpspec.channel "qkv" depth(3) {barrier_offset = 196608 : i64, buffer_offset = 0 : i64, info_offset = 196656 : i64, slot_stride = 49152 : i64}
// PIPE-3: warpspec.partition "compute" role(compute) warps(4) regs(152) replicas(3) {
// PIPE-3-NEXT: warpspec.scratch {offset = 147456 : i64, replica_stride = 16384 : i64} : <64x128xbf16, smem>
// sm_100a: 4 slots, the two softmax warpgroups' O staging buffers, the
// barriers and records of qkv and of the tensor-memory rings s, p, o (2
// slots each), then the tensor-memory address, 336 bytes inside the slack:
// 196608 + 32768 + 1008 = 230384 bytes. The rings keep their tmem_slots and
// the kernel its tmem_columns.
// PIPE-BW-LABEL: func.func @pipeline_forward
// PIPE-BW: warpspec.kernel chip(sm_100a) attributes {info = {{{.*}}}, smem_bytes = 230384 : i64, tmem_base_offset = 229696 : i64, tmem_columns = 256 : i64}
// PIPE-BW: warpspec.channel "qkv" depth(4) {barrier_offset = 229376 : i64, buffer_offset = 0 : i64, info_offset = 229536 : i64, slot_stride = 49152 : i64}
// PIPE-BW: warpspec.channel "s" depth(2) {barrier_offset = 229440 : i64, info_offset = 229600 : i64, tmem_slots = array<i64: 0, 0, 16, 0>} : <[64x64xf32], tmem>
// PIPE-BW: warpspec.channel "p" depth(2) {barrier_offset = 229472 : i64, info_offset = 229632 : i64, tmem_slots = array<i64: 0, 64, 16, 64>} : <[64x64xbf16], tmem>
// PIPE-BW: warpspec.channel "o" depth(2) {barrier_offset = 229504 : i64, info_offset = 229664 : i64, tmem_slots = array<i64: 0, 96, 16, 96>} : <[64x128xf32], tmem>
// PIPE-BW: warpspec.partition "softmax" role(softmax) warps(4) regs(216) replicas(2) {
// PIPE-BW-NEXT: warpspec.scratch {offset = 196608 : i64, replica_stride = 16384 : i64} : <64x128xbf16, smem>
!act = memref<?x4x128xbf16>
func.func @pipeline_forward(%q: !act, %k: !act, %v: !act, %o: !act,
                            %cu: memref<?xi32>) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}
