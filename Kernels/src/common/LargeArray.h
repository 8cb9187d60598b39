// LargeArray.h - a fixed-size array of a trivially copyable T for the
// per-cell and per-voxel arrays of large images (hundreds of megabytes):
// allocated without being written, so that the threads that fill it touch
// its pages first. std::vector's assign and value-initialising constructors
// write (and page-fault) every byte on the calling thread: 0.2 s of a 2.5 s
// persistence run on a 256^3 volume, on two threads. Blocks of 4 MiB and
// more sit on transparent huge pages (UninitializedAllocator.h), so that
// those first writes fault a page in every 2 MiB, not every 4 KiB.
#pragma once

#include "Parallel.h"

#include "topovox/UninitializedAllocator.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <type_traits>

namespace topovox
{
template <typename T>
class LargeArray
{
  static_assert(std::is_trivially_copyable<T>::value, "LargeArray holds plain values");

public:
  LargeArray() = default;
  // n values, not initialised: every one must be written before it is read.
  explicit LargeArray(size_t n)
    : data_(detail::allocateBlock<T>(n))
    , size_(n)
  {
  }
  // n values, each set to `value` by `threads` threads.
  LargeArray(size_t n, T value, int threads)
    : LargeArray(n)
  {
    fill(value, threads);
  }
  // Every value set to `value`, by `threads` threads.
  void fill(T value, int threads)
  {
    parallelFor(static_cast<int64_t>(size_), threads, [&](int, int64_t k0, int64_t k1) {
      std::fill(data_.get() + k0, data_.get() + k1, value);
    });
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](size_t k) { return data_.get()[k]; }
  const T& operator[](size_t k) const { return data_.get()[k]; }
  T* begin() { return data_.get(); }
  T* end() { return data_.get() + size_; }
  const T* begin() const { return data_.get(); }
  const T* end() const { return data_.get() + size_; }

  bool operator==(const LargeArray& o) const { return size_ == o.size_ && std::equal(begin(), end(), o.begin()); }
  bool operator!=(const LargeArray& o) const { return !(*this == o); }

private:
  detail::Block<T> data_;
  size_t size_ = 0;
};
}
