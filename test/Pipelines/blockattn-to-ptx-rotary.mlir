// The whole pipeline on kernels with fused rotary embeddings (bf16, head_dim
// 128), for sm_90a and sm_100a: a half-split forward with cos/sin tables, an
// interleaved forward whose angles come from theta at explicit positions,
// and a half-split backward with tables. PTX that ptxas accepts with no
// spills, holding what the rotation is made of: 16-byte ld.global of the
// tables (or ex2/sin/cos.approx from theta), the position clamp, 16-byte
// shared loads and stores of the tiles, the async-proxy fence and the named
// barrier of the replica; on sm_100a, the rotary warpgroup's registers.
//
// RUN: block-attn-opt %s --blockattn-to-ptx="chip=sm_90a" | FileCheck %s --check-prefix=BIN90
// BIN90: gpu.binary @rope_forward [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx86">
// BIN90: gpu.binary @rope_forward_theta [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx86">
// BIN90: gpu.binary @rope_backward [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx86">
// RUN: block-attn-opt %s --blockattn-to-ptx="chip=sm_100a" | FileCheck %s --check-prefix=BIN100
// BIN100: gpu.binary @rope_forward [#gpu.object<#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx86">
// BIN100: gpu.binary @rope_forward_theta [#gpu.object<#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx86">
// BIN100: gpu.binary @rope_backward [#gpu.object<#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx86">
//
// Stopping at the NVVM/LLVM dialects: nothing of warpspec or blockattn is
// left, and the manifest says which rotary layout the kernel applies.
// RUN: block-attn-opt %s --blockattn-to-ptx="chip=sm_100a format=none" | FileCheck %s --check-prefix=NVVM --implicit-check-not=warpspec. --implicit-check-not=blockattn.forward --implicit-check-not=blockattn.backward
// NVVM: llvm.func @rope_forward(
// NVVM-SAME: rotary = "half_split"
// NVVM: llvm.func @rope_forward_theta(
// NVVM-SAME: rotary = "interleaved"
// NVVM: llvm.func @rope_backward(
// NVVM-SAME: kind = "backward"
// NVVM-SAME: rotary = "half_split"
//
// The resource tables: the Hopper forward has two rotary warpgroups (104
// registers each, replicas taking every second slot) that rotate each slot
// in place before the one consumer (256) takes it; the Hopper backward has
// one rotary warpgroup and one consumer (256), which reads its tile's angles
// once and holds them through dk and dq, and the rotary warpgroup takes the
// rest of the three warpgroups' pool (208); Blackwell adds the rotary warpgroup, the MMA
// warpgroup takes 56 registers instead of 40 and the load warpgroup 48.
// RUN: rm -rf %t && block-attn-compile %s --chip=sm_90a -o %t/sm90a --no-header | FileCheck %s --check-prefix=TABLE90
// TABLE90: {{^}}rope_forward{{ +}}sm_90a{{ +}}load:4w/40r rotary:8w/104r compute:4w/256r{{ +}}- 214000 0
// TABLE90-NEXT: {{^}}rope_forward_theta{{ +}}sm_90a{{ +}}load:4w/40r rotary:8w/104r compute:4w/256r{{ +}}- 214000 0
// TABLE90-NEXT: {{^}}rope_backward{{ +}}sm_90a{{ +}}load:4w/40r rotary:4w/208r compute:4w/256r{{ +}}- 230384 0
// With --rotary-warpgroup=on --rotary-warpgroups=1 the persistent kernels
// get one rotary warpgroup (104 registers; the two consumers 184, the shared
// memory that of the kernel without it); the backward is its default. ptxas
// spills nothing in its forward.
// RUN: block-attn-compile %s --chip=sm_90a --rotary-warpgroup=on --rotary-warpgroups=1 -o %t/rwg --no-header | FileCheck %s --check-prefix=TABLERWG
// TABLERWG: {{^}}rope_forward{{ +}}sm_90a{{ +}}load:4w/40r rotary:4w/104r compute:8w/184r{{ +}}- 230384 0
// TABLERWG-NEXT: {{^}}rope_forward_theta{{ +}}sm_90a{{ +}}load:4w/40r rotary:4w/104r compute:8w/184r{{ +}}- 230384 0
// TABLERWG-NEXT: {{^}}rope_backward{{ +}}sm_90a{{ +}}load:4w/40r rotary:4w/208r compute:4w/256r{{ +}}- 230384 0
// RUN: %ptxas -arch=sm_90a -v %t/rwg/rope_forward.ptx -o %t/rwg/rope_forward.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS --implicit-check-not=C75
// RUN: block-attn-compile %s --chip=sm_100a -o %t/sm100a --no-header | FileCheck %s --check-prefix=TABLE100
// TABLE100: {{^}}rope_forward{{ +}}sm_100a{{ +}}load:4w/48r rotary:4w/56r mma:4w/56r softmax:8w/160r{{ +}}- 197616 256
// TABLE100-NEXT: {{^}}rope_forward_theta{{ +}}sm_100a{{ +}}load:4w/48r rotary:4w/56r mma:4w/56r softmax:8w/160r{{ +}}- 197616 256
// TABLE100-NEXT: {{^}}rope_backward{{ +}}sm_100a{{ +}}load:4w/48r rotary:4w/72r mma:4w/96r softmax:4w/256r{{ +}}- 197616 512
//
// The manifests' rotary parameters: the tables (pointer, i32 rows, i64 row
// stride) and the positions (pointer, i32 length), and nothing else.
// RUN: %python %S/../Tools/block-attn-compile/Inputs/check-rotary-params.py %t/sm90a/rope_forward.json cos sin
// RUN: %python %S/../Tools/block-attn-compile/Inputs/check-rotary-params.py %t/sm90a/rope_forward_theta.json positions
// RUN: %python %S/../Tools/block-attn-compile/Inputs/check-rotary-params.py %t/sm90a/rope_backward.json cos sin
// RUN: %python %S/../Tools/block-attn-compile/Inputs/check-rotary-params.py %t/sm100a/rope_forward.json cos sin
// RUN: %python %S/../Tools/block-attn-compile/Inputs/check-rotary-params.py %t/sm100a/rope_forward_theta.json positions
// RUN: %python %S/../Tools/block-attn-compile/Inputs/check-rotary-params.py %t/sm100a/rope_backward.json cos sin
// RUN: FileCheck %s --check-prefix=JSON100 < %t/sm100a/rope_forward.json
// JSON100: "kernel": "rope_forward",
// JSON100: "name": "rotary",
// JSON100-NEXT: "registers": 56,
// JSON100-NEXT: "replicas": 1,
// JSON100-NEXT: "role": "rotary",
// JSON100: "rotary": "half_split",
// JSON100: "threads": 640,
//
// sm_90a forward, tables. The position of a row is clamped into the
// smaller table (min with its last row, then max with 0: min.relu), 8 pairs
// of cos and 8 of sin per work item come in 16-byte loads, and the tiles
// are read and written back 16 bytes at a time and rounded once (two f32
// to a bf16x2). The fence and the rotary replica's barrier (a named
// barrier per replica, 2 or 3, so a register; 128 threads) follow, then its
// arrival on the signal ring. The one consumer's barrier is named barrier 4.
// RUN: FileCheck %s --check-prefix=FWD90 < %t/sm90a/rope_forward.ptx
// FWD90: .target sm_90a
// FWD90: .reqntid 512, 1, 1
// FWD90-DAG: setmaxnreg.dec.sync.aligned.u32 40
// FWD90-DAG: setmaxnreg.dec.sync.aligned.u32 104
// FWD90-DAG: setmaxnreg.inc.sync.aligned.u32 256
// FWD90-DAG: min.u32
// FWD90-DAG: min.relu.s32
// FWD90-DAG: ld.global.v4.b32 {{.*}}[%rd{{[0-9]+}}];
// FWD90-DAG: ld.global.v4.b32 {{.*}}[%rd{{[0-9]+}}+16];
// FWD90-DAG: ld.shared.v4.b32
// FWD90-DAG: cvt.rn.bf16x2.f32
// FWD90-DAG: st.shared.v4.b32
// FWD90-DAG: fence.proxy.async.shared::cta
// FWD90-DAG: bar.sync %r{{[0-9]+}}, 128;
// FWD90-DAG: bar.sync 4, 128;
// FWD90-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// FWD90-NOT: sin.approx
// 16 table loads: 4 passes over the tile's 64 rows, 2 of cos and 2 of sin.
// RUN: grep -c 'ld.global.v4.b32' %t/sm90a/rope_forward.ptx | FileCheck %s --check-prefix=COUNT16
// COUNT16: {{^}}16{{$}}
//
// sm_90a forward, theta and positions: the positions are read (4 bytes) at
// clamped tokens, the angles computed: one ex2.approx for the pair base
// beyond the softmax's, then per pair a reduction (cvt.rni) and
// cos.approx/sin.approx; no table is read 16 bytes at a time.
// RUN: FileCheck %s --check-prefix=THETA90 --implicit-check-not=ld.global.v4 < %t/sm90a/rope_forward_theta.ptx
// THETA90: .target sm_90a
// THETA90-DAG: ld.global.b32
// THETA90-DAG: ex2.approx.f32
// THETA90-DAG: cvt.rni.f32.f32
// THETA90-DAG: cos.approx.f32
// THETA90-DAG: sin.approx.f32
// THETA90-DAG: fence.proxy.async.shared::cta
// THETA90-DAG: bar.sync {{%r[0-9]+}}, 128;
// 8 passes over the rows (interleaved: 16 items a row), 4 pairs each.
// RUN: grep -c 'sin.approx.f32' %t/sm90a/rope_forward_theta.ptx | FileCheck %s --check-prefix=COUNT32
// RUN: grep -c 'cos.approx.f32' %t/sm90a/rope_forward_theta.ptx | FileCheck %s --check-prefix=COUNT32
// COUNT32: {{^}}32{{$}}
//
// sm_90a backward: q and k rotated in the slot (16-byte table loads), and
// dK and dQ turned back in registers: the table entries of each register
// pair are loaded apiece (2 outputs x 32 pairs x 2 tables, one or two
// entries a load), far more global loads than the forward's 20.
// RUN: FileCheck %s --check-prefix=BWD90 < %t/sm90a/rope_backward.ptx
// BWD90: .target sm_90a
// BWD90-DAG: ld.global.v4.b32
// BWD90-DAG: min.relu.s32
// BWD90-DAG: fence.proxy.async.shared::cta
// BWD90-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// RUN: grep -c 'ld.global' %t/sm90a/rope_backward.ptx | FileCheck %s --check-prefix=MANYLOADS
// RUN: grep -c 'ld.global' %t/sm100a/rope_backward.ptx | FileCheck %s --check-prefix=MANYLOADS
// MANYLOADS: {{^([4-9][0-9]|[1-9][0-9][0-9]+)$}}
//
// sm_100a forward: 640 threads; the load warpgroup gives registers back down
// to 48, the rotary and MMA warpgroups to 56, the softmax warpgroups take 160. The rotary
// warpgroup (one replica) synchronizes on named barrier 2.
// RUN: FileCheck %s --check-prefix=FWD100 < %t/sm100a/rope_forward.ptx
// FWD100: .target sm_100a
// FWD100: .reqntid 640, 1, 1
// FWD100-DAG: setmaxnreg.dec.sync.aligned.u32 48
// FWD100-DAG: setmaxnreg.dec.sync.aligned.u32 56
// FWD100-DAG: setmaxnreg.inc.sync.aligned.u32 160
// FWD100-DAG: min.relu.s32
// FWD100-DAG: ld.global.v2.b64
// FWD100-DAG: ld.shared.v4.b32
// FWD100-DAG: st.shared.v4.b32
// FWD100-DAG: fence.proxy.async.shared::cta
// FWD100-DAG: bar.sync 2, 128;
// FWD100-DAG: tcgen05.mma.cta_group::1.kind::f16
// RUN: grep -c 'setmaxnreg.dec.sync.aligned.u32.*56' %t/sm100a/rope_forward.ptx | FileCheck %s --check-prefix=COUNT2
// COUNT2: {{^}}2{{$}}
// RUN: FileCheck %s --check-prefix=THETA100 < %t/sm100a/rope_forward_theta.ptx
// THETA100: .target sm_100a
// THETA100-DAG: setmaxnreg.dec.sync.aligned.u32 56
// THETA100-DAG: ex2.approx.f32
// THETA100-DAG: cos.approx.f32
// THETA100-DAG: sin.approx.f32
// RUN: FileCheck %s --check-prefix=BWD100 < %t/sm100a/rope_backward.ptx
// sm_100a backward at D = 128: one softmax warpgroup (512 threads), so
// that the rotary and MMA warpgroups get 72 and 96 registers and the softmax
// warpgroup 256.
// BWD100: .target sm_100a
// BWD100: .reqntid 512, 1, 1
// BWD100-DAG: setmaxnreg.dec.sync.aligned.u32 72
// BWD100-DAG: setmaxnreg.dec.sync.aligned.u32 96
// BWD100-DAG: setmaxnreg.inc.sync.aligned.u32 256
// BWD100-DAG: tcgen05.ld.sync.aligned
// BWD100-DAG: min.relu.s32
// BWD100-DAG: bar.sync 2, 128;
//
// REQUIRES: ptxas
// No spills on either chip (compiled only on sm_100a; see docs/rotary.md).
// RUN: %ptxas -arch=sm_90a -v %t/sm90a/rope_forward.ptx -o %t/sm90a/rope_forward.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS --implicit-check-not=C75
// RUN: %ptxas -arch=sm_90a -v %t/sm90a/rope_forward_theta.ptx -o %t/sm90a/rope_forward_theta.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS --implicit-check-not=C75
// RUN: %ptxas -arch=sm_90a -v %t/sm90a/rope_backward.ptx -o %t/sm90a/rope_backward.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS --implicit-check-not=C75
// RUN: %ptxas -arch=sm_100a -v %t/sm100a/rope_forward.ptx -o %t/sm100a/rope_forward.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: %ptxas -arch=sm_100a -v %t/sm100a/rope_forward_theta.ptx -o %t/sm100a/rope_forward_theta.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: %ptxas -arch=sm_100a -v %t/sm100a/rope_backward.ptx -o %t/sm100a/rope_backward.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

!act = memref<?x4x128xbf16>
!tab = memref<?x64xf32>

func.func @rope_forward(%q: !act, %k: !act, %v: !act, %o: !act,
                        %cu_seqlens: memref<?xi32>, %cos: !tab, %sin: !tab) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>) rotary(%cos, %sin : !tab, !tab)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

func.func @rope_forward_theta(%q: !act, %k: !act, %v: !act, %o: !act,
                              %cu_seqlens: memref<?xi32>,
                              %positions: memref<?xi32>) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>)
      positions(%positions : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<interleaved>, rotary_theta = 10000.0 : f32}
  return
}

func.func @rope_backward(%q: !act, %k: !act, %v: !act, %do: !act,
                         %dq: !act, %dk: !act, %dv: !act,
                         %cu_seqlens: memref<?xi32>, %cos: !tab, %sin: !tab) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>) rotary(%cos, %sin : !tab, !tab)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}
