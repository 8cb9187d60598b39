// HugePageHeap.h - the tool's heap on transparent huge pages.
//
// Persistence of a large volume spends most of its time waiting for memory
// read at random: union-find parents, the matrix reduction's pivot lookup
// and its columns, gigabytes each. On 4 KiB pages nearly every such read
// also misses the TLB. The kernels put their own large arrays on huge pages
// (Kernels/include/topovox/UninitializedAllocator.h), but not the vectors
// made inside PHAT (its twist reduction, for small matrices) or by
// std::vector elsewhere. Where the system's transparent huge pages are
// "madvise" (Debian's and Ubuntu's default), glibc 2.35 and later does it
// for every large block when the tunable glibc.malloc.hugetlb=1 is set.
// Tunables are read when a process starts,
// so the tool sets it and starts itself again, once, before anything else.
// On the H200 machine, 512^3 float32 field (k^-1), whole processes
// alternating: 46.6 and 54.4 s without, 35.5 and 36.0 s with
// (bench/README.md, twenty-sixth session).
//
// A GLIBC_TUNABLES that already names glibc.malloc.hugetlb is left as it is
// (glibc.malloc.hugetlb=0 turns this off); so is a system without glibc
// 2.35, or where the tool cannot find or run its own file.
#pragma once

namespace topovox
{
namespace cli
{
// Returns only when the process goes on as it is (no restart, or the
// restart failed); argv must be main's, null-terminated.
void restartWithHugePageHeap(char** argv);

// Whether this process runs with glibc.malloc.hugetlb=1 (for --verbose).
bool heapOnHugePages();
}
}
