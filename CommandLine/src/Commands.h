// Commands.h - the table of subcommands. To add a command: write
// Command<Name>.cpp with a `int run<Name>(const std::vector<std::string>&)`,
// declare it here, add one row to commandTable() in main.cpp and the file to
// CMakeLists.txt.
#pragma once

#include <string>
#include <vector>

namespace topovox
{
namespace cli
{

// A command receives the arguments after its name and returns the exit
// status; it reports failures by throwing Error or UsageError (Errors.h).
using CommandFunction = int (*)(const std::vector<std::string>& args);

struct Command
{
  const char* name;
  const char* summary; // one line for `topovox --help`
  CommandFunction run;
};

int runEuler(const std::vector<std::string>& args);
int runPersistence(const std::vector<std::string>& args);
int runTransform(const std::vector<std::string>& args);
int runMorphology(const std::vector<std::string>& args);
int runDistance(const std::vector<std::string>& args);
int runTransport(const std::vector<std::string>& args);
int runRegions(const std::vector<std::string>& args);
int runSimplify(const std::vector<std::string>& args);

} // namespace cli
} // namespace topovox
