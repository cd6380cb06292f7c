//===- WarpSpecAttrs.td - warpspec enums and attributes ----*- tablegen -*-===//

#ifndef BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECATTRS_TD
#define BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECATTRS_TD

include "blockattn/Dialect/WarpSpec/IR/WarpSpecDialect.td"
include "mlir/IR/EnumAttr.td"

def WarpSpec_MemorySpace : I32EnumAttr<"MemorySpace",
    "where a channel's buffers live", [
      I32EnumAttrCase<"smem", 0>,
      I32EnumAttrCase<"tmem", 1>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::warpspec";
}
def WarpSpec_MemorySpaceAttr
    : EnumAttr<WarpSpec_Dialect, WarpSpec_MemorySpace, "memory_space"> {
  let assemblyFormat = "`<` $value `>`";
}

def WarpSpec_Role : I32EnumAttr<"Role", "what a partition does", [
      I32EnumAttrCase<"load", 0>,
      I32EnumAttrCase<"compute", 1>,
      I32EnumAttrCase<"mma", 2>,
      I32EnumAttrCase<"softmax", 3>,
      I32EnumAttrCase<"rotary", 4>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::warpspec";
  let description = [{
    - `load`: issues TMA copies into channels (one elected thread).
    - `compute`: a warpgroup that multiplies, does tile math and stores
      (the Hopper consumer: wgmma accumulators live in its registers).
    - `mma`: issues tensor-core MMAs from one elected thread (Blackwell).
    - `softmax`: tile math on accumulators read from tensor memory, and the
      stores of the finished tiles (Blackwell's softmax and epilogue
      warpgroups).
    - `rotary`: applies rotary embeddings to loaded tiles in shared memory,
      for the MMA to read (all threads of the warpgroup).

    `load` and `mma` partitions run their bodies on one thread per replica
    (`PartitionOp::isSingleThreaded`); the others on every thread.
  }];
}
def WarpSpec_RoleAttr : EnumAttr<WarpSpec_Dialect, WarpSpec_Role, "role"> {
  let assemblyFormat = "$value";
}

def WarpSpec_Chip : I32EnumAttr<"Chip", "a GPU that kernels target", [
      I32EnumAttrCase<"sm_90a", 0>,
      I32EnumAttrCase<"sm_100a", 1>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::warpspec";
  let description = [{
    The chips the compiler targets: `sm_90a` (Hopper: wgmma, accumulators in
    registers) and `sm_100a` (Blackwell: tcgen05, accumulators in tensor
    memory). This is the one chip enum of the compiler: the `chip` of a
    `warpspec.kernel` (`#warpspec<chip sm_90a>`), the `chip` option of
    `blockattn-warp-specialize`, `blockattn-to-ptx` and block-attn-compile
    (`--chip`), the plan, the recipes and the NVVM conversion's `TargetInfo`
    all take it.
  }];
  // An unknown chip names the chips there are.
  let parameterParser = [{[&]() -> ::mlir::FailureOr<::mlir::warpspec::Chip> {
    ::llvm::SMLoc loc = $_parser.getCurrentLocation();
    std::string name;
    if (::mlir::failed($_parser.parseKeywordOrString(&name)))
      return ::mlir::failure();
    if (std::optional<::mlir::warpspec::Chip> chip =
            ::mlir::warpspec::symbolizeChip(name))
      return *chip;
    return {(::llvm::LogicalResult)($_parser.emitError(loc)
        << "unknown chip '" << name << "'; supported chips: }] #
        !interleave(!foreach(case, enumerants, case.str), ", ") # [{")};
  }()}];
}
def WarpSpec_ChipAttr : EnumAttr<WarpSpec_Dialect, WarpSpec_Chip, "chip"> {
  let assemblyFormat = "$value";
}

def WarpSpec_RegisterAction : I32EnumAttr<"RegisterAction",
    "which way setmaxnreg moves a warpgroup's registers", [
      I32EnumAttrCase<"increase", 0>,
      I32EnumAttrCase<"decrease", 1>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::warpspec";
}
def WarpSpec_RegisterActionAttr
    : EnumAttr<WarpSpec_Dialect, WarpSpec_RegisterAction, "register_action"> {
  let assemblyFormat = "$value";
}

def WarpSpec_TraceEvent : I32EnumAttr<"TraceEvent",
    "a pipeline event a traced kernel records", [
      I32EnumAttrCase<"tile_begin", 1>,
      I32EnumAttrCase<"tile_end", 2>,
      I32EnumAttrCase<"wait_begin", 3>,
      I32EnumAttrCase<"wait_end", 4>,
      I32EnumAttrCase<"arrive", 5>,
      I32EnumAttrCase<"copy", 6>,
      I32EnumAttrCase<"mma_begin", 7>,
      I32EnumAttrCase<"mma_end", 8>,
      I32EnumAttrCase<"softmax_begin", 9>,
      I32EnumAttrCase<"softmax_end", 10>,
      I32EnumAttrCase<"store_begin", 11>,
      I32EnumAttrCase<"store_end", 12>,
      I32EnumAttrCase<"rotate_begin", 13>,
      I32EnumAttrCase<"rotate_end", 14>,
      I32EnumAttrCase<"tmem_begin", 15>,
      I32EnumAttrCase<"tmem_end", 16>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::warpspec";
  let description = [{
    What a `warpspec.trace` record marks, numbered as the record's event
    code (0 is no record). `_begin` and `_end` pairs bracket an op: the
    waits on a slot's barriers (`wait_empty`, `wait_full`), the MMAs (on
    sm_90a up to the accumulator's completion, on sm_100a the issue), the
    softmax and its gradient, the stores and writes of register tiles, the
    rotary ops, the tensor-memory loads and stores, and a whole tile (a
    tile loop's or a consume loop's body). `arrive` (a publish or a slot
    given back) and `copy` (a TMA load issued) are points.
  }];
}
def WarpSpec_TraceEventAttr
    : EnumAttr<WarpSpec_Dialect, WarpSpec_TraceEvent, "trace_event"> {
  let assemblyFormat = "$value";
}

#endif // BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECATTRS_TD
