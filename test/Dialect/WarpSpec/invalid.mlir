// RUN: block-attn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the warpspec dialect: the type parsers and
// verifiers of lib/Dialect/WarpSpec/IR/WarpSpecDialect.cpp, every message of
// the op parsers and verifiers of lib/Dialect/WarpSpec/IR/WarpSpecOps.cpp,
// and the ODS constraints the ops rely on (parents, positive depth).
//
// Two messages of ChannelType::verify cannot be reached from textual IR,
// because the channel parser builds its buffers itself (in the channel's
// memory space): "channel slots hold !warpspec.buffer types" and "channel
// buffer ... is not in the channel's memory space". They guard C++ builders.

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// A buffer lives in smem or tmem; there is no global-memory buffer.
// expected-error @+1 {{expected memory space 'smem' or 'tmem'}}
func.func @negative_buffer_memory_space(%b: !warpspec.buffer<64x64xbf16, gmem>) {
  return
}

// -----

// Buffers are sized in bytes, so their elements need a bit width: not index.
// expected-error @+1 {{buffer elements must be integers or floats, got 'index'}}
func.func @negative_buffer_index_elements(%b: !warpspec.buffer<64x64xindex, smem>) {
  return
}

// -----

// The same check applies to the buffers of a channel slot (a vector element).
// expected-error @+1 {{buffer elements must be integers or floats, got 'vector<2xf32>'}}
func.func @negative_channel_vector_elements(%c: !warpspec.channel<[64x64xvector<2xf32>], smem>) {
  return
}

// -----

// chunk_cols = 32 lays a tile whose width is a multiple of 64 out in 32-column
// chunks (64-byte swizzle, the half-split pair-complete pieces); a width of 96
// is in 32-column chunks already.
// expected-error @+1 {{chunk_cols = 32 needs 32 or 16 on a 2-D shared-memory tile of 16-bit elements whose width is a multiple of twice that (narrower than the width's own chunks: 64 columns, or 32 where the width is not a multiple of 64)}}
func.func @negative_buffer_chunk_cols_width(%b: !warpspec.buffer<64x96xbf16, smem, chunk_cols = 32>) {
  return
}

// -----

// chunk_cols = 16 (32-byte swizzle, head dim 96's pair-complete pieces) needs
// whole pair-complete 32-column chunks: a width of 48 is one and a half, and
// in 16-column chunks already.
// expected-error @+1 {{chunk_cols = 16 needs 32 or 16 on a 2-D shared-memory tile of 16-bit elements whose width is a multiple of twice that}}
func.func @negative_buffer_chunk_cols_16_width(%b: !warpspec.buffer<64x48xbf16, smem, chunk_cols = 16>) {
  return
}

// -----

// Only 32- and 16-column pieces: an 8-column box (16 bytes) would fill no
// swizzle span (the narrowest is 32 bytes).
// expected-error @+1 {{chunk_cols = 8 needs 32 or 16 on a 2-D shared-memory tile of 16-bit elements}}
func.func @negative_buffer_chunk_cols_8(%b: !warpspec.buffer<64x64xbf16, smem, chunk_cols = 8>) {
  return
}

// -----

// The same check in a channel slot (f32 elements: not a swizzled 16-bit tile).
// expected-error @+1 {{chunk_cols = 32 needs 32 or 16 on a 2-D shared-memory tile of 16-bit elements}}
func.func @negative_channel_chunk_cols_f32(%c: !warpspec.channel<[64x64xf32 chunk_cols = 32], smem>) {
  return
}

// -----

// The same check in a channel slot (chunk_cols = 16 in tensor memory).
// expected-error @+1 {{chunk_cols = 16 needs 32 or 16 on a 2-D shared-memory tile}}
func.func @negative_channel_chunk_cols_16_tmem(%c: !warpspec.channel<[64x96xbf16 chunk_cols = 16], tmem>) {
  return
}

// -----

// Buffer shapes are static.
// expected-error @+1 {{expected static shape}}
func.func @negative_buffer_dynamic_shape(%b: !warpspec.buffer<?x64xbf16, smem>) {
  return
}

// -----

// A channel's memory space is smem or tmem as well.
// expected-error @+1 {{expected memory space 'smem' or 'tmem'}}
func.func @negative_channel_memory_space(%c: !warpspec.channel<[64x64xbf16], global>) {
  return
}

// -----

// A channel without buffers is a signal, whose barriers are in shared memory.
// expected-error @+1 {{a channel without buffers is a signal: its barriers and records live in shared memory, so it must be 'smem'}}
func.func @negative_channel_no_buffers(%c: !warpspec.channel<[], tmem>) {
  return
}

// -----

// A channel's 1-D buffers hold a tile's row values (its positions): i32.
// expected-error @+1 {{a channel's 1-D buffers hold one i32 per row in shared memory, got '!warpspec.buffer<64xbf16, smem>'}}
func.func @negative_channel_1d_buffer(%c: !warpspec.channel<[64x64xbf16, 64xbf16], smem>) {
  return
}

// -----

// The row values follow the tiles.
// expected-error @+1 {{channel buffers are 2-D tiles, then 1-D buffers of i32, got '!warpspec.buffer<64x64xbf16, smem>'}}
func.func @negative_channel_row_buffer_first(%c: !warpspec.channel<[64xi32, 64x64xbf16], smem>) {
  return
}

// -----

// Per-row values have exactly one dimension.
// expected-error @+1 {{expected one dimension (the number of rows)}}
func.func @negative_rows_two_dims(%r: !warpspec.rows<64x2xf32>) {
  return
}

//===----------------------------------------------------------------------===//
// warpspec.kernel: chip, body, budgets
//===----------------------------------------------------------------------===//

// -----

// Only sm_90a and sm_100a are targets: the chip is a #warpspec<chip ...>
// enum attribute, so any other is a parse error.
func.func @negative_kernel_unsupported_chip() {
  // expected-error @+1 {{unknown chip 'sm_80'; supported chips: sm_90a, sm_100a}}
  warpspec.kernel chip(sm_80) {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

// The chip's name may be quoted, but it is still one of the enum's.
func.func @negative_kernel_unsupported_quoted_chip() {
  // expected-error @+1 {{unknown chip 'sm_100'; supported chips: sm_90a, sm_100a}}
  warpspec.kernel chip("sm_100") {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

// In the generic form the chip must be a #warpspec<chip ...>, not a string.
func.func @negative_kernel_string_chip() {
  // expected-error @+1 {{invalid properties {chip = "sm_90a"} for op warpspec.kernel: Invalid attribute `chip` in property conversion: "sm_90a"}}
  "warpspec.kernel"() <{chip = "sm_90a"}> ({
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }) : () -> ()
  return
}

// -----

func.func @negative_kernel_unknown_chip_attr() {
  // expected-error @+2 {{unknown chip 'sm_120a'; supported chips: sm_90a, sm_100a}}
  // expected-error @+1 {{failed to parse WarpSpec_ChipAttr parameter 'value'}}
  "warpspec.kernel"() <{chip = #warpspec<chip sm_120a>}> ({
  }) : () -> ()
  return
}

// -----

// The kernel body may hold side-effect-free values, not an allocation.
func.func @negative_kernel_op_with_effects() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'memref.alloc' op is not allowed directly in a warpspec.kernel: only channels, partitions, side-effect-free values and the trace's start anchor are}}
    %m = memref.alloc() : memref<4xf32>
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

// Protocol and tile ops belong in partitions, not directly in the kernel.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_kernel_close_outside_partition(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    // expected-error @+1 {{'warpspec.close' op is not allowed directly in a warpspec.kernel}}
    warpspec.close %c : !c
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

// A kernel runs at least one partition.
func.func @negative_kernel_no_partitions() {
  // expected-error @+1 {{'warpspec.kernel' op has no partitions}}
  warpspec.kernel chip(sm_90a) {
    %c0 = arith.constant 0 : index
  }
  return
}

// -----

// 4 + 4 x 8 replicas = 36 warps = 1152 threads, more than a CTA can have.
func.func @negative_kernel_too_many_threads() {
  // expected-error @+1 {{'warpspec.kernel' op uses 1152 threads, more than the 1024 a CTA can have}}
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "load" role(load) warps(4) regs(24) {
    }
    warpspec.partition "compute" role(compute) warps(4) regs(24) replicas(8) {
    }
  }
  return
}

// -----

// 40 x 128 + 256 x 256 registers overflow the pool the CTA is launched with
// (384 threads x 168: 65536 / 384 rounded down to a multiple of 8, one CTA
// per SM); the message gives every partition's budget x threads.
func.func @negative_kernel_too_many_registers() {
  // expected-error @+1 {{'warpspec.kernel' op register budgets need 70656 registers ("load": 40 x 128, "compute": 256 x 256), more than the 64512 the CTA gets (384 threads x 168 at launch, 1 CTA(s) per SM)}}
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "load" role(load) warps(4) regs(40) {
    }
    warpspec.partition "compute" role(compute) warps(4) regs(256) replicas(2) {
    }
  }
  return
}

// -----

// Two CTAs per SM: 256 threads get 128 registers each at launch, a pool of
// 32768, less than 40 + 232 per thread of the two warpgroups.
func.func @negative_two_ctas_register_pool() {
  // expected-error @+1 {{'warpspec.kernel' op register budgets need 34816 registers ("a": 40 x 128, "b": 232 x 128), more than the 32768 the CTA gets (256 threads x 128 at launch, 2 CTA(s) per SM)}}
  warpspec.kernel chip(sm_90a) attributes {ctas_per_sm = 2 : i64} {
    warpspec.partition "a" role(load) warps(4) regs(40) {
    }
    warpspec.partition "b" role(compute) warps(4) regs(232) {
    }
  }
  return
}

// -----

// Two CTAs per SM: smem_bytes above 115712 (228 KiB / 2 - 1 KiB).
func.func @negative_two_ctas_too_much_smem() {
  // expected-error @+1 {{'warpspec.kernel' op uses 115713 bytes of shared memory, more than the 115712 a CTA can have (2 per SM)}}
  warpspec.kernel chip(sm_90a) attributes {ctas_per_sm = 2 : i64, smem_bytes = 115713 : i64} {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

// smem_bytes above 227 KiB (232448 bytes).
func.func @negative_kernel_too_much_smem() {
  // expected-error @+1 {{'warpspec.kernel' op uses 232449 bytes of shared memory, more than the 232448 a CTA can have (1 per SM)}}
  warpspec.kernel chip(sm_90a) attributes {smem_bytes = 232449 : i64} {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

// At most four CTAs share an SM.
func.func @negative_kernel_ctas_per_sm_too_many() {
  // expected-error @+1 {{'warpspec.kernel' op ctas_per_sm must be in [1, 4], got 5}}
  warpspec.kernel chip(sm_90a) attributes {ctas_per_sm = 5 : i64} {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

// A chunked launch gives every CTA at least one tile.
func.func @negative_kernel_tiles_per_cta_zero() {
  // expected-error @+1 {{'warpspec.kernel' op tiles_per_cta must be in [1, 2147483647], got 0}}
  warpspec.kernel chip(sm_90a) attributes {tiles_per_cta = 0 : i64} {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

// A chunked launch (tiles_per_cta) hands each CTA a range of consecutive
// tiles: its tile loops must be contiguous, not strided.
!qkv = !warpspec.channel<[64x64xf16, 64x64xf16, 64x64xf16], smem>
func.func @negative_kernel_tiles_per_cta_strided(%cu: memref<5xi32>) {
  // expected-error @+1 {{'warpspec.kernel' op tiles_per_cta (a chunked launch) needs contiguous tile loops}}
  warpspec.kernel chip(sm_90a) attributes {tiles_per_cta = 4 : i64} {
    %tokens = arith.constant 1024 : index
    %heads = arith.constant 8 : index
    %qkv = warpspec.channel "qkv" depth(2) : !qkv
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<5xi32>
          heads(%heads) tokens(%tokens) block_size(64) {
        %qkv_slot, %q, %k, %v = warpspec.acquire %qkv : !qkv
        warpspec.commit %qkv_slot tile(%row, %rows, %head)
      }
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %q, %k, %v) : !qkv {
        warpspec.release %qkv_slot1
      }
    }
  }
  return
}

// -----

// Hopper has no tensor memory, so no tmem_columns.
func.func @negative_kernel_tmem_columns_on_hopper() {
  // expected-error @+1 {{'warpspec.kernel' op has tmem_columns, but sm_90a has no tensor memory}}
  warpspec.kernel chip(sm_90a) attributes {tmem_columns = 128 : i64} {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

// TMEM is allocated in powers of two of columns: 48 is not one.
func.func @negative_kernel_tmem_columns_not_power_of_two() {
  // expected-error @+1 {{'warpspec.kernel' op tmem_columns must be a power of two in [32, 512], got 48}}
  warpspec.kernel chip(sm_100a) attributes {tmem_columns = 48 : i64} {
    warpspec.partition "a" role(mma) warps(4) regs(64) {
    }
  }
  return
}

// -----

// 1024 is a power of two, but above the 512 columns an SM has.
func.func @negative_kernel_tmem_columns_too_many() {
  // expected-error @+1 {{'warpspec.kernel' op tmem_columns must be a power of two in [32, 512], got 1024}}
  warpspec.kernel chip(sm_100a) attributes {tmem_columns = 1024 : i64} {
    warpspec.partition "a" role(mma) warps(4) regs(64) {
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// warpspec.kernel: ops per target
//===----------------------------------------------------------------------===//

// -----

// tcgen05.mma needs tensor memory: not on Hopper.
!a = !warpspec.buffer<64x64xbf16, smem>
!d = !warpspec.buffer<64x64xf32, tmem>
func.func @negative_mma_async_on_hopper(%a: !a, %b: !a, %d: !d) {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      // expected-error @+1 {{'warpspec.mma_async' op is not available on sm_90a (no tensor memory)}}
      warpspec.mma_async %a, %b into %d {transpose_b} : !a, !a, !d
    }
  }
  return
}

// -----

// Nor tcgen05.ld ...
!d = !warpspec.buffer<64x64xf32, tmem>
func.func @negative_tmem_load_on_hopper(%d: !d) {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      // expected-error @+1 {{'warpspec.tmem_load' op is not available on sm_90a (no tensor memory)}}
      %s = warpspec.tmem_load %d : !d -> !warpspec.acc<64x64xf32>
    }
  }
  return
}

// -----

// ... nor tcgen05.st.
!p = !warpspec.buffer<64x64xbf16, tmem>
func.func @negative_tmem_store_on_hopper(%v: !warpspec.acc<64x64xbf16>, %p: !p) {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      // expected-error @+1 {{'warpspec.tmem_store' op is not available on sm_90a (no tensor memory)}}
      warpspec.tmem_store %v, %p : !warpspec.acc<64x64xbf16>, !p
    }
  }
  return
}

// -----

// warpspec.mma is wgmma (a register accumulator): Hopper only. On Blackwell
// the accumulator lives in tensor memory.
!a = !warpspec.buffer<64x64xbf16, smem>
func.func @negative_mma_on_blackwell(%a: !a, %b: !a) {
  warpspec.kernel chip(sm_100a) {
    warpspec.partition "compute" role(softmax) warps(4) regs(232) {
      // expected-error @+1 {{'warpspec.mma' op is not available on sm_100a (use warpspec.mma_async into tensor memory)}}
      %s = warpspec.mma %a, %b {transpose_b} : !a, !a -> !warpspec.acc<64x64xf32>
    }
  }
  return
}

// -----

// release after_mma is a tcgen05.commit: Blackwell only.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_release_after_mma_on_hopper(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%c_slot1, %row, %rows, %head, %b) : !c {
        // expected-error @+1 {{'warpspec.release' op with after_mma is not available on sm_90a (no tcgen05.commit)}}
        warpspec.release %c_slot1 after_mma
      }
    }
  }
  return
}

// -----

// One thread issues tcgen05.mma: not a softmax warpgroup, whose 128
// threads would each issue it.
!a = !warpspec.buffer<64x64xbf16, smem>
!d = !warpspec.buffer<64x64xf32, tmem>
func.func @negative_mma_async_outside_mma_role(%a: !a, %d: !d) {
  warpspec.kernel chip(sm_100a) {
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      // expected-error @+1 {{'warpspec.mma_async' op must be in a role(mma) partition (one thread issues the MMAs and commits them), not in "softmax"}}
      warpspec.mma_async %a, %a into %d {transpose_b} : !a, !a, !d
    }
  }
  return
}

// -----

// The load role is single-threaded too, but its commits are not counted on
// an MMA-produced slot: still not the MMA role.
!a = !warpspec.buffer<64x64xbf16, smem>
!d = !warpspec.buffer<64x64xf32, tmem>
func.func @negative_mma_async_in_load_role(%a: !a, %d: !d) {
  warpspec.kernel chip(sm_100a) {
    warpspec.partition "load" role(load) warps(4) regs(40) {
      // expected-error @+1 {{'warpspec.mma_async' op must be in a role(mma) partition (one thread issues the MMAs and commits them), not in "load"}}
      warpspec.mma_async %a, %a into %d {transpose_b} : !a, !a, !d
    }
  }
  return
}

// -----

// after_mma commits the MMAs of the releasing thread: in a softmax
// warpgroup, 128 threads would each arrive on the slot's empty barrier.
!c = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_release_after_mma_outside_mma_role(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %c_slot1, %b = warpspec.get %c : !c
      // expected-error @+1 {{'warpspec.release' op with after_mma must be in a role(mma) partition (one thread issues the MMAs and commits them), not in "softmax"}}
      warpspec.release %c_slot1 after_mma
    }
  }
  return
}

// -----

// 16 columns are below the 32 tcgen05.alloc allocates at least.
func.func @negative_kernel_tmem_columns_too_few() {
  // expected-error @+1 {{'warpspec.kernel' op tmem_columns must be a power of two in [32, 512], got 16}}
  warpspec.kernel chip(sm_100a) attributes {tmem_columns = 16 : i64} {
    warpspec.partition "a" role(mma) warps(4) regs(64) {
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// warpspec.kernel: channel producers and consumers
//===----------------------------------------------------------------------===//

// -----

// A channel must be declared in the kernel that uses it, not passed in.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_not_declared(%c: !c, %i: i32) {
  // expected-error @+1 {{'warpspec.kernel' op uses a channel not declared in it}}
  warpspec.kernel chip(sm_90a) {
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

// Nobody acquires, commits or closes the channel.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_no_producer() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op channel "c" has no producer partition}}
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%c_slot, %row, %rows, %head, %b) : !c {
        warpspec.release %c_slot
      }
    }
  }
  return
}

// -----

// Two partitions produce into one channel (the second only closes it).
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_two_producers(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op channel "c" is produced by two partitions, "load" and "load2"; a channel has one producer}}
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "load2" role(load) warps(4) regs(40) {
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

// A replicated producer may fill a ring (its replicas take the slots
// round-robin, ops.mlir), but it cannot close it: each replica would
// publish its own end-of-stream records, and no one replica knows when the
// others are done.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_replicated_producer_closes(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op channel "c" is closed by partition "load" with replicas(2); only a single producer can end its consumers' loops}}
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) replicas(2) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(200) {
      warpspec.consume %c (%c_slot1, %row, %rows, %head, %b) : !c {
        warpspec.release %c_slot1
      }
    }
  }
  return
}

// -----

// Two softmax replicas produce P into a ring of three slots: slot 0 would
// be filled by replica 0, then (one lap later) by replica 1, and each
// would wait on the slot's empty barrier with its own count of laps.
!p = !warpspec.channel<[64x64xbf16], tmem>
func.func @negative_channel_depth_not_multiple_of_producer_replicas(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    // expected-error @+1 {{'warpspec.channel' op channel "p" has depth 3, which is not a multiple of the 2 replicas of its producer "softmax": each slot must belong to one replica so that its barrier phases are waited for in order}}
    %p = warpspec.channel "p" depth(3) : !p
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

// -----

// Replicated on both ends, the counts must agree: entry n is produced by
// replica n % 2 and would be consumed by replica n % 4.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_replica_counts_differ(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    // expected-error @+1 {{'warpspec.channel' op channel "c" is produced by 2 replicas of "producer" and consumed by 4 replicas of "consumer"; replicated ends must have the same count}}
    %c = warpspec.channel "c" depth(4) : !c
    warpspec.partition "producer" role(softmax) warps(4) regs(40) replicas(2) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
    }
    warpspec.partition "consumer" role(softmax) warps(4) regs(40) replicas(4) {
      %c_slot1, %b = warpspec.get %c : !c
      warpspec.release %c_slot1
    }
  }
  return
}

// -----

// A ring read with warpspec.get only (no consume loop) is not closed: its
// reader takes exactly the slots it knows are coming, and would never read
// the end-of-stream records.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_closed_without_consume(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op channel "c" is closed, but no warpspec.consume loop reads it}}
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %c_slot1, %b = warpspec.get %c : !c
      warpspec.release %c_slot1
    }
  }
  return
}

// -----

// Slots are produced but nobody consumes them.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_no_consumer(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op channel "c" has no consumer partition}}
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !c
    }
  }
  return
}

// -----

// One partition both produces into and consumes from the channel.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_same_partition(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op channel "c" is produced and consumed by partition "loop"}}
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "loop" role(compute) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !c
      warpspec.consume %c (%c_slot1, %row, %rows, %head, %x) : !c {
        warpspec.release %c_slot1
      }
    }
  }
  return
}

// -----

// The producer never closes the channel: the consumer loop would never end.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_never_closed(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op channel "c" is never closed by its producer "load", so its consumers would never stop}}
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
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

// Two compute replicas take the slots round-robin; with three slots, slot 0
// would go to replica 0, then (on the second lap) to replica 1, and the two
// would wait on the same barrier's parity a phase apart.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_depth_not_multiple_of_replicas(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op channel "c" has depth 3, which is not a multiple of the 2 replicas of its consumer "compute": each slot must belong to one replica so that its barrier phases are waited for in order}}
    %c = warpspec.channel "c" depth(3) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
      warpspec.consume %c (%c_slot1, %row, %rows, %head, %b) : !c {
        warpspec.release %c_slot1
      }
    }
  }
  return
}

// -----

// Fewer slots than replicas is not a multiple either: 2 slots, 3 replicas.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_depth_below_replicas(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op channel "c" has depth 2, which is not a multiple of the 3 replicas of its consumer "compute"}}
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(152) replicas(3) {
      warpspec.consume %c (%c_slot1, %row, %rows, %head, %b) : !c {
        warpspec.release %c_slot1
      }
    }
  }
  return
}

// -----

// A tensor-memory channel on Hopper, which has no tensor memory.
!t = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_channel_tmem_on_hopper(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op lives in tensor memory, which sm_90a does not have}}
    %c = warpspec.channel "s" depth(2) : !t
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !t
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !t
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%c_slot1, %row, %rows, %head, %b) : !t {
        warpspec.release %c_slot1
      }
    }
  }
  return
}

// -----

// A ring has at least one slot.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_depth_zero() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op attribute 'depth' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
    %c = warpspec.channel "c" depth(0) : !c
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

// Channels are declared in a kernel.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_channel_outside_kernel() {
  // expected-error @+1 {{'warpspec.channel' op expects parent op 'warpspec.kernel'}}
  %c = warpspec.channel "c" depth(2) : !c
  return
}

//===----------------------------------------------------------------------===//
// Producer protocol: acquire / commit / close
//===----------------------------------------------------------------------===//
//
// The slot an acquire returns is what its commit names, so the pairing is in
// the SSA graph: a slot exists only where its acquire dominates, has one
// commit, and is committed in the acquire's block before the channel's next
// acquire or close.

// -----

// A second acquire before the first slot is committed, from a ring of one
// slot (the second acquire would wait for the slot the first one holds).
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_acquire_twice(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(1) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %s0, %b0 = warpspec.acquire %c : !c
      // expected-error @+1 {{'warpspec.acquire' op acquires a slot of the channel while the previous one is not committed (a producer holds at most depth / replicas slots of a ring at once, acquired in one block and committed in the order acquired)}}
      %s1, %b1 = warpspec.acquire %c : !c
      warpspec.commit %s0 tile(%i, %i, %i)
      warpspec.commit %s1 tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%s, %row, %rows, %head, %b) : !c {
        warpspec.release %s
      }
    }
  }
  return
}

// -----

// Two slots of a two-slot ring acquired at once, but committed out of order
// (the ring's positions advance at the commits, in order).
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_acquire_twice_committed_out_of_order(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %s0, %b0 = warpspec.acquire %c : !c
      // expected-error @+1 {{'warpspec.acquire' op acquires a slot of the channel while the previous one is not committed}}
      %s1, %b1 = warpspec.acquire %c : !c
      warpspec.commit %s1 tile(%i, %i, %i)
      warpspec.commit %s0 tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%s, %row, %rows, %head, %b) : !c {
        warpspec.release %s
      }
    }
  }
  return
}

// -----

// Two replicas of a producer share a two-slot ring: each holds one slot at
// a time.
!c = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_acquire_twice_per_replica(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) replicas(2) {
      %s0, %b0 = warpspec.acquire %c : !c
      // expected-error @+1 {{'warpspec.acquire' op acquires a slot of the channel while the previous one is not committed}}
      %s1, %b1 = warpspec.acquire %c : !c
      warpspec.commit %s0 tile(%i, %i, %i)
      warpspec.commit %s1 tile(%i, %i, %i)
    }
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s, %b = warpspec.get %c : !c
      warpspec.release %s after_mma
    }
  }
  return
}

// -----

// A slot is published once.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_commit_twice(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %s, %b = warpspec.acquire %c : !c
      warpspec.commit %s tile(%i, %i, %i)
      // expected-error @+1 {{'warpspec.commit' op commits a slot that is already committed; each acquired slot is committed once}}
      warpspec.commit %s tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%s, %row, %rows, %head, %b) : !c {
        warpspec.release %s
      }
    }
  }
  return
}

// -----

// A commit with no acquired slot to publish: without an acquire there is no
// slot value to name.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_commit_without_acquire(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      // expected-error @+1 {{use of undeclared SSA value name}}
      warpspec.commit %s tile(%i, %i, %i)
      warpspec.close %c : !c
    }
  }
  return
}

// -----

// commit takes a slot, not the channel (the channel-keyed form of before).
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_commit_channel(%c: !c, %i: i32) {
  // expected-note @-1 {{prior use here}}
  // expected-error @+1 {{use of value '%c' expects different type than prior uses: '!warpspec.slot' vs '!warpspec.channel<[64x64xbf16], smem>'}}
  warpspec.commit %c tile(%i, %i, %i)
  return
}

// -----

// Only an acquire, a get or a consume makes a slot.
func.func @negative_commit_foreign_slot(%s: !warpspec.slot, %i: i32) {
  // expected-error @+1 {{'warpspec.commit' op slot operand must be the slot of a warpspec.acquire, a warpspec.get or a warpspec.consume}}
  warpspec.commit %s tile(%i, %i, %i)
  return
}

// -----

// A consumer gives its slot back; it does not publish it.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_commit_consumer_slot(%c: !c, %i: i32) {
  warpspec.consume %c (%s, %row, %rows, %head, %b) : !c {
    // expected-error @+1 {{'warpspec.commit' op commits a slot that a consumer took; a consumer gives its slots back with warpspec.release}}
    warpspec.commit %s tile(%i, %i, %i)
    warpspec.release %s
  }
  return
}

// -----

// Closing the channel while a slot is acquired but not yet committed.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_close_with_pending_acquire(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %s, %b = warpspec.acquire %c : !c
      // expected-error @+1 {{'warpspec.close' op closes the channel while an acquired slot is not committed}}
      warpspec.close %c : !c
      warpspec.commit %s tile(%i, %i, %i)
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%s, %row, %rows, %head, %b) : !c {
        warpspec.release %s
      }
    }
  }
  return
}

// -----

// The slot acquired in the loop body is never committed (a commit after the
// loop could not name it: the slot is not defined there).
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_acquire_never_committed(%cu: memref<?xi32>, %n: index) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
          heads(%n) tokens(%n) block_size(64) {
        // expected-error @+1 {{'warpspec.acquire' op acquired slot is never committed}}
        %s, %b = warpspec.acquire %c : !c
      }
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%s, %row, %rows, %head, %b) : !c {
        warpspec.release %s
      }
    }
  }
  return
}

// -----

// The slot is acquired outside the loop and committed inside it, once per
// tile: dominance allows it, the ring does not (one commit per acquire).
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_commit_in_other_block(%cu: memref<?xi32>, %n: index) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %s, %b = warpspec.acquire %c : !c
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
          heads(%n) tokens(%n) block_size(64) {
        // expected-error @+1 {{'warpspec.commit' op commits a slot that was not acquired in the same block}}
        warpspec.commit %s tile(%row, %rows, %head)
      }
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%s, %row, %rows, %head, %b) : !c {
        warpspec.release %s
      }
    }
  }
  return
}

// -----

// The generic form cannot give acquire other results than the slot and the
// channel's buffers (InferTypeOpInterface checks them).
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_acquire_result_types(%c: !c, %i: i32) {
  // expected-error @+2 {{'warpspec.acquire' op inferred type(s) '!warpspec.slot', '!warpspec.buffer<64x64xbf16, smem>' are incompatible with return type(s) of operation '!warpspec.slot', '!warpspec.buffer<64x128xbf16, smem>'}}
  // expected-error @+1 {{'warpspec.acquire' op failed to infer returned types}}
  %s, %b = "warpspec.acquire"(%c) : (!c) -> (!warpspec.slot, !warpspec.buffer<64x128xbf16, smem>)
  warpspec.commit %s tile(%i, %i, %i)
  return
}
//===----------------------------------------------------------------------===//
// warpspec.partition
//===----------------------------------------------------------------------===//

// -----

// Two warps are half a warpgroup: setmaxnreg works per warpgroup.
func.func @negative_partition_half_warpgroup() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.partition' op partition "a" has 2 warps; partitions are made of whole warpgroups (multiples of 4 warps) so that setmaxnreg can set their registers}}
    warpspec.partition "a" role(compute) warps(2) regs(64) {
    }
  }
  return
}

// -----

// Zero warps is not a warpgroup either.
func.func @negative_partition_no_warps() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.partition' op partition "a" has 0 warps}}
    warpspec.partition "a" role(compute) warps(0) regs(64) {
    }
  }
  return
}

// -----

// setmaxnreg takes multiples of 8: 36 is not one.
func.func @negative_partition_regs_not_multiple_of_8() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.partition' op partition "a" asks for 36 registers per thread; setmaxnreg takes a multiple of 8 in [24, 256]}}
    warpspec.partition "a" role(compute) warps(4) regs(36) {
    }
  }
  return
}

// -----

// 16 registers is below setmaxnreg's minimum of 24.
func.func @negative_partition_regs_too_few() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.partition' op partition "a" asks for 16 registers per thread; setmaxnreg takes a multiple of 8 in [24, 256]}}
    warpspec.partition "a" role(compute) warps(4) regs(16) {
    }
  }
  return
}

// -----

// 264 registers is above setmaxnreg's maximum of 256.
func.func @negative_partition_regs_too_many() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.partition' op partition "a" asks for 264 registers per thread; setmaxnreg takes a multiple of 8 in [24, 256]}}
    warpspec.partition "a" role(compute) warps(4) regs(264) {
    }
  }
  return
}

// -----

// A partition runs at least once.
func.func @negative_partition_zero_replicas() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.partition' op replicas must be in [1, 8] (32 warps a CTA at most, 4 per replica), got 0}}
    warpspec.partition "a" role(compute) warps(4) regs(64) replicas(0) {
    }
  }
  return
}

// -----

// "producer" is not a role.
func.func @negative_partition_unknown_role() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{unknown partition role 'producer'; expected load, compute, mma, softmax or rotary}}
    warpspec.partition "a" role(producer) warps(4) regs(64) {
    }
  }
  return
}

// -----

// Nor is "epilogue": the sm_100a epilogue warpgroups are softmax partitions
// (they read the accumulators from tensor memory and store the tiles).
func.func @negative_partition_epilogue_role() {
  warpspec.kernel chip(sm_100a) {
    // expected-error @+1 {{unknown partition role 'epilogue'; expected load, compute, mma, softmax or rotary}}
    warpspec.partition "a" role(epilogue) warps(4) regs(64) {
    }
  }
  return
}

// -----

// Partitions live in a kernel.
func.func @negative_partition_outside_kernel() {
  // expected-error @+1 {{'warpspec.partition' op expects parent op 'warpspec.kernel'}}
  warpspec.partition "a" role(compute) warps(4) regs(64) {
  }
  return
}

//===----------------------------------------------------------------------===//
// warpspec.tile_loop
//===----------------------------------------------------------------------===//

// -----

// A dynamic schedule's counters are two i32 words.
func.func @negative_tile_loop_dynamic_schedule_type(%cu: memref<?xi32>, %s: memref<?xi32>, %n: index) {
  // expected-error @+1 {{'warpspec.tile_loop' op dynamic schedule must be a memref<2xi32>, got 'memref<?xi32>'}}
  warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
      heads(%n) tokens(%n) block_size(64) dynamic(%s : memref<?xi32>) {
  }
  return
}

// -----

// A dynamic schedule hands out one item at a time, not ranges.
func.func @negative_tile_loop_dynamic_contiguous(%cu: memref<?xi32>, %s: memref<2xi32>, %n: index) {
  // expected-error @+1 {{'warpspec.tile_loop' op cannot be both contiguous and dynamic: a dynamic schedule hands out single items}}
  warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
      heads(%n) tokens(%n) block_size(64) contiguous dynamic(%s : memref<2xi32>) {
  }
  return
}

// -----

// Every thread of a compute partition would claim items of its own.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_tile_loop_dynamic_many_threads(%cu: memref<?xi32>, %s: memref<2xi32>, %n: index) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      // expected-error @+1 {{'warpspec.tile_loop' op with a dynamic schedule must run on one thread, in a load or mma partition, not in 'compute' (role compute)}}
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
          heads(%n) tokens(%n) block_size(64) dynamic(%s : memref<2xi32>) {
      }
      warpspec.consume %c (%slot, %row, %rows, %head, %b) : !c {
        warpspec.release %slot
      }
    }
  }
  return
}

// -----

// Two loops claiming from one counter would each see a part of the items.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_kernel_two_dynamic_tile_loops(%cu: memref<?xi32>, %s: memref<2xi32>, %n: index) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
          heads(%n) tokens(%n) block_size(64) dynamic(%s : memref<2xi32>) {
        %slot, %b = warpspec.acquire %c : !c
        warpspec.commit %slot tile(%row, %rows, %head)
      }
      // expected-error @+1 {{'warpspec.tile_loop' op is a second dynamic tile loop in its kernel; the CTAs' claims of one counter must all walk one loop}}
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
          heads(%n) tokens(%n) block_size(64) dynamic(%s : memref<2xi32>) {
        %slot, %b = warpspec.acquire %c : !c
        warpspec.commit %slot tile(%row, %rows, %head)
      }
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%slot, %row, %rows, %head, %b) : !c {
        warpspec.release %slot
      }
    }
  }
  return
}

// -----

// cu_seqlens holds i32 offsets, not i64.
func.func @negative_tile_loop_cu_seqlens_i64(%cu: memref<?xi64>, %n: index) {
  // expected-error @+1 {{'warpspec.tile_loop' op cu_seqlens must be a rank-1 memref of i32, got 'memref<?xi64>'}}
  warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi64>
      heads(%n) tokens(%n) block_size(64) {
  }
  return
}

// -----

// cu_seqlens is a vector [B+1], not a matrix.
func.func @negative_tile_loop_cu_seqlens_rank2(%cu: memref<?x2xi32>, %n: index) {
  // expected-error @+1 {{'warpspec.tile_loop' op cu_seqlens must be a rank-1 memref of i32, got 'memref<?x2xi32>'}}
  warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?x2xi32>
      heads(%n) tokens(%n) block_size(64) {
  }
  return
}

// -----

// Blocks have at least one token.
func.func @negative_tile_loop_block_size_zero(%cu: memref<?xi32>, %n: index) {
  // expected-error @+1 {{'warpspec.tile_loop' op block_size must be in [1, 2147483647], got 0}}
  warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
      heads(%n) tokens(%n) block_size(0) {
  }
  return
}

// -----

// Packed tiles fill the 64 rows of the MMA tile with 2 or 4 blocks.
func.func @negative_tile_loop_packed_rows(%cu: memref<?xi32>, %n: index) {
  // expected-error @+1 {{'warpspec.tile_loop' op packed(2) must put 2 or 4 blocks of block_size 16 into a 64-row tile}}
  warpspec.tile_loop (%row, %rows, %head, %ends) in %cu : memref<?xi32>
      heads(%n) tokens(%n) block_size(16) packed(2) {
  }
  return
}

// -----

// A packed tile's body takes its block ends.
func.func @negative_tile_loop_packed_no_ends(%cu: memref<?xi32>, %n: index) {
  // expected-error @+1 {{'warpspec.tile_loop' op with packed, the body must take a fourth i32 argument: the tile's block ends}}
  warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
      heads(%n) tokens(%n) block_size(32) packed(2) {
  }
  return
}

// -----

// The body receives row, rows and head: two arguments are too few.
func.func @negative_tile_loop_two_args(%cu: memref<?xi32>, %n: index) {
  // expected-error @+1 {{'warpspec.tile_loop' op body must take three i32 arguments (row, rows, head), and optionally a fourth}}
  warpspec.tile_loop (%row, %head) in %cu : memref<?xi32>
      heads(%n) tokens(%n) block_size(64) {
  }
  return
}

// -----

// In the generic form the body arguments can be mistyped: index, not i32.
func.func @negative_tile_loop_index_args(%cu: memref<?xi32>, %n: index) {
  // expected-error @+1 {{'warpspec.tile_loop' op body must take three i32 arguments (row, rows, head), and optionally a fourth}}
  "warpspec.tile_loop"(%cu, %n, %n) <{block_size = 64 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}> ({
  ^bb0(%row: index, %rows: index, %head: index):
  }) : (memref<?xi32>, index, index) -> ()
  return
}

//===----------------------------------------------------------------------===//
// Consumer protocol: consume / release
//===----------------------------------------------------------------------===//

// -----

// consume takes a channel, not an i32.
func.func @negative_consume_not_a_channel(%x: i32) {
  // expected-error @+1 {{expected a !warpspec.channel type}}
  warpspec.consume %x (%s, %row, %rows, %head) : i32 {
  }
  return
}

// -----

// The body names the slot, row, rows, head and one value per buffer: 5 here,
// not 4.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_consume_missing_buffer_arg(%c: !c) {
  // expected-error @+1 {{expected 5 block arguments (slot, row, rows, head, then one per buffer)}}
  warpspec.consume %c (%s, %row, %rows, %head) : !c {
    warpspec.release %s
  }
  return
}

// -----

// In the generic form the body's buffer argument can disagree with the
// channel's buffer type.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_consume_body_arg_types(%c: !c) {
  // expected-error @+1 {{'warpspec.consume' op body arguments must be (!warpspec.slot slot, i32 row, i32 rows, i32 head) followed by the channel's buffers}}
  "warpspec.consume"(%c) ({
  ^bb0(%s: !warpspec.slot, %row: i32, %rows: i32, %head: i32, %b: !warpspec.buffer<64x128xbf16, smem>):
    warpspec.release %s
  }) : (!c) -> ()
  return
}

// -----

// The slot is never given back.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_consume_no_release(%c: !c) {
  // expected-error @+1 {{'warpspec.consume' op body must release the slot exactly once, found 0 releases}}
  warpspec.consume %c (%s, %row, %rows, %head, %b) : !c {
  }
  return
}

// -----

// The slot is given back twice.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_consume_two_releases(%c: !c) {
  // expected-error @+1 {{'warpspec.consume' op body must release the slot exactly once, found 2 releases}}
  warpspec.consume %c (%s, %row, %rows, %head, %b) : !c {
    warpspec.release %s
    warpspec.release %s
  }
  return
}

// -----

// A release with no consume or get around it has no slot to name.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_release_outside_consume(%c: !c) {
  // expected-error @+1 {{use of undeclared SSA value name}}
  warpspec.release %s
  return
}

// -----

// The producer publishes its slot; it does not release it.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_release_acquired_slot(%c: !c, %i: i32) {
  %s, %b = warpspec.acquire %c : !c
  // expected-error @+1 {{'warpspec.release' op releases a slot that the producer acquired; the producer publishes its slots with warpspec.commit}}
  warpspec.release %s
  warpspec.commit %s tile(%i, %i, %i)
  return
}

// -----

// A release nested in a loop inside the consume body would give the slot
// back once per iteration.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_release_nested(%c: !c, %cu: memref<?xi32>, %n: index) {
  warpspec.consume %c (%s, %row, %rows, %head, %b) : !c {
    warpspec.tile_loop (%r, %rs, %h) in %cu : memref<?xi32>
        heads(%n) tokens(%n) block_size(64) {
      // expected-error @+1 {{'warpspec.release' op releases the slot of the enclosing warpspec.consume from a nested block; the body releases it directly, once per slot}}
      warpspec.release %s
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// Consumer protocol: get / release
//===----------------------------------------------------------------------===//

// -----

// A second get before the first slot is released, from a ring of one slot
// (the second get would wait for a slot the first one holds).
!c = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_get_twice(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %c = warpspec.channel "c" depth(1) : !c
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s, %b = warpspec.acquire %c : !c
      warpspec.commit %s tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %s0, %b0 = warpspec.get %c : !c
      // expected-error @+1 {{'warpspec.get' op takes a slot of the channel while the previous one is not released (a consumer holds at most depth / replicas slots of a ring at once, taken in one block and released in the order taken)}}
      %s1, %b1 = warpspec.get %c : !c
      warpspec.release %s0
      warpspec.release %s1
    }
  }
  return
}

// -----

// Two slots of a two-slot ring held at once, but released out of order.
!c = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_get_twice_released_out_of_order(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s, %b = warpspec.acquire %c : !c
      warpspec.commit %s tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %s0, %b0 = warpspec.get %c : !c
      // expected-error @+1 {{'warpspec.get' op takes a slot of the channel while the previous one is not released}}
      %s1, %b1 = warpspec.get %c : !c
      warpspec.release %s1
      warpspec.release %s0
    }
  }
  return
}

// -----

// Two replicas share a two-slot ring: each holds one slot at a time.
!c = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_get_twice_per_replica(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s, %b = warpspec.acquire %c : !c
      warpspec.commit %s tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) replicas(2) {
      %s0, %b0 = warpspec.get %c : !c
      // expected-error @+1 {{'warpspec.get' op takes a slot of the channel while the previous one is not released}}
      %s1, %b1 = warpspec.get %c : !c
      warpspec.release %s0
      warpspec.release %s1
    }
  }
  return
}

// -----

// The slot is taken before the loop and released in its body, once per
// tile: dominance allows it, the ring does not.
!c = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_get_released_in_other_block(%cu: memref<?xi32>, %n: index,
                                                %i: i32) {
  warpspec.kernel chip(sm_100a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s, %b = warpspec.acquire %c : !c
      warpspec.commit %s tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      %s, %b = warpspec.get %c : !c
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
          heads(%n) tokens(%n) block_size(64) {
        // expected-error @+1 {{'warpspec.release' op releases a slot that was not taken in the same block}}
        warpspec.release %s
      }
    }
  }
  return
}

// -----

// A get whose slot is never given back.
!c = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_get_never_released(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s, %b = warpspec.acquire %c : !c
      warpspec.commit %s tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      // expected-error @+1 {{'warpspec.get' op slot is never released}}
      %s, %b = warpspec.get %c : !c
    }
  }
  return
}

// -----

// One get, two releases.
!c = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_get_released_twice(%c: !c) {
  %s, %b = warpspec.get %c : !c
  warpspec.release %s
  // expected-error @+1 {{'warpspec.release' op releases a slot that is already released; each slot is released once}}
  warpspec.release %s after_mma
  return
}

// -----

// A get of the channel the enclosing consume iterates over takes a second
// slot of the ring while the consume's is held.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_get_inside_consume_of_same_channel(%i: i32) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %s, %b = warpspec.acquire %c : !c
      warpspec.commit %s tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%s, %row, %rows, %head, %b) : !c {
        // expected-error @+1 {{'warpspec.get' op takes a slot of the channel the enclosing warpspec.consume iterates over; the consume's own slot would never be released}}
        %s2, %x = warpspec.get %c : !c
        warpspec.release %s2
        warpspec.release %s
      }
    }
  }
  return
}

// -----

// The generic form cannot give get other results than the slot and the
// channel's buffers (InferTypeOpInterface checks them).
!c = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_get_result_types(%c: !c) {
  // expected-error @+2 {{'warpspec.get' op inferred type(s) '!warpspec.slot', '!warpspec.buffer<64x64xf32, tmem>' are incompatible with return type(s) of operation '!warpspec.slot', '!warpspec.buffer<64x64xf32, smem>'}}
  // expected-error @+1 {{'warpspec.get' op failed to infer returned types}}
  %s, %b = "warpspec.get"(%c) : (!c) -> (!warpspec.slot, !warpspec.buffer<64x64xf32, smem>)
  warpspec.release %s
  return
}

// -----

// The position is in the record the producer commits: a producer's own slot
// has none to read yet.
!c = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_tile_position_of_acquired_slot(%c: !c, %i: i32) {
  %s, %b = warpspec.acquire %c : !c
  // expected-error @+1 {{'warpspec.tile_position' op reads the position of a slot that the producer acquired; a consumer reads the position the producer committed with the slot}}
  %p = warpspec.tile_position %s
  warpspec.commit %s tile(%i, %i, %i) position(%p)
  return
}

// -----

// Issue 16's reproducer: partition "b" asks for the tile position of a slot
// of the channel that partition "a" consumes. With slots as values it cannot
// be written: the slot of "a" is not defined in "b" (before, this verified
// and the lowering failed with "operand #0 does not dominate this use").
!one = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_tile_position_of_another_partition(
    %cu: memref<?xi32>, %n: index) {
  warpspec.kernel chip(sm_90a) {
    %x = warpspec.channel "x" depth(1) : !one
    %y = warpspec.channel "y" depth(1) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head, %p) in %cu : memref<?xi32>
          heads(%n) tokens(%n) block_size(64) {
        %sx, %bx = warpspec.acquire %x : !one
        warpspec.commit %sx tile(%row, %rows, %head) position(%p)
        %sy, %by = warpspec.acquire %y : !one
        warpspec.commit %sy tile(%row, %rows, %head) position(%p)
      }
      warpspec.close %x : !one
      warpspec.close %y : !one
    }
    warpspec.partition "a" role(compute) warps(4) regs(200) {
      warpspec.consume %x (%xslot, %row, %rows, %head, %xt) : !one {
        warpspec.release %xslot
      }
    }
    warpspec.partition "b" role(compute) warps(4) regs(200) {
      warpspec.consume %y (%yslot, %row, %rows, %head, %yt) : !one {
        // expected-error @+1 {{use of undeclared SSA value name}}
        %pos = warpspec.tile_position %xslot
        warpspec.release %yslot
      }
    }
  }
  return
}
//===----------------------------------------------------------------------===//
// warpspec.scratch
//===----------------------------------------------------------------------===//

// -----

// Scratch buffers are in shared memory.
func.func @negative_scratch_tmem() {
  warpspec.kernel chip(sm_100a) {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      // expected-error @+1 {{'warpspec.scratch' op scratch buffers live in shared memory}}
      %s = warpspec.scratch : !warpspec.buffer<64x64xf32, tmem>
    }
  }
  return
}

// -----

// Scratch buffers are 2-D tiles.
func.func @negative_scratch_1d() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      // expected-error @+1 {{'warpspec.scratch' op scratch buffers are 2-D tiles}}
      %s = warpspec.scratch : !warpspec.buffer<4096xbf16, smem>
    }
  }
  return
}

// -----

// A scratch buffer belongs to one partition (one copy per replica).
func.func @negative_scratch_outside_partition() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.scratch' op expects parent op 'warpspec.partition'}}
    %s = warpspec.scratch : !warpspec.buffer<64x64xbf16, smem>
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// warpspec.tma_load
//===----------------------------------------------------------------------===//

// -----

// The source is [tokens, heads, head_dim]; a 2-D tensor has no heads.
func.func @negative_tma_load_rank2_source(%src: memref<?x128xbf16>, %i: i32,
                                          %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.tma_load' op source must be a rank-3 memref [tokens, heads, head_dim], got 'memref<?x128xbf16>'}}
  warpspec.tma_load %src[%i, %i] into %b
      : memref<?x128xbf16>, !warpspec.buffer<64x128xbf16, smem>
  return
}

// -----

// TMA writes shared memory, not tensor memory.
func.func @negative_tma_load_tmem_dest(%src: memref<?x4x128xbf16>, %i: i32,
                                       %b: !warpspec.buffer<64x128xbf16, tmem>) {
  // expected-error @+1 {{'warpspec.tma_load' op destination must be a shared-memory buffer}}
  warpspec.tma_load %src[%i, %i] into %b
      : memref<?x4x128xbf16>, !warpspec.buffer<64x128xbf16, tmem>
  return
}

// -----

// TMA copies, it does not convert: f16 into bf16.
func.func @negative_tma_load_element_mismatch(%src: memref<?x4x128xf16>, %i: i32,
                                              %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.tma_load' op source element type 'f16' differs from the buffer's 'bf16'}}
  warpspec.tma_load %src[%i, %i] into %b
      : memref<?x4x128xf16>, !warpspec.buffer<64x128xbf16, smem>
  return
}

// -----

// f32 tiles are not supported (the swizzled layout assumes 16-bit elements).
func.func @negative_tma_load_f32(%src: memref<?x4x128xf32>, %i: i32,
                                 %b: !warpspec.buffer<64x128xf32, smem>) {
  // expected-error @+1 {{'warpspec.tma_load' op only 16-bit elements are supported, got 'f32'}}
  warpspec.tma_load %src[%i, %i] into %b
      : memref<?x4x128xf32>, !warpspec.buffer<64x128xf32, smem>
  return
}

// -----

// The destination is a 2-D tile (rows x head_dim).
func.func @negative_tma_load_1d_dest(%src: memref<?x4x128xbf16>, %i: i32,
                                     %b: !warpspec.buffer<128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.tma_load' op destination must be a 2-D tile, got '!warpspec.buffer<128xbf16, smem>'}}
  warpspec.tma_load %src[%i, %i] into %b
      : memref<?x4x128xbf16>, !warpspec.buffer<128xbf16, smem>
  return
}

// -----

// A 64-column buffer cannot hold a 128-wide head.
func.func @negative_tma_load_columns_mismatch(%src: memref<?x4x128xbf16>, %i: i32,
                                              %b: !warpspec.buffer<64x64xbf16, smem>) {
  // expected-error @+1 {{'warpspec.tma_load' op buffer has 64 columns, but the source's head dimension is 128}}
  warpspec.tma_load %src[%i, %i] into %b
      : memref<?x4x128xbf16>, !warpspec.buffer<64x64xbf16, smem>
  return
}

// -----

// col_offset (a part of the head dimension): whole 64-column chunks of a
// 128-column buffer.
func.func @negative_tma_load_col_offset_unaligned(%src: memref<?x4x256xbf16>, %i: i32,
                                                  %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.tma_load' op col_offset 32 with a buffer of 128 columns must be a multiple of 64 and stay inside the source's static head dimension}}
  warpspec.tma_load %src[%i, %i] into %b {col_offset = 32 : i64}
      : memref<?x4x256xbf16>, !warpspec.buffer<64x128xbf16, smem>
  return
}

// -----

// col_offset: the columns must lie inside the source's head dimension.
func.func @negative_tma_load_col_offset_past_end(%src: memref<?x4x256xbf16>, %i: i32,
                                                 %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.tma_load' op col_offset 192 with a buffer of 128 columns must be a multiple of 64 and stay inside the source's static head dimension}}
  warpspec.tma_load %src[%i, %i] into %b {col_offset = 192 : i64}
      : memref<?x4x256xbf16>, !warpspec.buffer<64x128xbf16, smem>
  return
}

// -----

// col_offset: negative.
func.func @negative_tma_load_col_offset_negative(%src: memref<?x4x256xbf16>, %i: i32,
                                                 %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.tma_load' op col_offset -64 with a buffer of 128 columns must be a multiple of 64 and stay inside the source's static head dimension}}
  warpspec.tma_load %src[%i, %i] into %b {col_offset = -64 : i64}
      : memref<?x4x256xbf16>, !warpspec.buffer<64x128xbf16, smem>
  return
}

// -----

// col_offset with a dynamic head dimension: nothing to check it against.
func.func @negative_tma_load_col_offset_dynamic(%src: memref<?x4x?xbf16>, %i: i32,
                                                %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.tma_load' op col_offset 128 with a buffer of 128 columns must be a multiple of 64 and stay inside the source's static head dimension}}
  warpspec.tma_load %src[%i, %i] into %b {col_offset = 128 : i64}
      : memref<?x4x?xbf16>, !warpspec.buffer<64x128xbf16, smem>
  return
}

// -----

// pair_halves (a half-split pair's columns and their partners) loads pieces
// of a buffer with a chunk_cols layout, each an ordinary box.
func.func @negative_tma_load_pair_halves_no_pieces(%src: memref<?x4x256xbf16>, %i: i32,
                                                   %b: !warpspec.buffer<64x64xbf16, smem>) {
  // expected-error @+1 {{'warpspec.tma_load' op pair_halves loads pieces of a buffer with a chunk_cols layout, got '!warpspec.buffer<64x64xbf16, smem>'}}
  warpspec.tma_load %src[%i, %i] into %b {col_offset = 0 : i64, pair_halves}
      : memref<?x4x256xbf16>, !warpspec.buffer<64x64xbf16, smem>
  return
}

// -----

// pair_halves: whole pair-complete chunks (two pieces each), from a chunk's
// start, not from the middle of one.
func.func @negative_tma_load_pair_halves_offset(%src: memref<?x4x256xbf16>, %i: i32,
                                                %b: !warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>) {
  // expected-error @+1 {{'warpspec.tma_load' op pair_halves loads a buffer of whole 64-column chunks (two 32-column pieces) at a col_offset that is a multiple of 64 with its pieces inside the halves of a static head dim that is a multiple of 64, got '!warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>' at col_offset 32 of head dim 256}}
  warpspec.tma_load %src[%i, %i] into %b {col_offset = 32 : i64, pair_halves}
      : memref<?x4x256xbf16>, !warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>
  return
}

// -----

// pair_halves: the halves of the head dim must be whole pieces (a multiple
// of 64 columns in all).
func.func @negative_tma_load_pair_halves_head_dim(%src: memref<?x4x160xbf16>, %i: i32,
                                                  %b: !warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>) {
  // expected-error @+1 {{'warpspec.tma_load' op pair_halves loads a buffer of whole 64-column chunks (two 32-column pieces) at a col_offset that is a multiple of 64 with its pieces inside the halves of a static head dim that is a multiple of 64, got '!warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>' at col_offset 64 of head dim 160}}
  warpspec.tma_load %src[%i, %i] into %b {col_offset = 64 : i64, pair_halves}
      : memref<?x4x160xbf16>, !warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>
  return
}

// -----

// A prefetch of pair-complete chunks follows the same rules.
func.func @negative_tma_prefetch_pair_halves_no_pieces(%src: memref<?x4x256xbf16>, %i: i32) {
  // expected-error @+1 {{'warpspec.tma_prefetch' op pair_halves loads pieces of a buffer with a chunk_cols layout, got '!warpspec.buffer<64x64xbf16, smem>'}}
  warpspec.tma_prefetch %src[%i, %i] {col_offset = 0 : i64, pair_halves}
      : memref<?x4x256xbf16>, !warpspec.buffer<64x64xbf16, smem>
  return
}

// -----

// pair_halves into 16-column pieces (chunk_cols = 16, head dim 96): whole
// pair-complete 32-column chunks, from a col_offset that is a multiple of 32.
func.func @negative_tma_load_pair_halves_16_offset(%src: memref<?x4x96xbf16>, %i: i32,
                                                   %b: !warpspec.buffer<64x32xbf16, smem, chunk_cols = 16>) {
  // expected-error @+1 {{'warpspec.tma_load' op pair_halves loads a buffer of whole 32-column chunks (two 16-column pieces) at a col_offset that is a multiple of 32 with its pieces inside the halves of a static head dim that is a multiple of 32, got '!warpspec.buffer<64x32xbf16, smem, chunk_cols = 16>' at col_offset 16 of head dim 96}}
  warpspec.tma_load %src[%i, %i] into %b {col_offset = 16 : i64, pair_halves}
      : memref<?x4x96xbf16>, !warpspec.buffer<64x32xbf16, smem, chunk_cols = 16>
  return
}

// -----

// The head dimension must be static to match the buffer.
func.func @negative_tma_load_dynamic_head_dim(%src: memref<?x4x?xbf16>, %i: i32,
                                              %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.tma_load' op buffer has 128 columns, but the source's head dimension is dynamic}}
  warpspec.tma_load %src[%i, %i] into %b
      : memref<?x4x?xbf16>, !warpspec.buffer<64x128xbf16, smem>
  return
}

// -----

// 48 columns of bf16 are one and a half 64-byte swizzle chunks.
func.func @negative_tma_load_partial_chunk(%src: memref<?x4x48xbf16>, %i: i32,
                                           %b: !warpspec.buffer<64x48xbf16, smem>) {
  // expected-error @+1 {{'warpspec.tma_load' op the head dimension must be a multiple of 32 elements (whole 64- or 128-byte swizzled chunks), got 48}}
  warpspec.tma_load %src[%i, %i] into %b
      : memref<?x4x48xbf16>, !warpspec.buffer<64x48xbf16, smem>
  return
}

// -----

// A TMA box is at most 256 rows.
func.func @negative_tma_load_too_many_rows(%src: memref<?x4x64xbf16>, %i: i32,
                                           %b: !warpspec.buffer<512x64xbf16, smem>) {
  // expected-error @+1 {{'warpspec.tma_load' op a TMA box has at most 256 rows, got 512}}
  warpspec.tma_load %src[%i, %i] into %b
      : memref<?x4x64xbf16>, !warpspec.buffer<512x64xbf16, smem>
  return
}

// -----

// A well-formed buffer that is not a slot acquired by the producer: the
// copy could not complete on a slot's barrier.
func.func @negative_tma_load_not_acquired(%src: memref<?x4x128xbf16>, %i: i32,
                                          %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.tma_load' op destination must be a buffer of a slot acquired by the producer}}
  warpspec.tma_load %src[%i, %i] into %b
      : memref<?x4x128xbf16>, !warpspec.buffer<64x128xbf16, smem>
  return
}

//===----------------------------------------------------------------------===//
// warpspec.mma
//===----------------------------------------------------------------------===//

// -----

// A is a register tile of one dimension.
func.func @negative_mma_1d_a(%a: !warpspec.acc<64xbf16>,
                             %b: !warpspec.buffer<64x64xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op operands must be 2-D tiles}}
  %d = warpspec.mma %a, %b : !warpspec.acc<64xbf16>, !warpspec.buffer<64x64xbf16, smem>
      -> !warpspec.acc<64x64xf32>
  return
}

// -----

// B is a buffer of one dimension.
func.func @negative_mma_1d_b(%a: !warpspec.buffer<64x64xbf16, smem>,
                             %b: !warpspec.buffer<64xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op operands must be 2-D tiles}}
  %d = warpspec.mma %a, %b : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64xbf16, smem>
      -> !warpspec.acc<64x64xf32>
  return
}

// -----

// The result is a register tile of one dimension.
func.func @negative_mma_1d_result(%a: !warpspec.buffer<64x64xbf16, smem>,
                                  %b: !warpspec.buffer<64x64xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op operands must be 2-D tiles}}
  %d = warpspec.mma %a, %b : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x64xbf16, smem>
      -> !warpspec.acc<4096xf32>
  return
}

// -----

// A and B differ in element type (bf16 vs f16).
func.func @negative_mma_element_mismatch(%a: !warpspec.buffer<64x64xbf16, smem>,
                                         %b: !warpspec.buffer<64x64xf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op A and B must have the same 16-bit element type, got 'bf16' and 'f16'}}
  %d = warpspec.mma %a, %b : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x64xf16, smem>
      -> !warpspec.acc<64x64xf32>
  return
}

// -----

// f32 operands (tf32 MMAs) are not supported.
func.func @negative_mma_f32_operands(%a: !warpspec.buffer<64x64xf32, smem>,
                                     %b: !warpspec.buffer<64x64xf32, smem>) {
  // expected-error @+1 {{'warpspec.mma' op A and B must have the same 16-bit element type, got 'f32' and 'f32'}}
  %d = warpspec.mma %a, %b : !warpspec.buffer<64x64xf32, smem>, !warpspec.buffer<64x64xf32, smem>
      -> !warpspec.acc<64x64xf32>
  return
}

// -----

// Accumulation is in f32, not f16.
func.func @negative_mma_f16_accumulator(%a: !warpspec.buffer<64x64xbf16, smem>,
                                        %b: !warpspec.buffer<64x64xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op the accumulator must be f32}}
  %d = warpspec.mma %a, %b : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x64xbf16, smem>
      -> !warpspec.acc<64x64xf16>
  return
}

// -----

// A is 64x128 but B (not transposed) has 64 rows: K differs.
func.func @negative_mma_k_mismatch(%a: !warpspec.buffer<64x128xbf16, smem>,
                                   %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op A is 64x128 but B has 64 rows along K}}
  %d = warpspec.mma %a, %b : !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>
      -> !warpspec.acc<64x128xf32>
  return
}

// -----

// With transpose_b, K is B's second dimension: 64, not 128.
func.func @negative_mma_k_mismatch_transposed(%a: !warpspec.buffer<64x128xbf16, smem>,
                                              %b: !warpspec.buffer<128x64xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op A is 64x128 but B has 64 rows along K (transpose_b)}}
  %d = warpspec.mma %a, %b {transpose_b} : !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<128x64xbf16, smem>
      -> !warpspec.acc<64x128xf32>
  return
}

// -----

// Q K^T of 64x128 tiles is 64x64, not 64x128.
func.func @negative_mma_result_shape(%a: !warpspec.buffer<64x128xbf16, smem>,
                                     %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op result must be 64x64}}
  %d = warpspec.mma %a, %b {transpose_b} : !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>
      -> !warpspec.acc<64x128xf32>
  return
}

// -----

// One warpgroup's wgmma tile has 64 rows, not 128.
func.func @negative_mma_m128(%a: !warpspec.buffer<128x64xbf16, smem>,
                             %b: !warpspec.buffer<64x64xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op M must be 64 (one warpgroup's tile), got 128}}
  %d = warpspec.mma %a, %b : !warpspec.buffer<128x64xbf16, smem>, !warpspec.buffer<64x64xbf16, smem>
      -> !warpspec.acc<128x64xf32>
  return
}

// -----

// N = 12 is not a multiple of 8.
func.func @negative_mma_n_not_multiple_of_8(%a: !warpspec.buffer<64x64xbf16, smem>,
                                            %b: !warpspec.buffer<64x12xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op N must be a multiple of 8 up to 256 and K a multiple of 16, got N=12 K=64}}
  %d = warpspec.mma %a, %b : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x12xbf16, smem>
      -> !warpspec.acc<64x12xf32>
  return
}

// -----

// N = 512 is more than one wgmma can produce.
func.func @negative_mma_n_too_large(%a: !warpspec.buffer<64x64xbf16, smem>,
                                    %b: !warpspec.buffer<64x512xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op N must be a multiple of 8 up to 256 and K a multiple of 16, got N=512 K=64}}
  %d = warpspec.mma %a, %b : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x512xbf16, smem>
      -> !warpspec.acc<64x512xf32>
  return
}

// -----

// K = 8 is not a multiple of the 16-element wgmma K step.
func.func @negative_mma_k_not_multiple_of_16(%a: !warpspec.acc<64x8xbf16>,
                                             %b: !warpspec.buffer<8x64xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op N must be a multiple of 8 up to 256 and K a multiple of 16, got N=64 K=8}}
  %d = warpspec.mma %a, %b : !warpspec.acc<64x8xbf16>, !warpspec.buffer<8x64xbf16, smem>
      -> !warpspec.acc<64x64xf32>
  return
}

// -----

// A buffer A operand in tensor memory.
func.func @negative_mma_a_in_tmem(%a: !warpspec.buffer<64x64xbf16, tmem>,
                                  %b: !warpspec.buffer<64x64xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op a buffer A operand must be in shared memory}}
  %d = warpspec.mma %a, %b : !warpspec.buffer<64x64xbf16, tmem>, !warpspec.buffer<64x64xbf16, smem>
      -> !warpspec.acc<64x64xf32>
  return
}

// -----

// B in tensor memory.
func.func @negative_mma_b_in_tmem(%a: !warpspec.acc<64x64xbf16>,
                                  %b: !warpspec.buffer<64x64xbf16, tmem>) {
  // expected-error @+1 {{'warpspec.mma' op B must be in shared memory}}
  %d = warpspec.mma %a, %b : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xbf16, tmem>
      -> !warpspec.acc<64x64xf32>
  return
}

// -----

// transpose_a selects the major-ness the tensor cores read a shared-memory A
// with; a register A (the 16-bit tile a softmax or softmax_grad produced) has
// the fixed K-major fragment layout of wgmma, so it cannot be transposed.
func.func @negative_mma_transpose_a_register(%a: !warpspec.acc<64x64xbf16>,
                                             %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op transpose_a needs A in shared memory: a register A operand is always K-major}}
  %d = warpspec.mma %a, %b {transpose_a}
      : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x128xbf16, smem> -> !warpspec.acc<64x128xf32>
  return
}

// -----

// With transpose_a, A is stored K x M: a 128x64 buffer is M=64, K=128, and
// B (64 rows) does not match that K.
func.func @negative_mma_transpose_a_k_mismatch(%a: !warpspec.buffer<128x64xbf16, smem>,
                                               %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op A is 64x128 but B has 64 rows along K}}
  %d = warpspec.mma %a, %b {transpose_a}
      : !warpspec.buffer<128x64xbf16, smem>, !warpspec.buffer<64x128xbf16, smem> -> !warpspec.acc<64x128xf32>
  return
}

// -----

// With transpose_a, M is A's second dimension: a 64x128 buffer gives
// M = 128, more than one warpgroup's 64 rows (the result matches it).
func.func @negative_mma_transpose_a_m(%a: !warpspec.buffer<64x128xbf16, smem>,
                                      %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op M must be 64 (one warpgroup's tile), got 128}}
  %d = warpspec.mma %a, %b {transpose_a}
      : !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem> -> !warpspec.acc<128x128xf32>
  return
}

// -----

// With transpose_a the result is M x N with M taken from A's columns: a
// 64x64 P^T dO is 64x128, not the 64x64 of A's stored shape.
func.func @negative_mma_transpose_a_result(%a: !warpspec.buffer<64x64xbf16, smem>,
                                           %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.mma' op result must be 64x128}}
  %d = warpspec.mma %a, %b {transpose_a}
      : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x128xbf16, smem> -> !warpspec.acc<64x64xf32>
  return
}

//===----------------------------------------------------------------------===//
// warpspec.mma_async
//===----------------------------------------------------------------------===//

// -----

// A is a tile, not a row.
func.func @negative_mma_async_1d(%a: !warpspec.buffer<64xbf16, smem>,
                                 %b: !warpspec.buffer<64x64xbf16, smem>,
                                 %d: !warpspec.buffer<64x64xf32, tmem>) {
  // expected-error @+1 {{'warpspec.mma_async' op operands must be 2-D tiles}}
  warpspec.mma_async %a, %b into %d
      : !warpspec.buffer<64xbf16, smem>, !warpspec.buffer<64x64xbf16, smem>,
        !warpspec.buffer<64x64xf32, tmem>
  return
}

// -----

// The accumulator is in tensor memory, not shared memory.
func.func @negative_mma_async_dest_smem(%a: !warpspec.buffer<64x64xbf16, smem>,
                                        %d: !warpspec.buffer<64x64xf32, smem>) {
  // expected-error @+1 {{'warpspec.mma_async' op the destination must be an f32 tensor-memory buffer, got '!warpspec.buffer<64x64xf32, smem>'}}
  warpspec.mma_async %a, %a into %d {transpose_b}
      : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x64xbf16, smem>,
        !warpspec.buffer<64x64xf32, smem>
  return
}

// -----

// Accumulation is in f32: not a bf16 destination.
func.func @negative_mma_async_dest_bf16(%a: !warpspec.buffer<64x64xbf16, smem>,
                                        %d: !warpspec.buffer<64x64xbf16, tmem>) {
  // expected-error @+1 {{'warpspec.mma_async' op the destination must be an f32 tensor-memory buffer, got '!warpspec.buffer<64x64xbf16, tmem>'}}
  warpspec.mma_async %a, %a into %d {transpose_b}
      : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x64xbf16, smem>,
        !warpspec.buffer<64x64xbf16, tmem>
  return
}

// -----

// Only A may come from tensor memory; B is always a shared-memory operand.
func.func @negative_mma_async_b_tmem(%a: !warpspec.buffer<64x64xbf16, smem>,
                                     %b: !warpspec.buffer<64x64xbf16, tmem>,
                                     %d: !warpspec.buffer<64x64xf32, tmem>) {
  // expected-error @+1 {{'warpspec.mma_async' op B must be in shared memory}}
  warpspec.mma_async %a, %b into %d
      : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x64xbf16, tmem>,
        !warpspec.buffer<64x64xf32, tmem>
  return
}

// -----

// A in tensor memory is read K-major: it cannot be transposed.
func.func @negative_mma_async_tmem_a_transposed(%a: !warpspec.buffer<64x64xbf16, tmem>,
                                                %b: !warpspec.buffer<64x64xbf16, smem>,
                                                %d: !warpspec.buffer<64x64xf32, tmem>) {
  // expected-error @+1 {{'warpspec.mma_async' op an A operand in tensor memory is always K-major: transpose_a needs A in shared memory}}
  warpspec.mma_async %a, %b into %d {transpose_a}
      : !warpspec.buffer<64x64xbf16, tmem>, !warpspec.buffer<64x64xbf16, smem>,
        !warpspec.buffer<64x64xf32, tmem>
  return
}

// -----

// A and B differ in element type (f16 vs bf16).
func.func @negative_mma_async_mixed_types(%a: !warpspec.buffer<64x64xf16, smem>,
                                          %b: !warpspec.buffer<64x64xbf16, smem>,
                                          %d: !warpspec.buffer<64x64xf32, tmem>) {
  // expected-error @+1 {{'warpspec.mma_async' op A and B must have the same 16-bit element type, got 'f16' and 'bf16'}}
  warpspec.mma_async %a, %b into %d {transpose_b}
      : !warpspec.buffer<64x64xf16, smem>, !warpspec.buffer<64x64xbf16, smem>,
        !warpspec.buffer<64x64xf32, tmem>
  return
}

// -----

// f32 operands (kind::tf32) are not supported.
func.func @negative_mma_async_f32_operands(%a: !warpspec.buffer<64x64xf32, smem>,
                                           %d: !warpspec.buffer<64x64xf32, tmem>) {
  // expected-error @+1 {{'warpspec.mma_async' op A and B must have the same 16-bit element type, got 'f32' and 'f32'}}
  warpspec.mma_async %a, %a into %d {transpose_b}
      : !warpspec.buffer<64x64xf32, smem>, !warpspec.buffer<64x64xf32, smem>,
        !warpspec.buffer<64x64xf32, tmem>
  return
}

// -----

// A is 64x128 but B (not transposed) has 64 rows: K differs.
func.func @negative_mma_async_k_mismatch(%a: !warpspec.buffer<64x128xbf16, smem>,
                                         %b: !warpspec.buffer<64x128xbf16, smem>,
                                         %d: !warpspec.buffer<64x128xf32, tmem>) {
  // expected-error @+1 {{'warpspec.mma_async' op A is 64x128 but B has 64 rows along K}}
  warpspec.mma_async %a, %b into %d
      : !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>,
        !warpspec.buffer<64x128xf32, tmem>
  return
}

// -----

// With transpose_a, A is stored K x M: a 64x64 P is M = 64, K = 64, and
// dO (64 rows) matches; the result is 64 x 128, not 64 x 64.
func.func @negative_mma_async_dest_shape(%p: !warpspec.buffer<64x64xbf16, smem>,
                                         %dout: !warpspec.buffer<64x128xbf16, smem>,
                                         %d: !warpspec.buffer<64x64xf32, tmem>) {
  // expected-error @+1 {{'warpspec.mma_async' op the destination must be 64x128}}
  warpspec.mma_async %p, %dout into %d {transpose_a}
      : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>,
        !warpspec.buffer<64x64xf32, tmem>
  return
}

// -----

// M = 128 is a tcgen05.mma shape, but not this lowering's (M = 64 only: the
// accumulators use half the lanes, two share their columns).
func.func @negative_mma_async_m128(%a: !warpspec.buffer<128x64xbf16, smem>,
                                   %b: !warpspec.buffer<64x64xbf16, smem>,
                                   %d: !warpspec.buffer<128x64xf32, tmem>) {
  // expected-error @+1 {{'warpspec.mma_async' op tcgen05.mma with M = 64 needs N a multiple of 8 up to 256 and K a multiple of 16, got M=128 N=64 K=64}}
  warpspec.mma_async %a, %b into %d {transpose_b}
      : !warpspec.buffer<128x64xbf16, smem>, !warpspec.buffer<64x64xbf16, smem>,
        !warpspec.buffer<128x64xf32, tmem>
  return
}

// -----

// N = 12 is not a multiple of 8.
func.func @negative_mma_async_n12(%a: !warpspec.buffer<64x64xbf16, smem>,
                                  %b: !warpspec.buffer<12x64xbf16, smem>,
                                  %d: !warpspec.buffer<64x12xf32, tmem>) {
  // expected-error @+1 {{'warpspec.mma_async' op tcgen05.mma with M = 64 needs N a multiple of 8 up to 256 and K a multiple of 16, got M=64 N=12 K=64}}
  warpspec.mma_async %a, %b into %d {transpose_b}
      : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<12x64xbf16, smem>,
        !warpspec.buffer<64x12xf32, tmem>
  return
}

// -----

// N = 512 is more than one tcgen05.mma produces.
func.func @negative_mma_async_n512(%a: !warpspec.buffer<64x64xbf16, smem>,
                                   %b: !warpspec.buffer<64x512xbf16, smem>,
                                   %d: !warpspec.buffer<64x512xf32, tmem>) {
  // expected-error @+1 {{'warpspec.mma_async' op tcgen05.mma with M = 64 needs N a multiple of 8 up to 256 and K a multiple of 16, got M=64 N=512 K=64}}
  warpspec.mma_async %a, %b into %d
      : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x512xbf16, smem>,
        !warpspec.buffer<64x512xf32, tmem>
  return
}

// -----

// K = 8 is half the K = 16 of one instruction.
func.func @negative_mma_async_k8(%a: !warpspec.buffer<64x8xbf16, smem>,
                                 %b: !warpspec.buffer<64x8xbf16, smem>,
                                 %d: !warpspec.buffer<64x64xf32, tmem>) {
  // expected-error @+1 {{'warpspec.mma_async' op tcgen05.mma with M = 64 needs N a multiple of 8 up to 256 and K a multiple of 16, got M=64 N=64 K=8}}
  warpspec.mma_async %a, %b into %d {transpose_b}
      : !warpspec.buffer<64x8xbf16, smem>, !warpspec.buffer<64x8xbf16, smem>,
        !warpspec.buffer<64x64xf32, tmem>
  return
}

//===----------------------------------------------------------------------===//
// warpspec.tmem_load
//===----------------------------------------------------------------------===//

// -----

// The source is a tensor-memory buffer, not a shared-memory one.
func.func @negative_tmem_load_smem(%b: !warpspec.buffer<64x64xf32, smem>) {
  // expected-error @+1 {{'warpspec.tmem_load' op the source must be an f32 tensor-memory buffer}}
  %s = warpspec.tmem_load %b : !warpspec.buffer<64x64xf32, smem> -> !warpspec.acc<64x64xf32>
  return
}

// -----

// Accumulators are f32; a packed bf16 P is written, not read back.
func.func @negative_tmem_load_bf16(%b: !warpspec.buffer<64x64xbf16, tmem>) {
  // expected-error @+1 {{'warpspec.tmem_load' op the source must be an f32 tensor-memory buffer}}
  %s = warpspec.tmem_load %b : !warpspec.buffer<64x64xbf16, tmem> -> !warpspec.acc<64x64xbf16>
  return
}

// -----

// The register tile has the buffer's shape: 64x64, not 64x128.
func.func @negative_tmem_load_result_shape(%b: !warpspec.buffer<64x64xf32, tmem>) {
  // expected-error @+1 {{'warpspec.tmem_load' op the result must be an f32 tile of the buffer's shape}}
  %s = warpspec.tmem_load %b : !warpspec.buffer<64x64xf32, tmem> -> !warpspec.acc<64x128xf32>
  return
}

// -----

// The load does not convert: an f32 buffer gives an f32 tile.
func.func @negative_tmem_load_result_f16(%b: !warpspec.buffer<64x64xf32, tmem>) {
  // expected-error @+1 {{'warpspec.tmem_load' op the result must be an f32 tile of the buffer's shape}}
  %s = warpspec.tmem_load %b : !warpspec.buffer<64x64xf32, tmem> -> !warpspec.acc<64x64xf16>
  return
}

// -----

// An M = 128 accumulator (all lanes) is not the M = 64 layout the load reads.
func.func @negative_tmem_load_128_rows(%b: !warpspec.buffer<128x64xf32, tmem>) {
  // expected-error @+1 {{'warpspec.tmem_load' op tensor-memory tiles have 64 rows and a multiple of 8 columns}}
  %s = warpspec.tmem_load %b : !warpspec.buffer<128x64xf32, tmem> -> !warpspec.acc<128x64xf32>
  return
}

// -----

// 12 columns are not whole 8-column groups of the 16x256b shape.
func.func @negative_tmem_load_12_columns(%b: !warpspec.buffer<64x12xf32, tmem>) {
  // expected-error @+1 {{'warpspec.tmem_load' op tensor-memory tiles have 64 rows and a multiple of 8 columns}}
  %s = warpspec.tmem_load %b : !warpspec.buffer<64x12xf32, tmem> -> !warpspec.acc<64x12xf32>
  return
}

// -----

// 512 columns would be .x64 (256 registers per thread): 16x256b stops at
// .x32.
func.func @negative_tmem_load_512_columns(%b: !warpspec.buffer<64x512xf32, tmem>) {
  // expected-error @+1 {{'warpspec.tmem_load' op tcgen05.ld 16x256b reads at most 256 columns (128 registers a thread), got 512}}
  %s = warpspec.tmem_load %b : !warpspec.buffer<64x512xf32, tmem> -> !warpspec.acc<64x512xf32>
  return
}

//===----------------------------------------------------------------------===//
// warpspec.tmem_store
//===----------------------------------------------------------------------===//

// -----

// tmem_store writes tensor memory; warpspec.write writes shared memory.
func.func @negative_tmem_store_smem(%v: !warpspec.acc<64x64xbf16>,
                                    %b: !warpspec.buffer<64x64xbf16, smem>) {
  // expected-error @+1 {{'warpspec.tmem_store' op the destination must be in tensor memory}}
  warpspec.tmem_store %v, %b : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xbf16, smem>
  return
}

// -----

// The stored tile is the 16-bit A operand (P), not an f32 accumulator.
func.func @negative_tmem_store_f32(%v: !warpspec.acc<64x64xf32>,
                                   %b: !warpspec.buffer<64x64xf32, tmem>) {
  // expected-error @+1 {{'warpspec.tmem_store' op stores a 16-bit tile into a buffer of its shape and element type (P for a tensor-memory A operand)}}
  warpspec.tmem_store %v, %b : !warpspec.acc<64x64xf32>, !warpspec.buffer<64x64xf32, tmem>
  return
}

// -----

// No conversion: bf16 into f16.
func.func @negative_tmem_store_element_mismatch(%v: !warpspec.acc<64x64xbf16>,
                                                %b: !warpspec.buffer<64x64xf16, tmem>) {
  // expected-error @+1 {{'warpspec.tmem_store' op stores a 16-bit tile into a buffer of its shape and element type (P for a tensor-memory A operand)}}
  warpspec.tmem_store %v, %b : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xf16, tmem>
  return
}

// -----

// Nor reshaping: 64x64 into 64x128.
func.func @negative_tmem_store_shape_mismatch(%v: !warpspec.acc<64x64xbf16>,
                                              %b: !warpspec.buffer<64x128xbf16, tmem>) {
  // expected-error @+1 {{'warpspec.tmem_store' op stores a 16-bit tile into a buffer of its shape and element type (P for a tensor-memory A operand)}}
  warpspec.tmem_store %v, %b : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x128xbf16, tmem>
  return
}

// -----

// 128 rows: not the M = 64 layout.
func.func @negative_tmem_store_128_rows(%v: !warpspec.acc<128x64xbf16>,
                                        %b: !warpspec.buffer<128x64xbf16, tmem>) {
  // expected-error @+1 {{'warpspec.tmem_store' op tensor-memory tiles have 64 rows and a multiple of 16 columns here}}
  warpspec.tmem_store %v, %b : !warpspec.acc<128x64xbf16>, !warpspec.buffer<128x64xbf16, tmem>
  return
}

// -----

// 8 columns are half a K = 16 step of the MMA that reads P.
func.func @negative_tmem_store_8_columns(%v: !warpspec.acc<64x8xbf16>,
                                         %b: !warpspec.buffer<64x8xbf16, tmem>) {
  // expected-error @+1 {{'warpspec.tmem_store' op tensor-memory tiles have 64 rows and a multiple of 16 columns here}}
  warpspec.tmem_store %v, %b : !warpspec.acc<64x8xbf16>, !warpspec.buffer<64x8xbf16, tmem>
  return
}

// -----

// 48 columns would be tcgen05.st .x6: not a power of two.
func.func @negative_tmem_store_48_columns(%v: !warpspec.acc<64x48xbf16>,
                                          %b: !warpspec.buffer<64x48xbf16, tmem>) {
  // expected-error @+1 {{'warpspec.tmem_store' op tcgen05.st 16x128b writes 16, 32, 64, 128, 256 or 512 columns of 16-bit elements, got 48}}
  warpspec.tmem_store %v, %b : !warpspec.acc<64x48xbf16>, !warpspec.buffer<64x48xbf16, tmem>
  return
}

// -----

// 1024 columns would be .x128: 16x128b stops at .x64.
func.func @negative_tmem_store_1024_columns(%v: !warpspec.acc<64x1024xbf16>,
                                            %b: !warpspec.buffer<64x1024xbf16, tmem>) {
  // expected-error @+1 {{'warpspec.tmem_store' op tcgen05.st 16x128b writes 16, 32, 64, 128, 256 or 512 columns of 16-bit elements, got 1024}}
  warpspec.tmem_store %v, %b : !warpspec.acc<64x1024xbf16>, !warpspec.buffer<64x1024xbf16, tmem>
  return
}

//===----------------------------------------------------------------------===//
// warpspec.softmax
//===----------------------------------------------------------------------===//

// -----

// Scores are the f32 accumulator of Q K^T, not bf16.
func.func @negative_softmax_bf16_scores(%s: !warpspec.acc<64x64xbf16>, %n: i32,
                                        %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op scores must be a 2-D f32 tile}}
  %p, %l = warpspec.softmax %s valid_cols(%n) scale(%scale)
      : !warpspec.acc<64x64xbf16> -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
  return
}

// -----

// P has the shape of S.
func.func @negative_softmax_probs_shape(%s: !warpspec.acc<64x64xf32>, %n: i32,
                                        %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op probabilities must have the scores' shape}}
  %p, %l = warpspec.softmax %s valid_cols(%n) scale(%scale)
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x128xbf16>, !warpspec.rows<64xf32>
  return
}

// -----

// P is a float tile, not i16.
func.func @negative_softmax_probs_integer(%s: !warpspec.acc<64x64xf32>, %n: i32,
                                          %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op probabilities must be bf16, f16 or f32}}
  %p, %l = warpspec.softmax %s valid_cols(%n) scale(%scale)
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xi16>, !warpspec.rows<64xf32>
  return
}

// -----

// One row sum per row of S: 32 is not 64.
func.func @negative_softmax_row_sums_count(%s: !warpspec.acc<64x64xf32>, %n: i32,
                                           %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op row sums must be !warpspec.rows<64xf32>}}
  %p, %l = warpspec.softmax %s valid_cols(%n) scale(%scale)
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>, !warpspec.rows<32xf32>
  return
}

// -----

// Row sums are accumulated in f32, not bf16.
func.func @negative_softmax_row_sums_bf16(%s: !warpspec.acc<64x64xf32>, %n: i32,
                                          %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op row sums must be !warpspec.rows<64xf32>}}
  %p, %l = warpspec.softmax %s valid_cols(%n) scale(%scale)
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xbf16>
  return
}

// -----

// warpspec.mask_blocks: the ends of 2 to 4 blocks, a byte each.
func.func @negative_mask_blocks_8(%s: !warpspec.acc<64x64xf32>, %e: i32) {
  // expected-error @+1 {{'warpspec.mask_blocks' op block(8) must be a power of two that cuts the square tile (64x64) into 2 to 4 blocks}}
  %m = warpspec.mask_blocks %s ends(%e) block(8) : !warpspec.acc<64x64xf32>
  return
}

// -----

// A block mask's blocks tile the diagonal: 48 rows do not divide 64.
func.func @negative_softmax_block_48(%s: !warpspec.acc<64x64xf32>, %n: i32,
                                     %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op block(48) must be a power of two below the tile's 64 rows that divides its rows and 64 columns}}
  %p, %l = warpspec.softmax %s valid_cols(%n) scale(%scale) block(48)
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
  return
}

// -----

// A block of the whole tile masks nothing: the attribute is left out then.
func.func @negative_softmax_block_whole_tile(%s: !warpspec.acc<64x64xf32>, %n: i32,
                                             %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op block(64) must be a power of two below the tile's 64 rows that divides its rows and 64 columns}}
  %p, %l = warpspec.softmax %s valid_cols(%n) scale(%scale) block(64)
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
  return
}

// -----

// Blocks are at least one row.
func.func @negative_softmax_block_zero(%s: !warpspec.acc<64x64xf32>, %n: i32,
                                       %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op block(0) must be a power of two below the tile's 64 rows that divides its rows and 64 columns}}
  %p, %l = warpspec.softmax %s valid_cols(%n) scale(%scale) block(0)
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
  return
}

// -----

// The columns are cut into the same blocks as the rows: 16 does not divide
// a tile of 40 columns.
func.func @negative_softmax_block_columns(%s: !warpspec.acc<64x40xf32>, %n: i32,
                                          %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax' op block(16) must be a power of two below the tile's 64 rows that divides its rows and 40 columns}}
  %p, %l = warpspec.softmax %s valid_cols(%n) scale(%scale) block(16)
      : !warpspec.acc<64x40xf32> -> !warpspec.acc<64x40xbf16>, !warpspec.rows<64xf32>
  return
}

// -----

// valid_rows is an i32 row count, like valid_cols (the custom form gives it
// no type: an index value is a type mismatch).
func.func @negative_softmax_valid_rows_index(%s: !warpspec.acc<64x64xf32>, %n: i32,
                                             %r: index, %scale: f32) {
  // expected-note @-1 {{prior use here}}
  // expected-error @+1 {{use of value '%r' expects different type than prior uses: 'i32' vs 'index'}}
  %p, %l = warpspec.softmax %s valid_cols(%n) valid_rows(%r) scale(%scale) normalize
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xf32>, !warpspec.rows<64xf32>
  return
}

// -----

// normalize is a keyword after the scale, not before it.
func.func @negative_softmax_normalize_position(%s: !warpspec.acc<64x64xf32>, %n: i32,
                                               %scale: f32) {
  // expected-error @+1 {{expected 'scale'}}
  %p, %l = warpspec.softmax %s valid_cols(%n) normalize scale(%scale)
      : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xf32>, !warpspec.rows<64xf32>
  return
}

//===----------------------------------------------------------------------===//
// warpspec.softmax_grad
//===----------------------------------------------------------------------===//

// -----

// 16-bit P (widened as it is read) is still P's elementwise partner of dP:
// 64x64 and 64x128 differ.
func.func @negative_softmax_grad_bf16_probs(%p: !warpspec.acc<64x64xbf16>,
                                            %dp: !warpspec.acc<64x128xf32>,
                                            %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax_grad' op probabilities and their gradient must be tiles of one shape, the gradient f32 and the probabilities f32, bf16 or f16}}
  %ds = warpspec.softmax_grad %p, %dp scale(%scale)
      : !warpspec.acc<64x64xbf16>, !warpspec.acc<64x128xf32> -> !warpspec.acc<64x64xbf16>
  return
}

// -----

// dP = dO V^T is the f32 accumulator of an MMA, not a 16-bit tile.
func.func @negative_softmax_grad_f16_dprobs(%p: !warpspec.acc<64x64xf32>,
                                            %dp: !warpspec.acc<64x64xf16>,
                                            %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax_grad' op probabilities and their gradient must be tiles of one shape, the gradient f32 and the probabilities f32, bf16 or f16}}
  %ds = warpspec.softmax_grad %p, %dp scale(%scale)
      : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf16> -> !warpspec.acc<64x64xf16>
  return
}

// -----

// P and dP are elementwise partners: 64x64 and 64x128 differ.
func.func @negative_softmax_grad_shape_mismatch(%p: !warpspec.acc<64x64xf32>,
                                                %dp: !warpspec.acc<64x128xf32>,
                                                %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax_grad' op probabilities and their gradient must be tiles of one shape, the gradient f32 and the probabilities f32, bf16 or f16}}
  %ds = warpspec.softmax_grad %p, %dp scale(%scale)
      : !warpspec.acc<64x64xf32>, !warpspec.acc<64x128xf32> -> !warpspec.acc<64x64xbf16>
  return
}

// -----

// Rows are reduced, so the tiles are 2-D (matching 1-D tiles are not).
func.func @negative_softmax_grad_1d(%p: !warpspec.acc<64xf32>,
                                    %dp: !warpspec.acc<64xf32>, %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax_grad' op probabilities and their gradient must be tiles of one shape, the gradient f32 and the probabilities f32, bf16 or f16}}
  %ds = warpspec.softmax_grad %p, %dp scale(%scale)
      : !warpspec.acc<64xf32>, !warpspec.acc<64xf32> -> !warpspec.acc<64xbf16>
  return
}

// -----

// dS has the shape of P: 64x64, not 64x128.
func.func @negative_softmax_grad_result_shape(%p: !warpspec.acc<64x64xf32>,
                                              %dp: !warpspec.acc<64x64xf32>,
                                              %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax_grad' op the result must have the probabilities' shape}}
  %ds = warpspec.softmax_grad %p, %dp scale(%scale)
      : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32> -> !warpspec.acc<64x128xbf16>
  return
}

// -----

// dS is a float tile (the A operand of dK and dQ, or f32): not i16.
func.func @negative_softmax_grad_result_integer(%p: !warpspec.acc<64x64xf32>,
                                                %dp: !warpspec.acc<64x64xf32>,
                                                %scale: f32) {
  // expected-error @+1 {{'warpspec.softmax_grad' op the result must be bf16, f16 or f32}}
  %ds = warpspec.softmax_grad %p, %dp scale(%scale)
      : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xi16>
  return
}

// -----

// The scale is an f32 value, not f16 (ODS operand constraint).
func.func @negative_softmax_grad_f16_scale(%p: !warpspec.acc<64x64xf32>,
                                           %dp: !warpspec.acc<64x64xf32>,
                                           %scale: f16) {
  // expected-note @-1 {{prior use here}}
  // expected-error @+1 {{use of value '%scale' expects different type than prior uses: 'f32' vs 'f16'}}
  %ds = warpspec.softmax_grad %p, %dp scale(%scale)
      : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>
  return
}

//===----------------------------------------------------------------------===//
// warpspec.write
//===----------------------------------------------------------------------===//

// -----

// Buffers are written for the tensor cores, which read 16-bit operands: an
// f32 tile can be written (converted to the buffer's type), but not into an
// f32 buffer.
func.func @negative_write_f32(%v: !warpspec.acc<64x64xf32>,
                              %b: !warpspec.buffer<64x64xf32, smem>) {
  // expected-error @+1 {{'warpspec.write' op only 16-bit buffers can be written, got 'f32'}}
  warpspec.write %v, %b : !warpspec.acc<64x64xf32>, !warpspec.buffer<64x64xf32, smem>
  return
}

// -----

// The buffer's element type decides, not the tile's: a bf16 tile into an
// f32 buffer is rejected the same way.
func.func @negative_write_bf16_into_f32(%v: !warpspec.acc<64x64xbf16>,
                                        %b: !warpspec.buffer<64x64xf32, smem>) {
  // expected-error @+1 {{'warpspec.write' op only 16-bit buffers can be written, got 'f32'}}
  warpspec.write %v, %b : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xf32, smem>
  return
}

// -----

// i16 is 16 bits wide but not an MMA operand type.
func.func @negative_write_i16(%v: !warpspec.acc<64x64xi16>,
                              %b: !warpspec.buffer<64x64xi16, smem>) {
  // expected-error @+1 {{'warpspec.write' op only 16-bit buffers can be written, got 'i16'}}
  warpspec.write %v, %b : !warpspec.acc<64x64xi16>, !warpspec.buffer<64x64xi16, smem>
  return
}

// -----

// An f32 tile is converted, but not reshaped: 64x64 into 64x128.
func.func @negative_write_f32_shape_mismatch(%v: !warpspec.acc<64x64xf32>,
                                             %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.write' op tile '!warpspec.acc<64x64xf32>' does not match buffer '!warpspec.buffer<64x128xbf16, smem>'}}
  warpspec.write %v, %b : !warpspec.acc<64x64xf32>, !warpspec.buffer<64x128xbf16, smem>
  return
}

// -----

// stmatrix writes 8x8 matrices two side by side: 8 columns cannot fill them.
func.func @negative_write_stmatrix_narrow(%v: !warpspec.acc<64x8xbf16>,
                                          %b: !warpspec.buffer<64x8xbf16, smem>) {
  // expected-error @+1 {{'warpspec.write' op stmatrix needs a multiple of 16 columns (two 8x8 matrices side by side), got 8}}
  warpspec.write %v, %b {stmatrix} : !warpspec.acc<64x8xbf16>, !warpspec.buffer<64x8xbf16, smem>
  return
}

// -----

// A store's stmatrix writes its staging buffer: without one there is none.
func.func @negative_store_stmatrix_without_staging(%v: !warpspec.acc<64x64xf32>,
                                                   %o: memref<?x4x64xbf16>, %i: i32) {
  // expected-error @+1 {{'warpspec.store' op stmatrix writes the staging buffer: it needs via(...)}}
  warpspec.store %v to %o[%i, %i] rows(%i) {stmatrix} : !warpspec.acc<64x64xf32>, memref<?x4x64xbf16>
  return
}

// -----

// The tile and the buffer differ in shape.
func.func @negative_write_shape_mismatch(%v: !warpspec.acc<64x64xbf16>,
                                         %b: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.write' op tile '!warpspec.acc<64x64xbf16>' does not match buffer '!warpspec.buffer<64x128xbf16, smem>'}}
  warpspec.write %v, %b : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x128xbf16, smem>
  return
}

// -----

// The tile and the buffer differ in element type: only f32 tiles are
// converted, a bf16 tile is not rounded to f16.
func.func @negative_write_element_mismatch(%v: !warpspec.acc<64x64xbf16>,
                                           %b: !warpspec.buffer<64x64xf16, smem>) {
  // expected-error @+1 {{'warpspec.write' op tile '!warpspec.acc<64x64xbf16>' does not match buffer '!warpspec.buffer<64x64xf16, smem>'}}
  warpspec.write %v, %b : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xf16, smem>
  return
}

// -----

// Matching 1-D tile and buffer are still not a 2-D swizzled tile.
func.func @negative_write_1d(%v: !warpspec.acc<64xbf16>,
                             %b: !warpspec.buffer<64xbf16, smem>) {
  // expected-error @+1 {{'warpspec.write' op only 2-D tiles can be written, got '!warpspec.buffer<64xbf16, smem>'}}
  warpspec.write %v, %b : !warpspec.acc<64xbf16>, !warpspec.buffer<64xbf16, smem>
  return
}

// -----

// The destination is shared memory, not tensor memory.
func.func @negative_write_tmem(%v: !warpspec.acc<64x64xbf16>,
                               %b: !warpspec.buffer<64x64xbf16, tmem>) {
  // expected-error @+1 {{'warpspec.write' op destination must be in shared memory}}
  warpspec.write %v, %b : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xbf16, tmem>
  return
}

// -----

// 16 columns are half a 32-column (64-byte) swizzled chunk.
func.func @negative_write_partial_chunk(%v: !warpspec.acc<64x16xbf16>,
                                        %b: !warpspec.buffer<64x16xbf16, smem>) {
  // expected-error @+1 {{'warpspec.write' op buffers hold whole swizzled chunks (a multiple of 32 columns)}}
  warpspec.write %v, %b : !warpspec.acc<64x16xbf16>, !warpspec.buffer<64x16xbf16, smem>
  return
}

//===----------------------------------------------------------------------===//
// warpspec.store
//===----------------------------------------------------------------------===//

// -----

// The stored tile is an f32 accumulator, not a bf16 A operand.
func.func @negative_store_bf16_value(%v: !warpspec.acc<64x128xbf16>,
                                     %o: memref<?x4x128xbf16>, %i: i32) {
  // expected-error @+1 {{'warpspec.store' op value must be a 2-D f32 tile}}
  warpspec.store %v to %o[%i, %i] rows(%i)
      : !warpspec.acc<64x128xbf16>, memref<?x4x128xbf16>
  return
}

// -----

// The destination is [tokens, heads, head_dim].
func.func @negative_store_rank2_dest(%v: !warpspec.acc<64x128xf32>,
                                     %o: memref<?x128xbf16>, %i: i32) {
  // expected-error @+1 {{'warpspec.store' op destination must be a rank-3 memref [tokens, heads, head_dim]}}
  warpspec.store %v to %o[%i, %i] rows(%i)
      : !warpspec.acc<64x128xf32>, memref<?x128xbf16>
  return
}

// -----

// A 128-column tile into a head_dim-64 tensor.
func.func @negative_store_head_dim_mismatch(%v: !warpspec.acc<64x128xf32>,
                                            %o: memref<?x4x64xbf16>, %i: i32) {
  // expected-error @+1 {{'warpspec.store' op tile has 128 columns, but the destination's head dimension differs}}
  warpspec.store %v to %o[%i, %i] rows(%i)
      : !warpspec.acc<64x128xf32>, memref<?x4x64xbf16>
  return
}

// -----

// A dynamic head dimension cannot be checked against the tile.
func.func @negative_store_dynamic_head_dim(%v: !warpspec.acc<64x128xf32>,
                                           %o: memref<?x4x?xbf16>, %i: i32) {
  // expected-error @+1 {{'warpspec.store' op tile has 128 columns, but the destination's head dimension differs}}
  warpspec.store %v to %o[%i, %i] rows(%i)
      : !warpspec.acc<64x128xf32>, memref<?x4x?xbf16>
  return
}

// -----

// Outputs are floats: not i32.
func.func @negative_store_integer_dest(%v: !warpspec.acc<64x128xf32>,
                                       %o: memref<?x4x128xi32>, %i: i32) {
  // expected-error @+1 {{'warpspec.store' op destination element type must be bf16, f16 or f32}}
  warpspec.store %v to %o[%i, %i] rows(%i)
      : !warpspec.acc<64x128xf32>, memref<?x4x128xi32>
  return
}

// -----

// One divisor per row of the tile: 32 for a 64-row tile.
func.func @negative_store_divide_by_rows(%v: !warpspec.acc<64x128xf32>,
                                         %o: memref<?x4x128xbf16>, %i: i32,
                                         %l: !warpspec.rows<32xf32>) {
  // expected-error @+1 {{'warpspec.store' op divide_by has 32 rows, the tile 64}}
  warpspec.store %v to %o[%i, %i] rows(%i) divide_by(%l)
      : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>, !warpspec.rows<32xf32>
  return
}

// -----

// The staging buffer of via is in shared memory (here: tensor memory).
func.func @negative_store_staging_tmem(%v: !warpspec.acc<64x128xf32>,
                                       %o: memref<?x4x128xbf16>, %i: i32,
                                       %s: !warpspec.buffer<64x128xbf16, tmem>) {
  // expected-error @+1 {{'warpspec.store' op staging buffer must be a shared-memory tile of the value's shape and the destination's 16-bit element type, got '!warpspec.buffer<64x128xbf16, tmem>'}}
  warpspec.store %v to %o[%i, %i] rows(%i) via(%s)
      : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>,
        !warpspec.buffer<64x128xbf16, tmem>
  return
}

// -----

// The staging buffer holds the whole tile: 64x128, not 64x64.
func.func @negative_store_staging_shape(%v: !warpspec.acc<64x128xf32>,
                                        %o: memref<?x4x128xbf16>, %i: i32,
                                        %s: !warpspec.buffer<64x64xbf16, smem>) {
  // expected-error @+1 {{'warpspec.store' op staging buffer must be a shared-memory tile of the value's shape and the destination's 16-bit element type, got '!warpspec.buffer<64x64xbf16, smem>'}}
  warpspec.store %v to %o[%i, %i] rows(%i) via(%s)
      : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>,
        !warpspec.buffer<64x64xbf16, smem>
  return
}

// -----

// The staging buffer holds the converted values: f16 for a bf16 tensor is
// wrong.
func.func @negative_store_staging_element_type(%v: !warpspec.acc<64x128xf32>,
                                               %o: memref<?x4x128xbf16>, %i: i32,
                                               %s: !warpspec.buffer<64x128xf16, smem>) {
  // expected-error @+1 {{'warpspec.store' op staging buffer must be a shared-memory tile of the value's shape and the destination's 16-bit element type, got '!warpspec.buffer<64x128xf16, smem>'}}
  warpspec.store %v to %o[%i, %i] rows(%i) via(%s)
      : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>,
        !warpspec.buffer<64x128xf16, smem>
  return
}

// -----

// An f32 tensor can be stored, but not staged: the staging layout is the
// 16-bit swizzled one (the element type matches the destination's here).
func.func @negative_store_staging_f32(%v: !warpspec.acc<64x128xf32>,
                                      %o: memref<?x4x128xf32>, %i: i32,
                                      %s: !warpspec.buffer<64x128xf32, smem>) {
  // expected-error @+1 {{'warpspec.store' op staging buffer must be a shared-memory tile of the value's shape and the destination's 16-bit element type, got '!warpspec.buffer<64x128xf32, smem>'}}
  warpspec.store %v to %o[%i, %i] rows(%i) via(%s)
      : !warpspec.acc<64x128xf32>, memref<?x4x128xf32>,
        !warpspec.buffer<64x128xf32, smem>
  return
}

// -----

// A buffer of the right type that is not a warpspec.scratch: a function
// argument.
func.func @negative_store_staging_argument(%v: !warpspec.acc<64x128xf32>,
                                           %o: memref<?x4x128xbf16>, %i: i32,
                                           %s: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.store' op staging buffer must be a warpspec.scratch of the partition}}
  warpspec.store %v to %o[%i, %i] rows(%i) via(%s)
      : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>,
        !warpspec.buffer<64x128xbf16, smem>
  return
}

// -----

// A bulk store staged in a slot's buffer reads it after the store: the
// slot's release must wait for it (after_stores).
!c = !warpspec.channel<[64x128xbf16], smem>
func.func @negative_store_bulk_in_slot_released_early(
    %v: !warpspec.acc<64x128xf32>, %o: memref<?x4x128xbf16>, %i: i32) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%c_slot1, %row, %rows, %head, %b) : !c {
        // expected-error @+1 {{'warpspec.store' op stages a bulk store in a slot's buffer, so the slot's release must follow it in the block and wait for the store to have read it (warpspec.release ... after_stores)}}
        warpspec.store %v to %o[%row, %head] rows(%rows) via(%b) bulk
            : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>,
              !warpspec.buffer<64x128xbf16, smem>
        warpspec.release %c_slot1
      }
    }
  }
  return
}

// -----

// The release before the store: nothing waits for the store's reads.
!c = !warpspec.channel<[64x128xbf16], smem>
func.func @negative_store_bulk_in_released_slot(
    %v: !warpspec.acc<64x128xf32>, %o: memref<?x4x128xbf16>, %i: i32) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %c (%c_slot1, %row, %rows, %head, %b) : !c {
        warpspec.release %c_slot1 after_stores
        // expected-error @+1 {{'warpspec.store' op stages a bulk store in a slot's buffer}}
        warpspec.store %v to %o[%row, %head] rows(%rows) via(%b) bulk
            : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>,
              !warpspec.buffer<64x128xbf16, smem>
      }
    }
  }
  return
}

// -----

!c = !warpspec.channel<[64x128xbf16], smem>
func.func @negative_release_after_mma_and_stores(%i: i32) {
  warpspec.kernel chip(sm_100a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %c_slot, %b = warpspec.acquire %c : !c
      warpspec.commit %c_slot tile(%i, %i, %i)
      warpspec.close %c : !c
    }
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      warpspec.consume %c (%c_slot1, %row, %rows, %head, %b) : !c {
        // expected-error @+1 {{'warpspec.release' op after_mma arrives by tcgen05.commit, which does not wait for bulk stores: choose after_mma or after_stores}}
        warpspec.release %c_slot1 after_mma after_stores
      }
    }
  }
  return
}

// -----

// The optional types follow the order of the operands: divide_by's, then
// the staging buffer's.
func.func @negative_store_optional_types_order(%v: !warpspec.acc<64x128xf32>,
                                               %o: memref<?x4x128xbf16>, %i: i32,
                                               %l: !warpspec.rows<64xf32>,
                                               %s: !warpspec.buffer<64x128xbf16, smem>) {
  warpspec.store %v to %o[%i, %i] rows(%i) divide_by(%l) via(%s)
      : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>,
        // expected-error @+1 {{expected the divide_by type (!warpspec.rows), then the staging type (!warpspec.buffer), got '!warpspec.rows<64xf32>'}}
        !warpspec.buffer<64x128xbf16, smem>, !warpspec.rows<64xf32>
  return
}

// -----

// A bulk store leaves from the staging buffer (TMA reads shared memory):
// without via there is nothing to copy from.
func.func @negative_store_bulk_without_staging(%v: !warpspec.acc<64x128xf32>,
                                               %o: memref<?x4x128xbf16>, %i: i32) {
  // expected-error @+1 {{'warpspec.store' op bulk stores go through a staging buffer: add via(%staging)}}
  warpspec.store %v to %o[%i, %i] rows(%i) bulk
      : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>
  return
}

// -----

// wide_offsets widens the pinned column of a store without via: with no
// pinned column there is nothing to widen.
func.func @negative_store_wide_offsets_unpinned(%v: !warpspec.acc<64x128xf32>,
                                                %o: memref<?x4x128xbf16>, %i: i32) {
  // expected-error @+1 {{'warpspec.store' op wide_offsets applies to the pinned column of a store without via: add pinned_steps, drop via}}
  warpspec.store %v to %o[%i, %i] rows(%i) {wide_offsets}
      : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>
  return
}

// -----

// A staged store copies whole row segments out: it has no column offsets of
// its own to widen.
func.func @negative_store_wide_offsets_staged(%v: !warpspec.acc<64x128xf32>,
                                              %o: memref<?x4x128xbf16>, %i: i32,
                                              %s: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.store' op wide_offsets applies to the pinned column of a store without via: add pinned_steps, drop via}}
  warpspec.store %v to %o[%i, %i] rows(%i) via(%s) {pinned_steps, wide_offsets}
      : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>,
        !warpspec.buffer<64x128xbf16, smem>
  return
}

// -----

// A 48-column tile is one and a half 64-byte TMA boxes.
func.func @negative_store_bulk_partial_chunk(%v: !warpspec.acc<64x48xf32>,
                                             %o: memref<?x4x48xbf16>, %i: i32) {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "store" role(compute) warps(4) regs(64) {
      %s = warpspec.scratch : !warpspec.buffer<64x48xbf16, smem>
      // expected-error @+1 {{'warpspec.store' op bulk stores copy whole swizzled chunks (a multiple of 32 columns, or one 16-column piece)}}
      warpspec.store %v to %o[%i, %i] rows(%i) via(%s) bulk
          : !warpspec.acc<64x48xf32>, memref<?x4x48xbf16>,
            !warpspec.buffer<64x48xbf16, smem>
    }
  }
  return
}

// -----

// pending_reads counts bulk stores still reading their staging buffers:
// a store the threads copy out has none.
func.func @negative_store_pending_reads_not_bulk(%v: !warpspec.acc<64x64xf32>,
                                                 %o: memref<?x4x64xbf16>, %i: i32) {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "store" role(compute) warps(4) regs(64) {
      %s = warpspec.scratch : !warpspec.buffer<64x64xbf16, smem>
      // expected-error @+1 {{'warpspec.store' op pending_reads applies to bulk stores}}
      warpspec.store %v to %o[%i, %i] rows(%i) via(%s) {pending_reads = 1 : i64}
          : !warpspec.acc<64x64xf32>, memref<?x4x64xbf16>,
            !warpspec.buffer<64x64xbf16, smem>
    }
  }
  return
}

// -----

// Two staging buffers alternate: at most the last store may still read.
func.func @negative_store_pending_reads_two(%v: !warpspec.acc<64x64xf32>,
                                            %o: memref<?x4x64xbf16>, %i: i32) {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "store" role(compute) warps(4) regs(64) {
      %s = warpspec.scratch : !warpspec.buffer<64x64xbf16, smem>
      // expected-error @+1 {{'warpspec.store' op pending_reads must be 0 or 1, got 2}}
      warpspec.store %v to %o[%i, %i] rows(%i) via(%s) bulk {pending_reads = 2 : i64}
          : !warpspec.acc<64x64xf32>, memref<?x4x64xbf16>,
            !warpspec.buffer<64x64xbf16, smem>
    }
  }
  return
}

// -----

// An l2_prefetch acquire prefetches what the copies into its slot read:
// without copies there is nothing to prefetch.
!qkv = !warpspec.channel<[64x64xf16, 64x64xf16, 64x64xf16], smem>
func.func @negative_acquire_l2_prefetch_without_copies(%cu: memref<5xi32>) {
  warpspec.kernel chip(sm_90a) {
    %tokens = arith.constant 1024 : index
    %heads = arith.constant 8 : index
    %qkv = warpspec.channel "qkv" depth(2) : !qkv
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<5xi32>
          heads(%heads) tokens(%tokens) block_size(64) {
        // expected-error @+1 {{'warpspec.acquire' op with l2_prefetch has no warpspec.tma_load into its slot to prefetch for}}
        %qkv_slot, %q, %k, %v = warpspec.acquire %qkv {l2_prefetch} : !qkv
        warpspec.commit %qkv_slot tile(%row, %rows, %head)
      }
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %q, %k, %v) : !qkv {
        warpspec.release %qkv_slot1
      }
    }
  }
  return
}

// -----

// The prefetches are issued before the wait for the slot, so the copies'
// coordinates must be computed before the acquire.
!qkv = !warpspec.channel<[64x64xf16, 64x64xf16, 64x64xf16], smem>
func.func @negative_acquire_l2_prefetch_late_coordinates(
    %q: memref<?x8x64xf16>, %cu: memref<5xi32>) {
  warpspec.kernel chip(sm_90a) {
    %tokens = arith.constant 1024 : index
    %heads = arith.constant 8 : index
    %qkv = warpspec.channel "qkv" depth(2) : !qkv
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<5xi32>
          heads(%heads) tokens(%tokens) block_size(64) {
        // expected-error @+1 {{'warpspec.acquire' op with l2_prefetch needs the coordinates of the copies into its slot before it, but a warpspec.tma_load uses one computed after it}}
        %qkv_slot, %qb, %kb, %vb = warpspec.acquire %qkv {l2_prefetch} : !qkv
        %c64 = arith.constant 64 : i32
        %next = arith.addi %row, %c64 : i32
        warpspec.tma_load %q[%next, %head] into %qb
            : memref<?x8x64xf16>, !warpspec.buffer<64x64xf16, smem>
        warpspec.commit %qkv_slot tile(%row, %rows, %head)
      }
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %qt, %kt, %vt) : !qkv {
        warpspec.release %qkv_slot1
      }
    }
  }
  return
}

// -----

// The lowered protocol (warpspec-lower-protocol's output). A slot index
// that is a constant must name a slot of the ring.
!one = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_lowered_slot_out_of_range() {
  warpspec.kernel chip(sm_90a) {
    %x = warpspec.channel "x" depth(2) : !one
    warpspec.partition "p" role(compute) warps(4) regs(40) {
      %two = arith.constant 2 : i32
      %zero = arith.constant 0 : i32
      // expected-error @+1 {{'warpspec.wait_full' op slot 2 is not in [0, 2), the slots of channel "x"}}
      warpspec.wait_full %x[%two] phase(%zero) : !one
    }
  }
  return
}

// -----

// The ops of the lowered protocol run in a partition (each replica has its
// own positions and barrier roles).
!one = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_lowered_outside_partition() {
  warpspec.kernel chip(sm_90a) {
    %x = warpspec.channel "x" depth(2) : !one
    %zero = arith.constant 0 : i32
    // expected-error @+1 {{'warpspec.ring_slot' op must be inside a warpspec.partition}}
    %stage, %phase = warpspec.ring_slot %x[%zero] : !one
    warpspec.partition "p" role(compute) warps(4) regs(40) {
    }
  }
  return
}

// -----

!one = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_replica_id_outside_partition() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.replica_id' op must be inside a warpspec.partition}}
    %r = warpspec.replica_id
    warpspec.partition "p" role(compute) warps(4) regs(40) {
    }
  }
  return
}

// -----

// TMA copies fill shared-memory slots only.
!acc = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_expect_tx_tmem() {
  warpspec.kernel chip(sm_100a) {
    %s = warpspec.channel "s" depth(2) : !acc
    warpspec.partition "p" role(mma) warps(4) regs(40) {
      %zero = arith.constant 0 : i32
      // expected-error @+1 {{'warpspec.expect_tx' op expects copies into a tensor-memory slot; only shared-memory slots are filled by TMA}}
      warpspec.expect_tx %s[%zero] bytes(16384) : !acc
    }
  }
  return
}

// -----

// The copies into one slot deliver at most its bytes (8192 here).
!one = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_expect_tx_bytes() {
  warpspec.kernel chip(sm_90a) {
    %x = warpspec.channel "x" depth(2) : !one
    warpspec.partition "p" role(load) warps(4) regs(40) {
      %zero = arith.constant 0 : i32
      // expected-error @+1 {{'warpspec.expect_tx' op expects 8200 bytes, but the copies into one slot deliver between 1 and its 8192 bytes}}
      warpspec.expect_tx %x[%zero] bytes(8200) : !one
    }
  }
  return
}

// -----

// A channel is either used through the protocol or through its lowering:
// the ring positions would otherwise have two owners.
!one = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_lowered_and_protocol(%cu: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    %x = warpspec.channel "x" depth(2) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
          heads(%n) tokens(%n) block_size(64) {
        %s, %b = warpspec.acquire %x : !one
        warpspec.commit %s tile(%row, %rows, %head)
      }
    }
    warpspec.partition "sink" role(compute) warps(4) regs(40) {
      %zero = arith.constant 0 : i32
      // expected-error @+1 {{'warpspec.arrive_empty' op uses channel "x" at the mbarrier level, but warpspec.acquire uses it through the channel protocol; warpspec-lower-protocol lowers all of a channel's protocol ops at once}}
      warpspec.arrive_empty %x[%zero] : !one
    }
  }
  return
}

// -----

// after_mma arrives through tcgen05.commit, which sm_90a does not have.
!one = !warpspec.channel<[64x64xbf16], smem>
func.func @negative_arrive_empty_after_mma_sm90a() {
  warpspec.kernel chip(sm_90a) {
    %x = warpspec.channel "x" depth(2) : !one
    warpspec.partition "p" role(compute) warps(4) regs(40) {
      %zero = arith.constant 0 : i32
      // expected-error @+1 {{'warpspec.arrive_empty' op with after_mma is not available on sm_90a (no tcgen05.commit)}}
      warpspec.arrive_empty %x[%zero] after_mma : !one
    }
  }
  return
}

// -----

// A prefetch moves the tile of a TMA copy: the same rules.
func.func @negative_tma_prefetch_element_type(%k: memref<?x4x64xf32>) {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "p" role(load) warps(4) regs(40) {
      %zero = arith.constant 0 : i32
      // expected-error @+1 {{'warpspec.tma_prefetch' op only 16-bit elements are supported, got 'f32'}}
      warpspec.tma_prefetch %k[%zero, %zero]
          : memref<?x4x64xf32>, !warpspec.buffer<64x64xf32, smem>
    }
  }
  return
}

// -----

// A tile loop with iter_args yields their next values.
func.func @negative_tile_loop_iter_args_no_yield(%cu: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    warpspec.partition "p" role(compute) warps(4) regs(40) {
      %zero = arith.constant 0 : i32
      // expected-error @+1 {{'warpspec.tile_loop' op with iter_args must end its body with a warpspec.yield of their next values}}
      %last = warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
          heads(%n) tokens(%n) block_size(64) iter_args(%e = %zero) -> (i32) {
      }
    }
  }
  return
}

// -----

func.func @negative_tile_loop_yield_types(%cu: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    warpspec.partition "p" role(compute) warps(4) regs(40) {
      %zero = arith.constant 0 : i32
      %last = warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
          heads(%n) tokens(%n) block_size(64) iter_args(%e = %zero) -> (i32) {
        // expected-error @+1 {{'warpspec.yield' op yields 'index', but the enclosing warpspec.tile_loop carries 'i32'}}
        warpspec.yield %n : index
      }
    }
  }
  return
}

// -----

func.func @negative_tile_loop_iter_args_count(%cu: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    warpspec.partition "p" role(compute) warps(4) regs(40) {
      %zero = arith.constant 0 : i32
      // expected-error @+1 {{iter_args has 1 values but 2 types}}
      %a, %b = warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32>
          heads(%n) tokens(%n) block_size(64) iter_args(%e = %zero) -> (i32, i32) {
        warpspec.yield %e, %e : i32, i32
      }
    }
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// Partition dispatch (warpspec-dispatch-partitions' ops and placements)
//===----------------------------------------------------------------------===//

func.func @negative_partition_half_placed() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.partition' op has one of first_warp and barrier_base; a placed partition has both}}
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) {
    }
  }
  return
}

// -----

func.func @negative_partition_warps_out_of_cta() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.partition' op runs on warps [30, 34), outside the 32 warps a CTA can have}}
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(30) barrier_base(1) {
    }
  }
  return
}

// -----

func.func @negative_partition_barrier_zero() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.partition' op gathers its replicas at named barriers [0, 2); a CTA has barriers 1 to 15 besides the CTA-wide barrier 0}}
    warpspec.partition "p" role(compute) warps(4) regs(128) replicas(2) first_warp(0) barrier_base(0) {
    }
  }
  return
}

// -----

func.func @negative_partitions_share_warps() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "a" role(compute) warps(4) regs(128) replicas(2) first_warp(0) barrier_base(1) {
    }
    // expected-error @+1 {{'warpspec.partition' op runs on warps that partition "a" runs on too}}
    warpspec.partition "b" role(compute) warps(4) regs(128) first_warp(4) barrier_base(3) {
    }
  }
  return
}

// -----

func.func @negative_partitions_share_barriers() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "a" role(compute) warps(4) regs(128) replicas(2) first_warp(0) barrier_base(1) {
    }
    // expected-error @+1 {{'warpspec.partition' op gathers at named barriers that partition "a" uses too}}
    warpspec.partition "b" role(compute) warps(4) regs(128) first_warp(8) barrier_base(2) {
    }
  }
  return
}

// -----

func.func @negative_set_max_registers_count() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      // expected-error @+1 {{'warpspec.set_max_registers' op sets 260 registers per thread; setmaxnreg takes a multiple of 8 in [24, 256]}}
      warpspec.set_max_registers increase 260
    }
  }
  return
}

// -----

// One 128-thread partition: the kernel is launched with 248 registers.
func.func @negative_set_max_registers_direction() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      // expected-error @+1 {{'warpspec.set_max_registers' op would increase the registers to 128 per thread, but the kernel is launched with 248}}
      warpspec.set_max_registers increase 128
    }
  }
  return
}

// -----

// Four replicas of 4 warps: the kernel is launched with 128 registers. At
// that count only an `explicit` partition has a setmaxnreg.
func.func @negative_set_max_registers_at_launch_count() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "p" role(compute) warps(4) regs(128) replicas(4) first_warp(0) barrier_base(1) {
      // expected-error @+1 {{'warpspec.set_max_registers' op keeps the registers at 128 per thread, what the kernel is launched with, in partition "p", which is not `explicit` (explicit_regs)}}
      warpspec.set_max_registers increase 128
    }
  }
  return
}

// -----

// An explicit partition's setmaxnreg at the launch's count is `increase`.
func.func @negative_set_max_registers_explicit_decrease() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "p" role(compute) warps(4) regs(128) explicit replicas(4) first_warp(0) barrier_base(1) {
      // expected-error @+1 {{'warpspec.set_max_registers' op sets the registers to the launch's 128 per thread with `decrease`; an explicit partition's setmaxnreg at that count is `increase`}}
      warpspec.set_max_registers decrease 128
    }
  }
  return
}

// -----

func.func @negative_set_max_registers_parent() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.set_max_registers' op expects parent op 'warpspec.partition'}}
    warpspec.set_max_registers decrease 40
    warpspec.partition "p" role(compute) warps(4) regs(128) {
    }
  }
  return
}

// -----

func.func @negative_partition_index_unplaced() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "p" role(compute) warps(4) regs(128) {
      // expected-error @+1 {{'warpspec.partition_index' op is in partition "p", which is not placed (no first_warp)}}
      %r, %t = warpspec.partition_index
    }
  }
  return
}

// -----

func.func @negative_partition_index_twice() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      // expected-error @+1 {{'warpspec.partition_index' op is one of several in partition "p"; it has one}}
      %r, %t = warpspec.partition_index
      %r2, %t2 = warpspec.partition_index
    }
  }
  return
}

// -----

func.func @negative_single_thread_operand() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "p" role(load) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %t = warpspec.partition_index
      // expected-error @+1 {{'warpspec.single_thread' op takes a thread that is not the `thread` result of a warpspec.partition_index}}
      warpspec.single_thread %r {
      }
    }
  }
  return
}

// -----

func.func @negative_wait_bulk_stores_parent() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %t = warpspec.partition_index
      // expected-error @+1 {{'warpspec.wait_bulk_stores' op expects parent op 'warpspec.single_thread'}}
      warpspec.wait_bulk_stores
    }
  }
  return
}

// -----

func.func @negative_tmem_release_nothing() {
  warpspec.kernel chip(sm_100a) attributes {tmem_columns = 32 : i64, tmem_base_offset = 0 : i64} {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %t = warpspec.partition_index
      // expected-error @+1 {{'warpspec.tmem_release' op neither arrives nor deallocates}}
      warpspec.tmem_release %t
    }
  }
  return
}

// -----

func.func @negative_tmem_release_gather_alone() {
  warpspec.kernel chip(sm_100a) attributes {tmem_columns = 32 : i64, tmem_base_offset = 0 : i64} {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %t = warpspec.partition_index
      // expected-error @+1 {{'warpspec.tmem_release' op gathers the replica but does not arrive}}
      warpspec.tmem_release %t gather dealloc
    }
  }
  return
}

// -----

func.func @negative_tmem_release_no_allocation() {
  warpspec.kernel chip(sm_100a) {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %t = warpspec.partition_index
      // expected-error @+1 {{'warpspec.tmem_release' op releases tensor memory in a kernel that has no placed allocation (run warpspec-allocate-tmem and warpspec-allocate-smem)}}
      warpspec.tmem_release %t arrive
    }
  }
  return
}

// -----

func.func @negative_tmem_release_dealloc_not_warp0() {
  warpspec.kernel chip(sm_100a) attributes {tmem_columns = 32 : i64, tmem_base_offset = 0 : i64} {
    warpspec.partition "a" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
    }
    warpspec.partition "b" role(compute) warps(4) regs(128) first_warp(4) barrier_base(2) {
      %r, %t = warpspec.partition_index
      // expected-error @+1 {{'warpspec.tmem_release' op deallocates, but the partition does not run on warp 0, which allocated the tensor memory}}
      warpspec.tmem_release %t arrive dealloc
    }
  }
  return
}

// -----

func.func @negative_tmem_release_thread() {
  warpspec.kernel chip(sm_100a) attributes {tmem_columns = 32 : i64, tmem_base_offset = 0 : i64} {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %t = warpspec.partition_index
      // expected-error @+1 {{'warpspec.tmem_release' op takes a thread that is not the `thread` result of a warpspec.partition_index}}
      warpspec.tmem_release %r arrive
    }
  }
  return
}

// -----

func.func @negative_set_max_registers_action() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      // expected-error @+1 {{unknown register action 'raise'; expected increase or decrease}}
      warpspec.set_max_registers raise 128
    }
  }
  return
}

// -----

// The added accumulator of warpspec.mma ... plus %acc has the result's type.
func.func @negative_mma_acc_type(%a: !warpspec.buffer<64x64xbf16, smem>,
                                 %b: !warpspec.buffer<64x128xbf16, smem>,
                                 %c: !warpspec.acc<64x64xf32>) {
  // expected-error @+1 {{'warpspec.mma' op the added accumulator must have the result's type '!warpspec.acc<64x128xf32>', got '!warpspec.acc<64x64xf32>'}}
  %d = warpspec.mma %a, %b plus %c : !warpspec.acc<64x64xf32> {transpose_a}
      : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x128xbf16, smem> -> !warpspec.acc<64x128xf32>
  return
}

// -----

// An added accumulator needs A in shared memory (the register-A wgmma chain
// starts from zero).
func.func @negative_mma_acc_register_a(%a: !warpspec.acc<64x64xbf16>,
                                       %b: !warpspec.buffer<64x128xbf16, smem>,
                                       %c: !warpspec.acc<64x128xf32>) {
  // expected-error @+1 {{'warpspec.mma' op an added accumulator needs A in shared memory}}
  %d = warpspec.mma %a, %b plus %c : !warpspec.acc<64x128xf32>
      : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x128xbf16, smem> -> !warpspec.acc<64x128xf32>
  return
}

// -----

// A column chunk is one whole swizzled chunk of the source: 64 columns of a
// 128-column bf16 buffer.
func.func @negative_column_chunk_width(%p: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.column_chunk' op result must be one chunk of the source (64 rows x 64 columns of its element type), got '!warpspec.buffer<64x32xbf16, smem>'}}
  %c = warpspec.column_chunk %p[0] : !warpspec.buffer<64x128xbf16, smem> -> !warpspec.buffer<64x32xbf16, smem>
  return
}

// -----

func.func @negative_column_chunk_index(%p: !warpspec.buffer<64x128xbf16, smem>) {
  // expected-error @+1 {{'warpspec.column_chunk' op chunk index 2 is outside the source's 2 chunks}}
  %c = warpspec.column_chunk %p[2] : !warpspec.buffer<64x128xbf16, smem> -> !warpspec.buffer<64x64xbf16, smem>
  return
}

// -----

func.func @negative_column_chunk_tmem(%p: !warpspec.buffer<64x128xbf16, tmem>) {
  // expected-error @+1 {{'warpspec.column_chunk' op views shared-memory buffers only}}
  %c = warpspec.column_chunk %p[0] : !warpspec.buffer<64x128xbf16, tmem> -> !warpspec.buffer<64x64xbf16, tmem>
  return
}

// -----

func.func @negative_pin_tmem(%p: !warpspec.buffer<64x128xf32, tmem>) {
  // expected-error @+1 {{'warpspec.pin' op pins shared-memory buffers only}}
  %c = warpspec.pin %p : !warpspec.buffer<64x128xf32, tmem>
  return
}

// -----

func.func @negative_pin_i64(%x: i64) {
  // expected-error @+1 {{'warpspec.pin' op operand #0 must be}}
  %c = warpspec.pin %x : i64
  return
}

// -----

!c = !warpspec.channel<[64x128xbf16], smem>
func.func @negative_arrive_empty_after_mma_and_stores(%stage: i32) {
  warpspec.kernel chip(sm_100a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      // expected-error @+1 {{'warpspec.arrive_empty' op after_mma arrives by tcgen05.commit, which does not wait for bulk stores: choose after_mma or after_stores}}
      warpspec.arrive_empty %c[%stage] after_mma after_stores : !c
    }
  }
  return
}

// -----

// The lowered form: a bulk store staged in a warpspec.slot_buffers result
// needs that slot's arrive_empty after_stores after it.
!c = !warpspec.channel<[64x128xbf16], smem>
func.func @negative_lowered_store_in_slot_arrive_without_wait(
    %v: !warpspec.acc<64x128xf32>, %o: memref<?x4x128xbf16>, %i: i32,
    %stage: i32) {
  warpspec.kernel chip(sm_90a) {
    %c = warpspec.channel "c" depth(2) : !c
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %b = warpspec.slot_buffers %c[%stage] : !c
      // expected-error @+1 {{'warpspec.store' op stages a bulk store in a slot's buffer, so the slot's release must follow it in the block and wait for the store to have read it (warpspec.release ... after_stores)}}
      warpspec.store %v to %o[%i, %i] rows(%i) via(%b) bulk
          : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>,
            !warpspec.buffer<64x128xbf16, smem>
      warpspec.arrive_empty %c[%stage] : !c
    }
  }
  return
}
