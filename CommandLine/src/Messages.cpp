#include "Messages.h"

#include <cstdio>

namespace topovox
{
namespace cli
{

namespace
{
// Length of the valid UTF-8 sequence starting at s[i], or 0 if there is none
// (messages quote bytes from damaged files; a terminal or a test harness
// decoding stderr as UTF-8 must not choke on them).
size_t utf8Length(const std::string& s, size_t i)
{
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
      return 0;
  return n;
}
}

std::string oneLine(const std::string& text)
{
  std::string out;
  for (size_t i = 0; i < text.size(); ++i)
  {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n')
      out += "; ";
    else if (c < 0x20 || c == 0x7F)
      out += ' ';
    else if (c < 0x80)
      out += static_cast<char>(c);
    else if (const size_t n = utf8Length(text, i))
    {
      out += text.substr(i, n);
      i += n - 1;
    }
    else
    {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02X", c);
      out += escaped;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';'))
    out.pop_back();
  return out;
}

void warn(const std::string& text)
{
  size_t start = 0;
  while (start < text.size())
  {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    if (end > start)
      std::fprintf(stderr, "topovox: warning: %s\n", oneLine(text.substr(start, end - start)).c_str());
    start = end + 1;
  }
}

std::string seconds(double s)
{
  char text[32];
  std::snprintf(text, sizeof text, "%.3f s", s);
  return text;
}

void say(const std::string& text)
{
  std::fprintf(stderr, "topovox: %s\n", oneLine(text).c_str());
}

} // namespace cli
} // namespace topovox
