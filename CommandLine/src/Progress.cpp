#include "Progress.h"

#include <algorithm>
#include <cstdio>
#include <unistd.h>

namespace topovox
{
namespace cli
{
namespace
{
const double kShowAfter = 0.5;  // seconds before a bar appears
const double kRedrawEvery = 0.1; // seconds between redraws
const int kWidth = 40;           // characters of bar
}

ProgressBar::ProgressBar(std::string label)
  : label_(std::move(label))
  , terminal_(::isatty(STDERR_FILENO) == 1)
{
}

ProgressCallback ProgressBar::callback()
{
  return [this](double fraction) {
    update(fraction);
    return true;
  };
}

void ProgressBar::update(double fraction)
{
  if (!terminal_)
    return;
  const double now = sinceStart_.seconds();
  if (now < kShowAfter || (drawn_ && now - lastDraw_ < kRedrawEvery))
    return;
  lastDraw_ = now;
  drawn_ = true;
  fraction = std::min(1.0, std::max(0.0, fraction));
  const int filled = static_cast<int>(fraction * kWidth + 0.5);
  std::fprintf(stderr, "\r%s [%s%s] %3d%%", label_.c_str(), std::string(filled, '#').c_str(),
    std::string(kWidth - filled, ' ').c_str(), static_cast<int>(fraction * 100 + 0.5));
  std::fflush(stderr);
}

void ProgressBar::clear()
{
  if (drawn_)
  {
    std::fputs("\r\033[K", stderr); // back to column 0, erase the line
    std::fflush(stderr);
    drawn_ = false;
  }
}

} // namespace cli
} // namespace topovox
