//===- blockattn-tblgen.cpp - TableGen backends of block-attn -------------===//
//
// mlir-tblgen's driver with one more backend, -gen-pass-option-list: the
// options of each pass of a Passes.td as an X-macro list, so that code other
// than the pass (the blockattn-to-ptx pipeline options, block-attn-compile's
// flags) can declare, copy and check the same options without spelling them
// again. For each pass PASS (its record name upper-cased), under
// GEN_PASS_OPTION_LIST_PASS, one line per option:
//
//   BLOCKATTN_PASS_OPTION(TYPE, CPP_NAME, "argument", cl::desc(...)
//                         [, cl::init(DEFAULT)] [, ADDITIONAL_FLAGS])
//
// which is what mlir-tblgen -gen-pass-decls gives the pass's own
// `Pass::Option<TYPE> CPP_NAME{*this, "argument", ...}`. The includer
// defines BLOCKATTN_PASS_OPTION; the list #undefs it. List options are not
// supported (none of our passes has one).
//
//===----------------------------------------------------------------------===//

#include "mlir/TableGen/GenInfo.h"
#include "mlir/TableGen/Pass.h"
#include "mlir/Tools/mlir-tblgen/MlirTblgenMain.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

using namespace mlir;
using mlir::tblgen::Pass;
using mlir::tblgen::PassOption;

static bool emitPassOptionList(const llvm::RecordKeeper &records,
                               raw_ostream &os) {
  llvm::emitSourceFileHeader("Pass option lists", os, records);
  for (const llvm::Record *def : records.getAllDerivedDefinitions("PassBase")) {
    Pass pass(def);
    std::string guard = "GEN_PASS_OPTION_LIST_" + def->getName().upper();
    os << "#ifdef " << guard << "\n#undef " << guard << "\n";
    os << "#ifndef BLOCKATTN_PASS_OPTION\n#error \"define "
          "BLOCKATTN_PASS_OPTION(TYPE, NAME, ARGUMENT, ...) before including "
          "this list\"\n#endif\n";
    for (const PassOption &option : pass.getOptions()) {
      if (option.isListOption())
        llvm::PrintFatalError(def->getLoc(),
                              "-gen-pass-option-list: list option '" +
                                  option.getArgument() + "' is not supported");
      os << llvm::formatv("BLOCKATTN_PASS_OPTION({0}, {1}, \"{2}\", "
                          "::llvm::cl::desc(\"",
                          option.getType(), option.getCppVariableName(),
                          option.getArgument());
      os.write_escaped(option.getDescription().trim());
      os << "\")";
      if (std::optional<StringRef> value = option.getDefaultValue())
        os << ", ::llvm::cl::init(" << *value << ")";
      if (std::optional<StringRef> flags = option.getAdditionalFlags())
        os << ", " << *flags;
      os << ")\n";
    }
    os << "#undef BLOCKATTN_PASS_OPTION\n#endif // " << guard << "\n\n";
  }
  return false;
}

static mlir::GenRegistration
    genPassOptionList("gen-pass-option-list",
                      "Generate the options of each pass as an X-macro list",
                      emitPassOptionList);

int main(int argc, char **argv) { return MlirTblgenMain(argc, argv); }
