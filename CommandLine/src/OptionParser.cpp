#include "OptionParser.h"

#include "Errors.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace topovox
{
namespace cli
{

OptionParser::OptionParser(std::string usage, std::string description)
  : usage_(std::move(usage))
  , description_(std::move(description))
{
}

void OptionParser::section(const std::string& title)
{
  Option o;
  o.help = title;
  options_.push_back(o);
}

void OptionParser::flag(
  const std::string& name, char shortName, const std::string& help, bool* target)
{
  Option o;
  o.name = name;
  o.shortName = shortName;
  o.help = help;
  o.flagTarget = target;
  options_.push_back(o);
}

void OptionParser::value(const std::string& name, char shortName, const std::string& metavar,
  const std::string& help, const std::string& defaultText,
  std::function<void(const std::string&)> apply)
{
  Option o;
  o.name = name;
  o.shortName = shortName;
  o.metavar = metavar;
  o.help = help;
  o.defaultText = defaultText;
  o.apply = std::move(apply);
  options_.push_back(o);
}

OptionParser::Option* OptionParser::find(const std::string& name)
{
  for (Option& o : options_)
    if (!o.name.empty() && o.name == name)
      return &o;
  return nullptr;
}

OptionParser::Option* OptionParser::findShort(char c)
{
  for (Option& o : options_)
    if (!o.name.empty() && o.shortName == c)
      return &o;
  return nullptr;
}

bool OptionParser::given(const std::string& name) const
{
  for (const Option& o : options_)
    if (o.name == name)
      return o.seen;
  return false;
}

void OptionParser::apply(Option& option, const std::string& text)
{
  option.seen = true;
  try
  {
    option.apply(text);
  }
  catch (const UsageError& e)
  {
    throw UsageError("--" + option.name + ": " + e.what());
  }
}

std::vector<std::string> OptionParser::parse(const std::vector<std::string>& args)
{
  std::vector<std::string> positional;
  bool optionsEnded = false;
  for (size_t i = 0; i < args.size(); ++i)
  {
    const std::string& arg = args[i];
    // "-" alone is an argument (stdout as an output name), not an option.
    if (optionsEnded || arg.size() < 2 || arg[0] != '-')
    {
      positional.push_back(arg);
      continue;
    }
    if (arg == "--")
    {
      optionsEnded = true;
      continue;
    }
    Option* option = nullptr;
    std::string inlineValue;
    bool hasInline = false;
    std::string shown = arg; // how the user spelled it, for messages
    if (arg[1] == '-')
    {
      std::string name = arg.substr(2);
      const size_t eq = name.find('=');
      if (eq != std::string::npos)
      {
        inlineValue = name.substr(eq + 1);
        hasInline = true;
        name = name.substr(0, eq);
        shown = "--" + name;
      }
      option = find(name);
    }
    else
    {
      // -oFILE is accepted like -o FILE; grouped flags (-vh) are not.
      option = findShort(arg[1]);
      shown = arg.substr(0, 2);
      if (arg.size() > 2)
      {
        inlineValue = arg.substr(2);
        hasInline = true;
      }
    }
    if (!option)
      throw UsageError("unknown option " + shown);
    if (option->flagTarget)
    {
      if (hasInline)
        throw UsageError(shown + " takes no value");
      *option->flagTarget = true;
      option->seen = true;
      continue;
    }
    if (!hasInline)
    {
      // The next argument is the value even if it starts with '-' (a
      // negative threshold, "-" for stdout).
      if (i + 1 >= args.size())
        throw UsageError(shown + " needs a value (" + option->metavar + ")");
      inlineValue = args[++i];
    }
    apply(*option, inlineValue);
  }
  return positional;
}

std::string OptionParser::help() const
{
  std::string out = "Usage: " + usage_ + "\n";
  if (!description_.empty())
    out += "\n" + description_ + "\n";
  const size_t column = 30;
  for (const Option& o : options_)
  {
    if (o.name.empty())
    {
      out += "\n" + o.help + ":\n";
      continue;
    }
    std::string left = "  ";
    left += o.shortName ? std::string("-") + o.shortName + ", " : std::string("    ");
    left += "--" + o.name;
    if (!o.metavar.empty())
      left += " " + o.metavar;
    std::string text = o.help;
    if (!o.defaultText.empty())
    {
      // On the last line of the help text if it fits in 80 columns.
      const std::string note = "[default: " + o.defaultText + "]";
      const size_t lastLine = text.size() - (text.rfind('\n') + 1);
      text += (column + lastLine + 1 + note.size() > 80 ? "\n" : " ") + note;
    }
    if (left.size() + 2 > column)
      out += left + "\n" + std::string(column, ' ');
    else
      out += left + std::string(column - left.size(), ' ');
    // Continuation lines of a multi-line help text line up with the first.
    for (char c : text)
    {
      out += c;
      if (c == '\n')
        out += std::string(column, ' ');
    }
    out += "\n";
  }
  if (!epilog_.empty())
    out += "\n" + epilog_ + "\n";
  return out;
}

int64_t parseInteger(const std::string& text, int64_t lo, int64_t hi)
{
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s, &end, 10);
  const bool digits = !text.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) ||
    ((s[0] == '-' || s[0] == '+') && std::isdigit(static_cast<unsigned char>(s[1]))));
  if (!digits || *end != '\0' || errno == ERANGE || v < lo || v > hi)
  {
    std::string range = "an integer";
    if (lo > INT64_MIN && hi < INT64_MAX)
      range += " in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    else if (lo > INT64_MIN)
      range += " >= " + std::to_string(lo);
    throw UsageError("expected " + range + ", got '" + text + "'");
  }
  return v;
}

double parseNumber(const std::string& text)
{
  const char* s = text.c_str();
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  // strtod also reads hex floats and "infinity"; all are fine. Leading
  // whitespace is not (it hides quoting mistakes).
  if (text.empty() || std::isspace(static_cast<unsigned char>(s[0])) || *end != '\0')
    throw UsageError("expected a number, got '" + text + "'");
  if (std::isnan(v))
    throw UsageError("expected a number, got NaN");
  return v;
}

std::vector<double> parseNumberList(const std::string& text)
{
  std::vector<double> out;
  size_t start = 0;
  while (true)
  {
    const size_t comma = text.find(',', start);
    out.push_back(parseNumber(text.substr(start, comma - start)));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return out;
}

int parseChoice(const std::string& text, const std::vector<std::string>& choices)
{
  std::string lower;
  for (char c : text)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string list;
  for (size_t i = 0; i < choices.size(); ++i)
  {
    if (lower == choices[i])
      return static_cast<int>(i);
    list += (i ? i + 1 == choices.size() ? " or " : ", " : "") + choices[i];
  }
  throw UsageError("expected " + list + ", got '" + text + "'");
}

} // namespace cli
} // namespace topovox
