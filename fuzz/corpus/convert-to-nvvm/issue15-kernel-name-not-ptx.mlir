module {
  func.func @"my-kernel"(%arg0: memref<?x4x128xbf16> {blockattn.name = "q"}, %arg1: memref<?x4x128xbf16> {blockattn.name = "k"}, %arg2: memref<?x4x128xbf16> {blockattn.name = "v"}, %arg3: memref<?x4x128xbf16> {blockattn.name = "o"}, %arg4: memref<?xi32> {blockattn.name = "cu_seqlens"}) {
    warpspec.kernel chip("sm_90a") attributes {ctas_per_sm = 2 : i64, info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, kind = "forward", rotary = "none", softmax_scale = 0.0883883461 : f32}, tiles_per_cta = 4 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %dim = memref.dim %arg0, %c0 : memref<?x4x128xbf16>
      %dim_0 = memref.dim %arg0, %c1 : memref<?x4x128xbf16>
      %cst = arith.constant 0.0883883461 : f32
      %0 = warpspec.channel "qkv" depth(2) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
      warpspec.partition "load" role(load) warps(4) regs(40) {
        warpspec.tile_loop (%arg5, %arg6, %arg7) in %arg4 : memref<?xi32> heads(%dim_0) tokens(%dim) block_size(64) contiguous {
          %slot0, %1:3 = warpspec.acquire %0 : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
          warpspec.tma_load %arg0[%arg5, %arg7] into %1#0 : memref<?x4x128xbf16>, <64x128xbf16, smem>
          warpspec.tma_load %arg1[%arg5, %arg7] into %1#1 : memref<?x4x128xbf16>, <64x128xbf16, smem>
          warpspec.tma_load %arg2[%arg5, %arg7] into %1#2 : memref<?x4x128xbf16>, <64x128xbf16, smem>
          warpspec.commit %slot0 tile(%arg5, %arg6, %arg7)
        }
        warpspec.close %0 : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
      }
      warpspec.partition "compute" role(compute) warps(4) regs(216) {
        %1 = warpspec.scratch : <64x128xbf16, smem>
        warpspec.consume %0 (%slot01, %arg5, %arg6, %arg7, %arg8, %arg9, %arg10) : !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem> {
          %2 = warpspec.mma %arg8, %arg9 {transpose_b} : !warpspec.buffer<64x128xbf16, smem>, <64x128xbf16, smem> -> <64x64xf32>
          %probs, %row_sums = warpspec.softmax %2 valid_cols(%arg6) scale(%cst) : <64x64xf32> -> <64x64xbf16>, <64xf32>
          %3 = warpspec.mma %probs, %arg10 : !warpspec.acc<64x64xbf16>, <64x128xbf16, smem> -> <64x128xf32>
          warpspec.release %slot01
          warpspec.store %3 to %arg3[%arg5, %arg7] rows(%arg6) divide_by(%row_sums) via(%1) bulk : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.rows<64xf32>, !warpspec.buffer<64x128xbf16, smem>
        }
      }
    }
    return
  }
}

