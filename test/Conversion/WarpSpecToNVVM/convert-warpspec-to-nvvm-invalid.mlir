// RUN: split-file %s %t
// RUN: block-attn-opt %t/unplanned.mlir -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)'
// RUN: block-attn-opt %t/chip.mlir -verify-diagnostics --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm{chip=sm_100a})'
// RUN: block-attn-opt %t/chip-sm90a.mlir -verify-diagnostics --pass-pipeline='builtin.module(warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm{chip=sm_90a})'
// RUN: block-attn-opt %t/kernels.mlir -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)'

// The diagnostics of convert-warpspec-to-nvvm that input which passes the
// warpspec verifiers can trigger: a kernel without its shared-memory or
// tensor-memory plan, a chip other than the one asked for, a kernel that is
// not the body of a func.func, function arguments and kernel contents the
// lowering cannot pass or lower. One part per set of passes (split-file),
// one case per split.
//
// Not covered: the messages that guard values crossing partitions ("... not
// produced in this partition", "... not a buffer of this partition", "staging buffer is not
// one of this partition", and on sm_100a "operands are not buffers of slots
// this partition holds", "source is not a buffer of a slot this partition
// holds", "needs a register tile and a buffer of a slot this partition
// holds": SSA dominance already forbids it, and a buffer or register tile
// passed in as a function argument is reported as an argument that cannot
// be passed);
// "size of a memref that is not a kernel parameter", "cu_seqlens must be a
// dynamically sized kernel argument" and the store's "destination must be a
// kernel argument" (a memref is a function argument, always passed with its
// sizes and strides: any op that would make another one inside the kernel
// is itself reported as not lowerable); the rotary lowerings' "positions
// must be a kernel parameter" (collecting the kernel's parameters reports
// such a memref first: @negative_positions_not_an_argument); a dynamic
// tile loop's "must run on one thread" (the tile_loop verifier rejects it
// in a partition of many threads first, WarpSpec/invalid.mlir). Two messages guard ops on the wrong
// target, which the warpspec.kernel verifier reports first ("is not
// available on sm_90a/sm_100a", WarpSpec/invalid.mlir): warpspec.mma_async
// "needs tensor memory (sm_100a)" and warpspec.mma "with register operands
// is not available on sm_100a".

//--- unplanned.mlir

// warpspec-allocate-smem did not run: no smem_bytes.
!cu = memref<?xi32>
func.func @negative_no_smem_plan(%cu: !cu) {
  // expected-error @+1 {{'warpspec.kernel' op has no shared-memory plan: run warpspec-allocate-smem first}}
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu heads(%n) tokens(%n) block_size(64) {
      }
    }
  }
  return
}

// -----

// smem_bytes is there, but the channel was not placed: the prologue that
// initializes its barriers needs their offsets.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_not_placed() {
  warpspec.kernel chip(sm_90a) attributes {smem_bytes = 1024 : i64} {
    %i = arith.constant 0 : i32
    // expected-error @+1 {{'warpspec.channel' op has no barrier or tile record offsets: run warpspec-allocate-smem first}}
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%c_slot1, %row, %rows, %head, %b) : !c {
        warpspec.release %c_slot1
      }
    }
  }
  return
}

// -----

// Barriers and records placed, but not the slots' buffers.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_buffers_not_placed() {
  warpspec.kernel chip(sm_90a) attributes {smem_bytes = 2048 : i64} {
    %i = arith.constant 0 : i32
    %c = warpspec.channel "c" depth(2) {barrier_offset = 0 : i64, info_offset = 32 : i64} : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      // expected-error @+1 {{'warpspec.ring_slot' op channel is not placed: run warpspec-allocate-smem (and, for tensor memory, warpspec-allocate-tmem) first}}
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%c_slot1, %row, %rows, %head, %b) : !c {
        warpspec.release %c_slot1
      }
    }
  }
  return
}

// -----

// A tensor-memory channel whose barriers and records are placed, with the
// kernel's tensor-memory plan, but not its slots (tmem_slots):
// warpspec-allocate-tmem did not run on it.
!s = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_tmem_channel_slots_not_placed() {
  warpspec.kernel chip(sm_100a) attributes {smem_bytes = 1088 : i64, tmem_base_offset = 48 : i64, tmem_columns = 64 : i64} {
    %i = arith.constant 0 : i32
    %s = warpspec.channel "s" depth(2) {barrier_offset = 0 : i64, info_offset = 32 : i64} : !s
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      // expected-error @+1 {{'warpspec.ring_slot' op channel is not placed: run warpspec-allocate-smem (and, for tensor memory, warpspec-allocate-tmem) first}}
      %s_slot, %b = warpspec.acquire %s : !s
      warpspec.commit %s_slot tile(%i, %i, %i)
      warpspec.close %s : !s
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      warpspec.consume %s (%s_slot1, %row, %rows, %head, %b) : !s {
        %v = warpspec.tmem_load %b : !warpspec.buffer<64x64xf32, tmem> -> !warpspec.acc<64x64xf32>
        warpspec.release %s_slot1
      }
    }
  }
  return
}

// -----

// Everything placed, but no tmem_columns: the prologue would not allocate
// tensor memory, and the slots would have no base address.
!s = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_no_tmem_columns() {
  // expected-error @+1 {{'warpspec.kernel' op uses tensor memory but has no tensor-memory plan (tmem_columns, tmem_base_offset): run warpspec-allocate-tmem and warpspec-allocate-smem first}}
  warpspec.kernel chip(sm_100a) attributes {smem_bytes = 1088 : i64, tmem_base_offset = 48 : i64} {
    %i = arith.constant 0 : i32
    %s = warpspec.channel "s" depth(2) {barrier_offset = 0 : i64, info_offset = 32 : i64, tmem_slots = array<i64: 0, 0, 16, 0>} : !s
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s_slot, %b = warpspec.acquire %s : !s
      warpspec.commit %s_slot tile(%i, %i, %i)
      warpspec.close %s : !s
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      warpspec.consume %s (%s_slot1, %row, %rows, %head, %b) : !s {
        %v = warpspec.tmem_load %b : !warpspec.buffer<64x64xf32, tmem> -> !warpspec.acc<64x64xf32>
        warpspec.release %s_slot1
      }
    }
  }
  return
}

// -----

// tmem_columns, but no tmem_base_offset: tcgen05.alloc would have no
// shared-memory slot to write the tensor-memory address to.
!s = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_no_tmem_base_offset() {
  // expected-error @+1 {{'warpspec.kernel' op uses tensor memory but has no tensor-memory plan (tmem_columns, tmem_base_offset): run warpspec-allocate-tmem and warpspec-allocate-smem first}}
  warpspec.kernel chip(sm_100a) attributes {smem_bytes = 1088 : i64, tmem_columns = 64 : i64} {
    %i = arith.constant 0 : i32
    %s = warpspec.channel "s" depth(2) {barrier_offset = 0 : i64, info_offset = 32 : i64, tmem_slots = array<i64: 0, 0, 16, 0>} : !s
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s_slot, %b = warpspec.acquire %s : !s
      warpspec.commit %s_slot tile(%i, %i, %i)
      warpspec.close %s : !s
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      warpspec.consume %s (%s_slot1, %row, %rows, %head, %b) : !s {
        %v = warpspec.tmem_load %b : !warpspec.buffer<64x64xf32, tmem> -> !warpspec.acc<64x64xf32>
        warpspec.release %s_slot1
      }
    }
  }
  return
}

// -----

// Partitions are lowered in order: with the consumer first, its consume is
// the first op to find the slots unplaced.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_consume_first_not_placed() {
  warpspec.kernel chip(sm_90a) attributes {smem_bytes = 2048 : i64} {
    %i = arith.constant 0 : i32
    %c = warpspec.channel "c" depth(2) {barrier_offset = 0 : i64, info_offset = 32 : i64} : !c
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      // expected-error @+1 {{'warpspec.ring_slot' op channel is not placed: run warpspec-allocate-smem (and, for tensor memory, warpspec-allocate-tmem) first}}
      warpspec.consume %c (%c_slot, %row, %rows, %head, %b) : !c {
        warpspec.release %c_slot
      }
    }
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot1, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot1 tile(%i, %i, %i)
      warpspec.close %c : !c
    }
  }
  return
}

// -----

// Likewise a get, in a partition before the producer's.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_get_first_not_placed() {
  warpspec.kernel chip(sm_90a) attributes {smem_bytes = 2048 : i64} {
    %i = arith.constant 0 : i32
    %c = warpspec.channel "c" depth(2) {barrier_offset = 0 : i64, info_offset = 32 : i64} : !c
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      // expected-error @+1 {{'warpspec.ring_slot' op channel is not placed: run warpspec-allocate-smem (and, for tensor memory, warpspec-allocate-tmem) first}}
      %c_slot, %b = warpspec.get %c : !c
      warpspec.release %c_slot
    }
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot1, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot1 tile(%i, %i, %i)
    }
  }
  return
}

// -----

// A producer that only closes the channel (its consumers see no tile).
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_close_not_placed() {
  warpspec.kernel chip(sm_90a) attributes {smem_bytes = 2048 : i64} {
    %c = warpspec.channel "c" depth(2) {barrier_offset = 0 : i64, info_offset = 32 : i64} : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      // expected-error @+1 {{'warpspec.ring_slot' op channel is not placed: run warpspec-allocate-smem (and, for tensor memory, warpspec-allocate-tmem) first}}
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%c_slot, %row, %rows, %head, %b) : !c {
        warpspec.release %c_slot
      }
    }
  }
  return
}

// -----

// A scratch buffer that was not placed.
func.func @negative_scratch_not_placed() {
  warpspec.kernel chip(sm_90a) attributes {smem_bytes = 9216 : i64} {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      // expected-error @+1 {{'warpspec.scratch' op has no offset: run warpspec-allocate-smem first}}
      %s = warpspec.scratch : !warpspec.buffer<64x64xbf16, smem>
    }
  }
  return
}

//--- chip.mlir

// The pass was asked for sm_100a; the kernel is for sm_90a.
!cu = memref<?xi32>
func.func @negative_chip_mismatch(%cu: !cu) {
  // expected-error @+1 {{'warpspec.kernel' op targets sm_90a, but convert-warpspec-to-nvvm was asked for sm_100a}}
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu heads(%n) tokens(%n) block_size(64) {
      }
    }
  }
  return
}

//--- chip-sm90a.mlir

// The other way round: an sm_100a kernel (with its tensor-memory plan) and
// the pass asked for sm_90a.
!s = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_chip_mismatch_sm100a(%cu: memref<?xi32>) {
  // expected-error @+1 {{'warpspec.kernel' op targets sm_100a, but convert-warpspec-to-nvvm was asked for sm_90a}}
  warpspec.kernel chip(sm_100a) {
    %n = arith.constant 4 : index
    %s = warpspec.channel "s" depth(2) : !s
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%n) tokens(%n) block_size(64) {
        %s_slot, %b = warpspec.acquire %s : !s
        warpspec.commit %s_slot tile(%row, %rows, %head)
      }
      warpspec.close %s : !s
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      warpspec.consume %s (%s_slot1, %row, %rows, %head, %b) : !s {
        warpspec.release %s_slot1
      }
    }
  }
  return
}

//--- kernels.mlir

// Another operation next to the kernel: the function is not the kernel.
!cu = memref<?xi32>
func.func @negative_kernel_not_alone(%cu: !cu) {
  %x = arith.constant 0 : i32
  // expected-error @+1 {{'warpspec.kernel' op must be the only operation (besides return) of a func.func to be lowered to a GPU kernel}}
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu heads(%n) tokens(%n) block_size(64) {
      }
    }
  }
  return
}

// -----

// A kernel nested in another operation has no function to take its
// parameters from.
!cu = memref<?xi32>
func.func @negative_kernel_nested(%cu: !cu) {
  scf.execute_region {
    // expected-error @+1 {{'warpspec.kernel' op must be the only operation (besides return) of a func.func to be lowered to a GPU kernel}}
    warpspec.kernel chip(sm_90a) {
      %n = arith.constant 4 : index
      warpspec.partition "a" role(compute) warps(4) regs(64) {
        warpspec.tile_loop (%row, %rows, %head) in %cu : !cu heads(%n) tokens(%n) block_size(64) {
        }
      }
    }
    scf.yield
  }
  return
}

// -----

// Kernel parameters are memrefs (as tensor maps, pointers, strides and
// sizes) and f32 scalars: an index argument has no ABI.
!cu = memref<?xi32>
// expected-error @+1 {{kernel argument 1 of type 'index' cannot be passed to a GPU kernel}}
func.func @negative_index_argument(%cu: !cu, %heads: index) {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu heads(%heads) tokens(%heads) block_size(64) {
      }
    }
  }
  return
}

// -----

// Nor has an i32 scalar.
!c = !warpspec.channel<[64x64xbf16], smem>
// expected-error @+1 {{kernel argument 0 of type 'i32' cannot be passed to a GPU kernel}}
func.func @negative_i32_argument(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%c_slot1, %row, %rows, %head, %b) : !c {
        warpspec.release %c_slot1
      }
    }
  }
  return
}

// -----

// An unused argument of any type is fine: no diagnostic.
!cu = memref<?xi32>
func.func @unused_index_argument(%cu: !cu, %unused: index) {
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu heads(%n) tokens(%n) block_size(64) {
      }
    }
  }
  return
}

// -----

// One tensor map per tensor, so one box shape: Q loaded as 64-row and as
// 128-row tiles.
!act = memref<?x4x64xbf16>
!a = !warpspec.channel<[64x64xbf16, 128x64xbf16], smem>
func.func @negative_two_box_shapes(%q: !act, %cu: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    %a = warpspec.channel "a" depth(1) : !a
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%n) tokens(%n) block_size(64) {
        %a_slot, %x, %y = warpspec.acquire %a : !a
        warpspec.tma_load %q[%row, %head] into %x : !act, !warpspec.buffer<64x64xbf16, smem>
        // expected-error @+1 {{'warpspec.tma_load' op loads tiles of 128 rows from a tensor that is also loaded in tiles of 64 rows; one tensor map serves one box shape}}
        warpspec.tma_load %q[%row, %head] into %y : !act, !warpspec.buffer<128x64xbf16, smem>
        warpspec.commit %a_slot tile(%row, %rows, %head)
      }
      warpspec.close %a : !a
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %a (%a_slot1, %row, %rows, %head, %x, %y) : !a {
        warpspec.release %a_slot1
      }
    }
  }
  return
}

// -----

// One tensor map per tensor, so one chunk width: Q loaded into a buffer of
// 64-column chunks and into one of 32-column pieces (chunk_cols = 32).
!act = memref<?x4x128xbf16>
!a = !warpspec.channel<[64x64xbf16, 64x64xbf16 chunk_cols = 32], smem>
func.func @negative_two_chunk_widths(%q: !act, %cu: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    %a = warpspec.channel "a" depth(1) : !a
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%n) tokens(%n) block_size(64) {
        %a_slot, %x, %y = warpspec.acquire %a : !a
        warpspec.tma_load %q[%row, %head] into %x {col_offset = 0 : i64} : !act, !warpspec.buffer<64x64xbf16, smem>
        // expected-error @+1 {{'warpspec.tma_load' op loads 32-column chunks of a tensor that is also accessed in 64-column chunks; one tensor map serves one box shape}}
        warpspec.tma_load %q[%row, %head] into %y {col_offset = 64 : i64} : !act, !warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>
        warpspec.commit %a_slot tile(%row, %rows, %head)
      }
      warpspec.close %a : !a
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %a (%a_slot1, %row, %rows, %head, %x, %y) : !a {
        warpspec.release %a_slot1
      }
    }
  }
  return
}

// -----

// Kernel scalars are index, i32, i64 and f32 constants: not f16.
!cu = memref<?xi32>
func.func @negative_f16_constant(%cu: !cu) {
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    // expected-error @+1 {{'arith.constant' op constant of type 'f16' is not supported inside a warpspec.kernel}}
    %h = arith.constant 1.0 : f16
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu heads(%n) tokens(%n) block_size(64) {
      }
    }
  }
  return
}

// -----

// Arithmetic beyond what the ring positions and the recipes need (arith.addi,
// subi, muli, minsi, maxsi, cmpi) is not something a kernel body can lower.
!cu = memref<?xi32>
func.func @negative_unknown_op(%cu: !cu) {
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu heads(%n) tokens(%n) block_size(64) {
        // expected-error @+1 {{'arith.divsi' op cannot be lowered by convert-warpspec-to-nvvm inside a warpspec.kernel}}
        %next = arith.divsi %row, %rows : i32
      }
    }
  }
  return
}

// -----

// A positions tensor is read through its kernel parameters (base and
// length): a memref made inside the kernel has none. (Reported where the
// kernel's parameters are collected, for warpspec.load_positions as for the
// rotary ops that read positions.)
func.func @negative_positions_not_an_argument(%positions: memref<4xi32>) {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "a" role(compute) warps(4) regs(232) {
      %row = arith.constant 0 : i32
      %p = memref.cast %positions : memref<4xi32> to memref<?xi32>
      // expected-error @+1 {{'warpspec.load_positions' op positions must be an argument of the kernel function}}
      %read = warpspec.load_positions %p[%row] : memref<?xi32> -> !warpspec.rows<64xi32>
    }
  }
  return
}

// -----

// A dynamic schedule's counters are a parameter too: a memref made inside
// the kernel is none.
!cu = memref<?xi32>
func.func @negative_schedule_not_an_argument(%cu: !cu, %counters: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c0 = arith.constant 0 : index
      %s = memref.subview %counters[%c0] [2] [1] : memref<?xi32> to memref<2xi32, strided<[1], offset: ?>>
      %t = memref.cast %s : memref<2xi32, strided<[1], offset: ?>> to memref<2xi32>
      // expected-error @+1 {{'warpspec.tile_loop' op dynamic schedule must be an argument of the kernel function}}
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu heads(%n) tokens(%n)
          block_size(64) dynamic(%t : memref<2xi32>) {
      }
    }
  }
  return
}

// -----

// So are the positions the producer copies into a slot
// (warpspec.copy_positions).
!pring = !warpspec.channel<[64x64xbf16, 64xi32], smem>
func.func @negative_copied_positions_not_an_argument(%positions: memref<4xi32>) {
  warpspec.kernel chip(sm_90a) {
    %ring = warpspec.channel "ring" depth(2) : !pring
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %row = arith.constant 0 : i32
      %p = memref.cast %positions : memref<4xi32> to memref<?xi32>
      %slot, %tile, %buf = warpspec.acquire %ring : !pring
      // expected-error @+1 {{'warpspec.copy_positions' op positions must be an argument of the kernel function}}
      warpspec.copy_positions %p[%row] into %buf : memref<?xi32>, !warpspec.buffer<64xi32, smem>
      warpspec.commit %slot tile(%row, %row, %row)
      warpspec.close %ring : !pring
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %ring (%s, %r, %n, %h, %t, %b) : !pring {
        warpspec.release %s
      }
    }
  }
  return
}

// -----

// cu_seqlens of a static size is passed with its length all the same (the
// tile loop reads it from a parameter): no diagnostic.
func.func @static_cu_seqlens(%cu: memref<5xi32>) {
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<5xi32> heads(%n) tokens(%n) block_size(64) {
      }
    }
  }
  return
}

// -----

// A tensor-memory channel, but warpspec-allocate-tmem did not run (only
// warpspec-allocate-smem, which placed its barriers and the tensor-memory
// address): no tmem_columns, nothing to allocate.
!act = memref<?x4x64xbf16>
!tile = !warpspec.buffer<64x64xbf16, smem>
!c = !warpspec.channel<[64x64xbf16, 64x64xbf16], smem>
!s = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_tmem_not_allocated(%q: !act, %k: !act,
                                       %cu: memref<?xi32>) {
  // expected-error @+1 {{'warpspec.kernel' op uses tensor memory but has no tensor-memory plan (tmem_columns, tmem_base_offset): run warpspec-allocate-tmem and warpspec-allocate-smem first}}
  warpspec.kernel chip(sm_100a) {
    %n = arith.constant 4 : index
    %c = warpspec.channel "c" depth(2) : !c
    %s = warpspec.channel "s" depth(2) : !s
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%n) tokens(%n) block_size(64) {
        %c_slot, %x, %y = warpspec.acquire %c : !c
        warpspec.tma_load %q[%row, %head] into %x : !act, !tile
        warpspec.tma_load %k[%row, %head] into %y : !act, !tile
        warpspec.commit %c_slot tile(%row, %rows, %head)
      }
      warpspec.close %c : !c
    }
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      warpspec.consume %c (%c_slot1, %row, %rows, %head, %x, %y) : !c {
        %s_slot, %d = warpspec.acquire %s : !s
        warpspec.mma_async %x, %y into %d {transpose_b} : !tile, !tile, !warpspec.buffer<64x64xf32, tmem>
        warpspec.commit %s_slot tile(%row, %rows, %head)
        warpspec.release %c_slot1 after_mma
      }
      warpspec.close %s : !s
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      warpspec.consume %s (%s_slot1, %row, %rows, %head, %b) : !s {
        %v = warpspec.tmem_load %b : !warpspec.buffer<64x64xf32, tmem> -> !warpspec.acc<64x64xf32>
        warpspec.release %s_slot1
      }
    }
  }
  return
}

// -----

// Placed by hand without the partition's indices: the ops that split work
// over the replica's threads would have no thread index.
!cu = memref<?xi32>
func.func @negative_placed_without_index(%cu: !cu) {
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    // expected-error @+1 {{'warpspec.partition' op has no warpspec.partition_index (the dispatch warpspec-dispatch-partitions writes)}}
    warpspec.partition "a" role(compute) warps(4) regs(64) first_warp(0) barrier_base(1) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu heads(%n) tokens(%n) block_size(64) {
      }
    }
  }
  return
}

// -----

// Placed by hand, with a replica_id the dispatch would have replaced by the
// partition_index's replica.
!cu = memref<?xi32>
func.func @negative_replica_id_placed(%cu: !cu) {
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    warpspec.partition "a" role(compute) warps(4) regs(64) first_warp(0) barrier_base(1) {
      %r, %t = warpspec.partition_index
      // expected-error @+1 {{'warpspec.replica_id' op is not dispatched: run warpspec-dispatch-partitions before convert-warpspec-to-nvvm}}
      %id = warpspec.replica_id
    }
  }
  return
}

// -----

// A tensor-memory teardown in a kernel where no partition uses tensor
// memory: nothing was allocated.
func.func @negative_tmem_release_unallocated() {
  warpspec.kernel chip(sm_100a) attributes {smem_bytes = 1088 : i64, tmem_columns = 32 : i64, tmem_base_offset = 48 : i64} {
    warpspec.partition "a" role(compute) warps(4) regs(64) first_warp(0) barrier_base(1) {
      %r, %t = warpspec.partition_index
      // expected-error @+1 {{'warpspec.tmem_release' op releases tensor memory, but no partition arrives on the teardown barrier}}
      warpspec.tmem_release %t dealloc
    }
  }
  return
}
