//===- PTX.h - The PTX subset block-attn emits, parsed ----------*- C++ -*-===//
//
// A parsed `.entry` function: its parameters, its registers and its
// instructions, with labels resolved and inline-assembly scopes (`{ .reg ...
// }`) flattened into uniquely numbered registers. The parser knows only the
// syntax of the PTX ISA (8.x, chapter "Instruction Statements"); what each
// opcode means is the interpreter's business, and an opcode it does not know
// is reported there by name.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_EMULATOR_PTX_H
#define BLOCKATTN_EMULATOR_PTX_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blockattn::emu {

/// Special registers the kernels read (PTX ISA, "Special Registers").
enum class Special : uint8_t {
  TidX,
  NtidX,
  CtaidX,
  NctaidX,
  LaneId,
  // A traced kernel's clocks (block-attn-compile --trace) and its SM.
  Clock64,
  GlobalTimer,
  SmId
};

struct Operand {
  enum Kind : uint8_t {
    Reg,      ///< a register: `reg` is its slot
    Imm,      ///< an integer or float immediate (float bits in `imm`)
    Spec,     ///< a special register
    Symbol,   ///< a parameter or the shared-memory variable: `sym`
    Label,    ///< a branch target: `imm` is the instruction index
    Addr,     ///< `[reg+imm]` or `[symbol+imm]`
    Vec,      ///< `{a, b, ...}`: elements in `elems`
    TensorRef ///< `[tmap, {c0, c1, ...}]`: elems[0] the map, then coordinates
  };
  Kind kind = Imm;
  Special spec = Special::TidX;
  int32_t reg = -1;
  int32_t sym = -1;
  int64_t imm = 0;
  std::vector<Operand> elems;
};

struct Instruction {
  std::string opcode;             ///< e.g. "add.s64"
  std::vector<std::string> parts; ///< opcode split at '.'
  std::vector<Operand> operands;
  int32_t guard = -1; ///< predicate register slot, or -1
  bool guardNegated = false;
  unsigned line = 0; ///< 1-based line in the PTX file
  /// Filled by the interpreter when it decodes the opcode.
  uint16_t op = 0;
  uint8_t type = 0;
  uint8_t aux = 0;
  int32_t aux2 = 0;
};

struct Param {
  std::string name;
  unsigned offset = 0; ///< byte offset in the parameter buffer
  unsigned size = 0;
  unsigned align = 0;
};

struct Register {
  std::string name;  ///< as written, with its scope's number if it was scoped
  unsigned bits = 0; ///< 1 (pred), 16, 32 or 64
};

struct Kernel {
  std::string name;
  std::string target; ///< e.g. "sm_90a"
  std::vector<Param> params;
  unsigned paramBytes = 0;
  std::string sharedSymbol; ///< the `.extern .shared` array
  unsigned reqntid = 0;     ///< `.reqntid`, 0 if absent
  std::vector<Register> registers;
  std::vector<Instruction> code;
  std::vector<std::string> lines; ///< the source, for reports
};

/// Symbols of Operand::Symbol: parameters are 0..N-1, the shared variable N.
inline int32_t sharedSymbolIndex(const Kernel &k) {
  return static_cast<int32_t>(k.params.size());
}

/// Parses the single `.entry` of a PTX module as block-attn-compile writes it.
llvm::Expected<Kernel> parsePTX(llvm::StringRef text);

} // namespace blockattn::emu

#endif // BLOCKATTN_EMULATOR_PTX_H
