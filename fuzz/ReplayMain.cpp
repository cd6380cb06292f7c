//===- ReplayMain.cpp - run a fuzz target over files, deterministically
//----===//
//
// The main of the fuzz targets when they are not linked with libFuzzer (the
// normal g++ build): every argument is a file, or a directory whose files
// are taken in name order, and each is fed once to LLVMFuzzerTestOneInput.
// `make check` replays the corpus this way (test/Fuzz), so a fixed crash
// stays fixed without any random search in CI.
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

/// The files of `path`: itself, or a directory's regular files, sorted.
bool collect(const std::string &path, llvm::SmallVectorImpl<std::string> &out) {
  if (!llvm::sys::fs::is_directory(path)) {
    out.push_back(path);
    return true;
  }
  std::error_code ec;
  llvm::SmallVector<std::string> files;
  for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::fs::is_regular_file(it->path()))
      files.push_back(it->path());
  if (ec) {
    llvm::errs() << path << ": " << ec.message() << "\n";
    return false;
  }
  llvm::sort(files);
  llvm::append_range(out, files);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    llvm::errs() << "usage: " << argv[0]
                 << " FILE|DIRECTORY...\n  feeds each file once to the fuzz "
                    "target (a libFuzzer build runs campaigns instead)\n";
    return 2;
  }
  llvm::SmallVector<std::string> files;
  for (int i = 1; i < argc; ++i)
    if (!collect(argv[i], files))
      return 1;
  for (const std::string &file : files) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                    /*RequiresNullTerminator=*/false);
    if (!buffer) {
      llvm::errs() << file << ": " << buffer.getError().message() << "\n";
      return 1;
    }
    // Printed first, so that a crash names the input that caused it.
    llvm::errs() << "replaying " << file << "\n";
    LLVMFuzzerTestOneInput(
        reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
        (*buffer)->getBufferSize());
  }
  llvm::outs() << "replayed " << files.size() << " inputs\n";
  return 0;
}
