#include "InputFile.h"

#include "Errors.h"
#include "topovox/Device.h"
#include "topovox/ParallelFor.h"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <new>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace topovox
{
namespace cli
{

bool fileExists(const std::string& path)
{
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

bool endsWith(const std::string& path, const std::string& suffix)
{
  if (path.size() < suffix.size())
    return false;
  for (size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(path[path.size() - suffix.size() + i])) !=
      std::tolower(static_cast<unsigned char>(suffix[i])))
      return false;
  return true;
}

InputFile::InputFile(const std::string& path)
  : path_(path)
{
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw Error(path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw Error(path + ": is a directory, not an image file");
  if (S_ISREG(st.st_mode))
  {
    diskSize_ = static_cast<int64_t>(st.st_size);
    if (diskSize_ == 0)
      throw Error(path + ": the file is empty");
  }
  errno = 0;
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f)
    throw Error(path + ": " + (errno ? std::strerror(errno) : "cannot open the file"));
  gzbuffer(f, 1 << 20); // fewer, larger reads: large volumes read faster
  gz_ = f;
}

InputFile::~InputFile()
{
  if (gz_)
    gzclose_r(static_cast<gzFile>(gz_));
}

bool InputFile::compressed() const
{
  return gzdirect(static_cast<gzFile>(gz_)) == 0;
}

size_t InputFile::read(void* buffer, size_t n)
{
  gzFile f = static_cast<gzFile>(gz_);
  unsigned char* out = static_cast<unsigned char*>(buffer);
  size_t done = 0;
  while (done < n)
  {
    // gzread counts in unsigned int and returns int: read in pieces.
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - done, 1u << 30));
    const int got = gzread(f, out + done, chunk);
    if (got > 0)
    {
      done += static_cast<size_t>(got);
      consumed_ += got;
    }
    if (got < static_cast<int>(chunk))
    {
      int code = Z_OK;
      const char* message = gzerror(f, &code);
      if (code == Z_ERRNO)
        throw Error(path_ + ": read error: " + std::strerror(errno));
      if (code == Z_BUF_ERROR)
        throw Error(path_ + ": the gzip stream is truncated (it ends after " +
          std::to_string(consumed_) + " uncompressed bytes)");
      if (code != Z_OK)
      {
        // zlib's message starts with the path again: drop it.
        std::string why = message ? message : "unknown error";
        if (why.compare(0, path_.size() + 2, path_ + ": ") == 0)
          why = why.substr(path_.size() + 2);
        throw Error(path_ + ": corrupt gzip data (" + why + ")");
      }
      if (got <= 0 || gzeof(f))
        break; // the end of the data
    }
  }
  return done;
}

template <typename Bytes>
Bytes InputFile::readGrowing(int64_t n)
{
  Bytes data;
  // Start with what is certainly there (the file on disk bounds an
  // uncompressed read) and double from there.
  int64_t capacity = n;
  if (compressed() || diskSize_ < 0)
    capacity = std::min<int64_t>(n, int64_t(64) << 20);
  else
    capacity = std::min<int64_t>(n, std::max<int64_t>(diskSize_, 1));
  size_t filled = 0;
  try
  {
    while (true)
    {
      data.resize(static_cast<size_t>(capacity));
      const size_t got = read(data.data() + filled, data.size() - filled);
      filled += got;
      if (filled < data.size() || capacity == n)
        break;
      capacity = std::min<int64_t>(n, capacity * 2);
    }
  }
  catch (const std::bad_alloc&)
  {
    throw Error(path_ + ": not enough memory to read " + std::to_string(n) + " bytes");
  }
  data.resize(filled);
  return data;
}

std::vector<unsigned char> InputFile::readUpTo(int64_t n)
{
  return readGrowing<std::vector<unsigned char>>(n);
}

namespace
{
int64_t readPartBytes()
{
  const char* env = std::getenv("TOPOVOX_READ_PART_BYTES");
  const long long v = env ? std::atoll(env) : 0;
  return v > 0 ? static_cast<int64_t>(v) : int64_t(8) << 20;
}
}

SampleBytes InputFile::readSamples(int64_t n)
{
  const int64_t part = readPartBytes();
  // gzread hands an uncompressed file over unchanged, so consumed_ is the
  // file offset of the next byte.
  const bool inParts = n >= 2 * part && !compressed() && diskSize_ >= 0 && diskSize_ - consumed_ >= n;
  if (!inParts)
    return readGrowing<SampleBytes>(n);
  SampleBytes data;
  try
  {
    data.resize(static_cast<size_t>(n));
  }
  catch (const std::bad_alloc&)
  {
    throw Error(path_ + ": not enough memory to read " + std::to_string(n) + " bytes");
  }
  if (!readInParts(data.data(), n))
    return readGrowing<SampleBytes>(n); // could not open the file a second time
  return data;
}

bool InputFile::readInParts(unsigned char* out, int64_t n)
{
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  const int64_t start = consumed_, part = readPartBytes();
  std::atomic<int> failure{ 0 }; // errno of the first failed read; -1: the file ended early
  parallelForDynamic(n, defaultThreadCount(), part, [&](int, int64_t b0, int64_t b1) {
    while (b0 < b1 && failure.load(std::memory_order_relaxed) == 0)
    {
      const ssize_t got = ::pread(fd, out + b0, static_cast<size_t>(b1 - b0), static_cast<off_t>(start + b0));
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
      {
        int expected = 0;
        failure.compare_exchange_strong(expected, got < 0 ? errno : -1);
        return;
      }
      b0 += got;
    }
  });
  ::close(fd);
  if (const int error = failure.load())
    throw Error(path_ + (error > 0 ? ": read error: " + std::string(std::strerror(error))
                                   : std::string(": the file became shorter while it was read")));
  // The stream goes on after the samples (the readers look for bytes left).
  if (gzseek(static_cast<gzFile>(gz_), static_cast<z_off_t>(start + n), SEEK_SET) != static_cast<z_off_t>(start + n))
    throw Error(path_ + ": cannot seek past the samples");
  consumed_ = start + n;
  return true;
}

int64_t InputFile::countRemaining()
{
  std::vector<unsigned char> scratch(1 << 20);
  int64_t total = 0;
  while (true)
  {
    const size_t got = read(scratch.data(), scratch.size());
    total += static_cast<int64_t>(got);
    if (got < scratch.size())
      return total;
  }
}

} // namespace cli
} // namespace topovox
