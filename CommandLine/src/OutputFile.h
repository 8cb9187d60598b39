// OutputFile.h - an output that appears complete or not at all: the data go
// to a temporary file in the output's folder, renamed over OUTPUT only by
// commit(). A failure (exception, error exit, Ctrl-C) removes the temporary
// file, so a half-written OUTPUT never exists and an older OUTPUT survives.
// "-" writes to stdout instead (nothing to clean up there).
#pragma once

#include <cstdio>
#include <string>

namespace topovox
{
namespace cli
{

class OutputFile
{
public:
  // Creates the temporary file now, so that an unwritable folder is
  // reported before any long computation. Throws Error.
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  FILE* stream() { return stream_; }
  const std::string& path() const { return path_; }
  bool isStdout() const { return path_ == "-"; }

  // Flushes, closes and renames into place. Throws Error (e.g. disk full).
  void commit();

private:
  void discard();
  std::string path_, temporary_;
  FILE* stream_ = nullptr;
};

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the current
// temporary output before the process dies of the signal.
void installCleanupOnSignals();

} // namespace cli
} // namespace topovox
