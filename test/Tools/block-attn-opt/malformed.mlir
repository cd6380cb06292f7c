// Malformed input never crashes block-attn-opt: each file below is rejected
// with a located diagnostic and exit code 1.
//
// RUN: rm -rf %t && split-file --no-leading-lines %s %t
// RUN: %python -c "import random, sys; r = random.Random(0); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(4096)))" > %t/garbage.bin
// RUN: %python -c "import sys; sys.stdout.buffer.write(b'ML\xefR' + bytes(range(256)) * 4)" > %t/garbage.mlirbc
// RUN: block-attn-opt %t/valid.mlir --emit-bytecode -o %t/valid.mlirbc
// RUN: %python -c "import sys; d = open(sys.argv[1], 'rb').read(); open(sys.argv[2], 'wb').write(d[:len(d) // 2])" %t/valid.mlirbc %t/truncated.mlirbc
//
// RUN: not block-attn-opt %t/truncated-type.mlir 2>&1 | FileCheck %s --check-prefix=TRUNC-TYPE
// TRUNC-TYPE: truncated-type.mlir:3:{{[0-9]+}}: error: expected 'x' in dimension list
//
// RUN: not block-attn-opt %t/truncated-attrs.mlir 2>&1 | FileCheck %s --check-prefix=TRUNC-ATTRS
// TRUNC-ATTRS: truncated-attrs.mlir:6:{{[0-9]+}}: error: expected '}' in attribute dictionary
//
// RUN: not block-attn-opt %t/truncated-func.mlir 2>&1 | FileCheck %s --check-prefix=TRUNC-FUNC
// TRUNC-FUNC: truncated-func.mlir:{{[0-9]+}}:{{[0-9]+}}: error: expected operation name in quotes
//
// RUN: not block-attn-opt %t/unknown-op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: unknown-op.mlir:3:3: error: custom op 'blockattn.frobnicate' is unknown
//
// RUN: not block-attn-opt %t/unknown-op-generic.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN-GENERIC
// UNKNOWN-GENERIC: unknown-op-generic.mlir:3:3: error: unregistered operation 'blockattn.frobnicate' found in dialect ('blockattn') that does not allow unknown operations
//
// RUN: not block-attn-opt %t/unknown-rotary.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN-ROTARY
// UNKNOWN-ROTARY: unknown-rotary.mlir:7:{{[0-9]+}}: error: expected ::mlir::blockattn::RotaryMode to be one of: none, half_split, interleaved
//
// RUN: not block-attn-opt %t/tensor-operand.mlir 2>&1 | FileCheck %s --check-prefix=TENSOR
// TENSOR: tensor-operand.mlir:4:{{[0-9]+}}: error: custom op 'blockattn.forward' invalid kind of type specified: expected builtin.memref, but found 'tensor<?x4x128xbf16>'
//
// RUN: not block-attn-opt %t/cu-seqlens-i64.mlir 2>&1 | FileCheck %s --check-prefix=CU-I64
// CU-I64: cu-seqlens-i64.mlir:3:3: error: 'blockattn.forward' op cu_seqlens must have i32 elements, got 'i64'
//
// RUN: not block-attn-opt %t/type-mismatch.mlir 2>&1 | FileCheck %s --check-prefix=MISMATCH
// MISMATCH: type-mismatch.mlir:4:{{[0-9]+}}: error: use of value '%q' expects different type than prior uses: 'memref<?x4x64xbf16>' vs 'memref<?x4x128xbf16>'
//
// RUN: not block-attn-opt %t/undefined-value.mlir 2>&1 | FileCheck %s --check-prefix=UNDEF
// UNDEF: undefined-value.mlir:4:{{[0-9]+}}: error: use of undeclared SSA value name
//
// RUN: not block-attn-opt %t/garbage.bin 2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: garbage.bin:1:1: error:
//
// RUN: not block-attn-opt %t/garbage.mlirbc 2>&1 | FileCheck %s --check-prefix=GARBAGE-BC
// GARBAGE-BC: garbage.mlirbc:0:0: error: bytecode version {{[0-9]+}} is newer than the current version
//
// RUN: not block-attn-opt %t/truncated.mlirbc 2>&1 | FileCheck %s --check-prefix=TRUNC-BC
// TRUNC-BC: truncated.mlirbc:0:0: error:
//
// Exact exit codes: 1 for every malformed file (0 for the valid ones), and
// no crash.
// RUN: %python %S/Inputs/exit-codes.py block-attn-opt %t | FileCheck %s --check-prefix=EXIT
// EXIT:      cu-seqlens-i64.mlir: exit 1
// EXIT-NEXT: garbage.bin: exit 1
// EXIT-NEXT: garbage.mlirbc: exit 1
// EXIT-NEXT: tensor-operand.mlir: exit 1
// EXIT-NEXT: truncated-attrs.mlir: exit 1
// EXIT-NEXT: truncated-func.mlir: exit 1
// EXIT-NEXT: truncated-type.mlir: exit 1
// EXIT-NEXT: truncated.mlirbc: exit 1
// EXIT-NEXT: type-mismatch.mlir: exit 1
// EXIT-NEXT: undefined-value.mlir: exit 1
// EXIT-NEXT: unknown-op-generic.mlir: exit 1
// EXIT-NEXT: unknown-op.mlir: exit 1
// EXIT-NEXT: unknown-rotary.mlir: exit 1
// EXIT-NEXT: valid.mlir: exit 0
// EXIT-NEXT: valid.mlirbc: exit 0
// EXIT-NOT: {{.}}

//--- valid.mlir
// The well-formed op the malformed files below are cut from.
func.func @ok(%q: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%q : memref<?x4x128xbf16>)
      v(%q : memref<?x4x128xbf16>) o(%q : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- truncated-type.mlir
func.func @cut_in_a_type(%q: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>)
      k(%q : memref<?x4x1
//--- truncated-attrs.mlir
func.func @cut_in_attrs(%q: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%q : memref<?x4x128xbf16>)
      v(%q : memref<?x4x128xbf16>) o(%q : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64,
       elem
//--- truncated-func.mlir
func.func @no_closing_brace(%q: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%q : memref<?x4x128xbf16>)
      v(%q : memref<?x4x128xbf16>) o(%q : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
//--- unknown-op.mlir
// blockattn is registered, but has no frobnicate op.
func.func @unknown() {
  blockattn.frobnicate
  return
}

//--- unknown-op-generic.mlir
// The same in the generic form.
func.func @unknown_generic() {
  "blockattn.frobnicate"() : () -> ()
  return
}

//--- unknown-rotary.mlir
func.func @unknown_rotary(%q: memref<?x4x128xbf16>, %cu: memref<?xi32>,
                          %t: memref<?x64xf32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%q : memref<?x4x128xbf16>)
      v(%q : memref<?x4x128xbf16>) o(%q : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) rotary(%t, %t : memref<?x64xf32>, memref<?x64xf32>)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<sideways>}
  return
}

//--- tensor-operand.mlir
func.func @tensor_q(%t: tensor<?x4x128xbf16>, %q: memref<?x4x128xbf16>,
                    %cu: memref<?xi32>) {
  blockattn.forward
      q(%t : tensor<?x4x128xbf16>) k(%q : memref<?x4x128xbf16>)
      v(%q : memref<?x4x128xbf16>) o(%q : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- cu-seqlens-i64.mlir
func.func @cu_seqlens_i64(%q: memref<?x4x128xbf16>, %cu: memref<?xi64>) {
  // cu_seqlens holds int32 offsets (FlashAttention's varlen convention).
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%q : memref<?x4x128xbf16>)
      v(%q : memref<?x4x128xbf16>) o(%q : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi64>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- type-mismatch.mlir
func.func @wrong_type_for_value(%q: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // %q is declared with head_dim 128 but used as head_dim 64.
  blockattn.forward q(%q : memref<?x4x128xbf16>)
      k(%q : memref<?x4x64xbf16>)
      v(%q : memref<?x4x128xbf16>) o(%q : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- undefined-value.mlir
func.func @undefined_k(%q: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  // %k is never defined.
  blockattn.forward q(%q : memref<?x4x128xbf16>)
      k(%k : memref<?x4x128xbf16>)
      v(%q : memref<?x4x128xbf16>) o(%q : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 128 : i64, element_type = bf16}
  return
}
