// UninitializedAllocator.h - the allocator of the kernels' large arrays
// (Morphology.h's BinaryImage and GreyImage, PersistencePieces.h's
// SummaryArray), and reserveOnHugePages for std::vectors of the default
// allocator.
//
// * New elements are left unwritten (unless given a value): every operator
//   writes each voxel of its result, and zeroing a 512^3 volume's half
//   gigabyte first, on one thread, cost more than some operators.
// * Blocks of 4 MiB and more are aligned to 2 MiB and offered to the kernel
//   as transparent huge pages (Linux; numpy does the same for its arrays):
//   the first write to a 128 MiB result then takes 64 page faults instead
//   of 32768, which is most of the time a copy back from the GPU into fresh
//   memory takes.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace topovox
{
namespace detail
{
void* allocateBytes(std::size_t bytes); // throws std::bad_alloc
void freeBytes(void* p, std::size_t bytes);
// Offers the whole 2 MiB pages inside [p, p + bytes) to the kernel as
// transparent huge pages, from 4 MiB on (advice only; Linux).
void adviseHugePages(void* p, std::size_t bytes);
// Makes the pages of [p, p + bytes) present and writable now (Linux's
// MADV_POPULATE_WRITE; where the kernel refuses it, by writing zeros), so
// that later writes fault no more. For room about to be filled on one
// thread: its page faults and the kernel's zeroing then run on the threads
// that call this for parts of it (populateOnThreads, Parallel.h). The bytes
// are not values the caller may read. TOPOVOX_POPULATE_BY_WRITING=1 writes
// the zeros always (for the tests: madvise keeps what it populates, so a
// caller that populated the wrong bytes would go unseen).
void populateBytes(void* p, std::size_t bytes);

// Room for n values of T from allocateBytes, freed when the pointer goes
// (the values are not made or destroyed: plain or trivially destructible
// types, made by the caller, e.g. on its threads).
template <typename T>
struct BlockFree
{
  std::size_t bytes = 0;
  void operator()(T* p) const noexcept { freeBytes(p, bytes); }
};
template <typename T>
using Block = std::unique_ptr<T, BlockFree<T>>;
template <typename T>
Block<T> allocateBlock(std::size_t n)
{
  if (n == 0)
    return Block<T>();
  return Block<T>(static_cast<T*>(allocateBytes(n * sizeof(T))), BlockFree<T>{ n * sizeof(T) });
}
}

template <typename T>
struct UninitializedAllocator
{
  using value_type = T;

  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept
  {
  }

  T* allocate(std::size_t n) { return static_cast<T*>(detail::allocateBytes(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { detail::freeBytes(p, n * sizeof(T)); }

  template <typename U>
  void construct(U* p) noexcept
  {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args)
  {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <typename U>
  bool operator==(const UninitializedAllocator<U>&) const noexcept
  {
    return true;
  }
  template <typename U>
  bool operator!=(const UninitializedAllocator<U>&) const noexcept
  {
    return false;
  }
};

// The one spelling of a vector with this allocator; the kernels' names for
// what such vectors hold (GreyImage, SummaryArray, PositionList, ...) are
// this type.
template <typename T>
using UninitializedVector = std::vector<T, UninitializedAllocator<T>>;

// Room for n values in a std::vector that is about to be filled, offered as
// huge pages: its first writes then fault in a page every 2 MiB, and reads
// at random miss the TLB far less. For the vectors whose type is not ours
// to choose (PersistenceDiagram's pairs, positionsWhere's result) or that
// are filled with push_back; the pages of values already in v stay as they
// were (they are copied in before the advice).
template <typename Vector>
void reserveOnHugePages(Vector& v, std::size_t n)
{
  if (v.capacity() >= n)
    return;
  v.reserve(n);
  detail::adviseHugePages(v.data(), v.capacity() * sizeof(typename Vector::value_type));
}
// v sized to n (resize: new elements made as v's allocator makes them), or
// set to n copies of `value` (assign), in room from reserveOnHugePages.
template <typename Vector>
void resizeOnHugePages(Vector& v, std::size_t n)
{
  reserveOnHugePages(v, n);
  v.resize(n);
}
template <typename Vector>
void assignOnHugePages(Vector& v, std::size_t n, const typename Vector::value_type& value)
{
  reserveOnHugePages(v, n);
  v.assign(n, value);
}
} // namespace topovox
