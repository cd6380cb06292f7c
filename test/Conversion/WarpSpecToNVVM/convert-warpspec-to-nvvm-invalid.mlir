// RUN: split-file %s %t
// RUN: block-attn-opt %t/unplanned.mlir -split-input-file -verify-diagnostics -convert-warpspec-to-nvvm
// RUN: block-attn-opt %t/chip.mlir -verify-diagnostics --pass-pipeline='builtin.module(warpspec-allocate-smem,convert-warpspec-to-nvvm{chip=sm_100a})'
// RUN: block-attn-opt %t/kernels.mlir -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(warpspec-allocate-smem,convert-warpspec-to-nvvm)'

// The diagnostics of convert-warpspec-to-nvvm that input which passes the
// warpspec verifiers can trigger: a kernel without its shared-memory plan, a
// chip other than the one asked for, a kernel that is not the body of a
// func.func, function arguments and kernel contents the lowering cannot
// pass or lower. One part per set of passes (split-file), one case per
// split.
//
// Not covered: "needs N named barriers (one per partition replica)" (15
// replicas would need more than the 1024 threads a CTA can have); the
// messages that guard values crossing partitions ("... not produced in this
// partition", "... not a buffer of this partition", "staging buffer is not
// one of this partition": SSA dominance already forbids it); "size of a
// memref that is not a kernel parameter", "cu_seqlens must be a
// dynamically sized kernel argument" and the store's "destination must be a
// kernel argument" (a memref is a function argument, always passed with its
// sizes and strides: any op that would make another one inside the kernel
// is itself reported as not lowerable).

//--- unplanned.mlir

// warpspec-allocate-smem did not run: no smem_bytes.
!cu = memref<?xi32>
func.func @negative_no_smem_plan(%cu: !cu) {
  // expected-error @+1 {{'warpspec.kernel' op has no shared-memory plan: run warpspec-allocate-smem first}}
  warpspec.kernel chip("sm_90a") {
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
  warpspec.kernel chip("sm_90a") attributes {smem_bytes = 1024 : i64} {
    %i = arith.constant 0 : i32
    // expected-error @+1 {{'warpspec.channel' op has no barrier or tile record offsets: run warpspec-allocate-smem first}}
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %b = warpspec.acquire %c : !c
      warpspec.commit %c tile(%i, %i, %i) : !c
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%row, %rows, %head, %b) : !c {
        warpspec.release %c : !c
      }
    }
  }
  return
}

// -----

// Barriers and records placed, but not the slots' buffers.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_buffers_not_placed() {
  warpspec.kernel chip("sm_90a") attributes {smem_bytes = 2048 : i64} {
    %i = arith.constant 0 : i32
    %c = warpspec.channel "c" depth(2) {barrier_offset = 0 : i64, info_offset = 32 : i64} : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      // expected-error @+1 {{'warpspec.acquire' op channel has no shared-memory offsets: run warpspec-allocate-smem first}}
      %b = warpspec.acquire %c : !c
      warpspec.commit %c tile(%i, %i, %i) : !c
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%row, %rows, %head, %b) : !c {
        warpspec.release %c : !c
      }
    }
  }
  return
}

// -----

// A scratch buffer that was not placed.
func.func @negative_scratch_not_placed() {
  warpspec.kernel chip("sm_90a") attributes {smem_bytes = 9216 : i64} {
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
  warpspec.kernel chip("sm_90a") {
    %n = arith.constant 4 : index
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu heads(%n) tokens(%n) block_size(64) {
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
  warpspec.kernel chip("sm_90a") {
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
    warpspec.kernel chip("sm_90a") {
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
  warpspec.kernel chip("sm_90a") {
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
  warpspec.kernel chip("sm_90a") {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %b = warpspec.acquire %c : !c
      warpspec.commit %c tile(%i, %i, %i) : !c
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%row, %rows, %head, %b) : !c {
        warpspec.release %c : !c
      }
    }
  }
  return
}

// -----

// An unused argument of any type is fine: no diagnostic.
!cu = memref<?xi32>
func.func @unused_index_argument(%cu: !cu, %unused: index) {
  warpspec.kernel chip("sm_90a") {
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
  warpspec.kernel chip("sm_90a") {
    %n = arith.constant 4 : index
    %a = warpspec.channel "a" depth(1) : !a
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%n) tokens(%n) block_size(64) {
        %x, %y = warpspec.acquire %a : !a
        warpspec.tma_load %q[%row, %head] into %x : !act, !warpspec.buffer<64x64xbf16, smem>
        // expected-error @+1 {{'warpspec.tma_load' op loads tiles of 128 rows from a tensor that is also loaded in tiles of 64 rows; one tensor map serves one box shape}}
        warpspec.tma_load %q[%row, %head] into %y : !act, !warpspec.buffer<128x64xbf16, smem>
        warpspec.commit %a tile(%row, %rows, %head) : !a
      }
      warpspec.close %a : !a
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %a (%row, %rows, %head, %x, %y) : !a {
        warpspec.release %a : !a
      }
    }
  }
  return
}

// -----

// The dimension a kernel reads is fixed when the kernel is built, not a
// run-time value (reported before the index argument itself).
!act = memref<?x?x64xbf16>
func.func @negative_dynamic_dim_index(%q: !act, %cu: memref<?xi32>, %d: index) {
  warpspec.kernel chip("sm_90a") {
    // expected-error @+1 {{'memref.dim' op must use a constant dimension index inside a kernel}}
    %h = memref.dim %q, %d : !act
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%h) tokens(%h) block_size(64) {
      }
    }
  }
  return
}

// -----

// Kernel scalars are index, i32, i64 and f32 constants: not f16.
!cu = memref<?xi32>
func.func @negative_f16_constant(%cu: !cu) {
  warpspec.kernel chip("sm_90a") {
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

// Arithmetic of its own is not something a kernel body can lower.
!cu = memref<?xi32>
func.func @negative_unknown_op(%cu: !cu) {
  warpspec.kernel chip("sm_90a") {
    %n = arith.constant 4 : index
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu heads(%n) tokens(%n) block_size(64) {
        // expected-error @+1 {{'arith.addi' op cannot be lowered by convert-warpspec-to-nvvm inside a warpspec.kernel}}
        %next = arith.addi %row, %rows : i32
      }
    }
  }
  return
}

// -----

// cu_seqlens of a static size is passed with its length all the same (the
// tile loop reads it from a parameter): no diagnostic.
func.func @static_cu_seqlens(%cu: memref<5xi32>) {
  warpspec.kernel chip("sm_90a") {
    %n = arith.constant 4 : index
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<5xi32> heads(%n) tokens(%n) block_size(64) {
      }
    }
  }
  return
}

// -----

// warpspec.mma into a register accumulator is wgmma, lowered for sm_90a
// only: on sm_100a it is reported.
!act = memref<?x4x64xbf16>
!tile = !warpspec.buffer<64x64xbf16, smem>
!c = !warpspec.channel<[64x64xbf16, 64x64xbf16], smem>
func.func @negative_blackwell_register_mma(%q: !act, %k: !act,
                                           %cu: memref<?xi32>) {
  warpspec.kernel chip("sm_100a") {
    %n = arith.constant 4 : index
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%n) tokens(%n) block_size(64) {
        %x, %y = warpspec.acquire %c : !c
        warpspec.tma_load %q[%row, %head] into %x : !act, !tile
        warpspec.tma_load %k[%row, %head] into %y : !act, !tile
        warpspec.commit %c tile(%row, %rows, %head) : !c
      }
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%row, %rows, %head, %x, %y) : !c {
        // expected-error @+1 {{'warpspec.mma' op with register operands is not available on sm_100a}}
        %s = warpspec.mma %x, %y {transpose_b} : !tile, !tile -> !warpspec.acc<64x64xf32>
        warpspec.release %c : !c
      }
    }
  }
  return
}
