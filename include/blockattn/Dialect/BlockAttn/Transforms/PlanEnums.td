//===- PlanEnums.td - blockattn-warp-specialize's enums ----*- tablegen -*-===//
//
// The chips the recipes target and the values of the tuning options that
// take one of a few: the pass options of blockattn-warp-specialize, the
// blockattn-to-ptx pipeline options and the block-attn-compile flags parse
// into these, and the plan (Plan.h) decides on them.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PLANENUMS_TD
#define BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PLANENUMS_TD

include "mlir/IR/EnumAttr.td"

class BlockAttn_PlanEnum<string name, string summary,
                         list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::blockattn";
}

def BlockAttn_Chip : BlockAttn_PlanEnum<"Chip", "target GPU", [
    I32EnumAttrCase<"sm_90a", 0>,
    I32EnumAttrCase<"sm_100a", 1>]>;

def BlockAttn_Schedule
    : BlockAttn_PlanEnum<"Schedule", "how tiles are dealt to CTAs", [
    I32EnumAttrCase<"automatic", 0, "auto">,
    I32EnumAttrCase<"strided", 1>,
    I32EnumAttrCase<"contiguous", 2>,
    I32EnumAttrCase<"chunked", 3>]>;

def BlockAttn_POperand
    : BlockAttn_PlanEnum<"POperand", "where P feeds O = P V from", [
    I32EnumAttrCase<"registers", 0>,
    I32EnumAttrCase<"smem", 1>]>;

def BlockAttn_OStore
    : BlockAttn_PlanEnum<"OStore", "how output tiles leave the registers", [
    I32EnumAttrCase<"tma", 0>,
    I32EnumAttrCase<"smem", 1>,
    I32EnumAttrCase<"registers", 2>]>;

def BlockAttn_L2Prefetch
    : BlockAttn_PlanEnum<"L2Prefetch", "whether the producer prefetches into L2", [
    I32EnumAttrCase<"automatic", 0, "auto">,
    I32EnumAttrCase<"on", 1>,
    I32EnumAttrCase<"off", 2>]>;

#endif // BLOCKATTN_DIALECT_BLOCKATTN_TRANSFORMS_PLANENUMS_TD
