// InputFile.h - reads a file, gzip-compressed or not, through zlib's gzread
// (which passes uncompressed files through unchanged), so that every reader
// accepts .gz for free. All failures become Error with a one-line reason
// that names the file.
#pragma once

#include "Image.h"

#include <cstdint>
#include <string>
#include <vector>

namespace topovox
{
namespace cli
{

class InputFile
{
public:
  // Throws Error when the file is missing, unreadable, a directory or empty.
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }
  // Size on disk; -1 when unknown (a pipe).
  int64_t diskSize() const { return diskSize_; }
  // Whether the content is gzip-compressed (known after the first read).
  bool compressed() const;

  // Reads up to n bytes; fewer only at the end of the data. Throws Error on
  // a read error or corrupt or truncated gzip data.
  size_t read(void* buffer, size_t n);

  // Reads up to n bytes into a vector. The vector grows as data arrives, so
  // a size claimed by a corrupt header never allocates much more than the
  // data actually present. Fewer than n bytes come back at the end of data.
  std::vector<unsigned char> readUpTo(int64_t n);

  // readUpTo for an image's samples. From an uncompressed file that holds
  // all n bytes past this point, the threads read parts of 8 MiB at once
  // (pread), each into memory it faults in itself: a 512 MB volume in the
  // page cache took 0.18 s on one thread (zeroing the vector first, then
  // one read) and takes 0.03 s on 16 (H200 machine). TOPOVOX_READ_PART_BYTES
  // sets the part (the tests read small files in many parts).
  SampleBytes readSamples(int64_t n);

  // Reads to the end and returns how many bytes were left.
  int64_t countRemaining();

private:
  template <typename Bytes>
  Bytes readGrowing(int64_t n);
  bool readInParts(unsigned char* out, int64_t n);
  std::string path_;
  void* gz_ = nullptr; // gzFile, kept opaque so that zlib.h stays out of headers
  int64_t diskSize_ = -1;
  int64_t consumed_ = 0; // uncompressed bytes read so far
};

// Whether a file exists (and is not a directory).
bool fileExists(const std::string& path);

// Whether `path` ends with `suffix`, ignoring ASCII case.
bool endsWith(const std::string& path, const std::string& suffix);

} // namespace cli
} // namespace topovox
