#include "OutputFile.h"

#include "Errors.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace topovox
{
namespace cli
{
namespace
{

// The temporary file a signal handler must remove. A plain char array:
// a handler may only call async-signal-safe functions (unlink) and read
// memory that is not being reallocated.
char pendingTemporary[4096];

void removeAndDie(int sig)
{
  if (pendingTemporary[0])
    ::unlink(pendingTemporary);
  // Die of the same signal, so that the parent sees how we ended.
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void setPending(const std::string& path)
{
  if (path.size() < sizeof pendingTemporary)
    std::memcpy(pendingTemporary, path.c_str(), path.size() + 1);
}

std::string errnoText()
{
  return std::strerror(errno);
}

} // namespace

void installCleanupOnSignals()
{
  for (int sig : { SIGINT, SIGTERM, SIGHUP })
    std::signal(sig, removeAndDie);
}

OutputFile::OutputFile(const std::string& path)
  : path_(path)
{
  if (isStdout())
  {
    stream_ = stdout;
    return;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(path + ": is a directory");
  // Same folder as the output: rename() is atomic only within a file system.
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string pattern = folder + "." + base + ".tmp-XXXXXX";
  const int fd = ::mkstemp(&pattern[0]);
  if (fd < 0)
    throw Error("cannot write " + path + ": " + errnoText());
  // mkstemp creates mode 0600; give the output the usual 0666 & ~umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  temporary_ = pattern;
  setPending(temporary_);
  stream_ = ::fdopen(fd, "wb");
  if (!stream_)
  {
    const std::string why = errnoText();
    ::close(fd);
    discard();
    throw Error("cannot write " + path + ": " + why);
  }
}

OutputFile::~OutputFile()
{
  discard();
}

char* OutputFile::mapSized(size_t bytes)
{
  const char* env = std::getenv("TOPOVOX_OUTPUT_MAP");
  if (isStdout() || mapped_ || bytes == 0 || (env && std::strcmp(env, "0") == 0) ||
    std::fflush(stream_) != 0 || std::ftell(stream_) != 0)
    return nullptr;
#ifdef __linux__
  const int fd = ::fileno(stream_);
  // fallocate, not posix_fallocate: where the file system has none, glibc's
  // posix_fallocate writes the zeros itself, slower than writing the data.
  void* at = MAP_FAILED;
  if (::fallocate(fd, 0, 0, static_cast<off_t>(bytes)) == 0)
    at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (at == MAP_FAILED)
  {
    // Back to an empty file for the stream (a failed fallocate may have
    // reserved part).
    if (::ftruncate(fd, 0) != 0)
      throw Error("cannot write " + path_ + ": " + errnoText());
    return nullptr;
  }
  mapped_ = static_cast<char*>(at);
  mappedBytes_ = bytes;
  return mapped_;
#else
  return nullptr;
#endif
}

void OutputFile::unmap()
{
  if (mapped_)
    ::munmap(mapped_, mappedBytes_);
  mapped_ = nullptr;
  mappedBytes_ = 0;
}

void OutputFile::discard()
{
  unmap();
  if (stream_ && !isStdout())
    std::fclose(stream_);
  stream_ = nullptr;
  if (!temporary_.empty())
  {
    ::unlink(temporary_.c_str());
    temporary_.clear();
    pendingTemporary[0] = '\0';
  }
}

void OutputFile::commit()
{
  if (isStdout())
  {
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
      throw Error("cannot write to stdout: " + errnoText());
    return;
  }
  unmap(); // (its pages are the file's: written back as write()'s would be)
  const bool writeFailed = std::ferror(stream_) != 0;
  const int closed = std::fclose(stream_); // flushes: ENOSPC shows up here
  stream_ = nullptr;
  if (writeFailed || closed != 0)
  {
    const std::string why = errnoText();
    discard();
    throw Error("cannot write " + path_ + ": " + why);
  }
  if (std::rename(temporary_.c_str(), path_.c_str()) != 0)
  {
    const std::string why = errnoText();
    discard();
    throw Error("cannot write " + path_ + ": " + why);
  }
  temporary_.clear();
  pendingTemporary[0] = '\0';
}

} // namespace cli
} // namespace topovox
