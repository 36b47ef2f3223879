// Warm start: initialise a model of one latent shape from a trained model of another, so the target-PSNR
// search (compressor/target_search.h) can move between rates with a short fine-tune instead of a full run.
// Internal to nmc_compressor (includes torch through model.h).
#pragma once

#include "compressor/model.h"
#include "core/status.h"

namespace nmc::detail {

// Overwrites `to`'s latents and network parameters in place (they keep their identity, so optimisers built
// on them stay valid) from the trained `from`:
// - latent level k of `to` is level min(k, K_from - 1) of `from` resampled bilinearly to its size (the level
//   that serves the same mips, spec 8.1);
// - features: a larger F keeps every old feature and adds new ones (uniform +-0.25) whose first-layer weight
//   columns are zero, so the network computes what it did before; a smaller F keeps the features with the
//   largest first-layer weight columns;
// - the first layer's columns follow their inputs (spec 8.5 layout: F features of k0, F of k1, 12 encoding
//   values, the LOD); every other layer is copied.
// Both models must have the same hidden widths and channel count (invalid_argument otherwise).
Status warm_start_model(const Model& from, Model& to);

}  // namespace nmc::detail
