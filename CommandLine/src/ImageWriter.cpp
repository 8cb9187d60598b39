#include "ImageWriter.h"

#include "ByteOrder.h"
#include "CopyOnThreads.h"
#include "Errors.h"
#include "NpyHeader.h"

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
  const std::string header = npyHeader(descr, fortran, shape);
  if (char* mapped = output.mapSized(header.size() + bytes))
  {
    std::memcpy(mapped, header.data(), header.size());
    copyOnThreads(mapped + header.size(), data, bytes, threads);
    return;
  }
  FILE* out = output.stream();
  if (std::fwrite(header.data(), 1, header.size(), out) != header.size() ||
    (bytes && std::fwrite(data, 1, bytes, out) != bytes))
    throw Error("could not write the output image");
}
}

void writeImageNpy(OutputFile& out, const Image& image, bool asBool, int threads)
{
  std::vector<int64_t> shape;
  for (int k = 0; k < image.axes; ++k)
    shape.push_back(image.dims[image.fortranOrder ? k : image.axes - 1 - k]);
  if (image.stack > 0) // a stack of volumes: (n, z, y, x)
    shape = { image.stack, image.dims[2] / image.stack, image.dims[1], image.dims[0] };
  writeNpy(out, asBool ? "|b1" : descrOf(image.type), image.fortranOrder, shape, image.bytes.data(),
    image.bytes.size(), threads);
}

void writeArrayNpy(OutputFile& out, ScalarType type, const std::vector<int64_t>& shape, const void* data,
  size_t bytes, int threads)
{
  writeNpy(out, descrOf(type), false, shape, data, bytes, threads);
}
}
}
