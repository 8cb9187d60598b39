// vtkTopoVoxTimeLoop.h - (private to TopoVox::Filters) the bookkeeping of a
// filter that reads every time step of its input to produce one result for
// the whole series (the costs between consecutive steps, a batch of
// diagrams): the pipeline re-executes the filter once per step through
// CONTINUE_EXECUTING, as VTK's temporal statistics do, so only the current
// step is ever held upstream.
#ifndef vtkTopoVoxTimeLoop_h
#define vtkTopoVoxTimeLoop_h

#include <cstddef>
#include <vector>

class vtkInformation;
class vtkInformationVector;

namespace topovox_vtk
{
class TimeLoop
{
public:
  // RequestInformation (once per update, never inside a pass): the input's
  // time steps (none: one step, the input as it is), and a pass that starts
  // from the first step, also after one broken off (an upstream error, an
  // abort). The outputs are one result for the whole series, so they carry
  // no time steps of their own.
  void readSteps(vtkInformation* inInfo, vtkInformationVector* outputs);
  // Number of steps (at least 1) and the one this execution reads.
  std::size_t steps() const { return this->Times.empty() ? 1 : this->Times.size(); }
  std::size_t current() const { return this->Current; }
  bool first() const { return this->Current == 0; }
  bool last() const { return this->Current + 1 >= this->steps(); }
  // The time of step k (0 when the input has no time steps).
  double time(std::size_t k) const { return this->Times.empty() ? 0.0 : this->Times[k]; }
  bool hasTime() const { return !this->Times.empty(); }
  // RequestUpdateExtent: ask the input for the current step.
  void requestCurrent(vtkInformation* inInfo) const;
  // RequestData, after the current step is used: moves on and asks the
  // executive to run again while steps remain (true); after the last
  // step, starts over for the next update (false).
  bool advance(vtkInformation* request);
  // RequestData on an error: stops the loop, ready to start over.
  void stop(vtkInformation* request);

private:
  std::vector<double> Times;
  std::size_t Current = 0;
};
}

#endif
