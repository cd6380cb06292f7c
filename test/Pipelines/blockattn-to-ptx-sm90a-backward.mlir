// The whole pipeline on the seed backward for sm_90a: PTX that ptxas
// accepts with no spills and no serialized wgmma, and SASS with the Hopper
// instructions the kernel is built from (blockattn-to-ptx-sm90a.mlir does
// the same for the forward). The default launch is chunked: two CTAs per
// SM, each a producer and one consumer warpgroup over a ring of one
// 64 KiB slot, three tiles per CTA.
//
// RUN: block-attn-opt %s --blockattn-to-ptx="chip=sm_90a" | FileCheck %s --check-prefix=BIN
// BIN: gpu.binary @seed_backward
// BIN-SAME: #nvvm.target<O = 3, chip = "sm_90a", features = "+ptx86">
//
// RUN: block-attn-opt %s --blockattn-to-ptx="chip=sm_90a format=none" | FileCheck %s --check-prefix=NVVM --implicit-check-not=warpspec. --implicit-check-not=blockattn.backward
// NVVM: gpu.module @seed_backward
// NVVM: llvm.func @seed_backward
// NVVM-SAME: kind = "backward"
//
// RUN: rm -rf %t && block-attn-compile %s --chip=sm_90a -o %t | FileCheck %s --check-prefix=TABLE
// TABLE: seed_backward sm_90a load:4w/40r compute:4w/216r - 99312 0
// RUN: FileCheck %s --check-prefix=PTX < %t/seed_backward.ptx
// PTX: .target sm_90a
// No .maxnreg: ptxas derives the register cap from .reqntid and
// .minnctapersm.
// PTX-NOT: .maxnreg
// PTX: .reqntid 256, 1, 1
// PTX-NEXT: .minnctapersm 2
// PTX-NOT: .maxnreg
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 40
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 216
// PTX-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: mbarrier.try_wait.parity
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: fence.proxy.async.shared::cta
// PTX-DAG: cp.async.bulk.wait_group.read 0
// PTX-DAG: cp.async.bulk.tensor.3d.global.shared::cta
//
// The wgmma of the five products: S and dP (K-major A and B: imm-trans-a
// and imm-trans-b 0), dV and dK (A from the P and dS buffers read
// transposed, B = dO or Q MN-major: both 1), dQ (A from registers, B = K
// MN-major).
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 1, 1;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}}, {{.*}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// RUN: grep -cE 'wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 .*, p, +1, +1, +0, +0;' %t/seed_backward.ptx | FileCheck %s --check-prefix=COUNT16
// RUN: grep -cE 'wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 .*, p, +1, +1, +1, +1;' %t/seed_backward.ptx | FileCheck %s --check-prefix=COUNT8
// RUN: grep -cE 'wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 .*\}, %rd[0-9]+, p, +1, +1, +1;' %t/seed_backward.ptx | FileCheck %s --check-prefix=COUNT4
// Three outputs, each a bulk group of two tensor stores.
// RUN: grep -c 'cp.async.bulk.commit_group' %t/seed_backward.ptx | FileCheck %s --check-prefix=COUNT3
// RUN: grep -c 'cp.async.bulk.tensor.3d.global.shared::cta' %t/seed_backward.ptx | FileCheck %s --check-prefix=COUNT6
// COUNT16: {{^}}16{{$}}
// COUNT8: {{^}}8{{$}}
// COUNT6: {{^}}6{{$}}
// COUNT4: {{^}}4{{$}}
// COUNT3: {{^}}3{{$}}
//
// REQUIRES: ptxas
// RUN: %ptxas -arch=sm_90a -v %t/seed_backward.ptx -o %t/seed_backward.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS --implicit-check-not=C75
// PTXAS: Compiling entry function 'seed_backward' for 'sm_90a'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// RUN: %if cuobjdump %{ %cuobjdump --dump-sass %t/seed_backward.cubin > %t/seed_backward.sass %}
// RUN: %if cuobjdump %{ FileCheck %s --check-prefix=SASS --implicit-check-not=LDL --implicit-check-not=STL < %t/seed_backward.sass %}
// SASS-DAG: HGMMA.64x64x16.F32.BF16
// SASS-DAG: HGMMA.64x128x16.F32.BF16 R{{[0-9]+}}, gdesc[{{.*}}].tnspA.tnspB
// SASS-DAG: HGMMA.64x128x16.F32.BF16 R{{[0-9]+}}, R{{[0-9]+}}, gdesc[{{.*}}].tnspB
// SASS-DAG: UTMALDG.3D
// SASS-DAG: UTMASTG.3D
// SASS-DAG: USETMAXREG
// SASS-DAG: MUFU.EX2
// SASS-DAG: SHFL.BFLY
// In SASS too: 16 HGMMA for S and dP, 8 reading A transposed (dV, dK).
// RUN: %if cuobjdump %{ grep -c 'HGMMA.64x64x16.F32.BF16' %t/seed_backward.sass | FileCheck %s --check-prefix=COUNT16 %}
// RUN: %if cuobjdump %{ grep -c 'HGMMA.64x128x16.F32.BF16 .*tnspA.tnspB' %t/seed_backward.sass | FileCheck %s --check-prefix=COUNT8 %}

!act = memref<?x4x128xbf16>
func.func @seed_backward(%q: !act, %k: !act, %v: !act, %do: !act,
                         %dq: !act, %dk: !act, %dv: !act,
                         %cu_seqlens: memref<?xi32>) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}
