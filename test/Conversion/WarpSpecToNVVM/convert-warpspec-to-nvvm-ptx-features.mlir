// RUN: block-attn-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm{ptx-features=+ptx80})'
// RUN: not block-attn-opt %s -split-input-file --pass-pipeline='builtin.module(warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm{ptx-features=+ptx60})' 2>&1 | FileCheck %s --check-prefix=PTX60
// RUN: not block-attn-opt %s -split-input-file --pass-pipeline='builtin.module(warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm{ptx-features=+ptx89})' 2>&1 | FileCheck %s --check-prefix=PTX89
// RUN: not block-attn-opt %s -split-input-file --pass-pipeline='builtin.module(warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm{ptx-features=sm_90})' 2>&1 | FileCheck %s --check-prefix=NOT-PTX

// Issue 15: ptx-features is checked against each kernel's chip by the
// conversion itself, not only by the blockattn-to-ptx pipeline: LLVM's NVPTX
// backend aborted (an LLVM fatal error, no location) when the pass ran alone
// with a PTX ISA older than the chip's instructions.

// +ptx80 has wgmma, setmaxnreg and the bulk tensor copies: sm_90a converts.
func.func @sm90a_kernel(%cu: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) {
    %h = arith.constant 1 : index
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%h) tokens(%h) block_size(64) {
      }
    }
  }
  return
}

// PTX60: error: 'warpspec.kernel' op targets sm_90a, but convert-warpspec-to-nvvm's ptx-features '+ptx60' is PTX ISA 6.0, older than sm_90a allows: it needs PTX ISA 8.0 or newer (+ptx80)
// PTX60: error: 'warpspec.kernel' op targets sm_100a, but convert-warpspec-to-nvvm's ptx-features '+ptx60' is PTX ISA 6.0, older than sm_100a allows: it needs PTX ISA 8.6 or newer (+ptx86)
// PTX89: error: 'warpspec.kernel' op targets sm_90a, but convert-warpspec-to-nvvm's ptx-features '+ptx89' is no PTX ISA version LLVM's NVPTX backend knows (+ptx80 ... +ptx88, +ptx90)
// NOT-PTX: error: 'warpspec.kernel' op targets sm_90a, but convert-warpspec-to-nvvm's ptx-features must be one PTX ISA version such as +ptx86, got 'sm_90'

// -----

// tcgen05 needs PTX ISA 8.6: +ptx80 is too old for sm_100a.
func.func @sm100a_kernel(%cu: memref<?xi32>) {
  // expected-error @+1 {{'warpspec.kernel' op targets sm_100a, but convert-warpspec-to-nvvm's ptx-features '+ptx80' is PTX ISA 8.0, older than sm_100a allows: it needs PTX ISA 8.6 or newer (+ptx86)}}
  warpspec.kernel chip(sm_100a) {
    %h = arith.constant 1 : index
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%h) tokens(%h) block_size(64) {
      }
    }
  }
  return
}
