// examples/seed.mlir (the seed configuration's three kernels) parses,
// verifies and prints, and printing is a fixed point: custom, generic and
// bytecode round trips all give back the same IR.
//
// RUN: block-attn-opt %blockattn_src_root/examples/seed.mlir | FileCheck %s
// RUN: block-attn-opt %blockattn_src_root/examples/seed.mlir > %t.custom.mlir
// RUN: block-attn-opt %t.custom.mlir > %t.custom2.mlir
// RUN: diff %t.custom.mlir %t.custom2.mlir
// RUN: block-attn-opt %blockattn_src_root/examples/seed.mlir --mlir-print-op-generic | block-attn-opt > %t.generic.mlir
// RUN: diff %t.custom.mlir %t.generic.mlir
// RUN: block-attn-opt %blockattn_src_root/examples/seed.mlir --emit-bytecode | block-attn-opt > %t.bytecode.mlir
// RUN: diff %t.custom.mlir %t.bytecode.mlir

// CHECK-LABEL: func.func @seed_forward
// CHECK: blockattn.forward
// CHECK-SAME: {element_type = bf16, head_dim = 128 : i64}

// CHECK-LABEL: func.func @seed_backward
// CHECK: blockattn.backward
// CHECK-SAME: {element_type = bf16, head_dim = 128 : i64}

// CHECK-LABEL: func.func @seed_backward_rope
// CHECK: blockattn.backward
// CHECK-SAME: rotary(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : memref<?x64xf32>, memref<?x64xf32>)
// CHECK-SAME: rotary = #blockattn.rotary<half_split>
