module {
  func.func @seed_forward(%arg0: memref<?x4x128xbf16> {blockattn.name = "q"}, %arg1: memref<?x4x128xbf16> {blockattn.name = "k"}, %arg2: memref<?x4x128xbf16> {blockattn.name = "v"}, %arg3: memref<?x4x128xbf16> {blockattn.name = "o"}, %arg4: memref<?xi32> {blockattn.name = "cu_seqlens"}) {
    warpspec.kernel chip("sm_100a") attributes {info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, kind = "forward", rotary = "none", softmax_scale = 0.0883883461 : f32}, smem_bytes = 230384 : i64, tmem_base_offset = 229696 : i64, tmem_columns = 256 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %dim = memref.dim %arg0, %c0 : memref<?x4x128xbf16>
      %dim_0 = memref.dim %arg0, %c1 : memref<?x4x128xbf16>
      %cst = arith.constant 0.0883883461 : f32
      %0 = warpspec.channel "qkv" depth(4) {barrier_offset = 229376 : i64, buffer_offset = 0 : i64, info_offset = 229536 : i64, slot_stride = 49152 : i64} : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
      %1 = warpspec.channel "s" depth(2) {barrier_offset = 229440 : i64, info_offset = 229600 : i64, tmem_slots = array<i64: 0, 0, 9223372036854775807, 0>} : <[64x64xf32], tmem>
      %2 = warpspec.channel "p" depth(2) {barrier_offset = 229472 : i64, info_offset = 229632 : i64, tmem_slots = array<i64: 0, 64, 16, 64>} : <[64x64xbf16], tmem>
      %3 = warpspec.channel "o" depth(2) {barrier_offset = 229504 : i64, info_offset = 229664 : i64, tmem_slots = array<i64: 0, 96, 16, 96>} : <[64x128xf32], tmem>
      warpspec.partition "load" role(load) warps(4) regs(40) {
        warpspec.tile_loop (%arg5, %arg6, %arg7) in %arg4 : memref<?xi32> heads(%dim_0) tokens(%dim) block_size(64) {
          %slot0, %4:3 = warpspec.acquire %0 : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
          warpspec.tma_load %arg0[%arg5, %arg7] into %4#0 : memref<?x4x128xbf16>, <64x128xbf16, smem>
          warpspec.tma_load %arg1[%arg5, %arg7] into %4#1 : memref<?x4x128xbf16>, <64x128xbf16, smem>
          warpspec.tma_load %arg2[%arg5, %arg7] into %4#2 : memref<?x4x128xbf16>, <64x128xbf16, smem>
          warpspec.commit %slot0 tile(%arg5, %arg6, %arg7)
        }
        warpspec.close %0 : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
      }
      warpspec.partition "mma" role(mma) warps(4) regs(40) {
        warpspec.consume %0 (%slot01, %arg5, %arg6, %arg7, %arg8, %arg9, %arg10) : !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem> {
          %slot1, %4 = warpspec.acquire %1 : <[64x64xf32], tmem>
          warpspec.mma_async %arg8, %arg9 into %4 {transpose_b} : <64x128xbf16, smem>, <64x128xbf16, smem>, <64x64xf32, tmem>
          warpspec.commit %slot1 tile(%arg5, %arg6, %arg7)
          %slot2, %5 = warpspec.get %2 : <[64x64xbf16], tmem>
          %slot3, %6 = warpspec.acquire %3 : <[64x128xf32], tmem>
          warpspec.mma_async %5, %arg10 into %6 : <64x64xbf16, tmem>, <64x128xbf16, smem>, <64x128xf32, tmem>
          warpspec.commit %slot3 tile(%arg5, %arg6, %arg7)
          warpspec.release %slot2 after_mma
          warpspec.release %slot01 after_mma
        }
        warpspec.close %1 : <[64x64xf32], tmem>
      }
      warpspec.partition "softmax" role(softmax) warps(4) regs(216) replicas(2) {
        %4 = warpspec.scratch {offset = 196608 : i64, replica_stride = 16384 : i64} : <64x128xbf16, smem>
        warpspec.consume %1 (%slot11, %arg5, %arg6, %arg7, %arg8) : !warpspec.channel<[64x64xf32], tmem> {
          %5 = warpspec.tmem_load %arg8 : <64x64xf32, tmem> -> <64x64xf32>
          warpspec.release %slot11
          %probs, %row_sums = warpspec.softmax %5 valid_cols(%arg6) scale(%cst) : <64x64xf32> -> <64x64xbf16>, <64xf32>
          %slot21, %6 = warpspec.acquire %2 : <[64x64xbf16], tmem>
          warpspec.tmem_store %probs, %6 : <64x64xbf16>, <64x64xbf16, tmem>
          warpspec.commit %slot21 tile(%arg5, %arg6, %arg7)
          %slot31, %7 = warpspec.get %3 : <[64x128xf32], tmem>
          %8 = warpspec.tmem_load %7 : <64x128xf32, tmem> -> <64x128xf32>
          warpspec.release %slot31
          warpspec.store %8 to %arg3[%arg5, %arg7] rows(%arg6) divide_by(%row_sums) via(%4) bulk : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.rows<64xf32>, !warpspec.buffer<64x128xbf16, smem>
        }
      }
    }
    return
  }
}

