/**
 * @class   vtkPersistencePlotFilter
 * @brief   A persistence diagram or barcode as geometry to show in a 2D
 *          render view.
 *
 * Input: a table of pairs with columns Dimension, Birth, Death (and
 * optionally PairIdentifier): the Pairs output of vtkPersistenceDiagramFilter.
 * Output: vtkPolyData in the plane z = 0, one cell per pair, cell arrays
 * PairIdentifier, Dimension, Persistence, IsFinite, Row (barcode; -1 for a
 * diagram), Birth, Death, BirthId and DeathId (so that an extract of
 * selected points or bars is a valid Pairs input of Feature Regions):
 * - Layout Diagram: a vertex at (birth, death) per pair; essential classes
 *   (infinite death) sit on the top edge, just past the largest finite value
 *   (bottom edge, smallest, for a superlevel filtration), with IsFinite 0;
 *   then line cells with PairIdentifier -1 and Dimension -1: the diagonal,
 *   the top edge, and, when BandPersistence > 0, the band's edge
 *   death = birth + BandPersistence (minus, superlevel): points between it
 *   and the diagonal persist less than that;
 * - Layout Barcode: a line from (birth, row) to (death, row) per pair, rows
 *   from topovox::barcodeRows (Kernels/include/topovox/DiagramLayout.h):
 *   grouped by dimension, ordered by birth or by persistence.
 * topovox.views (Representations/topovox_views.py) shows both with colours
 * per dimension, axis titles and the band.
 */
#ifndef vtkPersistencePlotFilter_h
#define vtkPersistencePlotFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkPolyDataAlgorithm.h"

class TOPOVOXFILTERS_EXPORT vtkPersistencePlotFilter : public vtkPolyDataAlgorithm
{
public:
  static vtkPersistencePlotFilter* New();
  vtkTypeMacro(vtkPersistencePlotFilter, vtkPolyDataAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum LayoutType
  {
    DIAGRAM = 0,
    BARCODE = 1
  };
  vtkSetClampMacro(Layout, int, 0, 1);
  vtkGetMacro(Layout, int);
  /** Barcode: 0 bars ordered by birth; 1 (default) by persistence, longest first. */
  vtkSetClampMacro(SortBy, int, 0, 1);
  vtkGetMacro(SortBy, int);
  /** Diagram: draw the band of pairs persisting less than this (0: none). */
  vtkSetClampMacro(BandPersistence, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(BandPersistence, double);

protected:
  vtkPersistencePlotFilter() = default;
  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int Layout = DIAGRAM;
  int SortBy = 1;
  double BandPersistence = 0.0;

private:
  vtkPersistencePlotFilter(const vtkPersistencePlotFilter&) = delete;
  void operator=(const vtkPersistencePlotFilter&) = delete;
};

#endif
