// Errors.h - the two kinds of failure the tool reports, and their exit codes.
//
// Every message is one line, written for a user, without the "topovox: "
// prefix (main() adds it). Throw UsageError for a bad command line (exit 2),
// Error for anything else that stops the job: unreadable input, malformed
// files, write failures (exit 1).
#pragma once

#include <stdexcept>
#include <string>

namespace topovox
{
namespace cli
{

enum ExitCode : int
{
  ExitSuccess = 0,
  ExitFailure = 1,
  ExitUsage = 2,
  ExitInterrupted = 130 // 128 + SIGINT, what shells expect
};

struct Error : std::runtime_error
{
  using std::runtime_error::runtime_error;
};

struct UsageError : std::runtime_error
{
  using std::runtime_error::runtime_error;
};

} // namespace cli
} // namespace topovox
