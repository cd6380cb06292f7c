// The whole pipeline on the seed forward for sm_90a: PTX that ptxas accepts
// with no spills and no serialized wgmma, and SASS with the Hopper
// instructions the kernel is built from. Both launches: the default
// (chunked: a CTA per 4 tiles, two CTAs per SM, one consumer warpgroup) and
// the persistent one of --schedule=strided (two consumer warpgroups).
//
// RUN: block-attn-opt %s --blockattn-to-ptx="chip=sm_90a" | FileCheck %s --check-prefix=BIN
// BIN: gpu.binary @seed_forward
// BIN-SAME: #nvvm.target<O = 3, chip = "sm_90a", features = "+ptx86">
//
// RUN: block-attn-opt %s --blockattn-to-ptx="chip=sm_90a format=none" | FileCheck %s --check-prefix=NVVM --implicit-check-not=warpspec.
// NVVM: gpu.module @seed_forward
// NVVM: llvm.func @seed_forward
// NVVM-SAME: ctas_per_sm = 2 : i64
// NVVM-SAME: grid = "chunked"
// NVVM-SAME: tiles_per_cta = 4 : i64
//
// RUN: rm -rf %t && block-attn-compile %s --chip=sm_90a -o %t | FileCheck %s --check-prefix=TABLE
// TABLE: seed_forward sm_90a load:4w/40r compute:4w/216r
// RUN: block-attn-compile %s --chip=sm_90a --schedule=strided -o %t/strided | FileCheck %s --check-prefix=TABLE-STRIDED
// TABLE-STRIDED: seed_forward sm_90a load:4w/40r compute:8w/232r
// RUN: FileCheck %s --check-prefixes=PTX,CHUNKED < %t/seed_forward.ptx
// RUN: FileCheck %s --check-prefixes=PTX,STRIDED < %t/strided/seed_forward.ptx
// PTX: .target sm_90a
// No .maxnreg: ptxas derives the register cap from the thread count and
// the CTAs per SM: 128 (65536 / (256 x 2)) for the chunked launch, 168
// (65536 / 384, rounded down to a multiple of 8) for the persistent one.
// PTX-NOT: .maxnreg
// CHUNKED: .reqntid 256, 1, 1
// CHUNKED-NEXT: .minnctapersm 2
// STRIDED: .reqntid 384, 1, 1
// STRIDED-NEXT: .minnctapersm 1
// PTX-NOT: .maxnreg
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 40
// CHUNKED-DAG: setmaxnreg.inc.sync.aligned.u32 216
// STRIDED-DAG: setmaxnreg.inc.sync.aligned.u32 232
// PTX-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: mbarrier.try_wait.parity
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-DAG: cp.async.bulk.tensor.3d.global.shared::cta
// PTX-DAG: ex2.approx.ftz.f32
//
// REQUIRES: ptxas
// RUN: %ptxas -arch=sm_90a -v %t/seed_forward.ptx -o %t/seed_forward.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS --implicit-check-not=C75
// RUN: %ptxas -arch=sm_90a -v %t/strided/seed_forward.ptx -o %t/strided/seed_forward.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS --implicit-check-not=C75
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// RUN: %if cuobjdump %{ %cuobjdump --dump-sass %t/seed_forward.cubin | FileCheck %s --check-prefix=SASS --implicit-check-not=LDL %}
// RUN: %if cuobjdump %{ %cuobjdump --dump-sass %t/strided/seed_forward.cubin | FileCheck %s --check-prefix=SASS --implicit-check-not=LDL %}
// SASS-DAG: HGMMA.64x64x16.F32.BF16
// SASS-DAG: HGMMA.64x128x16.F32.BF16
// SASS-DAG: UTMALDG.3D
// SASS-DAG: UTMASTG.3D
// SASS-DAG: USETMAXREG
// SASS-DAG: MUFU.EX2

!act = memref<?x?x128xbf16>
func.func @seed_forward(%q: !act, %k: !act, %v: !act, %o: !act,
                        %cu: memref<?xi32>, %scale: f32) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : memref<?xi32>) scale(%scale : f32)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}
