
// Issue 15: IR the verifier accepts but the lowering cannot address. Each
// case crashed convert-warpspec-to-nvvm before.

// A memref.dim of a memref that is not an argument of the kernel function
// (here a cast of one): buildKernelParams indexed the per-dimension table of
// a memref it had no entry for.
!act = memref<?x?x64xbf16>
func.func @negative_dim_of_cast(%q: !act, %cu: memref<?xi32>) {
  warpspec.kernel chip("sm_90a") {
    %c0 = arith.constant 0 : index
    %m = memref.cast %q : !act to memref<?x4x64xbf16>
    // expected-error @+1 {{'memref.dim' op inside a kernel must take the size of an argument of the kernel function}}
    %h = memref.dim %m, %c0 : memref<?x4x64xbf16>
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%h) tokens(%h) block_size(64) {
      }
    }
  }
  return
}

