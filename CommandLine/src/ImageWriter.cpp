#include "ImageWriter.h"

#include "ByteOrder.h"
#include "Errors.h"

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

void writeImageNpy(FILE* out, const Image& image, bool asBool)
{
  if (!hostIsLittleEndian())
    throw Error("writing .npy images on a big-endian host is not supported");
  std::string shape;
  for (int k = 0; k < image.axes; ++k)
  {
    const int a = image.fortranOrder ? k : image.axes - 1 - k;
    shape += std::to_string(image.dims[a]) + (image.axes == 1 ? "," : (k + 1 < image.axes ? ", " : ""));
  }
  std::string header = std::string("{'descr': '") + (asBool ? "|b1" : descrOf(image.type)) +
    "', 'fortran_order': " + (image.fortranOrder ? "True" : "False") + ", 'shape': (" + shape + "), }";
  // Padded with spaces and a newline so that the data start at a multiple
  // of 64 bytes (10 bytes of preamble first), as numpy writes it.
  header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
  const unsigned char head[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
    static_cast<unsigned char>(header.size() & 0xFF), static_cast<unsigned char>(header.size() >> 8) };
  if (std::fwrite(head, 1, sizeof head, out) != sizeof head ||
    std::fwrite(header.data(), 1, header.size(), out) != header.size() ||
    std::fwrite(image.bytes.data(), 1, image.bytes.size(), out) != image.bytes.size())
    throw Error("could not write the output image");
}
}
}
