// The chip and the options that take one of a few values are enums
// (PlanEnums.td): any other value is rejected when the pass options are
// parsed, before any IR is read, on either chip.
// RUN: not block-attn-opt %s -blockattn-warp-specialize="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not block-attn-opt %s -blockattn-warp-specialize="chip=sm_100a schedule=diagonal" 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a p-operand=tmem" 2>&1 | FileCheck %s --check-prefix=P-OPERAND
// RUN: not block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a o-store=tmem" 2>&1 | FileCheck %s --check-prefix=O-STORE
// RUN: not block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a l2-prefetch=maybe" 2>&1 | FileCheck %s --check-prefix=L2-PREFETCH
// RUN: not block-attn-opt %s -blockattn-warp-specialize="chip=sm_100a l2-prefetch=yes" 2>&1 | FileCheck %s --check-prefix=L2-PREFETCH-SM100A
// RUN: not block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a rotary-angles=once" 2>&1 | FileCheck %s --check-prefix=ROTARY-ANGLES
// RUN: not block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a softmax-full-tiles=always" 2>&1 | FileCheck %s --check-prefix=FULL-TILES
// RUN: not block-attn-opt %s -blockattn-warp-specialize="chip=sm_100a stmatrix-writes=x4" 2>&1 | FileCheck %s --check-prefix=STMATRIX
// The pipeline takes the same options, from the same declaration.
// RUN: not block-attn-opt %s --blockattn-to-ptx="schedule=diagonal" 2>&1 | FileCheck %s --check-prefix=PIPELINE

// CHIP: for the --chip option: Cannot find option named 'sm_80'!
// SCHEDULE: for the --schedule option: Cannot find option named 'diagonal'!
// P-OPERAND: for the --p-operand option: Cannot find option named 'tmem'!
// O-STORE: for the --o-store option: Cannot find option named 'tmem'!
// L2-PREFETCH: for the --l2-prefetch option: Cannot find option named 'maybe'!
// L2-PREFETCH-SM100A: for the --l2-prefetch option: Cannot find option named 'yes'!
// ROTARY-ANGLES: for the --rotary-angles option: Cannot find option named 'once'!
// FULL-TILES: for the --softmax-full-tiles option: Cannot find option named 'always'!
// STMATRIX: for the --stmatrix-writes option: Cannot find option named 'x4'!
// PIPELINE: for the --schedule option: Cannot find option named 'diagonal'!
// PIPELINE: error: blockattn-to-ptx: invalid options 'schedule=diagonal'

!act = memref<?x4x128xbf16>
func.func @forward(%q: !act, %k: !act, %v: !act, %o: !act,
                   %cu: memref<?xi32>) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}
