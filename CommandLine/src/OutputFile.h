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

  // The file sized to `bytes`, its blocks reserved (fallocate), and mapped
  // for writing, for threads to fill parts of it at once: the page cache
  // takes one write() at about 3 GB/s, but 16 threads writing into a
  // mapping of reserved blocks at about 10 GB/s (a 512^3 field's 3 GB
  // diagram, H200 machine, ext4; unreserved blocks are allocated page by
  // page, as slowly as write()). nullptr where that cannot be done (stdout,
  // a file system without fallocate, no room, TOPOVOX_OUTPUT_MAP=0): write
  // through stream() then. Only before anything went through stream();
  // commit() unmaps.
  char* mapSized(size_t bytes);
  const std::string& path() const { return path_; }
  bool isStdout() const { return path_ == "-"; }

  // Flushes, closes and renames into place. Throws Error (e.g. disk full).
  void commit();

private:
  void discard();
  void unmap();
  std::string path_, temporary_;
  FILE* stream_ = nullptr;
  char* mapped_ = nullptr;
  size_t mappedBytes_ = 0;
};

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the current
// temporary output before the process dies of the signal.
void installCleanupOnSignals();

} // namespace cli
} // namespace topovox
