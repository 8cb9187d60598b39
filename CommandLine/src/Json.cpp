#include "Json.h"

#include <cctype>
#include <cstdlib>
#include <stdexcept>

namespace topovox
{
namespace cli
{
namespace
{

class JsonParser
{
public:
  explicit JsonParser(const std::string& text)
    : s_(text)
  {
  }

  JsonValue document()
  {
    JsonValue v = value(0);
    space();
    if (pos_ != s_.size())
      fail("unexpected text after the document");
    return v;
  }

private:
  [[noreturn]] void fail(const std::string& why) const
  {
    int line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i)
    {
      column = s_[i] == '\n' ? 1 : column + 1;
      line += s_[i] == '\n';
    }
    throw std::invalid_argument(
      why + " at line " + std::to_string(line) + ", column " + std::to_string(column));
  }
  void space()
  {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
  }
  bool accept(char c)
  {
    space();
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
  bool word(const char* w)
  {
    const std::string ws(w);
    if (s_.compare(pos_, ws.size(), ws) != 0)
      return false;
    pos_ += ws.size();
    return true;
  }

  JsonValue value(int depth)
  {
    // Sidecars are flat; a depth limit keeps hostile input off the stack.
    if (depth > 32)
      fail("nesting too deep");
    space();
    if (pos_ >= s_.size())
      fail("unexpected end of the document");
    JsonValue v;
    const char c = s_[pos_];
    if (c == '{')
    {
      ++pos_;
      v.kind = JsonValue::Object;
      if (accept('}'))
        return v;
      do
      {
        space();
        if (pos_ >= s_.size() || s_[pos_] != '"')
          fail("expected a string key");
        std::string key = string();
        expect(':');
        v.members.emplace_back(std::move(key), value(depth + 1));
      } while (accept(','));
      expect('}');
    }
    else if (c == '[')
    {
      ++pos_;
      v.kind = JsonValue::Array;
      if (accept(']'))
        return v;
      do
        v.items.push_back(value(depth + 1));
      while (accept(','));
      expect(']');
    }
    else if (c == '"')
    {
      v.kind = JsonValue::String;
      v.text = string();
    }
    else if (c == '-' || std::isdigit(static_cast<unsigned char>(c)))
    {
      v.kind = JsonValue::Number;
      const char* start = s_.c_str() + pos_;
      char* end = nullptr;
      v.number = std::strtod(start, &end);
      v.text.assign(start, static_cast<size_t>(end - start));
      // strtod also takes "-inf", hex and such; JSON numbers are plainer.
      if (end == start || v.text.find_first_not_of("0123456789+-.eE") != std::string::npos)
        fail("malformed number");
      pos_ += static_cast<size_t>(end - start);
    }
    else if (word("true"))
    {
      v.kind = JsonValue::Bool;
      v.boolean = true;
    }
    else if (word("false"))
      v.kind = JsonValue::Bool;
    else if (word("null"))
      v.kind = JsonValue::Null;
    else
      fail(std::string("unexpected character '") + c + "'");
    return v;
  }

  std::string string()
  {
    ++pos_; // the opening quote
    std::string out;
    while (true)
    {
      if (pos_ >= s_.size())
        fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"')
        return out;
      if (static_cast<unsigned char>(c) < 0x20)
        fail("control character in a string");
      if (c != '\\')
      {
        out += c;
        continue;
      }
      if (pos_ >= s_.size())
        fail("unterminated string");
      const char e = s_[pos_++];
      switch (e)
      {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u':
        {
          if (pos_ + 4 > s_.size())
            fail("truncated \\u escape");
          unsigned code = 0;
          for (int i = 0; i < 4; ++i)
          {
            const char h = s_[pos_++];
            if (!std::isxdigit(static_cast<unsigned char>(h)))
              fail("malformed \\u escape");
            code = code * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(h))
                ? h - '0' : std::tolower(static_cast<unsigned char>(h)) - 'a' + 10);
          }
          // UTF-8 for the Basic Multilingual Plane; surrogate pairs (never
          // seen in sidecars) come out as two 3-byte sequences.
          if (code < 0x80)
            out += static_cast<char>(code);
          else if (code < 0x800)
          {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          else
          {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default: fail(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
};

} // namespace

const JsonValue* JsonValue::find(const std::string& key) const
{
  for (const auto& m : members)
    if (m.first == key)
      return &m.second;
  return nullptr;
}

JsonValue parseJson(const std::string& text)
{
  return JsonParser(text).document();
}

} // namespace cli
} // namespace topovox
