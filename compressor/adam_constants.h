// Adam's constants, shared by both trainers so they update alike: the eager LibTorch trainer (compressor.cpp, with
// torch::optim::Adam and its own sparse latent update) and the fused CUDA kernels (compressor/cuda). Header-only,
// torch- and CUDA-free.
#pragma once

namespace nmc {

// NTC's and torch::optim::Adam's defaults.
constexpr double kAdamBeta1 = 0.9;
constexpr double kAdamBeta2 = 0.999;
constexpr double kAdamEpsilon = 1e-8;  // the network's
// The latents' epsilon is smaller: a latent's gradient (of a batch-mean loss, shared by the few texels of a batch that
// touch it) is about 1e-9 late in training, where 1e-8 would shrink its steps several times. 1e-12 and 1e-15 measured
// the same, 1e-8 0.15-0.77 dB lower at 100k steps (bench/results/20261201T0440-h200-sweep-ntc-differences.txt).
constexpr double kLatentAdamEpsilon = 1e-12;

}  // namespace nmc
