// ImageOnDevice.cuh - an image in GPU memory for the length of a call: the
// caller's own view when it already lives there (any strides), else a
// contiguous copy of the host image (strided host views, such as one
// component of a VTK array, are packed on the host first), copied through
// pinned chunks on all threads (HostCopy.h).
#pragma once

#include "CudaUtil.cuh"
#include "HostCopy.h"

#include "topovox/Device.h"
#include "topovox/Grid.h"

#include <algorithm>
#include <vector>

namespace topovox
{
namespace cuda
{
struct ImageOnDevice
{
  PooledArray<unsigned char> copy;
  GridView view; // in device memory

  explicit ImageOnDevice(const GridView& image)
    : copy(image.memory == MemorySpace::Host ? static_cast<size_t>(image.voxelCount()) * scalarTypeSize(image.type) : 0)
    , view(image)
  {
    if (image.memory == MemorySpace::Device)
      return;
    const size_t size = scalarTypeSize(image.type);
    const size_t bytes = static_cast<size_t>(image.voxelCount()) * size;
    if (image.isContiguous())
      copyToDevice(copy.ptr, image.data, bytes, defaultThreadCount());
    else
    {
      std::vector<unsigned char> packed(bytes);
      const auto* from = static_cast<const unsigned char*>(image.data);
      size_t at = 0;
      for (int64_t z = 0; z < image.dims[2]; ++z)
        for (int64_t y = 0; y < image.dims[1]; ++y)
          for (int64_t x = 0; x < image.dims[0]; ++x, at += size)
            std::copy_n(from + size * static_cast<size_t>(x * image.strides[0] + y * image.strides[1] +
              z * image.strides[2]), size, packed.data() + at);
      copyToDevice(copy.ptr, packed.data(), bytes, defaultThreadCount());
    }
    view = GridView::contiguous(copy.ptr, image.type, image.dims[0], image.dims[1], image.dims[2], MemorySpace::Device);
  }
  ImageOnDevice(const ImageOnDevice&) = delete;
  ImageOnDevice& operator=(const ImageOnDevice&) = delete;
};
}
}
