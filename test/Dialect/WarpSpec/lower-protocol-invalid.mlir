// RUN: block-attn-opt %s -split-input-file -verify-diagnostics --warpspec-lower-protocol

// The diagnostics of warpspec-lower-protocol. The pass carries ring
// positions through warpspec.tile_loop and warpspec.consume only; a protocol
// op in another region (here an scf.if, which the verifiers accept) would
// need its position threaded through a region the pass does not know.

!act = memref<?x4x64xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x64xbf16, smem>
!one = !warpspec.channel<[64x64xbf16], smem>

func.func @acquire_in_if(%q: !act {blockattn.name = "q"},
                         %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_90a) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %x = warpspec.channel "x" depth(2) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %zero = arith.constant 0 : i32
        %first = arith.cmpi eq, %head, %zero : i32
        scf.if %first {
          // expected-error @+1 {{'warpspec.acquire' op is nested in 'scf.if', through which warpspec-lower-protocol cannot carry ring positions; channel protocol ops belong directly in a warpspec.partition, a warpspec.tile_loop, a warpspec.consume or an scf.for}}
          %s, %b = warpspec.acquire %x : !one
          warpspec.tma_load %q[%row, %head] into %b : !act, !tile
          warpspec.commit %s tile(%row, %rows, %head)
        }
      }
    }
    warpspec.partition "sink" role(compute) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %s, %b = warpspec.get %x : !one
        warpspec.release %s
      }
    }
  }
  return
}
