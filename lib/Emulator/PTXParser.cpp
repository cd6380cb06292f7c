//===- PTXParser.cpp - Parsing the PTX block-attn emits -------------------===//
//
// Syntax only (PTX ISA 8.x, chapters "Syntax" and "Instruction Statements"):
// directives, parameter lists, register declarations with `<N>` ranges,
// nested `{ }` scopes (the inline assembly the compiler emits declares its own
// registers and labels in one), guarded instructions and operands. Anything
// outside that subset is an error with the line it is on.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Emulator/PTX.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace blockattn::emu;
using llvm::StringRef;

namespace {

struct Token {
  enum Kind { Ident, Number, Punct, String, End } kind = End;
  std::string text;
  unsigned line = 0;
};

bool isIdentStart(char c) {
  return llvm::isAlpha(c) || c == '_' || c == '$' || c == '%' || c == '.';
}
bool isIdentChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.';
}

class Lexer {
public:
  explicit Lexer(StringRef text) : text(text) {}
  std::vector<Token> run() {
    std::vector<Token> out;
    while (true) {
      skipSpace();
      Token t;
      t.line = line;
      if (pos >= text.size()) {
        t.kind = Token::End;
        out.push_back(t);
        return out;
      }
      char c = text[pos];
      if (c == '"') {
        size_t end = text.find('"', pos + 1);
        if (end == StringRef::npos)
          end = text.size() - 1;
        t.kind = Token::String;
        t.text = text.slice(pos, end + 1).str();
        pos = end + 1;
      } else if (llvm::isDigit(c)) {
        size_t start = pos;
        while (pos < text.size() && llvm::isAlnum(text[pos]))
          ++pos;
        t.kind = Token::Number;
        t.text = text.slice(start, pos).str();
      } else if (isIdentStart(c)) {
        size_t start = pos;
        ++pos;
        while (pos < text.size()) {
          if (isIdentChar(text[pos])) {
            ++pos;
          } else if (text[pos] == ':' && pos + 1 < text.size() &&
                     text[pos + 1] == ':') {
            pos += 2; // `shared::cluster`, `fence::after_thread_sync`
          } else {
            break;
          }
        }
        t.kind = Token::Ident;
        t.text = text.slice(start, pos).str();
      } else {
        t.kind = Token::Punct;
        t.text = std::string(1, c);
        ++pos;
      }
      out.push_back(t);
    }
  }

private:
  void skipSpace() {
    while (pos < text.size()) {
      char c = text[pos];
      if (c == '\n') {
        ++line;
        ++pos;
      } else if (llvm::isSpace(c)) {
        ++pos;
      } else if (c == '/' && pos + 1 < text.size() && text[pos + 1] == '/') {
        while (pos < text.size() && text[pos] != '\n')
          ++pos;
      } else if (c == '/' && pos + 1 < text.size() && text[pos + 1] == '*') {
        size_t end = text.find("*/", pos + 2);
        for (size_t i = pos; i < std::min(end, text.size()); ++i)
          if (text[i] == '\n')
            ++line;
        pos = end == StringRef::npos ? text.size() : end + 2;
      } else {
        break;
      }
    }
  }
  StringRef text;
  size_t pos = 0;
  unsigned line = 1;
};

struct LabelUse {
  size_t inst, operand;
  std::string name;
  int scope;
  unsigned line;
};

class Parser {
public:
  Parser(std::vector<Token> toks, Kernel &k) : toks(std::move(toks)), k(k) {}

  llvm::Error run() {
    // Module directives up to the entry.
    while (!atEnd()) {
      const Token &t = peek();
      if (t.kind == Token::Ident && t.text == ".entry")
        break;
      if (t.kind == Token::Ident && t.text == ".target") {
        next();
        k.target = next().text;
        continue;
      }
      if (t.kind == Token::Ident && t.text == ".extern") {
        // .extern .shared .align 16 .b8 NAME[];
        while (!atEnd() && peek().text != ";") {
          const Token &x = next();
          if (x.kind == Token::Ident && x.text[0] != '.')
            k.sharedSymbol = x.text;
        }
        next();
        continue;
      }
      next();
    }
    if (atEnd())
      return err("no .entry function in the PTX");
    next(); // .entry
    k.name = next().text;
    if (auto e = expect("("))
      return e;
    while (peek().text != ")") {
      if (auto e = parseParam())
        return e;
      if (peek().text == ",")
        next();
    }
    next(); // )
    // Performance directives up to the body.
    while (!atEnd() && peek().text != "{") {
      const Token &t = next();
      if (t.text == ".reqntid")
        k.reqntid = std::stoul(next().text);
    }
    if (auto e = expect("{"))
      return e;
    parents.push_back(-1);
    scopeRegs.emplace_back();
    scopeLabels.emplace_back();
    scope = 0;
    int depth = 1;
    while (depth > 0) {
      if (atEnd())
        return err("unterminated function body");
      const Token &t = peek();
      if (t.text == "{") {
        next();
        parents.push_back(scope);
        scopeRegs.emplace_back();
        scopeLabels.emplace_back();
        scope = static_cast<int>(parents.size()) - 1;
        ++depth;
        continue;
      }
      if (t.text == "}") {
        next();
        scope = parents[scope];
        --depth;
        continue;
      }
      if (auto e = parseStatement())
        return e;
    }
    for (const LabelUse &use : labelUses) {
      int target = -1;
      for (int s = use.scope; s >= 0 && target < 0; s = parents[s]) {
        auto it = scopeLabels[s].find(use.name);
        if (it != scopeLabels[s].end())
          target = it->second;
      }
      if (target < 0)
        return llvm::createStringError(
            llvm::formatv("line {0}: unknown label or symbol '{1}'", use.line,
                          use.name)
                .str());
      k.code[use.inst].operands[use.operand].imm = target;
    }
    return llvm::Error::success();
  }

private:
  bool atEnd() const { return toks[idx].kind == Token::End; }
  const Token &peek(size_t ahead = 0) const {
    return toks[std::min(idx + ahead, toks.size() - 1)];
  }
  const Token &next() {
    const Token &t = toks[idx];
    if (idx + 1 < toks.size())
      ++idx;
    return t;
  }
  llvm::Error err(const llvm::Twine &msg) const {
    return llvm::createStringError(
        llvm::formatv("line {0}: {1}", peek().line, msg.str()).str());
  }
  llvm::Error expect(StringRef what) {
    if (peek().text != what)
      return err("expected '" + what + "', found '" + peek().text + "'");
    next();
    return llvm::Error::success();
  }

  static unsigned typeBytes(StringRef t) {
    if (t.ends_with("8"))
      return 1;
    if (t.ends_with("16"))
      return 2;
    if (t.ends_with("32"))
      return 4;
    if (t.ends_with("64"))
      return 8;
    return 0;
  }

  llvm::Error parseParam() {
    if (auto e = expect(".param"))
      return e;
    unsigned align = 0, size = 0;
    std::string type, name;
    bool isPtr = false;
    while (peek().text != "," && peek().text != ")") {
      const Token &t = next();
      if (t.text == ".align") {
        unsigned a = std::stoul(next().text);
        if (!isPtr)
          align = a; // `.ptr .global .align N` is the pointee's alignment
      } else if (t.text == ".ptr") {
        isPtr = true;
      } else if (t.text == "[") {
        size = std::stoul(next().text);
        if (auto e = expect("]"))
          return e;
      } else if (t.kind == Token::Ident && t.text[0] == '.') {
        if (typeBytes(t.text) && type.empty())
          type = t.text;
      } else if (t.kind == Token::Ident) {
        name = t.text;
      }
    }
    unsigned elem = typeBytes(type);
    if (!elem || name.empty())
      return err("unsupported parameter declaration");
    if (!size)
      size = elem;
    else
      size *= elem;
    if (!align)
      align = elem;
    k.paramBytes = (k.paramBytes + align - 1) / align * align;
    Param p{name, k.paramBytes, size, align};
    k.paramBytes += size;
    paramIndex[name] = static_cast<int>(k.params.size());
    k.params.push_back(p);
    return llvm::Error::success();
  }

  llvm::Error parseRegDecl() {
    next(); // .reg
    std::string type = next().text;
    unsigned bits = type == ".pred" ? 1 : typeBytes(type) * 8;
    if (!bits)
      return err("unsupported register type " + type);
    while (true) {
      std::string name = next().text;
      if (peek().text == "<") {
        next();
        unsigned n = std::stoul(next().text);
        if (auto e = expect(">"))
          return e;
        for (unsigned i = 0; i < n; ++i)
          declare(name + std::to_string(i), bits);
      } else {
        declare(name, bits);
      }
      if (peek().text == ",") {
        next();
        continue;
      }
      break;
    }
    return expect(";");
  }

  void declare(const std::string &name, unsigned bits) {
    int slot = static_cast<int>(k.registers.size());
    std::string shown = scope == 0 ? name : name + "#" + std::to_string(scope);
    k.registers.push_back({shown, bits});
    scopeRegs[scope][name] = slot;
  }

  int lookupReg(const std::string &name) const {
    for (int s = scope; s >= 0; s = parents[s]) {
      auto it = scopeRegs[s].find(name);
      if (it != scopeRegs[s].end())
        return it->second;
    }
    return -1;
  }

  llvm::Error parseStatement() {
    const Token &t = peek();
    if (t.kind == Token::Ident && t.text == ".reg")
      return parseRegDecl();
    if (t.kind == Token::Ident && t.text == ".pragma") {
      while (!atEnd() && peek().text != ";")
        next();
      return expect(";");
    }
    if (t.kind == Token::Ident && peek(1).text == ":" && t.text[0] != '.') {
      scopeLabels[scope][t.text] = static_cast<int>(k.code.size());
      next();
      next();
      return llvm::Error::success();
    }
    Instruction inst;
    inst.line = t.line;
    if (t.text == "@") {
      next();
      if (peek().text == "!") {
        next();
        inst.guardNegated = true;
      }
      std::string p = next().text;
      inst.guard = lookupReg(p);
      if (inst.guard < 0)
        return err("unknown guard predicate " + p);
    }
    if (peek().kind != Token::Ident)
      return err("expected an instruction, found '" + peek().text + "'");
    inst.opcode = next().text;
    for (StringRef part : llvm::split(StringRef(inst.opcode), '.'))
      inst.parts.push_back(part.str());
    size_t instIndex = k.code.size();
    while (peek().text != ";") {
      Operand op;
      if (auto e = parseOperand(op, instIndex, inst.operands.size()))
        return e;
      inst.operands.push_back(std::move(op));
      if (peek().text == ",")
        next();
      else if (peek().text != ";")
        return err("expected ',' or ';' after an operand, found '" +
                   peek().text + "'");
    }
    next();
    k.code.push_back(std::move(inst));
    return llvm::Error::success();
  }

  static bool parseNumber(StringRef s, int64_t &out) {
    if ((s.starts_with("0f") || s.starts_with("0F")) && s.size() == 10) {
      uint64_t v;
      if (s.drop_front(2).getAsInteger(16, v))
        return false;
      out = static_cast<int64_t>(v);
      return true;
    }
    if ((s.starts_with("0d") || s.starts_with("0D")) && s.size() == 18) {
      uint64_t v;
      if (s.drop_front(2).getAsInteger(16, v))
        return false;
      out = static_cast<int64_t>(v);
      return true;
    }
    uint64_t v;
    if (s.starts_with("0x") || s.starts_with("0X")) {
      if (s.drop_front(2).getAsInteger(16, v))
        return false;
    } else if (s.getAsInteger(10, v)) {
      return false;
    }
    out = static_cast<int64_t>(v);
    return true;
  }

  llvm::Error parseSimple(Operand &op, size_t inst, size_t index) {
    const Token &t = peek();
    if (t.text == "-") {
      next();
      int64_t v;
      if (!parseNumber(next().text, v))
        return err("bad number");
      op.kind = Operand::Imm;
      op.imm = -v;
      return llvm::Error::success();
    }
    if (t.kind == Token::Number) {
      next();
      op.kind = Operand::Imm;
      if (!parseNumber(t.text, op.imm))
        return err("bad number '" + t.text + "'");
      return llvm::Error::success();
    }
    if (t.kind != Token::Ident)
      return err("unexpected '" + t.text + "' in an operand");
    std::string name = next().text;
    if (name == "_") {
      // The sink symbol: a destination whose value is discarded.
      op.kind = Operand::Imm;
      op.imm = 0;
      return llvm::Error::success();
    }
    static const std::map<std::string, Special> specials = {
        {"%tid.x", Special::TidX},
        {"%ntid.x", Special::NtidX},
        {"%ctaid.x", Special::CtaidX},
        {"%nctaid.x", Special::NctaidX},
        {"%laneid", Special::LaneId},
        {"%clock64", Special::Clock64},
        {"%globaltimer", Special::GlobalTimer},
        {"%smid", Special::SmId}};
    if (auto it = specials.find(name); it != specials.end()) {
      op.kind = Operand::Spec;
      op.spec = it->second;
      return llvm::Error::success();
    }
    if (name[0] == '%' && name.find('.') != std::string::npos)
      return err("unsupported special register " + name);
    int reg = lookupReg(name);
    if (reg >= 0) {
      op.kind = Operand::Reg;
      op.reg = reg;
      return llvm::Error::success();
    }
    if (auto it = paramIndex.find(name); it != paramIndex.end()) {
      op.kind = Operand::Symbol;
      op.sym = it->second;
      return llvm::Error::success();
    }
    if (name == k.sharedSymbol) {
      op.kind = Operand::Symbol;
      op.sym = sharedSymbolIndex(k);
      return llvm::Error::success();
    }
    if (name[0] == '%')
      return err("unknown register " + name);
    op.kind = Operand::Label;
    labelUses.push_back({inst, index, name, scope, t.line});
    return llvm::Error::success();
  }

  llvm::Error parseOperand(Operand &op, size_t inst, size_t index) {
    if (peek().text == "{") {
      next();
      op.kind = Operand::Vec;
      while (peek().text != "}") {
        Operand e;
        if (auto err = parseSimple(e, inst, index))
          return err;
        op.elems.push_back(std::move(e));
        if (peek().text == ",")
          next();
      }
      next();
      return llvm::Error::success();
    }
    if (peek().text == "[") {
      next();
      Operand base;
      if (auto e = parseSimple(base, inst, index))
        return e;
      if (peek().text == ",") {
        next();
        op.kind = Operand::TensorRef;
        Operand coords;
        if (auto e = parseOperand(coords, inst, index))
          return e;
        if (coords.kind != Operand::Vec)
          return err("expected tensor coordinates");
        op.elems.push_back(std::move(base));
        for (Operand &c : coords.elems)
          op.elems.push_back(std::move(c));
        return expect("]");
      }
      op.kind = Operand::Addr;
      if (base.kind == Operand::Reg)
        op.reg = base.reg;
      else if (base.kind == Operand::Symbol)
        op.sym = base.sym;
      else if (base.kind == Operand::Imm)
        op.imm = base.imm;
      else
        return err("unsupported address base");
      if (peek().text == "+") {
        next();
        Operand off;
        if (auto e = parseSimple(off, inst, index))
          return e;
        if (off.kind != Operand::Imm)
          return err("unsupported address offset");
        op.imm += off.imm;
      } else if (peek().text == "-") {
        Operand off;
        if (auto e = parseSimple(off, inst, index))
          return e;
        op.imm += off.imm;
      }
      return expect("]");
    }
    return parseSimple(op, inst, index);
  }

  std::vector<Token> toks;
  size_t idx = 0;
  Kernel &k;
  std::map<std::string, int> paramIndex;
  std::vector<int> parents;
  std::vector<std::map<std::string, int>> scopeRegs;
  std::vector<std::map<std::string, int>> scopeLabels;
  std::vector<LabelUse> labelUses;
  int scope = 0;
};

} // namespace

llvm::Expected<Kernel> blockattn::emu::parsePTX(StringRef text) {
  Kernel k;
  for (StringRef line : llvm::split(text, '\n'))
    k.lines.push_back(line.trim().str());
  Parser p(Lexer(text).run(), k);
  if (auto e = p.run())
    return std::move(e);
  return std::move(k);
}
