// RUN: block-attn-opt %s | block-attn-opt | FileCheck %s
// RUN: block-attn-opt %s --mlir-print-op-generic | block-attn-opt | FileCheck %s

// Round trip of every warpspec op and type form, in the custom and the
// generic syntax: the Hopper forward kernel as blockattn-warp-specialize and
// warpspec-allocate-smem produce it (P from registers, and P staged through a
// scratch buffer; O stored from registers or staged through a scratch buffer
// with via), f16 and head_dim 64, replicas, the Hopper backward kernel
// (softmax valid_rows/normalize, softmax_grad, mma transpose_a, writes of f32
// tiles, three bulk stores through one staging buffer), a Blackwell kernel with every
// partition role and a tensor-memory channel, the Blackwell forward kernel
// (tensor-memory rings with tmem_slots, mma_async, get, release after_mma,
// tmem_load/tmem_store, a replicated producer) and every form of the
// Blackwell ops, every optional attribute and operand of the tile
// operations, and every type as a function argument.

!act = memref<?x4x128xbf16>
!cu = memref<?xi32>
!qkv = !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
!tile = !warpspec.buffer<64x128xbf16, smem>

//===----------------------------------------------------------------------===//
// Hopper forward kernels
//===----------------------------------------------------------------------===//

// The seed forward (bf16, head_dim 128) after blockattn-warp-specialize and
// warpspec-allocate-smem with their defaults: a load partition fills a
// four-slot qkv ring, two compute replicas take its slots round-robin, P
// feeds P V from registers, and O leaves through a per-replica 16 KiB staging
// buffer (o-store=smem): warpspec.store ... via(%scratch). smem_bytes =
// 196608 + 2 x 16384 + 64 + 64 + 1024 = 230528.
// CHECK-LABEL: func.func @hopper_forward_bf16_d128
// CHECK-SAME: {blockattn.name = "q"}
// CHECK: warpspec.kernel chip(sm_90a) attributes {info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, kind = "forward", rotary = "none", softmax_scale = 0.0883883461 : f32}, smem_bytes = 230528 : i64} {
// CHECK: %[[T:.*]] = memref.dim %[[Q:.*]], %{{.*}} : memref<?x4x128xbf16>
// CHECK: %[[H:.*]] = memref.dim %[[Q]], %{{.*}} : memref<?x4x128xbf16>
// CHECK: %[[SCALE:.*]] = arith.constant 0.0883883461 : f32
// CHECK: %[[QKV:.*]] = warpspec.channel "qkv" depth(4) {barrier_offset = 229376 : i64, buffer_offset = 0 : i64, info_offset = 229440 : i64, slot_stride = 49152 : i64} : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// CHECK: warpspec.partition "load" role(load) warps(4) regs(40) {
// CHECK-NEXT: warpspec.tile_loop (%[[ROW:.*]], %[[ROWS:.*]], %[[HEAD:.*]]) in %[[CU:.*]] : memref<?xi32> heads(%[[H]]) tokens(%[[T]]) block_size(64) {
// CHECK-NEXT: %[[SLOT:.*]], %[[BUFS:.*]]:3 = warpspec.acquire %[[QKV]] : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// CHECK-NEXT: warpspec.tma_load %[[Q]][%[[ROW]], %[[HEAD]]] into %[[BUFS]]#0 : memref<?x4x128xbf16>, <64x128xbf16, smem>
// CHECK-NEXT: warpspec.tma_load %{{.*}}[%[[ROW]], %[[HEAD]]] into %[[BUFS]]#1
// CHECK-NEXT: warpspec.tma_load %{{.*}}[%[[ROW]], %[[HEAD]]] into %[[BUFS]]#2
// CHECK-NEXT: warpspec.commit %[[SLOT]] tile(%[[ROW]], %[[ROWS]], %[[HEAD]]){{$}}
// CHECK-NEXT: }
// CHECK-NEXT: warpspec.close %[[QKV]] : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// CHECK-NEXT: }
// CHECK-NEXT: warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
// CHECK-NEXT: %[[OBUF:.*]] = warpspec.scratch {offset = 196608 : i64, replica_stride = 16384 : i64} : <64x128xbf16, smem>
// CHECK-NEXT: warpspec.consume %[[QKV]] (%[[CSLOT:.*]], %[[CROW:.*]], %[[CROWS:.*]], %[[CHEAD:.*]], %[[CQ:.*]], %[[CK:.*]], %[[CV:.*]]) : !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem> {
// CHECK-NEXT: %[[S:.*]] = warpspec.mma %[[CQ]], %[[CK]] {transpose_b} : !warpspec.buffer<64x128xbf16, smem>, <64x128xbf16, smem> -> <64x64xf32>
// CHECK-NEXT: %[[P:.*]], %[[L:.*]] = warpspec.softmax %[[S]] valid_cols(%[[CROWS]]) scale(%[[SCALE]]) : <64x64xf32> -> <64x64xbf16>, <64xf32>
// CHECK-NEXT: %[[O:.*]] = warpspec.mma %[[P]], %[[CV]] : !warpspec.acc<64x64xbf16>, <64x128xbf16, smem> -> <64x128xf32>
// CHECK-NEXT: warpspec.release %[[CSLOT]]{{$}}
// CHECK-NEXT: warpspec.store %[[O]] to %{{.*}}[%[[CROW]], %[[CHEAD]]] rows(%[[CROWS]]) divide_by(%[[L]]) via(%[[OBUF]]) : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.rows<64xf32>, !warpspec.buffer<64x128xbf16, smem>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
func.func @hopper_forward_bf16_d128(%q: !act {blockattn.name = "q"},
                                    %k: !act {blockattn.name = "k"},
                                    %v: !act {blockattn.name = "v"},
                                    %o: !act {blockattn.name = "o"},
                                    %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_90a) attributes {
      info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64,
              kind = "forward", rotary = "none",
              softmax_scale = 0.0883883461 : f32},
      smem_bytes = 230528 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %scale = arith.constant 0.0883883461 : f32
    %qkv = warpspec.channel "qkv" depth(4)
        {barrier_offset = 229376 : i64, buffer_offset = 0 : i64,
         info_offset = 229440 : i64, slot_stride = 49152 : i64} : !qkv
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %qkv_slot, %qb, %kb, %vb = warpspec.acquire %qkv : !qkv
        warpspec.tma_load %q[%row, %head] into %qb : !act, !tile
        warpspec.tma_load %k[%row, %head] into %kb : !act, !tile
        warpspec.tma_load %v[%row, %head] into %vb : !act, !tile
        warpspec.commit %qkv_slot tile(%row, %rows, %head)
      }
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
      %obuf = warpspec.scratch {offset = 196608 : i64, replica_stride = 16384 : i64}
          : !tile
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %qt, %kt, %vt) : !qkv {
        %s = warpspec.mma %qt, %kt {transpose_b}
            : !tile, !tile -> !warpspec.acc<64x64xf32>
        %p, %l = warpspec.softmax %s valid_cols(%rows) scale(%scale)
            : !warpspec.acc<64x64xf32>
            -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
        %out = warpspec.mma %p, %vt
            : !warpspec.acc<64x64xbf16>, !tile -> !warpspec.acc<64x128xf32>
        warpspec.release %qkv_slot1
        warpspec.store %out to %o[%row, %head] rows(%rows) divide_by(%l)
            via(%obuf)
            : !warpspec.acc<64x128xf32>, !act, !warpspec.rows<64xf32>, !tile
      }
    }
  }
  return
}

// p-operand=smem o-store=registers: each compute replica stages P in its own
// scratch buffer (warpspec.write) and P V reads A from shared memory; O is
// stored from registers (no via); the run-time scale is a kernel parameter,
// so the info dictionary has no softmax_scale.
// CHECK-LABEL: func.func @hopper_forward_scratch_runtime_scale
// CHECK-SAME: %[[SCALE:[a-z0-9_]+]]: f32 {blockattn.name = "softmax_scale"}
// CHECK: warpspec.kernel chip(sm_90a) attributes {info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, kind = "forward", rotary = "none"}, smem_bytes = 214144 : i64}
// CHECK: warpspec.channel "qkv" depth(4) {barrier_offset = 212992 : i64, buffer_offset = 0 : i64, info_offset = 213056 : i64, slot_stride = 49152 : i64}
// CHECK: warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
// CHECK-NEXT: %[[PBUF:.*]] = warpspec.scratch {offset = 196608 : i64, replica_stride = 8192 : i64} : <64x64xbf16, smem>
// CHECK-NEXT: warpspec.consume
// CHECK: %[[P:.*]], %{{.*}} = warpspec.softmax %{{.*}} valid_cols(%{{.*}}) scale(%[[SCALE]])
// CHECK-NEXT: warpspec.write %[[P]], %[[PBUF]] : <64x64xbf16>, <64x64xbf16, smem>
// CHECK-NEXT: warpspec.mma %[[PBUF]], %{{.*}} : !warpspec.buffer<64x64xbf16, smem>, <64x128xbf16, smem> -> <64x128xf32>
// CHECK-NEXT: warpspec.release
// CHECK-NEXT: warpspec.store %{{.*}} divide_by(%{{.*}}) : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.rows<64xf32>{{$}}
func.func @hopper_forward_scratch_runtime_scale(
    %q: !act {blockattn.name = "q"}, %k: !act {blockattn.name = "k"},
    %v: !act {blockattn.name = "v"}, %o: !act {blockattn.name = "o"},
    %cu: !cu {blockattn.name = "cu_seqlens"},
    %scale: f32 {blockattn.name = "softmax_scale"}) {
  warpspec.kernel chip(sm_90a) attributes {
      info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64,
              kind = "forward", rotary = "none"},
      smem_bytes = 214144 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %qkv = warpspec.channel "qkv" depth(4)
        {barrier_offset = 212992 : i64, buffer_offset = 0 : i64,
         info_offset = 213056 : i64, slot_stride = 49152 : i64} : !qkv
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %qkv_slot, %qb, %kb, %vb = warpspec.acquire %qkv : !qkv
        warpspec.tma_load %q[%row, %head] into %qb : !act, !tile
        warpspec.tma_load %k[%row, %head] into %kb : !act, !tile
        warpspec.tma_load %v[%row, %head] into %vb : !act, !tile
        warpspec.commit %qkv_slot tile(%row, %rows, %head)
      }
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
      %pbuf = warpspec.scratch {offset = 196608 : i64, replica_stride = 8192 : i64}
          : !warpspec.buffer<64x64xbf16, smem>
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %qt, %kt, %vt) : !qkv {
        %s = warpspec.mma %qt, %kt {transpose_b}
            : !tile, !tile -> !warpspec.acc<64x64xf32>
        %p, %l = warpspec.softmax %s valid_cols(%rows) scale(%scale)
            : !warpspec.acc<64x64xf32>
            -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
        warpspec.write %p, %pbuf
            : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xbf16, smem>
        %out = warpspec.mma %pbuf, %vt
            : !warpspec.buffer<64x64xbf16, smem>, !tile
            -> !warpspec.acc<64x128xf32>
        warpspec.release %qkv_slot1
        warpspec.store %out to %o[%row, %head] rows(%rows) divide_by(%l)
            : !warpspec.acc<64x128xf32>, !act, !warpspec.rows<64xf32>
      }
    }
  }
  return
}

// f16, head_dim 64, static token and head counts, a six-slot ring (a
// multiple of the three compute replicas, which take its slots
// round-robin), O staged through an f16 scratch buffer; not yet allocated
// (no offsets, no smem_bytes, no info).
// CHECK-LABEL: func.func @hopper_forward_f16_d64_three_replicas
// CHECK: warpspec.kernel chip(sm_90a) {
// CHECK: %[[QKV:.*]] = warpspec.channel "qkv" depth(6) : <[64x64xf16, 64x64xf16, 64x64xf16], smem>
// CHECK: warpspec.tile_loop ({{.*}}) in %{{.*}} : memref<5xi32> heads(%{{.*}}) tokens(%{{.*}}) block_size(64) {
// CHECK: warpspec.tma_load %{{.*}} into %{{.*}} : memref<1024x8x64xf16>, <64x64xf16, smem>
// CHECK: warpspec.partition "compute" role(compute) warps(4) regs(152) replicas(3) {
// CHECK-NEXT: %[[OBUF:.*]] = warpspec.scratch : <64x64xf16, smem>
// CHECK: warpspec.softmax %{{.*}} : <64x64xf32> -> <64x64xf16>, <64xf32>
// CHECK: warpspec.store %{{.*}} via(%[[OBUF]]) : <64x64xf32>, memref<1024x8x64xf16>, !warpspec.rows<64xf32>, !warpspec.buffer<64x64xf16, smem>
!act64 = memref<1024x8x64xf16>
!tile64 = !warpspec.buffer<64x64xf16, smem>
!qkv64 = !warpspec.channel<[64x64xf16, 64x64xf16, 64x64xf16], smem>
func.func @hopper_forward_f16_d64_three_replicas(%q: !act64, %k: !act64,
                                                 %v: !act64, %o: !act64,
                                                 %cu: memref<5xi32>) {
  warpspec.kernel chip(sm_90a) {
    %tokens = arith.constant 1024 : index
    %heads = arith.constant 8 : index
    %scale = arith.constant 1.250000e-01 : f32
    %qkv = warpspec.channel "qkv" depth(6) : !qkv64
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<5xi32>
          heads(%heads) tokens(%tokens) block_size(64) {
        %qkv_slot, %qb, %kb, %vb = warpspec.acquire %qkv : !qkv64
        warpspec.tma_load %q[%row, %head] into %qb : !act64, !tile64
        warpspec.tma_load %k[%row, %head] into %kb : !act64, !tile64
        warpspec.tma_load %v[%row, %head] into %vb : !act64, !tile64
        warpspec.commit %qkv_slot tile(%row, %rows, %head)
      }
      warpspec.close %qkv : !qkv64
    }
    warpspec.partition "compute" role(compute) warps(4) regs(152) replicas(3) {
      %obuf = warpspec.scratch : !tile64
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %qt, %kt, %vt) : !qkv64 {
        %s = warpspec.mma %qt, %kt {transpose_b}
            : !tile64, !tile64 -> !warpspec.acc<64x64xf32>
        %p, %l = warpspec.softmax %s valid_cols(%rows) scale(%scale)
            : !warpspec.acc<64x64xf32>
            -> !warpspec.acc<64x64xf16>, !warpspec.rows<64xf32>
        %out = warpspec.mma %p, %vt
            : !warpspec.acc<64x64xf16>, !tile64 -> !warpspec.acc<64x64xf32>
        warpspec.release %qkv_slot1
        warpspec.store %out to %o[%row, %head] rows(%rows) divide_by(%l)
            via(%obuf)
            : !warpspec.acc<64x64xf32>, !act64, !warpspec.rows<64xf32>, !tile64
      }
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// Hopper backward kernel
//===----------------------------------------------------------------------===//

// The seed backward (bf16, head_dim 128) after blockattn-warp-specialize and
// warpspec-allocate-smem with their defaults: a load partition fills a
// two-slot qkvdo ring (4 tiles, 64 KiB a slot); each of the two compute
// replicas has 8 KiB scratch buffers for P and dS and a 16 KiB staging
// buffer the three outputs leave through in turn (bulk). smem_bytes =
// 131072 + 2 x (8192 + 8192 + 16384) + 32 + 32 + 1024 = 197696. Its acquire
// carries l2_prefetch (the option's form; not this kernel's default).
// CHECK-LABEL: func.func @hopper_backward_bf16_d128
// CHECK: warpspec.kernel chip(sm_90a) attributes {info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, kind = "backward", rotary = "none", softmax_scale = 0.0883883461 : f32}, smem_bytes = 197696 : i64} {
// CHECK: %[[SCALE:.*]] = arith.constant 0.0883883461 : f32
// CHECK: %[[RING:.*]] = warpspec.channel "qkvdo" depth(2) {barrier_offset = 196608 : i64, buffer_offset = 0 : i64, info_offset = 196640 : i64, slot_stride = 65536 : i64} : <[64x128xbf16, 64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// CHECK: warpspec.partition "load" role(load) warps(4) regs(40) {
// CHECK: %[[SLOT:.*]], %[[BUFS:.*]]:4 = warpspec.acquire %[[RING]] {l2_prefetch} :
// CHECK-COUNT-4: warpspec.tma_load
// CHECK-NEXT: warpspec.commit %[[SLOT]]
// CHECK: warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
// CHECK-NEXT: %[[PBUF:.*]] = warpspec.scratch {offset = 131072 : i64, replica_stride = 8192 : i64} : <64x64xbf16, smem>
// CHECK-NEXT: %[[DSBUF:.*]] = warpspec.scratch {offset = 147456 : i64, replica_stride = 8192 : i64} : <64x64xbf16, smem>
// CHECK-NEXT: %[[STAGE:.*]] = warpspec.scratch {offset = 163840 : i64, replica_stride = 16384 : i64} : <64x128xbf16, smem>
// CHECK-NEXT: warpspec.consume %[[RING]] (%[[CSLOT:.*]], %[[ROW:.*]], %[[ROWS:.*]], %[[HEAD:.*]], %[[QT:.*]], %[[KT:.*]], %[[VT:.*]], %[[DOT:.*]]) : !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16, 64x128xbf16], smem> {
// CHECK-NEXT: %[[S:.*]] = warpspec.mma %[[QT]], %[[KT]] {transpose_b} : !warpspec.buffer<64x128xbf16, smem>, <64x128xbf16, smem> -> <64x64xf32>
// CHECK-NEXT: %[[P:.*]], %{{.*}} = warpspec.softmax %[[S]] valid_cols(%[[ROWS]]) valid_rows(%[[ROWS]]) scale(%[[SCALE]]) normalize : <64x64xf32> -> <64x64xf32>, <64xf32>
// CHECK-NEXT: warpspec.write %[[P]], %[[PBUF]] : <64x64xf32>, <64x64xbf16, smem>
// CHECK-NEXT: %[[DP:.*]] = warpspec.mma %[[DOT]], %[[VT]] {transpose_b} : !warpspec.buffer<64x128xbf16, smem>, <64x128xbf16, smem> -> <64x64xf32>
// CHECK-NEXT: %[[DS:.*]] = warpspec.softmax_grad %[[P]], %[[DP]] scale(%[[SCALE]]) : <64x64xf32>, <64x64xf32> -> <64x64xbf16>
// CHECK-NEXT: warpspec.write %[[DS]], %[[DSBUF]] : <64x64xbf16>, <64x64xbf16, smem>
// CHECK-NEXT: %[[DV:.*]] = warpspec.mma %[[PBUF]], %[[DOT]] {transpose_a} : !warpspec.buffer<64x64xbf16, smem>, <64x128xbf16, smem> -> <64x128xf32>
// CHECK-NEXT: warpspec.store %[[DV]] to %{{.*}}[%[[ROW]], %[[HEAD]]] rows(%[[ROWS]]) via(%[[STAGE]]) bulk : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.buffer<64x128xbf16, smem>
// CHECK-NEXT: %[[DK:.*]] = warpspec.mma %[[DSBUF]], %[[QT]] {transpose_a} : !warpspec.buffer<64x64xbf16, smem>, <64x128xbf16, smem> -> <64x128xf32>
// CHECK-NEXT: warpspec.store %[[DK]] to %{{.*}}[%[[ROW]], %[[HEAD]]] rows(%[[ROWS]]) via(%[[STAGE]]) bulk : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.buffer<64x128xbf16, smem>
// CHECK-NEXT: %[[DQ:.*]] = warpspec.mma %[[DS]], %[[KT]] : !warpspec.acc<64x64xbf16>, <64x128xbf16, smem> -> <64x128xf32>
// CHECK-NEXT: warpspec.release %[[CSLOT]]
// CHECK-NEXT: warpspec.store %[[DQ]] to %{{.*}}[%[[ROW]], %[[HEAD]]] rows(%[[ROWS]]) via(%[[STAGE]]) bulk : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.buffer<64x128xbf16, smem>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
!qkvdo = !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
func.func @hopper_backward_bf16_d128(%q: !act {blockattn.name = "q"},
                                     %k: !act {blockattn.name = "k"},
                                     %v: !act {blockattn.name = "v"},
                                     %do: !act {blockattn.name = "do"},
                                     %dq: !act {blockattn.name = "dq"},
                                     %dk: !act {blockattn.name = "dk"},
                                     %dv: !act {blockattn.name = "dv"},
                                     %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_90a) attributes {
      info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64,
              kind = "backward", rotary = "none",
              softmax_scale = 0.0883883461 : f32},
      smem_bytes = 197696 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %scale = arith.constant 0.0883883461 : f32
    %ring = warpspec.channel "qkvdo" depth(2)
        {barrier_offset = 196608 : i64, buffer_offset = 0 : i64,
         info_offset = 196640 : i64, slot_stride = 65536 : i64} : !qkvdo
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %ring_slot, %qb, %kb, %vb, %dob = warpspec.acquire %ring {l2_prefetch} : !qkvdo
        warpspec.tma_load %q[%row, %head] into %qb : !act, !tile
        warpspec.tma_load %k[%row, %head] into %kb : !act, !tile
        warpspec.tma_load %v[%row, %head] into %vb : !act, !tile
        warpspec.tma_load %do[%row, %head] into %dob : !act, !tile
        warpspec.commit %ring_slot tile(%row, %rows, %head)
      }
      warpspec.close %ring : !qkvdo
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
      %pbuf = warpspec.scratch {offset = 131072 : i64, replica_stride = 8192 : i64}
          : !warpspec.buffer<64x64xbf16, smem>
      %dsbuf = warpspec.scratch {offset = 147456 : i64, replica_stride = 8192 : i64}
          : !warpspec.buffer<64x64xbf16, smem>
      %stage = warpspec.scratch {offset = 163840 : i64, replica_stride = 16384 : i64}
          : !tile
      warpspec.consume %ring (%ring_slot1, %row, %rows, %head, %qt, %kt, %vt, %dot) : !qkvdo {
        %s = warpspec.mma %qt, %kt {transpose_b}
            : !tile, !tile -> !warpspec.acc<64x64xf32>
        %p, %l = warpspec.softmax %s valid_cols(%rows) valid_rows(%rows)
            scale(%scale) normalize
            : !warpspec.acc<64x64xf32>
            -> !warpspec.acc<64x64xf32>, !warpspec.rows<64xf32>
        warpspec.write %p, %pbuf
            : !warpspec.acc<64x64xf32>, !warpspec.buffer<64x64xbf16, smem>
        %dp = warpspec.mma %dot, %vt {transpose_b}
            : !tile, !tile -> !warpspec.acc<64x64xf32>
        %ds = warpspec.softmax_grad %p, %dp scale(%scale)
            : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32>
            -> !warpspec.acc<64x64xbf16>
        warpspec.write %ds, %dsbuf
            : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xbf16, smem>
        %dvt = warpspec.mma %pbuf, %dot {transpose_a}
            : !warpspec.buffer<64x64xbf16, smem>, !tile
            -> !warpspec.acc<64x128xf32>
        warpspec.store %dvt to %dv[%row, %head] rows(%rows) via(%stage) bulk
            : !warpspec.acc<64x128xf32>, !act, !tile
        %dkt = warpspec.mma %dsbuf, %qt {transpose_a}
            : !warpspec.buffer<64x64xbf16, smem>, !tile
            -> !warpspec.acc<64x128xf32>
        warpspec.store %dkt to %dk[%row, %head] rows(%rows) via(%stage) bulk
            : !warpspec.acc<64x128xf32>, !act, !tile
        %dqt = warpspec.mma %ds, %kt
            : !warpspec.acc<64x64xbf16>, !tile -> !warpspec.acc<64x128xf32>
        warpspec.release %ring_slot1
        warpspec.store %dqt to %dq[%row, %head] rows(%rows) via(%stage) bulk
            : !warpspec.acc<64x128xf32>, !act, !tile
      }
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// Blackwell structure: every role, a tensor-memory channel, tmem_columns
//===----------------------------------------------------------------------===//

// The sm_100a roles: load feeds mma through shared memory, mma hands
// accumulators to the softmax replicas through tensor memory, softmax hands
// tiles to an epilogue partition (role softmax, as the recipes' epilogue
// warpgroups); a channel with two consumer partitions; an
// acquire/commit nested in a consume; tmem_columns and every channel offset.
// CHECK-LABEL: func.func @blackwell_all_roles
// CHECK: warpspec.kernel chip(sm_100a) attributes {smem_bytes = 132256 : i64, tmem_columns = 256 : i64} {
// CHECK: %[[QKV:.*]] = warpspec.channel "qkv" depth(2) {barrier_offset = 131072 : i64, buffer_offset = 0 : i64, info_offset = 131152 : i64, slot_stride = 49152 : i64} : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// CHECK: %[[S:.*]] = warpspec.channel "mma_s" depth(2) {barrier_offset = 131104 : i64, info_offset = 131184 : i64} : <[128x64xf32, 128x128xf32], tmem>
// CHECK: %[[E:.*]] = warpspec.channel "s_epi" depth(1) {barrier_offset = 131136 : i64, buffer_offset = 98304 : i64, info_offset = 131216 : i64, slot_stride = 32768 : i64} : <[64x128xf32], smem>
// CHECK: warpspec.partition "load" role(load) warps(4) regs(40) {
// CHECK: warpspec.partition "mma" role(mma) warps(4) regs(40) {
// CHECK-NEXT: warpspec.consume %[[QKV]] (%[[CSLOT:[^,]*]],
// CHECK-NEXT: %[[SSLOT:.*]], %{{.*}}:2 = warpspec.acquire %[[S]] : <[128x64xf32, 128x128xf32], tmem>
// CHECK-NEXT: warpspec.commit %[[SSLOT]] tile(
// CHECK-NEXT: warpspec.release %[[CSLOT]]
// CHECK: warpspec.close %[[S]]
// CHECK: warpspec.partition "softmax" role(softmax) warps(4) regs(144) replicas(2) {
// CHECK-NEXT: warpspec.consume %[[S]] (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : !warpspec.channel<[128x64xf32, 128x128xf32], tmem> {
// CHECK: warpspec.partition "epilogue" role(softmax) warps(4) regs(80) {
// CHECK-NEXT: warpspec.consume %[[E]]
// CHECK: warpspec.consume %[[QKV]]
!s = !warpspec.channel<[128x64xf32, 128x128xf32], tmem>
!e = !warpspec.channel<[64x128xf32], smem>
func.func @blackwell_all_roles(%q: !act, %k: !act, %v: !act, %cu: !cu,
                               %heads: index, %tokens: index) {
  warpspec.kernel chip(sm_100a) attributes {smem_bytes = 132256 : i64,
                                              tmem_columns = 256 : i64} {
    %qkv = warpspec.channel "qkv" depth(2)
        {barrier_offset = 131072 : i64, buffer_offset = 0 : i64,
         info_offset = 131152 : i64, slot_stride = 49152 : i64} : !qkv
    %s = warpspec.channel "mma_s" depth(2)
        {barrier_offset = 131104 : i64, info_offset = 131184 : i64} : !s
    %e = warpspec.channel "s_epi" depth(1)
        {barrier_offset = 131136 : i64, buffer_offset = 98304 : i64,
         info_offset = 131216 : i64, slot_stride = 32768 : i64} : !e
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %qkv_slot, %qb, %kb, %vb = warpspec.acquire %qkv : !qkv
        warpspec.tma_load %q[%row, %head] into %qb : !act, !tile
        warpspec.tma_load %k[%row, %head] into %kb : !act, !tile
        warpspec.tma_load %v[%row, %head] into %vb : !act, !tile
        warpspec.commit %qkv_slot tile(%row, %rows, %head)
      }
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %qt, %kt, %vt) : !qkv {
        %s_slot, %sb, %ob = warpspec.acquire %s : !s
        warpspec.commit %s_slot tile(%row, %rows, %head)
        warpspec.release %qkv_slot1
      }
      warpspec.close %s : !s
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(144) replicas(2) {
      warpspec.consume %s (%s_slot1, %row, %rows, %head, %sb, %ob) : !s {
        warpspec.release %s_slot1
      }
    }
    warpspec.partition "epilogue" role(softmax) warps(4) regs(80) {
      warpspec.consume %e (%e_slot, %row, %rows, %head, %eb) : !e {
        warpspec.release %e_slot
      }
      warpspec.consume %qkv (%qkv_slot2, %row, %rows, %head, %qt, %kt, %vt) : !qkv {
        warpspec.release %qkv_slot2
      }
    }
    warpspec.partition "softmax_epi" role(softmax) warps(4) regs(24) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %e_slot1, %eb = warpspec.acquire %e : !e
        warpspec.commit %e_slot1 tile(%row, %rows, %head)
      }
      warpspec.close %e : !e
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// Blackwell kernels: tensor-memory rings, mma_async, get, tmem_load/store
//===----------------------------------------------------------------------===//

// The sm_100a forward (bf16, head_dim 128) as blockattn-warp-specialize,
// warpspec-allocate-tmem and warpspec-allocate-smem produce it: the MMA
// warp takes Q/K/V from the ring, issues S = Q K^T into the tensor-memory
// ring "s", takes the P the softmax wrote (get), issues O = P V with A in
// tensor memory into "o", and gives P and Q/K/V back when those MMAs
// complete (release ... after_mma); the two softmax replicas produce into
// "p" (a replicated producer, which does not close it) and read O with get.
// Every tensor-memory ring has its tmem_slots, the kernel tmem_columns and
// tmem_base_offset.
// CHECK-LABEL: func.func @blackwell_forward_bf16_d128
// CHECK: warpspec.kernel chip(sm_100a) attributes {info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, kind = "forward", rotary = "none", softmax_scale = 0.0883883461 : f32}, smem_bytes = 230736 : i64, tmem_base_offset = 229696 : i64, tmem_columns = 256 : i64} {
// CHECK: %[[QKV:.*]] = warpspec.channel "qkv" depth(4) {barrier_offset = 229376 : i64, buffer_offset = 0 : i64, info_offset = 229536 : i64, slot_stride = 49152 : i64} : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// CHECK-NEXT: %[[S:.*]] = warpspec.channel "s" depth(2) {barrier_offset = 229440 : i64, info_offset = 229600 : i64, tmem_slots = array<i64: 0, 0, 16, 0>} : <[64x64xf32], tmem>
// CHECK-NEXT: %[[P:.*]] = warpspec.channel "p" depth(2) {barrier_offset = 229472 : i64, info_offset = 229632 : i64, tmem_slots = array<i64: 0, 64, 16, 64>} : <[64x64xbf16], tmem>
// CHECK-NEXT: %[[O:.*]] = warpspec.channel "o" depth(2) {barrier_offset = 229504 : i64, info_offset = 229664 : i64, tmem_slots = array<i64: 0, 96, 16, 96>} : <[64x128xf32], tmem>
// CHECK: warpspec.partition "mma" role(mma) warps(4) regs(40) {
// CHECK-NEXT: warpspec.consume %[[QKV]] (%[[QSLOT:.*]], %[[ROW:.*]], %[[ROWS:.*]], %[[HEAD:.*]], %[[QT:.*]], %[[KT:.*]], %[[VT:.*]]) : !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem> {
// CHECK-NEXT: %[[SS:.*]], %[[SB:.*]] = warpspec.acquire %[[S]] : <[64x64xf32], tmem>
// CHECK-NEXT: warpspec.mma_async %[[QT]], %[[KT]] into %[[SB]] {transpose_b} : <64x128xbf16, smem>, <64x128xbf16, smem>, <64x64xf32, tmem>
// CHECK-NEXT: warpspec.commit %[[SS]] tile(%[[ROW]], %[[ROWS]], %[[HEAD]]){{$}}
// CHECK-NEXT: %[[PS:.*]], %[[PB:.*]] = warpspec.get %[[P]] : <[64x64xbf16], tmem>
// CHECK-NEXT: %[[OS:.*]], %[[OB:.*]] = warpspec.acquire %[[O]] : <[64x128xf32], tmem>
// CHECK-NEXT: warpspec.mma_async %[[PB]], %[[VT]] into %[[OB]] : <64x64xbf16, tmem>, <64x128xbf16, smem>, <64x128xf32, tmem>
// CHECK-NEXT: warpspec.commit %[[OS]] tile(%[[ROW]], %[[ROWS]], %[[HEAD]]){{$}}
// CHECK-NEXT: warpspec.release %[[PS]] after_mma{{$}}
// CHECK-NEXT: warpspec.release %[[QSLOT]] after_mma{{$}}
// CHECK-NEXT: }
// CHECK-NEXT: warpspec.close %[[S]] : <[64x64xf32], tmem>
// CHECK-NEXT: }
// CHECK-NEXT: warpspec.partition "softmax" role(softmax) warps(4) regs(216) replicas(2) {
// CHECK-NEXT: %[[STAGE:.*]] = warpspec.scratch {offset = 196608 : i64, replica_stride = 16384 : i64} : <64x128xbf16, smem>
// CHECK-NEXT: warpspec.consume %[[S]] (%[[SS:.*]], %[[R:.*]], %[[RS:.*]], %[[H:.*]], %[[SSLOT:.*]]) : !warpspec.channel<[64x64xf32], tmem> {
// CHECK-NEXT: %[[SV:.*]] = warpspec.tmem_load %[[SSLOT]] : <64x64xf32, tmem> -> <64x64xf32>
// CHECK-NEXT: warpspec.release %[[SS]]{{$}}
// CHECK-NEXT: %[[PR:.*]], %[[L:.*]] = warpspec.softmax %[[SV]] valid_cols(%[[RS]]) scale(%{{.*}}) : <64x64xf32> -> <64x64xbf16>, <64xf32>
// CHECK-NEXT: %[[PS:.*]], %[[PSLOT:.*]] = warpspec.acquire %[[P]] : <[64x64xbf16], tmem>
// CHECK-NEXT: warpspec.tmem_store %[[PR]], %[[PSLOT]] : <64x64xbf16>, <64x64xbf16, tmem>
// CHECK-NEXT: warpspec.commit %[[PS]] tile(%[[R]], %[[RS]], %[[H]]){{$}}
// CHECK-NEXT: %[[OS:.*]], %[[OSLOT:.*]] = warpspec.get %[[O]] : <[64x128xf32], tmem>
// CHECK-NEXT: %[[OV:.*]] = warpspec.tmem_load %[[OSLOT]] : <64x128xf32, tmem> -> <64x128xf32>
// CHECK-NEXT: warpspec.release %[[OS]]{{$}}
// CHECK-NEXT: warpspec.store %[[OV]] to %{{.*}}[%[[R]], %[[H]]] rows(%[[RS]]) divide_by(%[[L]]) via(%[[STAGE]]) bulk : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.rows<64xf32>, !warpspec.buffer<64x128xbf16, smem>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
!sring = !warpspec.channel<[64x64xf32], tmem>
!pring = !warpspec.channel<[64x64xbf16], tmem>
!oring = !warpspec.channel<[64x128xf32], tmem>
func.func @blackwell_forward_bf16_d128(%q: !act {blockattn.name = "q"},
                                       %k: !act {blockattn.name = "k"},
                                       %v: !act {blockattn.name = "v"},
                                       %o: !act {blockattn.name = "o"},
                                       %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_100a) attributes {
      info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64,
              kind = "forward", rotary = "none",
              softmax_scale = 0.0883883461 : f32},
      smem_bytes = 230736 : i64, tmem_base_offset = 229696 : i64,
      tmem_columns = 256 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %scale = arith.constant 0.0883883461 : f32
    %qkv = warpspec.channel "qkv" depth(4)
        {barrier_offset = 229376 : i64, buffer_offset = 0 : i64,
         info_offset = 229536 : i64, slot_stride = 49152 : i64} : !qkv
    %s = warpspec.channel "s" depth(2)
        {barrier_offset = 229440 : i64, info_offset = 229600 : i64,
         tmem_slots = array<i64: 0, 0, 16, 0>} : !sring
    %p = warpspec.channel "p" depth(2)
        {barrier_offset = 229472 : i64, info_offset = 229632 : i64,
         tmem_slots = array<i64: 0, 64, 16, 64>} : !pring
    %ring_o = warpspec.channel "o" depth(2)
        {barrier_offset = 229504 : i64, info_offset = 229664 : i64,
         tmem_slots = array<i64: 0, 96, 16, 96>} : !oring
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %qkv_slot, %qb, %kb, %vb = warpspec.acquire %qkv : !qkv
        warpspec.tma_load %q[%row, %head] into %qb : !act, !tile
        warpspec.tma_load %k[%row, %head] into %kb : !act, !tile
        warpspec.tma_load %v[%row, %head] into %vb : !act, !tile
        warpspec.commit %qkv_slot tile(%row, %rows, %head)
      }
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %qt, %kt, %vt) : !qkv {
        %s_slot, %sb = warpspec.acquire %s : !sring
        warpspec.mma_async %qt, %kt into %sb {transpose_b}
            : !tile, !tile, !warpspec.buffer<64x64xf32, tmem>
        warpspec.commit %s_slot tile(%row, %rows, %head)
        %p_slot, %pb = warpspec.get %p : !pring
        %ring_o_slot, %ob = warpspec.acquire %ring_o : !oring
        warpspec.mma_async %pb, %vt into %ob
            : !warpspec.buffer<64x64xbf16, tmem>, !tile,
              !warpspec.buffer<64x128xf32, tmem>
        warpspec.commit %ring_o_slot tile(%row, %rows, %head)
        warpspec.release %p_slot after_mma
        warpspec.release %qkv_slot1 after_mma
      }
      warpspec.close %s : !sring
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(216) replicas(2) {
      %stage = warpspec.scratch {offset = 196608 : i64, replica_stride = 16384 : i64}
          : !tile
      warpspec.consume %s (%s_slot1, %row, %rows, %head, %sslot) : !sring {
        %sv = warpspec.tmem_load %sslot
            : !warpspec.buffer<64x64xf32, tmem> -> !warpspec.acc<64x64xf32>
        warpspec.release %s_slot1
        %pr, %l = warpspec.softmax %sv valid_cols(%rows) scale(%scale)
            : !warpspec.acc<64x64xf32>
            -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
        %p_slot1, %pslot = warpspec.acquire %p : !pring
        warpspec.tmem_store %pr, %pslot
            : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xbf16, tmem>
        warpspec.commit %p_slot1 tile(%row, %rows, %head)
        %ring_o_slot1, %oslot = warpspec.get %ring_o : !oring
        %ov = warpspec.tmem_load %oslot
            : !warpspec.buffer<64x128xf32, tmem> -> !warpspec.acc<64x128xf32>
        warpspec.release %ring_o_slot1
        warpspec.store %ov to %o[%row, %head] rows(%rows) divide_by(%l)
            via(%stage) bulk
            : !warpspec.acc<64x128xf32>, !act, !warpspec.rows<64xf32>, !tile
      }
    }
  }
  return
}

// The other forms of the Blackwell ops: mma_async with f16 operands and
// N = 256, with A read transposed (the backward's dV = P^T dO) and with both
// transposes, with a 16-bit A in tensor memory of K = 32; tmem_load of the
// narrowest (8 columns) and widest (256) tiles; tmem_store of 16 and 512
// columns; a get with release after_mma and a plain one, a release after_mma
// inside a consume, and a replicated producer next to a replicated consumer
// of the same count.
// CHECK-LABEL: func.func @blackwell_op_forms
// CHECK: warpspec.mma_async %{{.*}}, %{{.*}} into %{{.*}} : <64x64xf16, smem>, <64x256xf16, smem>, <64x256xf32, tmem>
// CHECK: warpspec.mma_async %{{.*}}, %{{.*}} into %{{.*}} {transpose_a} : <64x64xbf16, smem>, <64x128xbf16, smem>, <64x128xf32, tmem>
// CHECK: warpspec.mma_async %{{.*}}, %{{.*}} into %{{.*}} {transpose_a, transpose_b} : <128x64xbf16, smem>, <64x128xbf16, smem>, <64x64xf32, tmem>
// CHECK: warpspec.mma_async %{{.*}}, %{{.*}} into %{{.*}} : <64x32xf16, tmem>, <32x64xf16, smem>, <64x64xf32, tmem>
// CHECK: warpspec.tmem_load %{{.*}} : <64x8xf32, tmem> -> <64x8xf32>
// CHECK: warpspec.tmem_load %{{.*}} : <64x256xf32, tmem> -> <64x256xf32>
// CHECK: warpspec.tmem_store %{{.*}}, %{{.*}} : <64x16xf16>, <64x16xf16, tmem>
// CHECK: warpspec.tmem_store %{{.*}}, %{{.*}} : <64x512xbf16>, <64x512xbf16, tmem>
// CHECK: warpspec.kernel chip(sm_100a) {
// CHECK: warpspec.partition "producer" role(softmax) warps(4) regs(80) replicas(2) {
// CHECK: warpspec.partition "consumer" role(mma) warps(4) regs(80) replicas(2) {
// CHECK-NEXT: %[[GS:.*]], %[[B:.*]] = warpspec.get %[[C:.*]] : <[64x64xf32], tmem>
// CHECK-NEXT: warpspec.release %[[GS]] after_mma{{$}}
// CHECK-NEXT: %[[GS2:.*]], %{{.*}} = warpspec.get %[[C]] : <[64x64xf32], tmem>
// CHECK-NEXT: warpspec.release %[[GS2]]{{$}}
// CHECK: warpspec.consume %{{.*}} (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : !warpspec.channel<[64x64xbf16], smem> {
// CHECK-NEXT: warpspec.release %{{.*}} after_mma{{$}}
!ring64 = !warpspec.channel<[64x64xf32], tmem>
!smem64 = !warpspec.channel<[64x64xbf16], smem>
func.func @blackwell_op_forms(%a16: !warpspec.buffer<64x64xf16, smem>,
                              %b16: !warpspec.buffer<64x256xf16, smem>,
                              %d256: !warpspec.buffer<64x256xf32, tmem>,
                              %p: !warpspec.buffer<64x64xbf16, smem>,
                              %dout: !warpspec.buffer<64x128xbf16, smem>,
                              %d128: !warpspec.buffer<64x128xf32, tmem>,
                              %a128t: !warpspec.buffer<128x64xbf16, smem>,
                              %d64: !warpspec.buffer<64x64xf32, tmem>,
                              %atmem: !warpspec.buffer<64x32xf16, tmem>,
                              %b32: !warpspec.buffer<32x64xf16, smem>,
                              %t8: !warpspec.buffer<64x8xf32, tmem>,
                              %v16: !warpspec.acc<64x16xf16>,
                              %t16: !warpspec.buffer<64x16xf16, tmem>,
                              %v512: !warpspec.acc<64x512xbf16>,
                              %t512: !warpspec.buffer<64x512xbf16, tmem>,
                              %i: i32) {
  warpspec.mma_async %a16, %b16 into %d256
      : !warpspec.buffer<64x64xf16, smem>, !warpspec.buffer<64x256xf16, smem>,
        !warpspec.buffer<64x256xf32, tmem>
  warpspec.mma_async %p, %dout into %d128 {transpose_a}
      : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>,
        !warpspec.buffer<64x128xf32, tmem>
  warpspec.mma_async %a128t, %dout into %d64 {transpose_a, transpose_b}
      : !warpspec.buffer<128x64xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>,
        !warpspec.buffer<64x64xf32, tmem>
  warpspec.mma_async %atmem, %b32 into %d64
      : !warpspec.buffer<64x32xf16, tmem>, !warpspec.buffer<32x64xf16, smem>,
        !warpspec.buffer<64x64xf32, tmem>
  %l8 = warpspec.tmem_load %t8
      : !warpspec.buffer<64x8xf32, tmem> -> !warpspec.acc<64x8xf32>
  %l256 = warpspec.tmem_load %d256
      : !warpspec.buffer<64x256xf32, tmem> -> !warpspec.acc<64x256xf32>
  warpspec.tmem_store %v16, %t16
      : !warpspec.acc<64x16xf16>, !warpspec.buffer<64x16xf16, tmem>
  warpspec.tmem_store %v512, %t512
      : !warpspec.acc<64x512xbf16>, !warpspec.buffer<64x512xbf16, tmem>
  warpspec.kernel chip(sm_100a) {
    %c = warpspec.channel "c" depth(2) : !ring64
    %e = warpspec.channel "e" depth(1) : !smem64
    warpspec.partition "producer" role(softmax) warps(4) regs(80) replicas(2) {
      %c_slot, %b = warpspec.acquire %c : !ring64
      warpspec.commit %c_slot tile(%i, %i, %i)
    }
    warpspec.partition "consumer" role(mma) warps(4) regs(80) replicas(2) {
      %c_slot1, %b = warpspec.get %c : !ring64
      warpspec.release %c_slot1 after_mma
      %c_slot2, %b2 = warpspec.get %c : !ring64
      warpspec.release %c_slot2
    }
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %e_slot, %eb = warpspec.acquire %e : !smem64
      warpspec.commit %e_slot tile(%i, %i, %i)
      warpspec.close %e : !smem64
    }
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      warpspec.consume %e (%e_slot1, %row, %rows, %head, %eb) : !smem64 {
        warpspec.release %e_slot1 after_mma
      }
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// Tile operations, one form each
//===----------------------------------------------------------------------===//

// mma with an f16 register A, N = 256 and K = 64 from shared memory; softmax
// keeping P in f32; store without divide_by into an f32 tensor; a scratch
// without offsets; a tile_loop with a discardable attribute.
// CHECK-LABEL: func.func @tile_ops_forms
// CHECK: warpspec.mma %{{.*}}, %{{.*}} : !warpspec.acc<64x64xf16>, <64x256xf16, smem> -> <64x256xf32>
// CHECK: warpspec.mma %{{.*}}, %{{.*}} {transpose_b} : !warpspec.buffer<64x64xf16, smem>, <256x64xf16, smem> -> <64x256xf32>
// CHECK: warpspec.softmax %{{.*}} valid_cols(%{{.*}}) scale(%{{.*}}) : <64x256xf32> -> <64x256xf32>, <64xf32>
// CHECK: warpspec.store %{{.*}} to %{{.*}}[%{{.*}}, %{{.*}}] rows(%{{.*}}) : <64x256xf32>, memref<?x2x256xf32>{{$}}
func.func @tile_ops_forms(%a: !warpspec.acc<64x64xf16>,
                          %abuf: !warpspec.buffer<64x64xf16, smem>,
                          %b: !warpspec.buffer<64x256xf16, smem>,
                          %bt: !warpspec.buffer<256x64xf16, smem>,
                          %scale: f32, %i: i32,
                          %out: memref<?x2x256xf32>) {
  %d = warpspec.mma %a, %b
      : !warpspec.acc<64x64xf16>, !warpspec.buffer<64x256xf16, smem>
      -> !warpspec.acc<64x256xf32>
  %dt = warpspec.mma %abuf, %bt {transpose_b}
      : !warpspec.buffer<64x64xf16, smem>, !warpspec.buffer<256x64xf16, smem>
      -> !warpspec.acc<64x256xf32>
  %p, %l = warpspec.softmax %d valid_cols(%i) scale(%scale)
      : !warpspec.acc<64x256xf32>
      -> !warpspec.acc<64x256xf32>, !warpspec.rows<64xf32>
  warpspec.store %p to %out[%i, %i] rows(%i)
      : !warpspec.acc<64x256xf32>, memref<?x2x256xf32>
  return
}

// The backward's tile operations in every form: softmax with valid_rows
// alone, normalize alone, and both (P kept in f32 or rounded to f16);
// softmax_grad into bf16, f16 and f32; mma with transpose_a (A stored K x M:
// a 128x64 buffer is M = 64, K = 128), alone and with transpose_b (A^T B^T);
// writes of f32 tiles into bf16 and f16 buffers next to a same-type write.
// CHECK-LABEL: func.func @backward_tile_ops_forms
// CHECK: warpspec.softmax %{{.*}} valid_cols(%[[N:.*]]) valid_rows(%[[N]]) scale(%{{.*}}) : <64x64xf32> -> <64x64xbf16>, <64xf32>
// CHECK: warpspec.softmax %{{.*}} valid_cols(%[[N]]) scale(%{{.*}}) normalize : <64x64xf32> -> <64x64xf16>, <64xf32>
// CHECK: %[[P:.*]], %{{.*}} = warpspec.softmax %{{.*}} valid_cols(%[[N]]) valid_rows(%[[N]]) scale(%{{.*}}) normalize : <64x64xf32> -> <64x64xf32>, <64xf32>
// CHECK: warpspec.softmax_grad %[[P]], %{{.*}} scale(%{{.*}}) : <64x64xf32>, <64x64xf32> -> <64x64xbf16>
// CHECK: warpspec.softmax_grad %[[P]], %{{.*}} scale(%{{.*}}) : <64x64xf32>, <64x64xf32> -> <64x64xf16>
// CHECK: warpspec.softmax_grad %[[P]], %{{.*}} scale(%{{.*}}) : <64x64xf32>, <64x64xf32> -> <64x64xf32>
// CHECK: warpspec.mma %{{.*}}, %{{.*}} {transpose_a} : !warpspec.buffer<64x64xbf16, smem>, <64x256xbf16, smem> -> <64x256xf32>
// CHECK: warpspec.mma %{{.*}}, %{{.*}} {transpose_a} : !warpspec.buffer<128x64xbf16, smem>, <128x64xbf16, smem> -> <64x64xf32>
// CHECK: warpspec.mma %{{.*}}, %{{.*}} {transpose_a, transpose_b} : !warpspec.buffer<64x64xbf16, smem>, <128x64xbf16, smem> -> <64x128xf32>
// CHECK: warpspec.write %[[P]], %{{.*}} : <64x64xf32>, <64x64xbf16, smem>
// CHECK: warpspec.write %[[P]], %{{.*}} : <64x64xf32>, <64x64xf16, smem>
// CHECK: warpspec.write %{{.*}}, %{{.*}} : <64x128xf32>, <64x128xbf16, smem>
// CHECK: warpspec.write %{{.*}}, %{{.*}} : <64x64xf16>, <64x64xf16, smem>
func.func @backward_tile_ops_forms(%s: !warpspec.acc<64x64xf32>,
                                   %dp: !warpspec.acc<64x64xf32>,
                                   %wide: !warpspec.acc<64x128xf32>,
                                   %h: !warpspec.acc<64x64xf16>,
                                   %n: i32, %scale: f32,
                                   %a: !warpspec.buffer<64x64xbf16, smem>,
                                   %a128: !warpspec.buffer<128x64xbf16, smem>,
                                   %b256: !warpspec.buffer<64x256xbf16, smem>,
                                   %b128t: !warpspec.buffer<128x64xbf16, smem>,
                                   %bf: !warpspec.buffer<64x64xbf16, smem>,
                                   %hf: !warpspec.buffer<64x64xf16, smem>,
                                   %bfw: !warpspec.buffer<64x128xbf16, smem>) {
  %p0, %l0 = warpspec.softmax %s valid_cols(%n) valid_rows(%n) scale(%scale)
      : !warpspec.acc<64x64xf32>
      -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
  %p1, %l1 = warpspec.softmax %s valid_cols(%n) scale(%scale) normalize
      : !warpspec.acc<64x64xf32>
      -> !warpspec.acc<64x64xf16>, !warpspec.rows<64xf32>
  %p, %l = warpspec.softmax %s valid_cols(%n) valid_rows(%n) scale(%scale)
      normalize
      : !warpspec.acc<64x64xf32>
      -> !warpspec.acc<64x64xf32>, !warpspec.rows<64xf32>
  %ds0 = warpspec.softmax_grad %p, %dp scale(%scale)
      : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32>
      -> !warpspec.acc<64x64xbf16>
  %ds1 = warpspec.softmax_grad %p, %dp scale(%scale)
      : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32>
      -> !warpspec.acc<64x64xf16>
  %ds2 = warpspec.softmax_grad %p, %dp scale(%scale)
      : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32>
      -> !warpspec.acc<64x64xf32>
  %d0 = warpspec.mma %a, %b256 {transpose_a}
      : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x256xbf16, smem>
      -> !warpspec.acc<64x256xf32>
  %d1 = warpspec.mma %a128, %b128t {transpose_a}
      : !warpspec.buffer<128x64xbf16, smem>, !warpspec.buffer<128x64xbf16, smem>
      -> !warpspec.acc<64x64xf32>
  %d2 = warpspec.mma %a, %b128t {transpose_a, transpose_b}
      : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<128x64xbf16, smem>
      -> !warpspec.acc<64x128xf32>
  warpspec.write %p, %bf
      : !warpspec.acc<64x64xf32>, !warpspec.buffer<64x64xbf16, smem>
  warpspec.write %p, %hf
      : !warpspec.acc<64x64xf32>, !warpspec.buffer<64x64xf16, smem>
  warpspec.write %wide, %bfw
      : !warpspec.acc<64x128xf32>, !warpspec.buffer<64x128xbf16, smem>
  warpspec.write %h, %hf
      : !warpspec.acc<64x64xf16>, !warpspec.buffer<64x64xf16, smem>
  return
}

// store with via but no divide_by (its staging type alone follows the
// destination's; the printer and the parser tell the optional types apart by
// kind), and with both, into an f16 tensor.
// CHECK-LABEL: func.func @store_via_forms
// CHECK: %[[B:.*]] = warpspec.scratch : <64x128xbf16, smem>
// CHECK-NEXT: %[[H:.*]] = warpspec.scratch : <64x64xf16, smem>
// CHECK-NEXT: warpspec.store %{{.*}} to %{{.*}}[%{{.*}}, %{{.*}}] rows(%{{.*}}) via(%[[B]]) : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.buffer<64x128xbf16, smem>{{$}}
// CHECK-NEXT: warpspec.store %{{.*}} to %{{.*}}[%{{.*}}, %{{.*}}] rows(%{{.*}}) divide_by(%{{.*}}) via(%[[H]]) : <64x64xf32>, memref<?x2x64xf16>, !warpspec.rows<64xf32>, !warpspec.buffer<64x64xf16, smem>{{$}}
func.func @store_via_forms(%a: !warpspec.acc<64x128xf32>,
                           %a64: !warpspec.acc<64x64xf32>,
                           %l: !warpspec.rows<64xf32>, %i: i32,
                           %out: memref<?x4x128xbf16>,
                           %out64: memref<?x2x64xf16>) {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "store" role(compute) warps(4) regs(64) {
      %b = warpspec.scratch : !warpspec.buffer<64x128xbf16, smem>
      %h = warpspec.scratch : !warpspec.buffer<64x64xf16, smem>
      warpspec.store %a to %out[%i, %i] rows(%i) via(%b)
          : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>,
            !warpspec.buffer<64x128xbf16, smem>
      warpspec.store %a64 to %out64[%i, %i] rows(%i) divide_by(%l) via(%h)
          : !warpspec.acc<64x64xf32>, memref<?x2x64xf16>,
            !warpspec.rows<64xf32>, !warpspec.buffer<64x64xf16, smem>
    }
  }
  return
}

// A scratch buffer before allocation, and a tile loop with an extra
// attribute (printed with `attributes`).
// CHECK-LABEL: func.func @scratch_unallocated_tile_loop_attr
// CHECK: warpspec.tile_loop (%{{.*}}, %{{.*}}, %{{.*}}) in %{{.*}} : memref<?xi32> heads(%{{.*}}) tokens(%{{.*}}) block_size(128) attributes {note = "x"} {
// CHECK: warpspec.scratch : <64x128xbf16, smem>
// CHECK: warpspec.consume %{{.*}} (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : !warpspec.channel<[64x128xbf16], smem> attributes {note = "y"} {
!one = !warpspec.channel<[64x128xbf16], smem>
func.func @scratch_unallocated_tile_loop_attr(%cu: !cu, %n: index) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "one" depth(1) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%n) tokens(%n) block_size(128) attributes {note = "x"} {
        %c_slot, %b = warpspec.acquire %c : !one
        warpspec.commit %c_slot tile(%row, %rows, %head)
      }
      warpspec.close %c : !one
    }
    warpspec.partition "compute" role(compute) warps(8) regs(224) {
      %pbuf = warpspec.scratch : !warpspec.buffer<64x128xbf16, smem>
      warpspec.consume %c (%c_slot1, %row, %rows, %head, %b) : !one attributes {note = "y"} {
        warpspec.release %c_slot1
      }
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// Every type form: buffers in both memory spaces and of integer and float
// elements, single- and multi-buffer channels in both spaces, register tiles
// of accumulators and A operands, and row vectors.
// CHECK-LABEL: func.func @types(
// CHECK-SAME: !warpspec.buffer<64x128xbf16, smem>
// CHECK-SAME: !warpspec.buffer<128x256xf32, tmem>
// CHECK-SAME: !warpspec.buffer<16x32xi8, smem>
// CHECK-SAME: !warpspec.channel<[64x64xf16], smem>
// CHECK-SAME: !warpspec.channel<[128x64xf32, 128x128xf32], tmem>
// CHECK-SAME: !warpspec.acc<64x128xf32>
// CHECK-SAME: !warpspec.acc<64x64xbf16>
// CHECK-SAME: !warpspec.rows<64xf32>
// CHECK-SAME: !warpspec.rows<128xf16>
func.func @types(%b0: !warpspec.buffer<64x128xbf16, smem>,
                 %b1: !warpspec.buffer<128x256xf32, tmem>,
                 %b2: !warpspec.buffer<16x32xi8, smem>,
                 %c0: !warpspec.channel<[64x64xf16], smem>,
                 %c1: !warpspec.channel<[128x64xf32, 128x128xf32], tmem>,
                 %a0: !warpspec.acc<64x128xf32>,
                 %a1: !warpspec.acc<64x64xbf16>,
                 %r0: !warpspec.rows<64xf32>,
                 %r1: !warpspec.rows<128xf16>) {
  return
}

// The block-size-128 backward's key-half gradient: column chunk 1 of each
// query half's P, read transposed, the second product accumulating onto the
// first.
// CHECK-LABEL: func.func @column_chunk_and_acc
// CHECK: %[[P0:.*]] = warpspec.pin %{{.*}} : !warpspec.buffer<64x128xbf16, smem>
// CHECK: %[[C0:.*]] = warpspec.column_chunk %[[P0]][1] : <64x128xbf16, smem> -> <64x64xbf16, smem>
// CHECK: %[[D0:.*]] = warpspec.mma %[[C0]], %{{.*}} {transpose_a}
// CHECK: warpspec.mma %{{.*}}, %{{.*}} plus %[[D0]] : !warpspec.acc<64x128xf32> {transpose_a} : !warpspec.buffer<64x64xbf16, smem>, <64x128xbf16, smem> -> <64x128xf32>
func.func @column_chunk_and_acc(%p0: !warpspec.buffer<64x128xbf16, smem>,
                                %p1: !warpspec.buffer<64x128xbf16, smem>,
                                %do0: !warpspec.buffer<64x128xbf16, smem>,
                                %do1: !warpspec.buffer<64x128xbf16, smem>) {
  %pinned = warpspec.pin %p0 : !warpspec.buffer<64x128xbf16, smem>
  %c0 = warpspec.column_chunk %pinned[1] : !warpspec.buffer<64x128xbf16, smem> -> !warpspec.buffer<64x64xbf16, smem>
  %d0 = warpspec.mma %c0, %do0 {transpose_a}
      : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x128xbf16, smem> -> !warpspec.acc<64x128xf32>
  %c1 = warpspec.column_chunk %p1[1] : !warpspec.buffer<64x128xbf16, smem> -> !warpspec.buffer<64x64xbf16, smem>
  %d1 = warpspec.mma %c1, %do1 plus %d0 : !warpspec.acc<64x128xf32> {transpose_a}
      : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x128xbf16, smem> -> !warpspec.acc<64x128xf32>
  return
}

// An i32 pinned (the grouped-query backward at block size 128 pins the rows
// and position it rotates at in its loop over the heads).
// CHECK-LABEL: func.func @pin_i32
// CHECK: warpspec.pin %{{.*}} : i32
func.func @pin_i32(%row: i32) -> i32 {
  %pinned = warpspec.pin %row : i32
  return %pinned : i32
}

// Pinned after an i32 (the sm_100a grouped backward at block size 128 in
// passes pins its MMA operands after the query head): a buffer and an i32.
// CHECK-LABEL: func.func @pin_after
// CHECK: warpspec.pin %{{.*}} after(%{{.*}}) : !warpspec.buffer<128x128xbf16, smem>
// CHECK: warpspec.pin %{{.*}} after(%{{.*}}) : i32
func.func @pin_after(%k: !warpspec.buffer<128x128xbf16, smem>, %head: i32,
                     %row: i32) -> i32 {
  %pinned = warpspec.pin %k after(%head) : !warpspec.buffer<128x128xbf16, smem>
  %r = warpspec.pin %row after(%head) : i32
  return %r : i32
}

// A producer holding two slots of a two-slot ring at once, committed in the
// order acquired (the sm_100a block-128 backward above head dim 128's MMA
// warp accumulates both query halves' S over the head dim's chunks).
// CHECK-LABEL: func.func @acquire_two_slots
// CHECK: %[[S0:.*]], %{{.*}} = warpspec.acquire %[[C:.*]] : <[64x64xf32], tmem>
// CHECK-NEXT: %[[S1:.*]], %{{.*}} = warpspec.acquire %[[C]] : <[64x64xf32], tmem>
// CHECK-NEXT: warpspec.commit %[[S0]]
// CHECK-NEXT: warpspec.commit %[[S1]]
!twoSlots = !warpspec.channel<[64x64xf32], tmem>
func.func @acquire_two_slots(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %c = warpspec.channel "c" depth(2) : !twoSlots
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s0, %b0 = warpspec.acquire %c : !twoSlots
      %s1, %b1 = warpspec.acquire %c : !twoSlots
      warpspec.commit %s0 tile(%i, %i, %i)
      warpspec.commit %s1 tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %s, %b = warpspec.get %c : !twoSlots
      warpspec.release %s
    }
  }
  return
}

// A consumer holding two slots of a two-slot ring at once, released in the
// order taken (the sm_100a block-128 backward's MMA warp holds both query
// halves' P and dS until dV and dK have read them).
// CHECK-LABEL: func.func @get_two_slots
// CHECK: %[[S0:.*]], %{{.*}} = warpspec.get %[[C:.*]] : <[64x64xf32], tmem>
// CHECK-NEXT: %[[S1:.*]], %{{.*}} = warpspec.get %[[C]] : <[64x64xf32], tmem>
// CHECK-NEXT: warpspec.release %[[S0]] after_mma
// CHECK-NEXT: warpspec.release %[[S1]] after_mma
!two = !warpspec.channel<[64x64xf32], tmem>
func.func @get_two_slots(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %c = warpspec.channel "c" depth(2) : !two
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %s, %b = warpspec.acquire %c : !two
      warpspec.commit %s tile(%i, %i, %i)
    }
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s0, %b0 = warpspec.get %c : !two
      %s1, %b1 = warpspec.get %c : !two
      warpspec.release %s0 after_mma
      warpspec.release %s1 after_mma
    }
  }
  return
}

// `explicit` (explicit_regs): a partition at the launch's budget that still
// gets its setmaxnreg; it prints after regs and survives the generic form.
// CHECK-LABEL: func.func @explicit_regs(
// CHECK: warpspec.partition "pinned" role(compute) warps(4) regs(128) explicit {
// CHECK: warpspec.partition "other" role(compute) warps(4) regs(128) replicas(3) {
func.func @explicit_regs() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "pinned" role(compute) warps(4) regs(128) explicit {
    }
    warpspec.partition "other" role(compute) warps(4) regs(128) replicas(3) {
    }
  }
  return
}

// A gradient staged in its tile's own slot (o-store=slot): a bulk store via
// a buffer the consume holds, and the slot's release after_stores.
// CHECK-LABEL: func.func @store_in_slot(
// CHECK: warpspec.store %{{.*}} via(%[[B:.*]]) bulk {pending_reads = 1 : i64}
// CHECK-NEXT: warpspec.release %{{.*}} after_stores{{$}}
!slot_ring = !warpspec.channel<[64x128xbf16], smem>
func.func @store_in_slot(%v: !warpspec.acc<64x128xf32>,
                         %o: memref<?x4x128xbf16>, %i: i32) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !slot_ring
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %s, %b = warpspec.acquire %c : !slot_ring
      warpspec.commit %s tile(%i, %i, %i)
      warpspec.close %c : !slot_ring
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%s1, %row, %rows, %head, %b1) : !slot_ring {
        warpspec.store %v to %o[%row, %head] rows(%rows) via(%b1) bulk {pending_reads = 1 : i64}
            : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>,
              !warpspec.buffer<64x128xbf16, smem>
        warpspec.release %s1 after_stores
      }
    }
  }
  return
}

// A dynamic tile schedule: the loop claims its items from the counters of
// the kernel's schedule argument; with iter_args, which the operand
// segments keep apart from it.
// CHECK-LABEL: func.func @dynamic_schedule(
// CHECK: warpspec.tile_loop (%{{.*}}, %{{.*}}, %{{.*}}) in %{{.*}} : memref<?xi32> heads(%{{.*}}) tokens(%{{.*}}) block_size(64) dynamic(%[[S:.*]] : memref<2xi32>) iter_args(%{{.*}} = %{{.*}}) -> (i32) {
// CHECK-NEXT: warpspec.yield %{{.*}} : i32
!dyn_ring = !warpspec.channel<[64x128xbf16], smem>
func.func @dynamic_schedule(%cu: memref<?xi32>, %schedule: memref<2xi32>,
                            %n: index, %i: i32) {
  %last = warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
      heads(%n) tokens(%n) block_size(64)
      dynamic(%schedule : memref<2xi32>) iter_args(%x = %i) -> (i32) {
    warpspec.yield %x : i32
  }
  return
}
