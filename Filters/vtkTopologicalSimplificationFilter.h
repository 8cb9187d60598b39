/**
 * @class   vtkTopologicalSimplificationFilter
 * @brief   Removes the features persisting no longer than a threshold from
 *          an image's scalar field.
 *
 * Persistence-based simplification (Kernels/include/topovox/Simplification.h):
 * every component (basin) of the sublevel filtration persisting at most
 * PersistenceThreshold is filled up to its spill value, then every void
 * (2D: hole) persisting at most that is lowered to its birth value, so that
 * the simplified field's components are exactly the input's above the
 * threshold (and its voids those of the filled field above it). New values
 * are values of the input; the type is kept. Superlevel: maxima instead of
 * minima. Output: the input image with the simplified array (named
 * ResultArrayName, default "<array>_Simplified") added, as point or cell data
 * like the input's, and made active.
 *
 * MPI: rank 0 gathers the image and computes; the other ranks output empty
 * images.
 */
#ifndef vtkTopologicalSimplificationFilter_h
#define vtkTopologicalSimplificationFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkImageAlgorithm.h"

class vtkMultiProcessController;

class TOPOVOXFILTERS_EXPORT vtkTopologicalSimplificationFilter : public vtkImageAlgorithm
{
public:
  static vtkTopologicalSimplificationFilter* New();
  vtkTypeMacro(vtkTopologicalSimplificationFilter, vtkImageAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  /** 0 V (default), 1 T. */
  vtkSetClampMacro(Construction, int, 0, 1);
  vtkGetMacro(Construction, int);
  /** 0 sublevel (default: remove minima), 1 superlevel (maxima). */
  vtkSetClampMacro(Filtration, int, 0, 1);
  vtkGetMacro(Filtration, int);
  /** Features persisting no longer than this are removed. */
  vtkSetClampMacro(PersistenceThreshold, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(PersistenceThreshold, double);
  /** Fill the removed components (default on). */
  vtkSetMacro(SimplifyComponents, bool);
  vtkGetMacro(SimplifyComponents, bool);
  /** Lower the removed voids / holes (default on). */
  vtkSetMacro(SimplifyEnclosed, bool);
  vtkGetMacro(SimplifyEnclosed, bool);
  /** Name of the new array; empty or null: "<array>_Simplified". */
  vtkSetStringMacro(ResultArrayName);
  vtkGetStringMacro(ResultArrayName);
  vtkSetClampMacro(Component, int, -1, VTK_INT_MAX);
  vtkGetMacro(Component, int);
  vtkSetClampMacro(NumberOfThreads, int, 0, 4096);
  vtkGetMacro(NumberOfThreads, int);
  void SetController(vtkMultiProcessController* controller);
  vtkGetObjectMacro(Controller, vtkMultiProcessController);

protected:
  vtkTopologicalSimplificationFilter();
  ~vtkTopologicalSimplificationFilter() override;
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int Construction = 0;
  int Filtration = 0;
  double PersistenceThreshold = 0.0;
  bool SimplifyComponents = true;
  bool SimplifyEnclosed = true;
  char* ResultArrayName = nullptr;
  int Component = -1;
  int NumberOfThreads = 0;
  vtkMultiProcessController* Controller = nullptr;

private:
  vtkTopologicalSimplificationFilter(const vtkTopologicalSimplificationFilter&) = delete;
  void operator=(const vtkTopologicalSimplificationFilter&) = delete;
};

#endif
