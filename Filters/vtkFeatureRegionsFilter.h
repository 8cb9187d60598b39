/**
 * @class   vtkFeatureRegionsFilter
 * @brief   The region of the volume behind each point of a persistence
 *          diagram, as label arrays.
 *
 * For each selected persistence pair, where the region is well defined
 * (Kernels/include/topovox/FeatureRegions.h):
 * - components (dimension 0): the connected voxels strictly below the death
 *   value that hold the birth voxel: the basin or blob that the feature is;
 * - the top dimension (voids of a volume, holes of an image): the connected
 *   voxels strictly above the birth value that the feature encloses.
 * Output: the input image with two integer arrays (point or cell data, like
 * the input's), ComponentRegion and EnclosedRegion, holding for each voxel
 * the PairIdentifier of the innermost selected region containing it, or -1;
 * threshold, extract or colour by them to see and measure the structures.
 *
 * Pairs: those of the image's persistence diagram (computed here with
 * Construction and Filtration) with persistence above MinimumPersistence,
 * essential classes included; or, when the optional second input is
 * connected, exactly the pairs it lists, with no persistence computed again:
 * the rows of the Pairs output of the Persistence Diagram filter, or the
 * cells of a Persistence Plot, or any selection or extract of either
 * (Dimension, BirthId, DeathId, Birth; labels are their PairIdentifier), so
 * that points picked in the diagram view, bars in the barcode or rows in the
 * spreadsheet become regions (Extract Selection, then this filter). Set
 * Construction and Filtration as the diagram was computed; rows whose birth
 * voxel does not hold their birth value (another image) are left out with a
 * warning.
 *
 * MPI: rank 0 gathers the image and computes; the other ranks output empty
 * images. Progress is reported; errors name their reason.
 */
#ifndef vtkFeatureRegionsFilter_h
#define vtkFeatureRegionsFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkImageAlgorithm.h"

class vtkMultiProcessController;

class TOPOVOXFILTERS_EXPORT vtkFeatureRegionsFilter : public vtkImageAlgorithm
{
public:
  static vtkFeatureRegionsFilter* New();
  vtkTypeMacro(vtkFeatureRegionsFilter, vtkImageAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  /** 0 V (default), 1 T: as in vtkPersistenceDiagramFilter. */
  vtkSetClampMacro(Construction, int, 0, 1);
  vtkGetMacro(Construction, int);
  /** 0 sublevel (default), 1 superlevel. */
  vtkSetClampMacro(Filtration, int, 0, 1);
  vtkGetMacro(Filtration, int);
  /** Regions of the pairs that persist longer than this (without a table). */
  vtkSetClampMacro(MinimumPersistence, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(MinimumPersistence, double);
  /** Label the essential classes too (default on; without a table). The
   * essential component is the whole image: off to see the others alone. */
  vtkSetMacro(IncludeEssentialClasses, bool);
  vtkGetMacro(IncludeEssentialClasses, bool);
  vtkSetClampMacro(Component, int, -1, VTK_INT_MAX);
  vtkGetMacro(Component, int);
  vtkSetClampMacro(NumberOfThreads, int, 0, 4096);
  vtkGetMacro(NumberOfThreads, int);
  void SetController(vtkMultiProcessController* controller);
  vtkGetObjectMacro(Controller, vtkMultiProcessController);

protected:
  vtkFeatureRegionsFilter();
  ~vtkFeatureRegionsFilter() override;
  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int Construction = 0;
  int Filtration = 0;
  double MinimumPersistence = 0.0;
  bool IncludeEssentialClasses = true;
  int Component = -1;
  int NumberOfThreads = 0;
  vtkMultiProcessController* Controller = nullptr;

private:
  vtkFeatureRegionsFilter(const vtkFeatureRegionsFilter&) = delete;
  void operator=(const vtkFeatureRegionsFilter&) = delete;
};

#endif
