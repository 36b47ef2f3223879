// The LibTorch side of the fused CUDA training step: hands the model's tensors, and Adam moments kept as tensors,
// to compressor/cuda's FusedTrainer, and orders its stream against LibTorch's work on the same tensors. Internal to
// nmc_compressor (includes torch), built only where CUDA is enabled (NMC_HAS_FUSED_TRAINER).
#pragma once

#include <torch/types.h>

#include <memory>
#include <vector>

#include "compressor/compressor.h"
#include "compressor/cuda/fused_trainer.h"
#include "compressor/model.h"

namespace nmc::detail {

class FusedTraining {
public:
    // Whether the fused path can train `model` on `device`: a CUDA device that check_device() accepts and a
    // network of the default shape. backend_unavailable or invalid_argument says why not.
    static Status available(const Model& model, const torch::Device& device);

    // Allocates the Adam moments and the latent gradient (zeros, on the model's device) and the kernels' workspace
    // for `batch_size` texels. `target` gives the mip sizes.
    static Result<std::unique_ptr<FusedTraining>> create(Model& model, const TargetTensors& targets,
                                                         const TrainingTarget& target,
                                                         const OutputLayerFormat& output_layer, int batch_size,
                                                         uint64_t seed, const torch::Device& device);

    // Before a run of steps: waits for LibTorch's work on the tensors, converts the weights for the first step.
    Status begin(bool quantize_weights);

    // One step (asynchronous): the batch of `step`, the mode's quantisation, Adam at the given (decayed) rates.
    // train_latents: latent gradients and Adam (off once frozen); sparse_latent_adam: Adam moves only the latents
    // the batch touched (LatentAdam::sparse); next_quantize_weights: the next step's mode.
    Status step(int64_t step, const ForwardMode& mode, bool train_latents, bool sparse_latent_adam,
                bool next_quantize_weights, double latent_learning_rate, double network_learning_rate);

    // The last step's loss and squared error (waits for it).
    Status last_loss(double& loss, double& squared_error);

    // Waits for the kernels, before LibTorch reads or replaces the tensors.
    Status synchronize();

    // After LibTorch replaced model.latents (freezing): waits for that work and points the kernels at the new tensor.
    Status latents_replaced();

    // Loss and gradients on given texels (no noise, nothing updated): see Compressor::batch_gradients.
    Result<StepGradients> batch_gradients(const std::vector<int64_t>& texels, bool quantize_weights);

private:
    FusedTraining(Model& model, int batch_size);

    Model& model_;
    int batch_size_ = 0;
    std::unique_ptr<fused::FusedTrainer> kernels_;
    torch::Tensor latent_grad_;
    torch::Tensor latent_m_;
    torch::Tensor latent_v_;
    std::vector<torch::Tensor> moments_;  // per layer: weight m, weight v, bias m, bias v
    int64_t network_adam_steps_ = 0;
    int64_t latent_adam_steps_ = 0;
};

}  // namespace nmc::detail
