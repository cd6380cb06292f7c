//===- Npy.cpp - Reading and writing .npy files ---------------------------===//
//
// The NumPy .npy format (numpy.lib.format): magic "\x93NUMPY", version, a
// little-endian header length, then a Python dict literal with 'descr',
// 'fortran_order' and 'shape', padded to 64 bytes, then the raw data.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Emulator/Emulator.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace blockattn::emu;
using llvm::StringRef;

static llvm::Error npyError(StringRef path, const llvm::Twine &msg) {
  return llvm::createStringError(path + ": " + msg);
}

llvm::Expected<Tensor> blockattn::emu::readNpy(StringRef path,
                                               std::string &descr) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buf)
    return npyError(path, buf.getError().message());
  StringRef data = (*buf)->getBuffer();
  if (data.size() < 10 || !data.starts_with("\x93NUMPY"))
    return npyError(path, "not a .npy file");
  unsigned major = static_cast<uint8_t>(data[6]);
  size_t headerLen, start;
  if (major == 1) {
    headerLen =
        static_cast<uint8_t>(data[8]) | (static_cast<uint8_t>(data[9]) << 8);
    start = 10;
  } else {
    if (data.size() < 12)
      return npyError(path, "truncated header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<uint8_t>(data[8 + i]))
                   << (8 * i);
    start = 12;
  }
  if (start + headerLen > data.size())
    return npyError(path, "truncated header");
  StringRef header = data.substr(start, headerLen);
  auto field = [&](StringRef key) -> StringRef {
    size_t at = header.find(("'" + key + "'").str());
    if (at == StringRef::npos)
      return {};
    StringRef rest = header.drop_front(at + key.size() + 2).ltrim(" :");
    return rest;
  };
  StringRef d = field("descr");
  if (!d.consume_front("'"))
    return npyError(path, "no descr");
  descr = d.take_until([](char c) { return c == '\''; }).str();
  if (field("fortran_order").starts_with("True"))
    return npyError(path, "Fortran-order arrays are not supported");
  StringRef s = field("shape");
  if (!s.consume_front("("))
    return npyError(path, "no shape");
  s = s.take_until([](char c) { return c == ')'; });
  Tensor t;
  for (StringRef dim : llvm::split(s, ',')) {
    dim = dim.trim();
    if (dim.empty())
      continue;
    int64_t v;
    if (dim.getAsInteger(10, v))
      return npyError(path, "bad shape");
    t.shape.push_back(v);
  }
  StringRef kind = descr;
  if (kind.size() < 3 || (kind[0] != '<' && kind[0] != '|'))
    return npyError(path, "only little-endian arrays are supported (descr '" +
                              descr + "')");
  unsigned bytes;
  if (kind.drop_front(2).getAsInteger(10, bytes) || !bytes)
    return npyError(path, "bad descr '" + descr + "'");
  t.elementBytes = bytes;
  size_t count = 1;
  for (int64_t dim : t.shape)
    count *= static_cast<size_t>(dim);
  StringRef payload = data.drop_front(start + headerLen);
  if (payload.size() < count * bytes)
    return npyError(path, "truncated data");
  t.data.assign(payload.bytes_begin(), payload.bytes_begin() + count * bytes);
  return t;
}

llvm::Error blockattn::emu::writeNpy(StringRef path, const Tensor &t,
                                     StringRef descr) {
  std::string shape = "(";
  for (int64_t dim : t.shape)
    shape += std::to_string(dim) + ", ";
  if (t.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (t.shape.size() == 1)
    shape.pop_back();
  shape += ")";
  std::string header = "{'descr': '" + descr.str() +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return npyError(path, ec.message());
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
     << char(header.size() >> 8) << header;
  os.write(reinterpret_cast<const char *>(t.data.data()), t.data.size());
  return llvm::Error::success();
}
