#include "InputFile.h"

#include "Errors.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <new>
#include <sys/stat.h>

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

std::vector<unsigned char> InputFile::readUpTo(int64_t n)
{
  std::vector<unsigned char> data;
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
