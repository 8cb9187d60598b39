#include "topovox/Grid.h"

#include <algorithm>
#include <cctype>

namespace topovox
{
const char* scalarTypeName(ScalarType t)
{
  switch (t)
  {
    case ScalarType::Int8: return "int8";
    case ScalarType::UInt8: return "uint8";
    case ScalarType::Int16: return "int16";
    case ScalarType::UInt16: return "uint16";
    case ScalarType::Int32: return "int32";
    case ScalarType::UInt32: return "uint32";
    case ScalarType::Int64: return "int64";
    case ScalarType::UInt64: return "uint64";
    case ScalarType::Float32: return "float32";
    case ScalarType::Float64: return "float64";
  }
  return "unknown";
}

std::size_t scalarTypeSize(ScalarType t)
{
  switch (t)
  {
    case ScalarType::Int8:
    case ScalarType::UInt8: return 1;
    case ScalarType::Int16:
    case ScalarType::UInt16: return 2;
    case ScalarType::Int32:
    case ScalarType::UInt32:
    case ScalarType::Float32: return 4;
    default: return 8;
  }
}

bool scalarTypeIsFloating(ScalarType t)
{
  return t == ScalarType::Float32 || t == ScalarType::Float64;
}

bool parseScalarType(const std::string& name, ScalarType& out)
{
  std::string s;
  for (char c : name)
    s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // NumPy byte-order prefixes: native ('=', '|') or little-endian ('<', the
  // only order the kernels read). A big-endian '>' type is refused: the
  // caller must swap bytes first.
  if (!s.empty() && (s[0] == '<' || s[0] == '|' || s[0] == '='))
    s = s.substr(1);
  struct Alias
  {
    const char* name;
    ScalarType type;
  };
  static const Alias aliases[] = { { "int8", ScalarType::Int8 }, { "i1", ScalarType::Int8 },
    { "uint8", ScalarType::UInt8 }, { "u1", ScalarType::UInt8 }, { "int16", ScalarType::Int16 },
    { "i2", ScalarType::Int16 }, { "uint16", ScalarType::UInt16 }, { "u2", ScalarType::UInt16 },
    { "int32", ScalarType::Int32 }, { "i4", ScalarType::Int32 }, { "uint32", ScalarType::UInt32 },
    { "u4", ScalarType::UInt32 }, { "int64", ScalarType::Int64 }, { "i8", ScalarType::Int64 },
    { "uint64", ScalarType::UInt64 }, { "u8", ScalarType::UInt64 },
    { "float32", ScalarType::Float32 }, { "float", ScalarType::Float32 },
    { "f4", ScalarType::Float32 }, { "float64", ScalarType::Float64 },
    { "double", ScalarType::Float64 }, { "f8", ScalarType::Float64 } };
  for (const auto& a : aliases)
    if (s == a.name)
    {
      out = a.type;
      return true;
    }
  return false;
}

std::string validateGrid(const GridView& grid)
{
  if (!grid.data && grid.voxelCount() > 0)
    return "the image has no data buffer";
  for (int a = 0; a < 3; ++a)
  {
    if (grid.dims[a] < 1)
      return "the image has an empty axis (dimension " + std::to_string(grid.dims[a]) + ")";
    if (grid.strides[a] < 1 && grid.dims[a] > 1)
      return "the image has a non-positive stride";
  }
  return std::string();
}
}
