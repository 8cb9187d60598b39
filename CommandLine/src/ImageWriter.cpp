#include "ImageWriter.h"

#include "ByteOrder.h"
#include "Errors.h"
#include "NpyHeader.h"
#include "topovox/ParallelFor.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace topovox
{
namespace cli
{
namespace
{
const char* descrOf(ScalarType t)
{
  switch (t)
  {
    case ScalarType::Int8: return "|i1";
    case ScalarType::UInt8: return "|u1";
    case ScalarType::Int16: return "<i2";
    case ScalarType::UInt16: return "<u2";
    case ScalarType::Int32: return "<i4";
    case ScalarType::UInt32: return "<u4";
    case ScalarType::Int64: return "<i8";
    case ScalarType::UInt64: return "<u8";
    case ScalarType::Float32: return "<f4";
    case ScalarType::Float64: return "<f8";
  }
  return "|u1";
}
}

namespace
{
void writeNpy(OutputFile& output, const std::string& descr, bool fortran, const std::vector<int64_t>& shape,
  const void* data, size_t bytes, int threads)
{
  if (!hostIsLittleEndian())
    throw Error("writing .npy images on a big-endian host is not supported");
  const char* from = static_cast<const char*>(data);
  if (char* to = startNpy(output, npyHeader(descr, fortran, shape), bytes))
  {
    // Into the mapping in parts of 4 MiB, taken by the threads in turn (the
    // page faults of the file's pages with them).
    constexpr int64_t kPart = int64_t(4) << 20;
    parallelForDynamic(static_cast<int64_t>(bytes), std::max(threads, 1), kPart, [&](int, int64_t b0, int64_t b1) {
      std::memcpy(to + b0, from + b0, static_cast<size_t>(b1 - b0));
    });
    return;
  }
  if (bytes)
    std::fwrite(from, 1, bytes, output.stream());
}
}

void writeImageNpy(OutputFile& out, const Image& layout, const void* data, size_t bytes, bool asBool, int threads)
{
  std::vector<int64_t> shape;
  for (int k = 0; k < layout.axes; ++k)
    shape.push_back(layout.dims[layout.fortranOrder ? k : layout.axes - 1 - k]);
  if (layout.stack > 0) // a stack of volumes: (n, z, y, x)
    shape = { layout.stack, layout.dims[2] / layout.stack, layout.dims[1], layout.dims[0] };
  writeNpy(out, asBool ? "|b1" : descrOf(layout.type), layout.fortranOrder, shape, data, bytes, threads);
}

void writeImageNpy(OutputFile& out, const Image& image, bool asBool, int threads)
{
  writeImageNpy(out, image, image.bytes.data(), image.bytes.size(), asBool, threads);
}

void writeArrayNpy(OutputFile& out, ScalarType type, const std::vector<int64_t>& shape, const void* data,
  size_t bytes, int threads)
{
  writeNpy(out, descrOf(type), false, shape, data, bytes, threads);
}
}
}
