// TestHarness.h - what the VTK C++ tests share: a failure counter with
// messages, and an observer that collects a filter's error (or warning)
// events instead of letting them print.
#pragma once

#include "vtkCommand.h"

#include <cstdio>
#include <string>

namespace topovox_test
{
inline int failures = 0;

inline void expect(bool ok, const std::string& what)
{
  if (!ok)
  {
    ++failures;
    std::printf("FAIL: %s\n", what.c_str());
  }
}

// Observe vtkCommand::ErrorEvent (or WarningEvent) with it: Count events,
// Messages holds every message, one per line.
class EventCollector : public vtkCommand
{
public:
  static EventCollector* New() { return new EventCollector; }
  void Execute(vtkObject*, unsigned long, void* data) override
  {
    ++this->Count;
    this->Messages += data ? static_cast<const char*>(data) : "";
    this->Messages += "\n";
  }
  int Count = 0;
  std::string Messages;
};
}
