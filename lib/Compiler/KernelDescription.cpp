//===- KernelDescription.cpp - a kernel described by parameters -----------===//
//
// block-attn-compile --kind ...: the parameters become MLIR source, which the
// parser and the op verifier check like any input file.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Compiler/Compiler.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::blockattn;

LogicalResult
blockattn::verifyKernelDescription(const KernelDescription &description,
                                   std::string &error) {
  const KernelDescription &d = description;
  if (d.kind != "forward" && d.kind != "backward") {
    error = "--kind must be 'forward' or 'backward'";
    return failure();
  }
  // The element type is spelled into the source's memref types: only the
  // supported ones are accepted here, so nothing else reaches the text.
  if (d.dtype != "bf16" && d.dtype != "f16") {
    error = "--dtype must be 'bf16' or 'f16', got '" + d.dtype + "'";
    return failure();
  }
  if (d.rotary != "none" && d.rotary != "half_split" &&
      d.rotary != "interleaved") {
    error = "--rotary must be 'none', 'half_split' or 'interleaved', got '" +
            d.rotary + "'";
    return failure();
  }
  if (d.rotary == "none") {
    for (auto [given, flag] :
         std::initializer_list<std::pair<bool, const char *>>{
             {d.positions, "--positions"},
             {d.rotateV, "--rotate-v"},
             {d.rotaryTheta.has_value(), "--rotary-theta"}})
      if (given) {
        error = std::string(flag) +
                " needs --rotary=half_split or --rotary=interleaved";
        return failure();
      }
  }
  // Theta is an f32 attribute of the op: it must stay finite and above 1
  // once rounded to f32 (1e67 would be printed as `inf`, which does not
  // parse).
  if (d.rotaryTheta && !(std::isfinite(static_cast<float>(*d.rotaryTheta)) &&
                         static_cast<float>(*d.rotaryTheta) > 1.0f)) {
    error = "--rotary-theta must be a finite number greater than 1, got " +
            std::to_string(*d.rotaryTheta);
    return failure();
  }
  if (d.rotary != "none" && (d.headDim <= 0 || d.headDim % 2)) {
    error =
        "--rotary needs an even --head-dim, got " + std::to_string(d.headDim);
    return failure();
  }
  // The sizes are spelled into the source and into the default name: a
  // negative one would make neither parse. The op verifier judges which
  // positive ones are supported.
  for (auto [value, flag] :
       std::initializer_list<std::pair<int64_t, const char *>>{
           {d.headDim, "--head-dim"}, {d.blockSize, "--block-size"}})
    if (value <= 0) {
      error =
          std::string(flag) + " must be positive, got " + std::to_string(value);
      return failure();
    }
  if (d.group < 1) {
    error = "--group must be at least 1, got " + std::to_string(d.group);
    return failure();
  }
  if (d.heads > 0 && d.heads % d.group) {
    error = "--heads (" + std::to_string(d.heads) +
            ", the query heads) must be a multiple of --group (" +
            std::to_string(d.group) + ")";
    return failure();
  }
  if (d.heads < 0) {
    error = "--heads must be 0 (a run-time head count) or positive, got " +
            std::to_string(d.heads);
    return failure();
  }
  // The name becomes a symbol in the source, bare (anything else would let
  // the text say something else), and the PTX entry: an MLIR bare
  // identifier that is a PTX identifier too.
  if (!d.name.empty() &&
      (!(llvm::isAlpha(d.name.front()) || d.name.front() == '_') ||
       !warpspec::TargetLimits::isValidPtxIdentifier(d.name))) {
    error = "--name must be a letter or '_', then letters, digits, '_' or "
            "'$' (a PTX identifier, not a lone '_'), got '" +
            d.name + "'";
    return failure();
  }
  return success();
}

std::string blockattn::getKernelName(const KernelDescription &description) {
  const KernelDescription &d = description;
  if (!d.name.empty())
    return d.name;
  std::string name = "blockattn_" + d.kind + "_d" + std::to_string(d.headDim) +
                     "_b" + std::to_string(d.blockSize) + "_" + d.dtype;
  if (d.group > 1)
    name += "_g" + std::to_string(d.group);
  if (d.rotary != "none") {
    name += "_" + d.rotary;
    if (d.positions)
      name += "_pos";
    if (d.rotateV)
      name += "_rv";
    if (d.rotaryTheta)
      name += "_theta";
  }
  return name;
}

std::string blockattn::getKernelSource(const KernelDescription &description) {
  const KernelDescription &d = description;
  std::string h = d.heads > 0 ? std::to_string(d.heads) : "?";
  std::string act =
      "memref<?x" + h + "x" + std::to_string(d.headDim) + "x" + d.dtype + ">";
  // Grouped-query attention: k, v (and dk, dv) have heads / group heads.
  std::string kvHeads = d.heads > 0 ? std::to_string(d.heads / d.group) : "?";
  std::string kvAct = "memref<?x" + kvHeads + "x" + std::to_string(d.headDim) +
                      "x" + d.dtype + ">";
  auto typeOf = [&](const std::string &tensor) {
    bool kvSide =
        tensor == "k" || tensor == "v" || tensor == "dk" || tensor == "dv";
    return kvSide ? kvAct : act;
  };
  std::string table = "memref<?x" + std::to_string(d.headDim / 2) + "xf32>";
  bool rope = d.rotary != "none";
  bool theta = rope && d.rotaryTheta.has_value();
  bool tables = rope && !theta;
  bool positions = rope && d.positions;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "func.func @" << getKernelName(d) << "(";
  std::vector<std::string> tensors =
      d.kind == "forward"
          ? std::vector<std::string>{"q", "k", "v", "o"}
          : std::vector<std::string>{"q", "k", "v", "do", "dq", "dk", "dv"};
  for (const std::string &t : tensors)
    os << "%" << t << ": " << typeOf(t) << ", ";
  os << "%cu: memref<?xi32>, %scale: f32";
  if (tables)
    os << ", %cos: " << table << ", %sin: " << table;
  if (positions)
    os << ", %positions: memref<?xi32>";
  os << ") {\n  blockattn." << d.kind;
  for (const std::string &t : tensors)
    os << " " << t << "(%" << t << " : " << typeOf(t) << ")";
  os << " cu_seqlens(%cu : memref<?xi32>) scale(%scale : f32)";
  if (tables)
    os << " rotary(%cos, %sin : " << table << ", " << table << ")";
  if (positions)
    os << " positions(%positions : memref<?xi32>)";
  os << " {block_size = " << d.blockSize << " : i64, head_dim = " << d.headDim
     << " : i64, element_type = " << d.dtype;
  if (d.group > 1)
    os << ", group = " << d.group << " : i64";
  if (rope)
    os << ", rotary = #blockattn.rotary<" << d.rotary << ">";
  if (theta)
    // An exponent makes it a float literal, 9 digits make it exact in f32.
    os << ", rotary_theta = "
       << llvm::format("%.9e",
                       static_cast<double>(static_cast<float>(*d.rotaryTheta)))
       << " : f32";
  if (rope && d.rotateV)
    os << ", rotate_v";
  os << "}\n  return\n}\n";
  return s;
}

OwningOpRef<ModuleOp>
blockattn::buildKernelModule(const KernelDescription &description,
                             MLIRContext *context) {
  std::string error;
  if (failed(verifyKernelDescription(description, error))) {
    emitError(UnknownLoc::get(context)) << error;
    return nullptr;
  }
  return parseSourceString<ModuleOp>(getKernelSource(description), context,
                                     "<flags>");
}
