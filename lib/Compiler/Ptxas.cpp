//===- Ptxas.cpp - assemble PTX with ptxas -v -----------------------------===//
//
// ptxas is a separate program (CUDA's), so the PTX and the cubin pass
// through temporary files that never outlive the call. `-v` makes ptxas
// report the registers, spills, stack frame and static shared memory of the
// kernel, which go into the manifest.
//
//===----------------------------------------------------------------------===//

#include "Detail.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::blockattn;

static std::string findPtxas(StringRef configured) {
  if (!configured.empty())
    return configured.str();
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  if (auto p = llvm::sys::findProgramByName("ptxas", {"/usr/local/cuda/bin"}))
    return *p;
  return "";
}

namespace {
/// Temporary files removed when the call returns, whichever way.
struct TemporaryFiles {
  SmallVector<SmallString<128>> paths;
  ~TemporaryFiles() {
    for (const SmallString<128> &path : paths)
      llvm::sys::fs::remove(path);
  }
  LogicalResult create(StringRef prefix, StringRef suffix, std::string &error) {
    SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile(prefix, suffix, path)) {
      error = "cannot create a temporary file: " + ec.message();
      return failure();
    }
    paths.push_back(path);
    return success();
  }
};
} // namespace

/// Reads ptxas' resource report out of its -v log. Fails on a number that
/// does not fit in int64_t, naming it in `error`.
static LogicalResult parseReport(StringRef log, llvm::json::Object &report,
                                 std::string &error) {
  auto number = [&](StringRef text, StringRef key) {
    int64_t value;
    if (text.getAsInteger(10, value)) {
      error = ("ptxas reported " + key + " " + text +
               ", which does not fit in a 64-bit integer")
                  .str();
      return false;
    }
    report[key] = value;
    return true;
  };
  SmallVector<StringRef> m;
  if (llvm::Regex("Used ([0-9]+) registers").match(log, &m) &&
      !number(m[1], "registers"))
    return failure();
  if (llvm::Regex("([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads")
          .match(log, &m)) {
    StringRef loads = m[2];
    if (!number(m[1], "spill_stores") || !number(loads, "spill_loads"))
      return failure();
  }
  if (llvm::Regex("([0-9]+) bytes stack frame").match(log, &m) &&
      !number(m[1], "stack_frame"))
    return failure();
  if (llvm::Regex("([0-9]+) bytes smem").match(log, &m) &&
      !number(m[1], "static_smem"))
    return failure();
  // ptxas serializes wgmma pipelines silently except for these warnings.
  report["wgmma_serialized"] = llvm::Regex("C75[0-9][0-9]").match(log);
  return success();
}

FailureOr<blockattn::detail::PtxasResult>
blockattn::detail::runPtxas(StringRef configuredPtxas, StringRef ptx,
                            StringRef chip, StringRef kernel, Location loc) {
  std::string ptxas = findPtxas(configuredPtxas);
  if (ptxas.empty()) {
    emitError(loc) << "ptxas failed for " << kernel
                   << ":\nptxas not found (pass --ptxas or put it on PATH)";
    return failure();
  }
  TemporaryFiles files;
  std::string error;
  if (failed(files.create("blockattn", "ptx", error)) ||
      failed(files.create("blockattn", "cubin", error)) ||
      failed(files.create("blockattn-ptxas", "log", error))) {
    emitError(loc) << "ptxas failed for " << kernel << ":\n" << error;
    return failure();
  }
  StringRef ptxPath = files.paths[0], cubinPath = files.paths[1],
            logPath = files.paths[2];
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(ptxPath, ec, llvm::sys::fs::OF_None);
    if (!ec)
      os << ptx;
    if (ec || os.has_error()) {
      emitError(loc) << "ptxas failed for " << kernel << ":\ncannot write "
                     << ptxPath;
      os.clear_error();
      return failure();
    }
  }
  std::string archFlag = ("-arch=" + chip).str();
  StringRef args[] = {ptxas, archFlag, "-v", ptxPath, "-o", cubinPath};
  std::optional<StringRef> redirects[] = {std::nullopt, logPath, logPath};
  std::string executeError;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                     /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                     &executeError);
  PtxasResult result;
  if (auto buffer = llvm::MemoryBuffer::getFile(logPath))
    result.log = (*buffer)->getBuffer().str();
  if (rc != 0) {
    emitError(loc) << "ptxas failed for " << kernel << ":\n"
                   << (result.log.empty() ? executeError : result.log);
    return failure();
  }
  auto cubin = llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!cubin) {
    emitError(loc) << "ptxas failed for " << kernel << ": no cubin in "
                   << cubinPath;
    return failure();
  }
  result.cubin = (*cubin)->getBuffer().str();
  if (failed(parseReport(result.log, result.report, error))) {
    emitError(loc) << error << " (" << kernel << "):\n" << result.log;
    return failure();
  }
  return result;
}
