#include "VtiReader.h"

#include "ByteOrder.h"
#include "Errors.h"
#include "InputFile.h"

#include <zlib.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

namespace topovox
{
namespace cli
{
namespace
{
// The value of attribute `name` in the tag text `tag` ("" when absent).
std::string attribute(const std::string& tag, const std::string& name)
{
  for (size_t at = tag.find(name + "=\""); at != std::string::npos; at = tag.find(name + "=\"", at + 1))
  {
    if (at > 0 && !std::isspace(static_cast<unsigned char>(tag[at - 1])))
      continue; // the end of a longer name
    const size_t start = at + name.size() + 2, end = tag.find('"', start);
    if (end == std::string::npos)
      return "";
    return tag.substr(start, end - start);
  }
  return "";
}

struct Tag
{
  size_t begin = std::string::npos, end = std::string::npos; // of "<name ...>"
  std::string text;
};

// The first tag `name` at or after `from` and before `limit`.
Tag findTag(const std::string& xml, const std::string& name, size_t from, size_t limit = std::string::npos)
{
  Tag t;
  for (size_t at = xml.find("<" + name, from); at != std::string::npos && at < limit;
       at = xml.find("<" + name, at + 1))
  {
    const char next = at + name.size() + 1 < xml.size() ? xml[at + name.size() + 1] : '>';
    if (!std::isspace(static_cast<unsigned char>(next)) && next != '>' && next != '/')
      continue;
    t.begin = at;
    t.end = xml.find('>', at);
    if (t.end == std::string::npos)
      return Tag{};
    t.text = xml.substr(at, t.end - at + 1);
    return t;
  }
  return t;
}

bool vtkType(const std::string& name, ScalarType& out)
{
  static const std::pair<const char*, ScalarType> types[] = { { "Int8", ScalarType::Int8 },
    { "UInt8", ScalarType::UInt8 }, { "Int16", ScalarType::Int16 }, { "UInt16", ScalarType::UInt16 },
    { "Int32", ScalarType::Int32 }, { "UInt32", ScalarType::UInt32 }, { "Int64", ScalarType::Int64 },
    { "UInt64", ScalarType::UInt64 }, { "Float32", ScalarType::Float32 }, { "Float64", ScalarType::Float64 } };
  for (const auto& t : types)
    if (name == t.first)
    {
      out = t.second;
      return true;
    }
  return false;
}

// Base64 to bytes, whitespace skipped; false on a character outside the
// alphabet. Padding ends the stream.
bool decodeBase64(const char* text, size_t size, std::vector<unsigned char>& out)
{
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  uint32_t bits = 0;
  int count = 0;
  for (size_t i = 0; i < size; ++i)
  {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c)))
      continue;
    if (c == '=')
      break;
    const int v = value(c);
    if (v < 0)
      return false;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    if (++count == 4)
    {
      out.push_back(static_cast<unsigned char>(bits >> 16));
      out.push_back(static_cast<unsigned char>(bits >> 8));
      out.push_back(static_cast<unsigned char>(bits));
      bits = 0;
      count = 0;
    }
  }
  if (count == 2)
    out.push_back(static_cast<unsigned char>(bits >> 4));
  else if (count == 3)
  {
    out.push_back(static_cast<unsigned char>(bits >> 10));
    out.push_back(static_cast<unsigned char>(bits >> 2));
  }
  return count != 1;
}

// Characters of base64 text (whitespace skipped) from `at` that encode
// `bytes` bytes, padding included.
size_t base64Span(const std::string& xml, size_t at, uint64_t bytes)
{
  const uint64_t chars = 4 * ((bytes + 2) / 3);
  uint64_t seen = 0;
  size_t i = at;
  while (i < xml.size() && seen < chars)
    if (!std::isspace(static_cast<unsigned char>(xml[i++])))
      ++seen;
  return i - at;
}

class Reader
{
public:
  Reader(const std::string& path, const std::string& xml)
    : Path(path)
    , Xml(xml)
  {
  }

  [[noreturn]] void fail(const std::string& why) const { throw Error(Path + ": " + why); }

  uint64_t headerInt(const unsigned char* p) const
  {
    uint64_t v = 0;
    if (HeaderSize == 4)
    {
      uint32_t u;
      std::memcpy(&u, p, 4);
      if (Swap)
        swapBytes(&u, 4, 1);
      v = u;
    }
    else
    {
      std::memcpy(&v, p, 8);
      if (Swap)
        swapBytes(&v, 8, 1);
    }
    return v;
  }

  // Uncompressed: [bytes][data]. Compressed: [blocks][block size][last
  // block size][compressed sizes...][zlib blocks]. `header` and `payload`
  // are the bytes after decoding; returns the data.
  SampleBytes unpack(const std::vector<unsigned char>& header, const unsigned char* payload,
    size_t payloadSize, uint64_t expected) const
  {
    SampleBytes data;
    if (!Compressed)
    {
      if (header.size() < HeaderSize || headerInt(header.data()) != expected || payloadSize < expected)
        fail("a data array holds " + std::to_string(header.size() < HeaderSize ? 0 : headerInt(header.data())) +
          " bytes where the image needs " + std::to_string(expected));
      data.assign(payload, payload + expected);
      return data;
    }
    const uint64_t blocks = headerInt(header.data()), blockSize = headerInt(header.data() + HeaderSize),
                   lastSize = headerInt(header.data() + 2 * HeaderSize);
    if (header.size() < (3 + blocks) * HeaderSize || blocks > (1u << 30))
      fail("a compressed data array has a truncated header");
    // The blocks must add up to the image, and the payload must be able to
    // hold it (deflate expands at most about 1032 times), before anything
    // is allocated for it: a corrupt header must not ask for petabytes.
    const uint64_t last = lastSize != 0 ? lastSize : blockSize;
    if (blocks == 0 || blockSize == 0 || last > blockSize ||
      (blocks - 1) > (std::numeric_limits<uint64_t>::max() - last) / blockSize ||
      (blocks - 1) * blockSize + last != expected)
      fail("a compressed data array's blocks hold other than the " + std::to_string(expected) +
        " bytes the image needs");
    if (expected / 1032 > payloadSize + blocks)
      fail("a compressed data array is truncated");
    data.reserve(static_cast<size_t>(expected));
    size_t at = 0;
    for (uint64_t b = 0; b < blocks; ++b)
    {
      const uint64_t compressed = headerInt(header.data() + (3 + b) * HeaderSize);
      const uint64_t size = (b + 1 == blocks && lastSize != 0) ? lastSize : blockSize;
      if (compressed > payloadSize - at || data.size() + size > expected)
        fail("a compressed data array is truncated or larger than the image");
      uLongf outSize = static_cast<uLongf>(size);
      const size_t before = data.size();
      data.resize(before + static_cast<size_t>(size));
      if (uncompress(data.data() + before, &outSize, payload + at, static_cast<uLong>(compressed)) != Z_OK ||
        outSize != size)
        fail("a zlib block of a data array is corrupt");
      at += static_cast<size_t>(compressed);
    }
    if (data.size() != expected)
      fail("a data array holds " + std::to_string(data.size()) + " bytes where the image needs " +
        std::to_string(expected));
    return data;
  }

  // Inline binary or appended base64 from character `at`: the header and
  // data (one base64 stream when uncompressed, two when compressed).
  SampleBytes base64At(size_t at, uint64_t expected) const
  {
    std::vector<unsigned char> first;
    const size_t probe = base64Span(Xml, at, HeaderSize);
    if (!decodeBase64(Xml.data() + at, probe, first) || first.size() < HeaderSize)
      fail("a data array is not valid base64");
    if (!Compressed)
    {
      std::vector<unsigned char> all;
      const uint64_t bytes = headerInt(first.data());
      if (bytes != expected)
        fail("a data array holds " + std::to_string(bytes) + " bytes where the image needs " +
          std::to_string(expected));
      if (!decodeBase64(Xml.data() + at, base64Span(Xml, at, HeaderSize + bytes), all) ||
        all.size() < HeaderSize + bytes)
        fail("a data array is not valid base64 or is truncated");
      return unpack(all, all.data() + HeaderSize, all.size() - HeaderSize, expected);
    }
    const uint64_t blocks = headerInt(first.data());
    if (blocks > (1u << 30))
      fail("a compressed data array has a corrupt header");
    const size_t headerChars = base64Span(Xml, at, (3 + blocks) * HeaderSize);
    std::vector<unsigned char> header, payload;
    if (!decodeBase64(Xml.data() + at, headerChars, header) || header.size() < (3 + blocks) * HeaderSize)
      fail("a compressed data array's header is not valid base64");
    uint64_t total = 0;
    for (uint64_t b = 0; b < blocks; ++b)
      total += headerInt(header.data() + (3 + b) * HeaderSize);
    const size_t dataAt = at + headerChars;
    if (!decodeBase64(Xml.data() + dataAt, base64Span(Xml, dataAt, total), payload))
      fail("a compressed data array is not valid base64");
    return unpack(header, payload.data(), payload.size(), expected);
  }

  Image read()
  {
    const Tag file = findTag(Xml, "VTKFile", 0);
    if (file.begin == std::string::npos)
      fail("not a VTK XML file (no <VTKFile> element)");
    if (attribute(file.text, "type") != "ImageData")
      fail("a VTK XML file of type '" + attribute(file.text, "type") + "', not ImageData");
    const std::string order = attribute(file.text, "byte_order");
    Swap = (order == "BigEndian") == hostIsLittleEndian();
    const std::string header = attribute(file.text, "header_type");
    HeaderSize = header == "UInt64" ? 8 : 4;
    if (!header.empty() && header != "UInt32" && header != "UInt64")
      fail("unknown header_type '" + header + "'");
    const std::string compressor = attribute(file.text, "compressor");
    Compressed = !compressor.empty();
    if (Compressed && compressor != "vtkZLibDataCompressor")
      fail("the compressor " + compressor + " is not supported (zlib is): save without compression or with zlib");

    const Tag imageData = findTag(Xml, "ImageData", file.end);
    if (imageData.begin == std::string::npos)
      fail("no <ImageData> element");
    const Tag piece = findTag(Xml, "Piece", imageData.end);
    if (piece.begin == std::string::npos)
      fail("no <Piece> element");
    if (findTag(Xml, "Piece", piece.end).begin != std::string::npos)
      fail("several pieces: merge them first (e.g. ParaView's Merge Blocks, or save as one piece)");
    int64_t ext[6];
    {
      std::istringstream s(attribute(piece.text, "Extent"));
      for (int64_t& e : ext)
        if (!(s >> e))
          fail("the piece has no valid Extent");
    }
    Image image;
    std::istringstream spacing(attribute(imageData.text, "Spacing"));
    for (double& v : image.spacing)
      if (!(spacing >> v))
        v = 1;

    // The array: the active point scalars, the first point array, else the
    // first cell array.
    const size_t pieceEnd = Xml.find("</Piece>", piece.end);
    Tag array;
    bool cells = false;
    for (const char* section : { "PointData", "CellData" })
    {
      const Tag data = findTag(Xml, section, piece.end, pieceEnd);
      if (data.begin == std::string::npos || data.text.back() != '>' || data.text[data.text.size() - 2] == '/')
        continue;
      const size_t sectionEnd = Xml.find(std::string("</") + section + ">", data.end);
      const std::string active = attribute(data.text, "Scalars");
      Tag first;
      for (Tag a = findTag(Xml, "DataArray", data.end, sectionEnd); a.begin != std::string::npos;
           a = findTag(Xml, "DataArray", a.end, sectionEnd))
      {
        if (first.begin == std::string::npos)
          first = a;
        if (!active.empty() && attribute(a.text, "Name") == active)
        {
          first = a;
          break;
        }
      }
      if (first.begin != std::string::npos)
      {
        array = first;
        cells = std::string(section) == "CellData";
        break;
      }
    }
    if (array.begin == std::string::npos)
      fail("the image has no point or cell data array");
    const std::string name = attribute(array.text, "Name");
    if (!vtkType(attribute(array.text, "type"), image.type))
      fail("array '" + name + "' has the unsupported type '" + attribute(array.text, "type") + "'");
    const std::string components = attribute(array.text, "NumberOfComponents");
    if (!components.empty() && components != "1")
      fail("array '" + name + "' has " + components + " components: extract one first (e.g. ParaView's Calculator)");

    std::vector<int64_t> dims;
    for (int a = 0; a < 3; ++a)
    {
      const int64_t points = ext[2 * a + 1] - ext[2 * a] + 1;
      if (points < 1)
        fail("the piece's Extent is empty");
      dims.push_back(cells ? std::max<int64_t>(1, points - 1) : points);
    }
    while (dims.size() > 1 && dims.back() == 1)
      dims.pop_back();
    const int64_t bytes = imageByteCount(dims, image.type, Path);
    image.axes = static_cast<int>(dims.size());
    for (size_t a = 0; a < dims.size(); ++a)
      image.dims[a] = dims[a];
    const size_t elementSize = static_cast<size_t>(bytes / image.voxelCount());

    const std::string format = attribute(array.text, "format");
    const size_t contentEnd = Xml.find("</DataArray>", array.end);
    if (format == "ascii")
    {
      const size_t chars = contentEnd == std::string::npos ? 0 : contentEnd - array.end - 1;
      if (chars < static_cast<size_t>(image.voxelCount())) // a character a value at the least
        fail("array '" + name + "' has fewer ascii values than the image has voxels");
      std::istringstream s(Xml.substr(array.end + 1, chars));
      image.bytes.resize(static_cast<size_t>(bytes));
      const bool floating = image.type == ScalarType::Float32 || image.type == ScalarType::Float64;
      for (int64_t i = 0; i < image.voxelCount(); ++i)
      {
        // Integers as integers: 64-bit values beyond 2^53 stay exact.
        std::string word;
        if (!(s >> word))
          fail("array '" + name + "' has fewer ascii values than the image has voxels");
        char* end = nullptr;
        if (floating)
          storeValue(image, i, std::strtod(word.c_str(), &end), 0, 0);
        else if (image.type == ScalarType::UInt64)
          storeValue(image, i, 0, 0, std::strtoull(word.c_str(), &end, 10));
        else
          storeValue(image, i, 0, std::strtoll(word.c_str(), &end, 10), 0);
        if (end == word.c_str() || *end != '\0')
          fail("array '" + name + "' has the ascii value '" + word + "', not a number");
      }
      return image;
    }
    if (format == "binary")
      image.bytes = base64At(array.end + 1, static_cast<uint64_t>(bytes));
    else if (format == "appended")
    {
      const Tag appended = findTag(Xml, "AppendedData", piece.end);
      if (appended.begin == std::string::npos)
        fail("array '" + name + "' is appended but the file has no <AppendedData>");
      const size_t underscore = Xml.find('_', appended.end);
      if (underscore == std::string::npos)
        fail("the <AppendedData> element has no '_' marker");
      const uint64_t offset = std::strtoull(attribute(array.text, "offset").c_str(), nullptr, 10);
      const size_t start = underscore + 1;
      if (offset >= Xml.size() - start)
        fail("array '" + name + "' has an offset beyond the end of the file");
      if (attribute(appended.text, "encoding") == "base64")
        image.bytes = base64At(start + static_cast<size_t>(offset), static_cast<uint64_t>(bytes));
      else
      {
        const unsigned char* raw = reinterpret_cast<const unsigned char*>(Xml.data()) + start + offset;
        const size_t left = Xml.size() - start - static_cast<size_t>(offset);
        if (left < HeaderSize)
          fail("array '" + name + "' is truncated");
        const uint64_t blocks = Compressed ? headerInt(raw) : 0;
        const size_t headerBytes = Compressed ? static_cast<size_t>((3 + std::min<uint64_t>(blocks, 1u << 30)) * HeaderSize) : HeaderSize;
        if (left < headerBytes)
          fail("array '" + name + "' is truncated");
        const std::vector<unsigned char> head(raw, raw + headerBytes);
        image.bytes = unpack(head, raw + headerBytes, left - headerBytes, static_cast<uint64_t>(bytes));
      }
    }
    else
      fail("array '" + name + "' has the unknown format '" + format + "'");
    if (Swap && elementSize > 1)
      swapBytes(image.bytes.data(), elementSize, image.bytes.size() / elementSize);
    return image;
  }

private:
  // One ascii value into the image: floating types take d, UInt64 u, the
  // other integer types i.
  static void storeValue(Image& image, int64_t k, double d, long long i, unsigned long long u)
  {
    unsigned char* at = image.bytes.data();
    switch (image.type)
    {
      case ScalarType::Int8: reinterpret_cast<int8_t*>(at)[k] = static_cast<int8_t>(i); break;
      case ScalarType::UInt8: reinterpret_cast<uint8_t*>(at)[k] = static_cast<uint8_t>(i); break;
      case ScalarType::Int16: reinterpret_cast<int16_t*>(at)[k] = static_cast<int16_t>(i); break;
      case ScalarType::UInt16: reinterpret_cast<uint16_t*>(at)[k] = static_cast<uint16_t>(i); break;
      case ScalarType::Int32: reinterpret_cast<int32_t*>(at)[k] = static_cast<int32_t>(i); break;
      case ScalarType::UInt32: reinterpret_cast<uint32_t*>(at)[k] = static_cast<uint32_t>(i); break;
      case ScalarType::Int64: reinterpret_cast<int64_t*>(at)[k] = static_cast<int64_t>(i); break;
      case ScalarType::UInt64: reinterpret_cast<uint64_t*>(at)[k] = static_cast<uint64_t>(u); break;
      case ScalarType::Float32: reinterpret_cast<float*>(at)[k] = static_cast<float>(d); break;
      case ScalarType::Float64: reinterpret_cast<double*>(at)[k] = d; break;
    }
  }

  const std::string& Path;
  const std::string& Xml;
  bool Swap = false, Compressed = false;
  size_t HeaderSize = 4;
};
} // namespace

bool isVtiPath(const std::string& path)
{
  return endsWith(path, ".vti") || endsWith(path, ".vti.gz");
}

Image readVti(const std::string& path)
{
  InputFile file(path);
  // The whole file: appended data sit after the XML that describes them.
  const std::vector<unsigned char> content = file.readUpTo(int64_t(1) << 40);
  const std::string xml(content.begin(), content.end());
  return Reader(path, xml).read();
}

} // namespace cli
} // namespace topovox
