/**
 * @class   vtkPersistenceCurveFilter
 * @brief   Number of persistence pairs above each persistence, per dimension.
 *
 * Input: the pairs table of vtkPersistenceDiagramFilter (port 1), or any
 * vtkTable with the columns Dimension and Persistence. Output: a vtkTable
 * with Persistence (each distinct finite value, ascending) and the number of
 * pairs of dimension 0..d whose persistence is at least that (columns
 * Dimension0..Dimension3 present in the input's range, plus All). Essential
 * classes count at every persistence. Plot it in the line chart view,
 * log-scaled, to choose a persistence threshold.
 */
#ifndef vtkPersistenceCurveFilter_h
#define vtkPersistenceCurveFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkTableAlgorithm.h"

class TOPOVOXFILTERS_EXPORT vtkPersistenceCurveFilter : public vtkTableAlgorithm
{
public:
  static vtkPersistenceCurveFilter* New();
  vtkTypeMacro(vtkPersistenceCurveFilter, vtkTableAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

protected:
  vtkPersistenceCurveFilter() = default;
  ~vtkPersistenceCurveFilter() override = default;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

private:
  vtkPersistenceCurveFilter(const vtkPersistenceCurveFilter&) = delete;
  void operator=(const vtkPersistenceCurveFilter&) = delete;
};

#endif
