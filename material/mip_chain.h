// Mip generation for material planes: an area-weighted box filter, applied in linear light for sRGB colour
// and to renormalised vectors for normal maps. Mip m is max(1, W >> m) by max(1, H >> m) (format spec 5.2).
#pragma once

#include <vector>

namespace nmc {

// IEC 61966-2-1 sRGB transfer functions on [0, 1] (values outside are clamped).
float srgb_to_linear(float encoded);
float linear_to_srgb(float linear);

// Halves a row-major width x height plane to max(1, width / 2) x max(1, height / 2) (integer division).
// Each output texel averages its exact footprint in the input, [i * n / m, (i + 1) * n / m) along a side
// shrinking from n to m texels, input texels weighted by how much of them the footprint covers. For even
// sizes this is the plain 2x2 average; for an odd size (5 -> 2) a footprint spans 2.5 texels, so the last
// row or column is not dropped and every input texel weighs the same overall. A side of 1 stays 1.
std::vector<float> downsample_box(const std::vector<float>& plane, int width, int height);

// downsample_box() of sRGB-encoded values: decoded to linear, averaged, encoded back.
std::vector<float> downsample_srgb(const std::vector<float>& plane, int width, int height);

// downsample_box() of HLG-encoded values (core/hlg.h): decoded to linear, averaged, encoded back.
std::vector<float> downsample_hlg(const std::vector<float>& plane, int width, int height);

// Downsamples the unit vectors (x, y, z) (each plane in [-1, 1]) and renormalises every result; a zero-length
// average becomes (0, 0, 1). The three planes are replaced by the smaller ones.
void downsample_normals(std::vector<float>* x, std::vector<float>* y, std::vector<float>* z, int width, int height);

}  // namespace nmc
