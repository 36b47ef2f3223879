// A small synthetic material for compressor tests: smooth gradients, a sine pattern and a normal map, with a
// full mip chain, built in memory (no image files).
#pragma once

#include "compressor/training_target.h"

namespace nmc::test {

// A size x size material: an sRGB albedo texture (3 pack channels: gradients plus a sine pattern), an
// OpenGL normal map (normal_mode xy: 2 pack channels) and a roughness map (1 pack channel: rings).
TrainingTarget synthetic_material(int size);

}  // namespace nmc::test
