// The whole pipeline on the seed forward for sm_100a (blockattn-to-ptx runs
// warpspec-allocate-tmem before warpspec-allocate-smem): PTX for sm_100a
// made of tcgen05 instructions, that ptxas accepts with no spills, and SASS
// with the Blackwell instructions the kernel is built from
// (blockattn-to-ptx-sm100a-backward.mlir does the same for the backward).
//
// RUN: block-attn-opt %s --blockattn-to-ptx="chip=sm_100a" | FileCheck %s --check-prefix=BIN
// BIN: gpu.binary @seed_forward
// BIN-SAME: #nvvm.target<O = 3, chip = "sm_100a", features = "+ptx86">
//
// RUN: block-attn-opt %s --blockattn-to-ptx="chip=sm_100a format=none" | FileCheck %s --check-prefix=NVVM --implicit-check-not=warpspec. --implicit-check-not=blockattn.forward --implicit-check-not=wgmma
// NVVM: gpu.module @seed_forward
// NVVM: llvm.func @seed_forward
// NVVM-SAME: chip = "sm_100a"
// NVVM-SAME: tmem_columns = 256 : i64
// NVVM: nvvm.tcgen05.alloc
//
// RUN: rm -rf %t && block-attn-compile %s --chip=sm_100a -o %t | FileCheck %s --check-prefix=TABLE
// TABLE: seed_forward sm_100a load:4w/40r mma:4w/40r softmax:8w/216r - 230384 256
// RUN: FileCheck %s --check-prefix=PTX --implicit-check-not=wgmma < %t/seed_forward.ptx
// PTX: .target sm_100a
// PTX-NOT: .maxnreg
// PTX: .reqntid 512, 1, 1
// PTX-NEXT: .minnctapersm 1
// PTX-DAG: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// PTX-DAG: tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned
// PTX-DAG: tcgen05.dealloc.cta_group::1.sync.aligned.b32
// PTX-DAG: tcgen05.fence::before_thread_sync
// PTX-DAG: tcgen05.fence::after_thread_sync
// PTX-DAG: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// PTX-DAG: tcgen05.ld.sync.aligned.16x256b.x8.b32
// PTX-DAG: tcgen05.ld.sync.aligned.16x256b.x16.b32
// PTX-DAG: tcgen05.st.sync.aligned.16x128b.x8.b32
// PTX-DAG: tcgen05.wait::ld.sync.aligned
// PTX-DAG: tcgen05.wait::st.sync.aligned
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 40
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 216
// PTX-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: cp.async.bulk.tensor.3d.global.shared::cta
// PTX-DAG: mbarrier.try_wait.parity
// PTX-DAG: ex2.approx.ftz.f32
// The MMAs: 8 for S (both operands shared-memory descriptors), 4 for O = P V
// with A (P) in tensor memory ([a-tmem]).
// RUN: grep -cE 'tcgen05.mma.cta_group::1.kind::f16.* \[.r[0-9]+\], .rd[0-9]+, .rd[0-9]+, .r[0-9]+, .p[0-9]+;' %t/seed_forward.ptx | FileCheck %s --check-prefix=COUNT8
// RUN: grep -cE 'tcgen05.mma.cta_group::1.kind::f16.* \[.r[0-9]+\], \[.r[0-9]+\], .rd[0-9]+, .r[0-9]+, .p[0-9]+;' %t/seed_forward.ptx | FileCheck %s --check-prefix=COUNT4
// COUNT8: {{^}}8{{$}}
// COUNT4: {{^}}4{{$}}
//
// REQUIRES: ptxas
// RUN: %ptxas -arch=sm_100a -v %t/seed_forward.ptx -o %t/seed_forward.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// PTXAS: Compiling entry function 'seed_forward' for 'sm_100a'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// RUN: %if cuobjdump %{ %cuobjdump --dump-sass %t/seed_forward.cubin > %t/seed_forward.sass %}
// RUN: %if cuobjdump %{ FileCheck %s --check-prefix=SASS --implicit-check-not=LDL --implicit-check-not=STL --implicit-check-not=HGMMA < %t/seed_forward.sass %}
// SASS-DAG: UTCHMMA gdesc[{{.*}}], gdesc[{{.*}}], tmem[{{.*}}]
// SASS-DAG: UTCHMMA tmem[{{.*}}], gdesc[{{.*}}], tmem[{{.*}}]
// SASS-DAG: UTCBAR
// SASS-DAG: LDTM.16dp256bit.x8
// SASS-DAG: LDTM.16dp256bit.x16
// SASS-DAG: STTM.16dp128bit.x8
// SASS-DAG: UTMALDG.3D
// SASS-DAG: UTMASTG.3D
// SASS-DAG: USETMAXREG
// SASS-DAG: MUFU.EX2
// SASS-DAG: SHFL.BFLY
// In SASS too: 12 UTCHMMA (8 from shared memory, 4 with A in tensor
// memory) and 4 UTCBAR (the four tcgen05.commit).
// RUN: %if cuobjdump %{ grep -c 'UTCHMMA' %t/seed_forward.sass | FileCheck %s --check-prefix=COUNT12 %}
// RUN: %if cuobjdump %{ grep -c 'UTCHMMA tmem' %t/seed_forward.sass | FileCheck %s --check-prefix=COUNT4 %}
// RUN: %if cuobjdump %{ grep -c 'UTCBAR' %t/seed_forward.sass | FileCheck %s --check-prefix=COUNT4 %}
// COUNT12: {{^}}12{{$}}

!act = memref<?x4x128xbf16>
func.func @seed_forward(%q: !act, %k: !act, %v: !act, %o: !act,
                        %cu_seqlens: memref<?xi32>) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}
