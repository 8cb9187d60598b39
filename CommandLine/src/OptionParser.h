// OptionParser.h - a small command-line parser: long options (--name VALUE,
// --name=VALUE), one-letter aliases (-o VALUE), flags, positional arguments,
// "--" to end options, and a generated --help listing every option with its
// default. Enough for topovox's commands; no external dependency.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace topovox
{
namespace cli
{

class OptionParser
{
public:
  // `usage` is the synopsis after "Usage: ", `description` a paragraph
  // printed under it.
  OptionParser(std::string usage, std::string description);

  // Starts a titled group of options in --help ("Input", "Output", ...).
  void section(const std::string& title);

  // A switch without a value.
  void flag(const std::string& name, char shortName, const std::string& help, bool* target);

  // An option with a value. `apply` converts and stores the text; it throws
  // UsageError with the reason, which the parser prefixes with the option's
  // name. `defaultText` is shown in --help ("" for no default).
  void value(const std::string& name, char shortName, const std::string& metavar,
    const std::string& help, const std::string& defaultText,
    std::function<void(const std::string&)> apply);

  // Free text printed at the end of --help (examples, notes).
  void epilog(const std::string& text) { epilog_ = text; }

  // Parses `args`, applying every option in order (a repeated option: the
  // last wins). Returns the positional arguments. Throws UsageError.
  std::vector<std::string> parse(const std::vector<std::string>& args);

  // Whether the option was on the command line (by its long name).
  bool given(const std::string& name) const;

  std::string help() const;

private:
  struct Option
  {
    std::string name; // long name without "--"; empty for a section title
    char shortName = 0;
    std::string metavar; // empty for a flag
    std::string help;
    std::string defaultText;
    std::function<void(const std::string&)> apply;
    bool* flagTarget = nullptr;
    bool seen = false;
  };
  Option* find(const std::string& name);
  Option* findShort(char c);
  void apply(Option& option, const std::string& text);

  std::string usage_, description_, epilog_;
  std::vector<Option> options_;
};

// Converters for option values; they throw UsageError with a reason.
// An integer in [lo, hi], decimal only.
int64_t parseInteger(const std::string& text, int64_t lo, int64_t hi);
// A finite or infinite number ("inf", "-inf"); NaN is refused.
double parseNumber(const std::string& text);
// Comma-separated numbers: "0.5,1,2.5".
std::vector<double> parseNumberList(const std::string& text);
// One of `choices` (case-insensitive); returns its index.
int parseChoice(const std::string& text, const std::vector<std::string>& choices);

} // namespace cli
} // namespace topovox
