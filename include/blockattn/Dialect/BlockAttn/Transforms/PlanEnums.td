//===- PlanEnums.td - blockattn-warp-specialize's enums ----*- tablegen -*-===//
//
// The values of the tuning options that take one of a few: the pass options
// of blockattn-warp-specialize, the blockattn-to-ptx pipeline options and the
// block-attn-compile flags parse into these, and the plan (Plan.h) decides on
// them. The chip option takes warpspec::Chip (WarpSpecAttrs.td), the chip
// enum of the whole compiler, which is also the IR's `#warpspec<chip ...>`.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PLANENUMS_TD
#define BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PLANENUMS_TD

include "mlir/IR/EnumAttr.td"
include "mlir/Pass/PassBase.td"

class BlockAttn_PlanEnum<string name, string summary, list<I32EnumCase> cases>
    : I32Enum<name, summary, cases> {
  let cppNamespace = "::mlir::blockattn";
}

def BlockAttn_Schedule
    : BlockAttn_PlanEnum<"Schedule", "how tiles are dealt to CTAs", [
    I32EnumCase<"automatic", 0, "auto">,
    I32EnumCase<"strided", 1>,
    I32EnumCase<"contiguous", 2>,
    I32EnumCase<"chunked", 3>,
    I32EnumCase<"dynamic", 4>]>;

def BlockAttn_POperand
    : BlockAttn_PlanEnum<"POperand", "where P feeds O = P V from", [
    I32EnumCase<"registers", 0>,
    I32EnumCase<"smem", 1>]>;

def BlockAttn_OStore
    : BlockAttn_PlanEnum<"OStore", "how output tiles leave the registers", [
    I32EnumCase<"tma", 0>,
    I32EnumCase<"smem", 1>,
    I32EnumCase<"registers", 2>,
    I32EnumCase<"slot", 3>,
    I32EnumCase<"automatic", 4, "auto">]>;

def BlockAttn_L2Prefetch
    : BlockAttn_PlanEnum<"L2Prefetch", "whether the producer prefetches", [
    I32EnumCase<"automatic", 0, "auto">,
    I32EnumCase<"on", 1>,
    I32EnumCase<"off", 2>]>;

def BlockAttn_SoftmaxFullTiles
    : BlockAttn_PlanEnum<"SoftmaxFullTiles",
                         "whether full tiles take a softmax without masks", [
    I32EnumCase<"automatic", 0, "auto">,
    I32EnumCase<"on", 1>,
    I32EnumCase<"off", 2>]>;

def BlockAttn_StmatrixWrites
    : BlockAttn_PlanEnum<"StmatrixWrites",
                         "whether register tiles go to shared memory by stmatrix", [
    I32EnumCase<"automatic", 0, "auto">,
    I32EnumCase<"on", 1>,
    I32EnumCase<"off", 2>]>;

def BlockAttn_RotaryWarpgroup
    : BlockAttn_PlanEnum<"RotaryWarpgroup",
                         "who rotates q and k on sm_90a", [
    I32EnumCase<"automatic", 0, "auto">,
    I32EnumCase<"on", 1>,
    I32EnumCase<"off", 2>]>;

def BlockAttn_RotaryAngles
    : BlockAttn_PlanEnum<"RotaryAngles",
                         "when the sm_90a backward reads its gradients' angles", [
    I32EnumCase<"automatic", 0, "auto">,
    I32EnumCase<"per_product", 1, "per-product">,
    I32EnumCase<"per_tile", 2, "per-tile">,
    I32EnumCase<"after_softmax", 3, "after-softmax">]>;

def BlockAttn_PositionsLoad
    : BlockAttn_PlanEnum<"PositionsLoad",
                         "who reads a positions tensor on sm_90a", [
    I32EnumCase<"automatic", 0, "auto">,
    I32EnumCase<"producer", 1>,
    I32EnumCase<"readers", 2>]>;

def BlockAttn_GroupRoles
    : BlockAttn_PlanEnum<"GroupRoles",
                         "how the sm_90a grouped-query backward splits a query head's work", [
    I32EnumCase<"serial", 0>,
    I32EnumCase<"pipelined", 1>,
    I32EnumCase<"pipelined_dq", 2, "pipelined-dq">,
    I32EnumCase<"automatic", 3, "auto">,
    I32EnumCase<"query_halves", 4, "query-halves">]>;

/// A pass option that takes one of the values of `enumInfo`, spelled as its
/// cases' strings; llvm::cl rejects any other value when the option is
/// parsed. `default` is the symbol of one case.
class EnumOption<string varName, string arg, EnumInfo enumInfo, string default,
                 string desc>
    : Option<varName, arg, enumInfo.cppType, enumInfo.cppType # "::" # default,
             desc,
             "::llvm::cl::values(" # !interleave(!foreach(case,
                 enumInfo.enumerants,
                 "clEnumValN(" # enumInfo.cppType # "::" # case.symbol # ", \""
                     # case.str # "\", \"\")"), ", ") # ")">;

#endif // BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PLANENUMS_TD
