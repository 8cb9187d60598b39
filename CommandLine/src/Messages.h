// Messages.h - everything the tool says on stderr goes through here, so
// that every line carries the "topovox: " prefix and is exactly one line.
#pragma once

#include <string>

namespace topovox
{
namespace cli
{

// Newlines (and other control characters) become "; " or spaces, so that
// a message of several parts stays on one line; bytes that are not UTF-8
// (quoted from a damaged file) become \xNN.
std::string oneLine(const std::string& text);

// "topovox: warning: ..." for each line of `text` (kernels join several
// warnings with newlines); nothing for an empty text.
void warn(const std::string& text);

// "topovox: ..." (for --verbose notes and errors).
void say(const std::string& text);

// "0.042 s": durations for --verbose.
std::string seconds(double s);

} // namespace cli
} // namespace topovox
