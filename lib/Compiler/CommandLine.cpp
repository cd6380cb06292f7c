//===- CommandLine.cpp - block-attn-compile's flags as a library ----------===//
//
// A table of flags and one pass over the arguments. The pipeline's own
// options (--chip, --num-stages, ...) are not spelled here a second time:
// they are handed to BlockAttnToPtxOptions::parseFromString, so that the
// tool accepts exactly what `blockattn-to-ptx{...}` accepts, with the same
// value parsers.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Compiler/CommandLine.h"

#include "blockattn/Dialect/BlockAttn/Transforms/PlanEnums.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecEnums.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"

#include <cstdlib>
#include <type_traits>

using namespace mlir;
using namespace mlir::blockattn;

namespace {

enum class FlagKind { Bool, Int, Double, String, List, Pipeline };

struct Flag {
  const char *name;
  FlagKind kind;
  const char *help;
};

/// Every flag but the pipeline's, which getCompileCommandLineHelp lists
/// from BlockAttnToPtxOptions.
constexpr Flag kFlags[] = {
    {"o", FlagKind::String, "Output directory"},
    {"cubin", FlagKind::Bool, "Also assemble with ptxas (-v)"},
    {"ptxas", FlagKind::String, "ptxas to use"},
    {"quiet", FlagKind::Bool, "Print nothing on success"},
    {"no-header", FlagKind::Bool, "Omit the resource table's header"},
    {"kernels", FlagKind::List,
     "Compile only these kernel functions of the input (comma-separated)"},
    {"kind", FlagKind::String, "forward or backward (no input)"},
    {"head-dim", FlagKind::Int, "With --kind: head dimension: 32, 64, 96, 128, 192 or 256 (128)"},
    {"block-size", FlagKind::Int, "With --kind: block size: 16, 32, 64 or 128 (64)"},
    {"dtype", FlagKind::String, "With --kind: bf16 or f16"},
    {"heads", FlagKind::Int, "With --kind: static head count (0: run-time)"},
    {"group", FlagKind::Int,
     "With --kind: query heads per k/v head (grouped-query attention; 1)"},
    {"rotary", FlagKind::String,
     "With --kind: none, half_split or interleaved"},
    {"positions", FlagKind::Bool,
     "With --rotary: the kernel takes an i32 positions tensor [T] (default: "
     "a token's index inside its sequence)"},
    {"rotate-v", FlagKind::Bool, "With --rotary: rotate v as well"},
    {"rotary-theta", FlagKind::Double,
     "With --rotary: compute the angles in the kernel from this base (pair "
     "i of position p turns by p * theta^(-2i/head_dim)) instead of reading "
     "cos/sin tables"},
    {"causal", FlagKind::Bool,
     "With --kind: causal attention inside each block (token i of a block "
     "attends to tokens 0..i of its block)"},
    {"lse", FlagKind::Bool,
     "With --kind: the forward also writes the log-sum-exp (f32 [H, T] "
     "argument lse); the backward takes its gradient (dlse)"},
    {"name", FlagKind::String, "With --kind: kernel name"},
    {"emit-blockattn", FlagKind::Bool,
     "With --kind: print the verified blockattn IR of the kernel the flags "
     "describe and stop (no -o needed)"},
    {"trace", FlagKind::Bool,
     "Trace the kernels: each warp role records its pipeline events into a "
     "trace buffer parameter (--trace-records=256 unless given); the "
     "kernel's name gets the suffix _trace (docs/timeline.md)"},
    {"help", FlagKind::Bool, "Print this help"},
    {"h", FlagKind::Bool, "Print this help"},
};

/// A value's reason for being rejected, checked here so that a bad value is
/// reported with the flag's name as one line (llvm::cl would print its own
/// message to stderr): integers must parse, enums must be one of their
/// spellings. Other values are left to the pipeline's option parser.
template <typename T>
std::optional<std::string> checkPipelineValue(StringRef name, StringRef value) {
  if constexpr (std::is_integral_v<T>) {
    int64_t integer;
    if (value.getAsInteger(0, integer))
      return ("--" + name + " needs an integer, got '" + value + "'").str();
  } else if constexpr (std::is_enum_v<T>) {
    // The enums of Passes.td (PlanEnums.td's and warpspec::Chip) number
    // their cases from 0; stringifyEnum is found in the enum's namespace.
    SmallVector<std::string> spellings;
    for (unsigned i = 0;; ++i) {
      StringRef spelling = stringifyEnum(static_cast<T>(i));
      if (spelling.empty())
        break;
      if (spelling == value)
        return std::nullopt;
      spellings.push_back(("'" + spelling + "'").str());
    }
    std::string list = llvm::join(ArrayRef(spellings).drop_back(), ", ");
    list += (spellings.size() > 1 ? " or " : "") + spellings.back();
    return ("--" + name + " must be " + list + ", got '" + value + "'").str();
  }
  return std::nullopt;
}

using PipelineValueCheck = std::optional<std::string> (*)(StringRef name,
                                                          StringRef value);

struct PipelineFlag {
  const char *name;
  PipelineValueCheck check;
};

/// The options of blockattn-to-ptx that are flags of the tool: those of
/// blockattn-warp-specialize, from the list in its Passes.td, and
/// ptx-features and trace-records. `format` is not: the tool always writes PTX,
/// and a cubin with --cubin.
constexpr PipelineFlag kPipelineFlags[] = {
#define BLOCKATTN_PASS_OPTION(TYPE, NAME, ARGUMENT, ...)                       \
  {ARGUMENT, &checkPipelineValue<TYPE>},
#define GEN_PASS_OPTION_LIST_BLOCKATTNWARPSPECIALIZEPASS
#include "blockattn/Dialect/BlockAttn/Transforms/PassOptionList.h.inc"
    {"ptx-features", &checkPipelineValue<std::string>},
    {"trace-records", &checkPipelineValue<int64_t>},
};

const PipelineFlag *lookupPipelineFlag(StringRef name) {
  for (const PipelineFlag &flag : kPipelineFlags)
    if (name == flag.name)
      return &flag;
  return nullptr;
}

/// How the user spelled a flag: -o, --chip.
std::string spelling(StringRef name) {
  return (name.size() == 1 ? "-" : "--") + name.str();
}

/// Flags that describe a kernel: they need --kind.
constexpr const char *kDescriptionOnlyFlags[] = {
    "rotary", "positions", "rotate-v", "rotary-theta", "causal", "lse"};

std::optional<Flag> lookupFlag(StringRef name) {
  for (const Flag &flag : kFlags)
    if (name == flag.name)
      return flag;
  if (const PipelineFlag *flag = lookupPipelineFlag(name))
    return Flag{flag->name, FlagKind::Pipeline, ""};
  return std::nullopt;
}

/// The parser's state: what it has seen so far.
struct Parser {
  CompileInvocation &invocation;
  raw_ostream &errorStream;
  KernelDescription description;
  llvm::StringSet<> given;
  std::string pipelineOptions;
  bool trace = false;
  /// Records per lane that --trace asks for when --trace-records is not
  /// given.
  static constexpr int64_t kDefaultTraceRecords = 256;

  LogicalResult error(const Twine &message) {
    errorStream << "error: " << message << "\n";
    return failure();
  }

  LogicalResult setBool(StringRef name, std::optional<StringRef> value,
                        bool &out) {
    if (!value) {
      out = true;
      return success();
    }
    if (llvm::is_contained({"true", "TRUE", "True", "1"}, *value))
      out = true;
    else if (llvm::is_contained({"false", "FALSE", "False", "0"}, *value))
      out = false;
    else
      return error("--" + name + " takes no value or true/false, got '" +
                   *value + "'");
    return success();
  }

  LogicalResult setInt(StringRef name, StringRef value, int64_t &out) {
    if (value.getAsInteger(0, out))
      return error("--" + name + " needs an integer, got '" + value + "'");
    return success();
  }

  LogicalResult setDouble(StringRef name, StringRef value, double &out) {
    // As llvm::cl reads a double: strtod over the whole value.
    std::string text = value.str();
    char *end = nullptr;
    out = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0')
      return error("--" + name + " needs a number, got '" + value + "'");
    return success();
  }

  LogicalResult addPipelineOption(StringRef name, StringRef value) {
    // The value is spliced into `name=value ...`; characters that would end
    // or nest it are never part of a valid value.
    if (value.empty() ||
        value.find_first_of(" \t\n\r\v\f'\"{}") != StringRef::npos)
      return error("--" + name + " has no valid value: '" + value + "'");
    if (std::optional<std::string> problem =
            lookupPipelineFlag(name)->check(name, value))
      return error(*problem);
    pipelineOptions += (name + "=" + value + " ").str();
    return success();
  }

  LogicalResult handle(StringRef name, const Flag &flag,
                       std::optional<StringRef> value) {
    given.insert(name);
    KernelDescription &d = description;
    CompileInvocation &inv = invocation;
    if (flag.kind == FlagKind::Pipeline)
      return addPipelineOption(name, *value);
    if (flag.kind == FlagKind::List) {
      SmallVector<StringRef> names;
      value->split(names, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
      for (StringRef kernel : names)
        inv.options.kernels.push_back(kernel.str());
      return success();
    }
    if (flag.kind == FlagKind::Bool) {
      bool *target = llvm::StringSwitch<bool *>(name)
                         .Case("cubin", &inv.options.cubin)
                         .Case("quiet", &inv.quiet)
                         .Case("no-header", &inv.noHeader)
                         .Case("positions", &d.positions)
                         .Case("rotate-v", &d.rotateV)
                         .Case("causal", &d.causal)
                         .Case("lse", &d.lse)
                         .Case("emit-blockattn", &inv.emitBlockAttn)
                         .Case("trace", &trace)
                         .Cases({"help", "h"}, &inv.help);
      return setBool(name, value, *target);
    }
    if (flag.kind == FlagKind::Int) {
      int64_t *target = llvm::StringSwitch<int64_t *>(name)
                            .Case("head-dim", &d.headDim)
                            .Case("block-size", &d.blockSize)
                            .Case("heads", &d.heads)
                            .Case("group", &d.group);
      return setInt(name, *value, *target);
    }
    if (flag.kind == FlagKind::Double) {
      double theta;
      if (failed(setDouble(name, *value, theta)))
        return failure();
      d.rotaryTheta = theta;
      return success();
    }
    std::string *target = llvm::StringSwitch<std::string *>(name)
                              .Case("o", &inv.outputDirectory)
                              .Case("ptxas", &inv.options.ptxas)
                              .Case("kind", &d.kind)
                              .Case("dtype", &d.dtype)
                              .Case("rotary", &d.rotary)
                              .Case("name", &d.name);
    *target = value->str();
    return success();
  }

  LogicalResult parse(ArrayRef<StringRef> args) {
    bool positionalOnly = false;
    for (size_t i = 0; i < args.size(); ++i) {
      StringRef arg = args[i];
      if (positionalOnly || arg.size() < 2 || arg.front() != '-') {
        if (!invocation.inputFile.empty())
          return error("more than one input file: '" + invocation.inputFile +
                       "' and '" + arg + "'");
        if (arg.empty())
          return error("an empty input file name");
        invocation.inputFile = arg.str();
        continue;
      }
      if (arg == "--") {
        positionalOnly = true;
        continue;
      }
      StringRef body = arg.drop_front(arg.starts_with("--") ? 2 : 1);
      auto [name, rest] = body.split('=');
      std::optional<StringRef> value;
      if (body.contains('='))
        value = rest;
      std::optional<Flag> flag = lookupFlag(name);
      if (!flag)
        return error("unknown flag '" + arg + "' (see --help)");
      if (flag->kind != FlagKind::Bool && !value) {
        if (i + 1 == args.size())
          return error(spelling(name) + " needs a value");
        value = args[++i];
      }
      if (failed(handle(name, *flag, value)))
        return failure();
    }
    return success();
  }

  /// The checks that make the flags one command.
  LogicalResult check() {
    CompileInvocation &inv = invocation;
    if (inv.help)
      return success();
    if (given.contains("kind")) {
      if (!inv.inputFile.empty())
        return error("give an input file or --kind, not both");
      std::string message;
      if (failed(verifyKernelDescription(description, message)))
        return error(message);
      inv.description = description;
    } else {
      if (inv.emitBlockAttn)
        return error("--emit-blockattn needs --kind");
      for (const char *flag : kDescriptionOnlyFlags)
        if (given.contains(flag))
          return error(Twine("--") + flag +
                       " describes a kernel: it needs --kind (an input file "
                       "states these in its blockattn ops)");
      if (given.contains("group"))
        return error("--group describes a kernel: it needs --kind (an input "
                     "file states it as its blockattn ops' group attribute)");
      if (inv.inputFile.empty())
        return error("no input file (or --kind) given");
    }
    if (inv.outputDirectory.empty() && !inv.emitBlockAttn)
      return error("no output directory (-o DIR) given");
    if (trace && !given.contains("trace-records"))
      pipelineOptions +=
          "trace-records=" + std::to_string(kDefaultTraceRecords) + " ";
    if (given.contains("trace-records") && !trace)
      return error("--trace-records needs --trace");
    std::string message;
    llvm::raw_string_ostream os(message);
    if (failed(inv.options.pipeline.parseFromString(pipelineOptions, os)) ||
        failed(verifyBlockAttnToPtxOptions(inv.options.pipeline, os)))
      return error(message.empty()
                       ? "invalid pipeline options '" +
                             StringRef(pipelineOptions).rtrim() + "'"
                       : StringRef(message).trim());
    // 0 is the pipeline's "no trace"; other bad counts it rejects itself.
    if (trace && inv.options.pipeline.traceRecords == 0)
      return error("--trace-records=0 would not trace: give a power of two "
                   "from 4 to 65536");
    return success();
  }
};

} // namespace

LogicalResult blockattn::parseCompileCommandLine(ArrayRef<StringRef> args,
                                                 CompileInvocation &invocation,
                                                 raw_ostream &errorStream) {
  Parser parser{invocation, errorStream, {}, {}, {}};
  if (failed(parser.parse(args)))
    return failure();
  return parser.check();
}

void blockattn::printCompileCommandLineHelp(StringRef programName) {
  raw_ostream &os = llvm::outs();
  os << "OVERVIEW: " << programName
     << ": compile blockattn kernels to PTX + manifests\n\n"
     << "USAGE: " << programName
     << " INPUT.mlir -o DIR [--chip=sm_90a|sm_100a] [--cubin] ...\n"
     << "       " << programName
     << " --kind=forward|backward [--head-dim=N ...] -o DIR ...\n\n"
     << "OPTIONS:\n";
  for (const Flag &flag : kFlags)
    os << llvm::format("  %-22s %s\n", spelling(flag.name).c_str(), flag.help);
  os << "\nPIPELINE OPTIONS (blockattn-to-ptx's, as --NAME=VALUE; not "
        "format):\n";
  // descIndent must exceed the widest "--name=<type>" (llvm::cl would
  // indent by a negative width otherwise).
  BlockAttnToPtxOptions().printHelp(/*indent=*/2, /*descIndent=*/44);
}
