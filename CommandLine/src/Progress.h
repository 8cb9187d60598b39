// Progress.h - a progress bar on stderr for long kernels, and a stopwatch
// for --verbose stage timings.
//
// The bar appears only when stderr is a terminal (logs and pipes stay
// clean) and only once a job has run for a while (short jobs never flash a
// bar). It is cleared when done, so later messages start on a clean line.
#pragma once

#include "topovox/Progress.h"

#include <chrono>
#include <string>

namespace topovox
{
namespace cli
{

class Stopwatch
{
public:
  Stopwatch() { restart(); }
  void restart() { start_ = std::chrono::steady_clock::now(); }
  double seconds() const
  {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

private:
  std::chrono::steady_clock::time_point start_;
};

class ProgressBar
{
public:
  explicit ProgressBar(std::string label);
  ~ProgressBar() { clear(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // For the kernels' options: never asks them to stop (Ctrl-C kills the
  // process, see OutputFile.h).
  ProgressCallback callback();
  // Erases the bar if one was drawn.
  void clear();

private:
  void update(double fraction);
  std::string label_;
  bool terminal_ = false, drawn_ = false;
  Stopwatch sinceStart_;
  double lastDraw_ = -1;
};

} // namespace cli
} // namespace topovox
