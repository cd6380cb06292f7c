// RUN: block-attn-opt %s -split-input-file -verify-diagnostics

// Issue 15: every attribute, type shape and index that the allocators and
// the NVVM lowering turn into a size, a count, a loop bound or an address is
// bounded by the verifier, with the limit in the diagnostic. Each case was a
// crash, a hang or a silent wrap-around before (the fuzz corpus in
// fuzz/corpus keeps the inputs that found them).

//===----------------------------------------------------------------------===//
// memref.dim inside a kernel (class 1: Abi.cpp and emitDim indexed their
// per-dimension tables with it)
//===----------------------------------------------------------------------===//

// The dimension a kernel reads is fixed when the kernel is built, not a
// run-time value.
!act = memref<?x?x64xbf16>
func.func @negative_dynamic_dim_index(%q: !act, %cu: memref<?xi32>, %d: index) {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'memref.dim' op inside a warpspec.kernel needs a constant dimension index in [0, 3)}}
    %h = memref.dim %q, %d : !act
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%h) tokens(%h) block_size(64) {
      }
    }
  }
  return
}

// -----

// 2^32: wrote out of bounds in buildKernelParams (SIGSEGV).
!act = memref<?x?x64xbf16>
func.func @negative_dim_index_2_pow_32(%q: !act, %cu: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) {
    %c = arith.constant 4294967296 : index
    // expected-error @+1 {{'memref.dim' op inside a warpspec.kernel needs a constant dimension index in [0, 3), got 4294967296}}
    %h = memref.dim %q, %c : !act
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%h) tokens(%h) block_size(64) {
      }
    }
  }
  return
}

// -----

// One past the rank: a silent out-of-bounds write before.
!act = memref<?x?x64xbf16>
func.func @negative_dim_index_rank(%q: !act, %cu: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) {
    %c = arith.constant 3 : index
    // expected-error @+1 {{'memref.dim' op inside a warpspec.kernel needs a constant dimension index in [0, 3), got 3}}
    %h = memref.dim %q, %c : !act
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%h) tokens(%h) block_size(64) {
      }
    }
  }
  return
}

// -----

!act = memref<?x?x64xbf16>
func.func @negative_dim_index_negative(%q: !act, %cu: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) {
    %c = arith.constant -1 : index
    // expected-error @+1 {{'memref.dim' op inside a warpspec.kernel needs a constant dimension index in [0, 3), got -1}}
    %h = memref.dim %q, %c : !act
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%h) tokens(%h) block_size(64) {
      }
    }
  }
  return
}

// -----

// An unranked memref has no dimension the lowering could read.
func.func @unranked_dim(%q: memref<*xbf16>, %cu: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) {
    %c = arith.constant 1 : index
    // expected-error @+1 {{'memref.dim' op inside a warpspec.kernel needs a ranked memref}}
    %h = memref.dim %q, %c : memref<*xbf16>
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%h) tokens(%h) block_size(64) {
      }
    }
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// Counts (class 2: 64-bit wrap-around)
//===----------------------------------------------------------------------===//

// depth(2^62) wrapped warpspec-allocate-smem's total to 1008 bytes; the
// lowering then emitted barrier inits for 2^62 slots (a hang).
func.func @negative_depth_2_pow_62() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op channel "c" has depth 4611686018427387904, more than the 7264 slots whose barriers and tile records (32 bytes each) fit in the 232448 bytes of shared memory}}
    %c = warpspec.channel "c" depth(4611686018427387904) : !warpspec.channel<[64x64xbf16], smem>
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

// The first depth past the limit.
func.func @negative_depth_7265() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op channel "c" has depth 7265, more than the 7264 slots}}
    %c = warpspec.channel "c" depth(7265) : !warpspec.channel<[64x64xbf16], smem>
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

// warps(2^59) wrapped the thread count to 0.
func.func @negative_warps_2_pow_59() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.partition' op partition "a" has 576460752303423488 warps, more than the 32 (1024 threads) a CTA can have}}
    warpspec.partition "a" role(compute) warps(576460752303423488) regs(64) {
    }
  }
  return
}

// -----

func.func @negative_replicas_huge() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.partition' op replicas must be in [1, 4] (32 warps a CTA at most, 8 per replica), got 2305843009213693952}}
    warpspec.partition "a" role(compute) warps(8) regs(64) replicas(2305843009213693952) {
    }
  }
  return
}

// -----

// 4 x 2^62 bf16 elements is 2^65 bytes: getSizeInBytes wrapped to 0 and the
// buffer was placed in zero bytes.
// expected-error @+1 {{a shared-memory buffer must fit in the 232448 bytes of a CTA, got more than 2^63 bytes}}
func.func @negative_buffer_size_overflow(%b: !warpspec.buffer<4x4611686018427387904xbf16, smem>) {
  return
}

// -----

// expected-error @+1 {{a shared-memory buffer must fit in the 232448 bytes of a CTA, got 262144 bytes}}
func.func @negative_buffer_too_big(%b: !warpspec.buffer<256x512xbf16, smem>) {
  return
}

// -----

// expected-error @+1 {{a tensor-memory buffer of 64x1024xf32 does not fit in the 128 lanes x 512 32-bit columns of tensor memory}}
func.func @negative_tmem_buffer_columns(%b: !warpspec.buffer<64x1024xf32, tmem>) {
  return
}

// -----

// expected-error @+1 {{a tensor-memory buffer of 64x2305843009213693952xf32 does not fit}}
func.func @negative_tmem_buffer_columns_overflow(%b: !warpspec.buffer<64x2305843009213693952xf32, tmem>) {
  return
}

// -----

// expected-error @+1 {{tensor-memory buffers are 2-D tiles, got 1 dimensions}}
func.func @negative_tmem_buffer_rank(%b: !warpspec.buffer<64xf32, tmem>) {
  return
}

// -----

func.func @negative_tile_loop_block_size_huge(%cu: memref<?xi32>, %h: index) {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      // expected-error @+1 {{'warpspec.tile_loop' op block_size must be in [1, 2147483647], got 4294967296}}
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%h) tokens(%h) block_size(4294967296) {
      }
    }
  }
  return
}

// -----

func.func @negative_tiles_per_cta_huge() {
  // expected-error @+1 {{'warpspec.kernel' op tiles_per_cta must be in [1, 2147483647], got 4294967296}}
  warpspec.kernel chip(sm_90a) attributes {tiles_per_cta = 4294967296 : i64} {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

func.func @negative_smem_bytes_negative() {
  // expected-error @+1 {{'warpspec.kernel' op smem_bytes must be non-negative, got -1}}
  warpspec.kernel chip(sm_90a) attributes {smem_bytes = -1 : i64} {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

func.func @negative_tmem_base_offset() {
  // expected-error @+1 {{'warpspec.kernel' op tmem_base_offset must be a multiple of 8 in [0, 232432], got 9223372036854775807}}
  warpspec.kernel chip(sm_100a) attributes {tmem_base_offset = 9223372036854775807 : i64} {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

func.func @negative_channel_offset() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.channel' op barrier_offset must be in [0, 232448], got -8}}
    %c = warpspec.channel "c" depth(2) {barrier_offset = -8 : i64} : !warpspec.channel<[64x64xbf16], smem>
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// tmem_slots (class 1: a lane of 2^63-1 was shifted past 64 bits)
//===----------------------------------------------------------------------===//

func.func @negative_tmem_slots_lane() {
  warpspec.kernel chip(sm_100a) {
    // expected-error @+1 {{'warpspec.channel' op tmem_slots of slot 1 (lane 9223372036854775807, column 0, 64 columns wide) leave the tensor memory of 128 lanes x 512 columns}}
    %s = warpspec.channel "s" depth(2) {tmem_slots = array<i64: 0, 0, 9223372036854775807, 0>} : !warpspec.channel<[64x64xf32], tmem>
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

func.func @negative_tmem_slots_column() {
  warpspec.kernel chip(sm_100a) {
    // expected-error @+1 {{'warpspec.channel' op tmem_slots of slot 0 (lane 0, column 480, 64 columns wide) leave the tensor memory of 128 lanes x 512 columns}}
    %s = warpspec.channel "s" depth(2) {tmem_slots = array<i64: 0, 480, 16, 0>} : !warpspec.channel<[64x64xf32], tmem>
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

func.func @negative_tmem_slots_count() {
  warpspec.kernel chip(sm_100a) {
    // expected-error @+1 {{'warpspec.channel' op tmem_slots must hold a lane and a column per slot (4 values), got 3}}
    %s = warpspec.channel "s" depth(2) {tmem_slots = array<i64: 0, 0, 16>} : !warpspec.channel<[64x64xf32], tmem>
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

func.func @negative_tmem_slots_smem() {
  warpspec.kernel chip(sm_100a) {
    // expected-error @+1 {{'warpspec.channel' op has tmem_slots, but its buffers live in shared memory}}
    %s = warpspec.channel "s" depth(1) {tmem_slots = array<i64: 0, 0>} : !warpspec.channel<[64x64xf32], smem>
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

// The slots must lie inside the columns the kernel allocates.
func.func @negative_tmem_slots_past_allocation() {
  warpspec.kernel chip(sm_100a) attributes {tmem_columns = 64 : i64} {
    // expected-error @+1 {{'warpspec.channel' op tmem_slots reach column 128, past the 64 tmem_columns of the kernel}}
    %s = warpspec.channel "s" depth(2) {tmem_slots = array<i64: 0, 0, 16, 64>} : !warpspec.channel<[64x64xf32], tmem>
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// Kernel names (class 4: NVPTX's report_fatal_error "Symbol name with
// unsupported characters")
//===----------------------------------------------------------------------===//

func.func @"my-kernel"() {
  // expected-error @+1 {{'warpspec.kernel' op is the body of function @"my-kernel", which is not a valid PTX identifier: kernel names start with a letter, '_' or '$' and continue with letters, digits, '_' or '$'}}
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

func.func @"0kernel"() {
  // expected-error @+1 {{which is not a valid PTX identifier}}
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

func.func @"_"() {
  // expected-error @+1 {{which is not a valid PTX identifier}}
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}

// -----

// Names PTX accepts: '_' and '$' lead or follow, digits follow.
func.func @_k$1() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "a" role(compute) warps(4) regs(64) {
    }
  }
  return
}
