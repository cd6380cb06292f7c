// Debian's mlir-opt-22 with block-attn's plugins: the dialect plugin makes
// it parse and verify blockattn, the pass plugin gives it blockattn-to-ptx,
// and the seed pipeline runs through them to PTX for both chips (the NVVM
// target interface comes with the dialect plugin).
// REQUIRES: plugins

// RUN: %upstream_mlir_opt --load-dialect-plugin=%blockattn_libs/BlockAttnDialectPlugin.so %blockattn_src_root/examples/seed.mlir | FileCheck %s --check-prefix=PARSE
// PARSE: blockattn.forward
// PARSE: blockattn.backward

// RUN: %upstream_mlir_opt --load-dialect-plugin=%blockattn_libs/BlockAttnDialectPlugin.so \
// RUN:   --load-pass-plugin=%blockattn_libs/BlockAttnPassPlugin.so \
// RUN:   --pass-pipeline="builtin.module(blockattn-to-ptx{chip=sm_90a format=isa})" \
// RUN:   %blockattn_src_root/examples/seed.mlir | FileCheck %s --check-prefix=SM90
// SM90: gpu.binary @seed_forward
// SM90-SAME: .target sm_90a
// SM90: gpu.binary @seed_backward_rope

// RUN: %upstream_mlir_opt --load-dialect-plugin=%blockattn_libs/BlockAttnDialectPlugin.so \
// RUN:   --load-pass-plugin=%blockattn_libs/BlockAttnPassPlugin.so \
// RUN:   --pass-pipeline="builtin.module(blockattn-to-ptx{chip=sm_100a format=isa})" \
// RUN:   %blockattn_src_root/examples/seed.mlir | FileCheck %s --check-prefix=SM100
// SM100: gpu.binary @seed_forward
// SM100-SAME: .target sm_100a

// The stages one by one: the passes the plugin registers, upstream's after
// them, all by name in one textual pipeline.
// RUN: %upstream_mlir_opt --load-dialect-plugin=%blockattn_libs/BlockAttnDialectPlugin.so \
// RUN:   --load-pass-plugin=%blockattn_libs/BlockAttnPassPlugin.so \
// RUN:   --pass-pipeline="builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a}),warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm{chip=sm_90a},convert-nvvm-to-llvm,reconcile-unrealized-casts)" \
// RUN:   %blockattn_src_root/examples/seed.mlir | FileCheck %s --check-prefix=STAGES
// STAGES: gpu.module @seed_forward [#nvvm.target<{{.*}}chip = "sm_90a"
// STAGES: llvm.func @seed_forward(
// STAGES-SAME: blockattn.manifest

// Bad pipeline options are an error with a non-zero exit, also in a tool
// that is not ours.
// RUN: not %upstream_mlir_opt --load-dialect-plugin=%blockattn_libs/BlockAttnDialectPlugin.so \
// RUN:   --load-pass-plugin=%blockattn_libs/BlockAttnPassPlugin.so \
// RUN:   --pass-pipeline="builtin.module(blockattn-to-ptx{format=bogus})" \
// RUN:   %blockattn_src_root/examples/seed.mlir 2>&1 | FileCheck %s --check-prefix=BOGUS
// BOGUS: format must be 'isa', 'bin', 'fatbin', 'llvm' or 'none', got 'bogus'
