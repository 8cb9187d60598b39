// test_huge_pages.cpp - UninitializedAllocator.h's huge-page advice: blocks
// from allocateBytes (LargeArray, UninitializedAllocator) and std::vectors
// given room by reserveOnHugePages sit in memory the kernel may back with
// transparent huge pages, and a plain std::vector does not (where the
// system's setting is "madvise", that is what tells the two apart). Read
// from /proc/self/smaps: the "THPeligible" of the mapping that holds the
// middle of the block. Elsewhere (no smaps, THP "never" or "always") only
// the vectors' contents and capacities are checked.
#include "topovox/UninitializedAllocator.h"

#include "../src/common/LargeArray.h"

#include "KernelCheck.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

using namespace topovox;
using kernel_check::expect;

namespace
{
// The system's transparent huge pages setting: "always", "madvise",
// "never", or "" where it cannot be read.
std::string thpMode()
{
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const size_t open = line.find('['), close = line.find(']');
  return open == std::string::npos || close == std::string::npos ? "" : line.substr(open + 1, close - open - 1);
}

// THPeligible of the mapping holding address p: 1, 0, or -1 when unknown.
int eligible(const void* p)
{
  std::ifstream in("/proc/self/smaps");
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(in, line))
  {
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2 && line.find(':') > line.find('-'))
    {
      inside = at >= lo && at < hi;
      continue;
    }
    if (inside && line.rfind("THPeligible:", 0) == 0)
      return std::stoi(line.substr(12));
  }
  return -1;
}

constexpr size_t kValues = size_t(8) << 20; // 64 MiB of int64_t

void contents()
{
  std::vector<int64_t> v = { 5, 6, 7 };
  reserveOnHugePages(v, kValues);
  expect(v.capacity() >= kValues && v.size() == 3 && v[0] == 5 && v[2] == 7, "reserve keeps the values");
  const int64_t* before = v.data();
  reserveOnHugePages(v, 10);
  expect(v.data() == before, "no new room when there is enough");
  std::vector<char> small;
  reserveOnHugePages(small, 100); // below the 4 MiB of the advice
  expect(small.capacity() >= 100, "a small reserve");
  char odd[100];
  detail::adviseHugePages(odd + 1, sizeof odd - 1); // too small to hold a page: returns, nothing advised
}

void advice()
{
  const std::string mode = thpMode();
  std::vector<int64_t> advised;
  reserveOnHugePages(advised, kValues);
  advised.resize(kValues);
  std::vector<int64_t> plain;
  plain.reserve(kValues);
  plain.resize(kValues);
  LargeArray<int64_t> large(kValues, 1, 2);
  const int a = eligible(advised.data() + kValues / 2), b = eligible(plain.data() + kValues / 2),
            c = eligible(large.data() + kValues / 2);
  if (mode.empty() || a < 0 || b < 0 || c < 0)
  {
    std::printf("note: no transparent huge pages setting or smaps here: advice not checked\n");
    return;
  }
  if (mode == "never")
  {
    std::printf("note: transparent huge pages are off here: advice not checked\n");
    return;
  }
  expect(a == 1, "a vector given room by reserveOnHugePages may have huge pages (" + mode + ")");
  expect(c == 1, "a LargeArray may have huge pages (" + mode + ")");
  if (mode == "madvise")
    expect(b == 0, "a plain vector may not: the check tells them apart");
}
} // namespace

int main()
{
  contents();
  advice();
  return kernel_check::finish();
}
