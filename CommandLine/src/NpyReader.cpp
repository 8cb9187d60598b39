#include "NpyReader.h"

#include "ByteOrder.h"
#include "Errors.h"
#include "InputFile.h"

#include <cctype>
#include <cstring>
#include <limits>
#include <utility>

namespace topovox
{
namespace cli
{
namespace
{

const char kMagic[] = "\x93NUMPY";
const size_t kMagicSize = 6;
// numpy itself refuses headers over 10000 bytes unless told otherwise; a
// larger cap still stops a corrupt length from allocating gigabytes.
const uint32_t kMaxHeaderSize = 1 << 20;

// The subset of Python literals a .npy header is written in: a dict of
// strings, booleans, None, integers, tuples and lists.
struct PyValue
{
  enum Kind
  {
    String,
    Bool,
    None,
    Integer,
    Tuple,
    List,
    Dict
  } kind = None;
  std::string text;      // String
  bool flag = false;     // Bool
  int64_t integer = 0;   // Integer
  std::vector<PyValue> items;                          // Tuple, List, Dict values
  std::vector<std::string> keys;                       // Dict keys
};

class PyLiteralParser
{
public:
  explicit PyLiteralParser(const std::string& text)
    : s_(text)
  {
  }

  PyValue parseAll()
  {
    PyValue v = parseValue(0);
    skipSpace();
    if (pos_ != s_.size())
      fail("unexpected text after the dictionary");
    return v;
  }

private:
  [[noreturn]] void fail(const std::string& why) const
  {
    throw std::invalid_argument(why + " at offset " + std::to_string(pos_));
  }
  void skipSpace()
  {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
  }
  bool accept(char c)
  {
    skipSpace();
    if (pos_ < s_.size() && s_[pos_] == c)
    {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c)
  {
    if (!accept(c))
      fail(std::string("expected '") + c + "'");
  }

  // Items up to `close`, separated by commas, a trailing comma allowed.
  // Returns whether a comma was seen (a 1-tuple needs one).
  template <typename F>
  bool parseSequence(char close, F item)
  {
    bool comma = false;
    while (!accept(close))
    {
      item();
      if (accept(','))
        comma = true;
      else
      {
        expect(close);
        break;
      }
    }
    return comma;
  }

  PyValue parseValue(int depth)
  {
    if (depth > 16)
      fail("nesting too deep");
    skipSpace();
    if (pos_ >= s_.size())
      fail("unexpected end");
    PyValue v;
    const char c = s_[pos_];
    if (c == '\'' || c == '"')
    {
      v.kind = PyValue::String;
      v.text = parseString();
    }
    else if (c == '{')
    {
      ++pos_;
      v.kind = PyValue::Dict;
      parseSequence('}', [&] {
        skipSpace();
        if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
          fail("expected a string key");
        v.keys.push_back(parseString());
        expect(':');
        v.items.push_back(parseValue(depth + 1));
      });
    }
    else if (c == '(' || c == '[')
    {
      ++pos_;
      v.kind = c == '(' ? PyValue::Tuple : PyValue::List;
      parseSequence(c == '(' ? ')' : ']', [&] { v.items.push_back(parseValue(depth + 1)); });
    }
    else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+')
    {
      v.kind = PyValue::Integer;
      v.integer = parseInteger();
    }
    else if (std::isalpha(static_cast<unsigned char>(c)))
    {
      std::string word;
      while (pos_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[pos_])))
        word += s_[pos_++];
      if (word == "True" || word == "False")
      {
        v.kind = PyValue::Bool;
        v.flag = word == "True";
      }
      else if (word == "None")
        v.kind = PyValue::None;
      else
        fail("unexpected word '" + word + "'");
    }
    else
      fail(std::string("unexpected character '") + c + "'");
    return v;
  }

  std::string parseString()
  {
    const char quote = s_[pos_++];
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != quote)
    {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size())
        ++pos_; // dtype strings have no meaningful escapes; keep the char
      out += s_[pos_++];
    }
    if (pos_ >= s_.size())
      fail("unterminated string");
    ++pos_;
    return out;
  }

  int64_t parseInteger()
  {
    bool negative = false;
    if (s_[pos_] == '-' || s_[pos_] == '+')
      negative = s_[pos_++] == '-';
    if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_])))
      fail("expected a digit");
    int64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])))
    {
      const int d = s_[pos_++] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - d) / 10)
        fail("integer too large");
      v = v * 10 + d;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'L' || s_[pos_] == 'l'))
      ++pos_; // Python 2 long literal (old numpy files)
    return negative ? -v : v;
  }

  const std::string& s_;
  size_t pos_ = 0;
};

// Parses a numpy type string such as "<u2", ">f8" or "|b1". Returns an
// empty string on success, else the reason.
std::string parseDescr(const std::string& descr, ScalarType& type, bool& bigEndian)
{
  const std::string unsupported = "unsupported dtype '" + descr + "'";
  const std::string supported =
    "; topovox reads int8..int64, uint8..uint64, float32, float64 and bool";
  const char order = descr.empty() ? '?' : descr[0];
  if (order == '<')
    bigEndian = false;
  else if (order == '>')
    bigEndian = true;
  else if (order == '|' || order == '=')
    bigEndian = !hostIsLittleEndian();
  else
    return unsupported + supported;
  const std::string code = descr.substr(1);
  struct Code
  {
    const char* code;
    ScalarType type;
  };
  static const Code codes[] = { { "i1", ScalarType::Int8 }, { "u1", ScalarType::UInt8 },
    { "b1", ScalarType::UInt8 }, { "i2", ScalarType::Int16 }, { "u2", ScalarType::UInt16 },
    { "i4", ScalarType::Int32 }, { "u4", ScalarType::UInt32 }, { "i8", ScalarType::Int64 },
    { "u8", ScalarType::UInt64 }, { "f4", ScalarType::Float32 }, { "f8", ScalarType::Float64 } };
  for (const Code& c : codes)
    if (code == c.code)
    {
      type = c.type;
      return std::string();
    }
  std::string hint;
  if (code == "f2")
    hint = " (float16: convert with .astype(numpy.float32))";
  else if (!code.empty() && code[0] == 'c')
    hint = " (complex numbers have no order)";
  return unsupported + hint + supported;
}

std::string shapeText(const std::vector<int64_t>& shape)
{
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

} // namespace

bool hasNpyMagic(const std::string& path)
{
  InputFile file(path);
  char head[kMagicSize];
  return file.read(head, kMagicSize) == kMagicSize && std::memcmp(head, kMagic, kMagicSize) == 0;
}

Image readNpy(const std::string& path, bool stacks)
{
  InputFile file(path);
  const std::string bad = path + ": not a valid .npy file: ";

  unsigned char preamble[kMagicSize + 2];
  if (file.read(preamble, sizeof preamble) != sizeof preamble)
    throw Error(bad + "too short for the .npy preamble");
  if (std::memcmp(preamble, kMagic, kMagicSize) != 0)
    throw Error(bad + "it does not start with the .npy magic string");
  const int major = preamble[kMagicSize], minor = preamble[kMagicSize + 1];
  if (major < 1 || major > 3 || minor != 0)
    throw Error(path + ": unsupported .npy format version " + std::to_string(major) + "." +
      std::to_string(minor) + " (topovox reads 1.0, 2.0 and 3.0)");
  // Version 1 has a 2-byte header length, later versions 4 bytes; both are
  // little-endian whatever the host.
  unsigned char lengthBytes[4] = { 0, 0, 0, 0 };
  const size_t lengthSize = major == 1 ? 2 : 4;
  if (file.read(lengthBytes, lengthSize) != lengthSize)
    throw Error(bad + "truncated header");
  const uint32_t headerSize = uint32_t(lengthBytes[0]) | uint32_t(lengthBytes[1]) << 8 |
    uint32_t(lengthBytes[2]) << 16 | uint32_t(lengthBytes[3]) << 24;
  if (headerSize > kMaxHeaderSize)
    throw Error(bad + "implausible header length " + std::to_string(headerSize));
  std::string header(headerSize, '\0');
  if (file.read(&header[0], headerSize) != headerSize)
    throw Error(bad + "truncated header");
  const int64_t dataOffset = static_cast<int64_t>(sizeof preamble + lengthSize + headerSize);

  // The header: {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
  PyValue dict;
  try
  {
    dict = PyLiteralParser(header).parseAll();
  }
  catch (const std::invalid_argument& e)
  {
    throw Error(bad + "corrupt header (" + e.what() + ")");
  }
  if (dict.kind != PyValue::Dict)
    throw Error(bad + "the header is not a dictionary");
  const PyValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (size_t i = 0; i < dict.keys.size(); ++i)
  {
    const std::string& key = dict.keys[i];
    const PyValue* v = &dict.items[i];
    if (key == "descr")
      descr = v;
    else if (key == "fortran_order")
      fortran = v;
    else if (key == "shape")
      shape = v;
    else
      throw Error(bad + "unexpected header key '" + key + "'");
  }
  if (!descr || !fortran || !shape)
    throw Error(bad + "the header lacks '" +
      (!descr ? "descr" : !fortran ? "fortran_order" : "shape") + "'");
  if (descr->kind == PyValue::List)
    throw Error(path + ": structured (record) arrays are not images; save one numeric field");
  if (descr->kind != PyValue::String)
    throw Error(bad + "'descr' is not a string");
  if (fortran->kind != PyValue::Bool)
    throw Error(bad + "'fortran_order' is not True or False");
  if (shape->kind != PyValue::Tuple)
    throw Error(bad + "'shape' is not a tuple");

  ScalarType type = ScalarType::UInt8;
  bool bigEndian = false;
  const std::string why = parseDescr(descr->text, type, bigEndian);
  if (!why.empty())
    throw Error(path + ": " + why);

  std::vector<int64_t> dims;
  for (const PyValue& n : shape->items)
  {
    if (n.kind != PyValue::Integer || n.integer < 0)
      throw Error(bad + "'shape' must hold non-negative integers");
    dims.push_back(n.integer);
  }
  if (dims.empty())
    throw Error(path + ": the array is a scalar (shape ()); an image has 1, 2 or 3 axes");
  // --batch: a stack of volumes (n, z, y, x), read as (n z, y, x).
  int64_t stack = 0;
  if (dims.size() == 4 && stacks && !fortran->flag)
  {
    stack = dims[0];
    dims = { dims[0] * dims[1], dims[2], dims[3] };
  }
  if (dims.size() > 3)
    throw Error(path + ": the array has " + std::to_string(dims.size()) + " axes (shape " +
      shapeText(dims) + "); an image has 1, 2 or 3 axes" +
      (stacks ? " (a stack of volumes: 4 axes, C order)"
              : (dims.size() == 4 ? " (a stack of volumes goes with --batch where a command has it)" : "")));
  for (int64_t n : dims)
    if (n == 0)
      throw Error(path + ": the array is empty (shape " + shapeText(dims) + ")");
  const std::string shapeDesc = "shape " + shapeText(dims) + " " + scalarTypeName(type);
  if (!fortran->flag)
    dims = std::vector<int64_t>(dims.rbegin(), dims.rend());
  int64_t need = 0;
  try
  {
    need = imageByteCount(dims, type, path);
  }
  catch (const Error&)
  {
    throw Error(path + ": " + shapeDesc + " describes an impossibly large array");
  }

  // An uncompressed file's size is known before reading the data.
  const int64_t onDisk = file.compressed() ? -1 : file.diskSize() - dataOffset;
  if (file.diskSize() >= 0 && onDisk >= 0 && onDisk < need)
    throw Error(path + ": the array data has " + std::to_string(onDisk) + " bytes but " +
      shapeDesc + " needs " + std::to_string(need) + " (truncated file)");
  if (file.diskSize() >= 0 && onDisk > need)
    throw Error(path + ": " + std::to_string(onDisk - need) +
      " unexpected bytes after the array data");
  Image image;
  image.bytes = file.readSamples(need);
  const int64_t got = static_cast<int64_t>(image.bytes.size());
  if (got < need)
    throw Error(path + ": the array data has " + std::to_string(got) + " bytes but " +
      shapeDesc + " needs " + std::to_string(need) + " (truncated file)");
  if (const int64_t extra = file.countRemaining())
    throw Error(path + ": " + std::to_string(extra) + " unexpected bytes after the array data");

  if (bigEndian == hostIsLittleEndian())
    swapBytes(image.bytes.data(), scalarTypeSize(type), image.bytes.size() / scalarTypeSize(type));
  image.type = type;
  image.fortranOrder = fortran->flag;
  image.axes = static_cast<int>(dims.size());
  for (int a = 0; a < image.axes; ++a)
    image.dims[a] = dims[a];
  image.stack = stack;
  return image;
}

} // namespace cli
} // namespace topovox
