// NiftiReader.h - NIfTI-1 single-file images (.nii, also gzip-compressed
// .nii.gz), the format of most medical imaging tools. The 348-byte header
// gives the axes (1 to 3; trailing axes of length 1 are allowed), the data
// type, the voxel spacing and where the voxels start; either byte order.
//
// Values: when the header asks for scaling (scl_slope not 0 or 1, or
// scl_inter not 0), the voxels are read as slope * stored + intercept in
// float64, as nibabel's get_fdata() returns them; otherwise in the stored
// type. Refused with a reason: header/image pairs (.hdr/.img), 4D and more,
// complex and RGB types, NIfTI-2.
#pragma once

#include "Image.h"

#include <string>

namespace topovox
{
namespace cli
{

bool isNiftiPath(const std::string& path);

// Throws Error naming the file and the reason.
Image readNifti(const std::string& path);

} // namespace cli
} // namespace topovox
