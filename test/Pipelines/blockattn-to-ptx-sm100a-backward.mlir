// The whole pipeline on the seed backward for sm_100a: PTX that ptxas
// accepts with no spills, and SASS with the Blackwell instructions the
// kernel is built from. The backward uses the whole tensor memory (512
// columns); P and dS reach the tensor cores through shared memory, so there
// is no tcgen05.st.
//
// RUN: block-attn-opt %s --blockattn-to-ptx="chip=sm_100a" | FileCheck %s --check-prefix=BIN
// BIN: gpu.binary @seed_backward
// BIN-SAME: #nvvm.target<O = 3, chip = "sm_100a", features = "+ptx86">
//
// RUN: block-attn-opt %s --blockattn-to-ptx="chip=sm_100a format=none" | FileCheck %s --check-prefix=NVVM --implicit-check-not=warpspec. --implicit-check-not=blockattn.backward
// NVVM: gpu.module @seed_backward
// NVVM: llvm.func @seed_backward
// NVVM-SAME: kind = "backward"
// NVVM-SAME: tmem_columns = 512 : i64
//
// RUN: rm -rf %t && block-attn-compile %s --chip=sm_100a -o %t | FileCheck %s --check-prefix=TABLE
// TABLE: seed_backward sm_100a load:4w/40r mma:4w/40r softmax:8w/216r - 197616 512
// RUN: FileCheck %s --check-prefix=PTX --implicit-check-not=wgmma --implicit-check-not=tcgen05.st < %t/seed_backward.ptx
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
// PTX-DAG: tcgen05.wait::ld.sync.aligned
// PTX-DAG: fence.proxy.async.shared::cta
// PTX-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: cp.async.bulk.tensor.3d.global.shared::cta
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx.ftz.f32
// The five MMA chains, all from shared-memory descriptors: S and dP (8
// steps each), dV, dK and dQ (4 each); 7 commits (five full barriers, two
// after_mma releases); 3 outputs, each a bulk group of two tensor stores.
// RUN: grep -cE 'tcgen05.mma.cta_group::1.kind::f16.* \[.r[0-9]+\], .rd[0-9]+, .rd[0-9]+, .r[0-9]+, .p[0-9]+;' %t/seed_backward.ptx | FileCheck %s --check-prefix=COUNT28
// RUN: grep -c 'tcgen05.commit' %t/seed_backward.ptx | FileCheck %s --check-prefix=COUNT7
// RUN: grep -c 'tcgen05.ld.sync.aligned.16x256b.x16.b32' %t/seed_backward.ptx | FileCheck %s --check-prefix=COUNT3
// RUN: grep -c 'cp.async.bulk.tensor.3d.global.shared::cta' %t/seed_backward.ptx | FileCheck %s --check-prefix=COUNT6
// COUNT28: {{^}}28{{$}}
// COUNT7: {{^}}7{{$}}
// COUNT6: {{^}}6{{$}}
// COUNT3: {{^}}3{{$}}
//
// REQUIRES: ptxas
// RUN: %ptxas -arch=sm_100a -v %t/seed_backward.ptx -o %t/seed_backward.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// PTXAS: Compiling entry function 'seed_backward' for 'sm_100a'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// RUN: %if cuobjdump %{ %cuobjdump --dump-sass %t/seed_backward.cubin > %t/seed_backward.sass %}
// RUN: %if cuobjdump %{ FileCheck %s --check-prefix=SASS --implicit-check-not=LDL --implicit-check-not=STL --implicit-check-not=STTM --implicit-check-not=HGMMA < %t/seed_backward.sass %}
// SASS-DAG: UTCHMMA gdesc[{{.*}}], gdesc[{{.*}}], tmem[{{.*}}]
// SASS-DAG: UTCBAR
// SASS-DAG: LDTM.16dp256bit.x8
// SASS-DAG: LDTM.16dp256bit.x16
// SASS-DAG: UTMALDG.3D
// SASS-DAG: UTMASTG.3D
// SASS-DAG: USETMAXREG
// SASS-DAG: MUFU.EX2
// SASS-DAG: SHFL.BFLY
// In SASS too: 28 UTCHMMA, 7 UTCBAR, 5 LDTM (S, dP, dV, dK, dQ).
// RUN: %if cuobjdump %{ grep -c 'UTCHMMA' %t/seed_backward.sass | FileCheck %s --check-prefix=COUNT28 %}
// RUN: %if cuobjdump %{ grep -c 'UTCBAR' %t/seed_backward.sass | FileCheck %s --check-prefix=COUNT7 %}
// RUN: %if cuobjdump %{ grep -c 'LDTM' %t/seed_backward.sass | FileCheck %s --check-prefix=COUNT5 %}
// COUNT5: {{^}}5{{$}}

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
