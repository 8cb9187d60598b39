// HugePageHeap.cpp - see HugePageHeap.h.
#include "HugePageHeap.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__linux__) && defined(__GLIBC__)
#include <gnu/libc-version.h>
#include <unistd.h>
#endif

namespace topovox
{
namespace cli
{
void restartWithHugePageHeap(char** argv)
{
#if defined(__linux__) && defined(__GLIBC__)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "glibc.malloc.hugetlb"))
    return; // the caller's own choice, or this is the restarted process
  int major = 0, minor = 0;
  if (std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2 || major < 2 ||
    (major == 2 && minor < 35))
    return; // the tunable came with glibc 2.35
  const std::string previous = tunables ? tunables : "";
  const std::string value = previous.empty() ? "glibc.malloc.hugetlb=1" : previous + ":glibc.malloc.hugetlb=1";
  // The file itself, not /proc/self/exe: a tool that runs us (valgrind,
  // a sanitizer) answers readlink for its client.
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0 || length >= static_cast<ssize_t>(sizeof self - 1))
    return;
  self[length] = '\0';
  if (setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0)
    return;
  execv(self, argv);
  // Not restarted: go on as before, with the environment as it was.
  if (tunables)
    setenv("GLIBC_TUNABLES", previous.c_str(), 1);
  else
    unsetenv("GLIBC_TUNABLES");
#else
  (void)argv;
#endif
}

bool heapOnHugePages()
{
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables && std::strstr(tunables, "glibc.malloc.hugetlb=1");
}
}
}
