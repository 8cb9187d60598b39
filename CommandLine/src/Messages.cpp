#include "Messages.h"

#include <cstdio>

namespace topovox
{
namespace cli
{

std::string oneLine(const std::string& text)
{
  std::string out;
  for (char c : text)
  {
    if (c == '\n')
      out += "; ";
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      out += ' ';
    else
      out += c;
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
