// spec 7: network weights, scales and biases, layer after layer, with the spec's zero padding.
#include <cmath>

#include "core/byte_io.h"
#include "core/number_formats.h"
#include "format/payload.h"

namespace nmc {
namespace {

std::string layer_name(size_t l) {
    return "section 'WGHT': layer " + std::to_string(l);
}

// True when bytes [begin, end) of `data` are zero.
bool zero_bytes(const uint8_t* data, uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i)
        if (data[i] != 0) return false;
    return true;
}

}  // namespace

uint64_t weight_section_size(const Network& network, const std::vector<bool>& has_scale) {
    uint64_t size = 0;
    for (size_t l = 0; l < network.layers.size(); ++l) {
        const auto n = static_cast<uint64_t>(network.layers[l].output_width);
        const auto i = static_cast<uint64_t>(network.layers[l].input_width);
        size = round_up(size + n * i, kWeightAlignment);
        if (has_scale[l]) size += 4 * n;
        size = round_up(size + 2 * n, kLayerAlignment);
    }
    return size;
}

Status check_layer_sizes(const Network& network) {
    for (size_t l = 0; l < network.layers.size(); ++l) {
        const Layer& layer = network.layers[l];
        const auto n = static_cast<size_t>(layer.output_width);
        const size_t weights = n * static_cast<size_t>(layer.input_width);
        const bool ok = layer.weights.size() == weights && layer.biases.size() == n &&
                        (layer.scales.empty() || layer.scales.size() == n);
        if (!ok)
            return Status(StatusCode::invalid_argument,
                          "layer " + std::to_string(l) + ": expected " + std::to_string(weights) + " weights, " +
                              std::to_string(n) + " biases and 0 or " + std::to_string(n) + " scales, got " +
                              std::to_string(layer.weights.size()) + ", " + std::to_string(layer.biases.size()) +
                              " and " + std::to_string(layer.scales.size()));
    }
    return Status::success();
}

Status check_layer_values(const Layer& layer, size_t layer_index) {
    for (size_t i = 0; i < layer.weights.size(); ++i) {
        const uint8_t w = layer.weights[i];
        // spec 2.1: 0x7F and 0xFF are the E4M3 NaNs; spec 2.3: Int8 -128 is reserved.
        if (layer.weight_type == WeightType::e4m3 && (w & 0x7F) == 0x7F)
            return Status(StatusCode::corrupt, layer_name(layer_index) + ": weight " + std::to_string(i) +
                                                   " is an E4M3 NaN code (" + std::to_string(w) + ")");
        if (layer.weight_type == WeightType::int8 && w == 0x80)
            return Status(StatusCode::corrupt,
                          layer_name(layer_index) + ": weight " + std::to_string(i) + " is the reserved Int8 -128");
    }
    for (size_t i = 0; i < layer.scales.size(); ++i)
        if (!std::isfinite(layer.scales[i]))
            return Status(StatusCode::corrupt, layer_name(layer_index) + ": scale " + std::to_string(i) +
                                                   " is not finite (" + std::to_string(layer.scales[i]) + ")");
    for (size_t i = 0; i < layer.biases.size(); ++i)
        if ((layer.biases[i] & 0x7C00) == 0x7C00)  // exponent field 31: infinity or NaN (spec 2.2)
            return Status(StatusCode::corrupt, layer_name(layer_index) + ": bias " + std::to_string(i) +
                                                   " is not finite (" + std::to_string(fp16_to_float(layer.biases[i])) +
                                                   ")");
    return Status::success();
}

std::vector<uint8_t> pack_weights(const Network& network) {
    std::vector<uint8_t> out;
    ByteWriter w(out);
    for (const Layer& layer : network.layers) {
        w.bytes(layer.weights.data(), layer.weights.size());
        w.pad_to(kWeightAlignment);
        for (const float s : layer.scales) w.f32(s);
        for (const uint16_t b : layer.biases) w.u16(b);
        w.pad_to(kLayerAlignment);
    }
    return out;
}

Status unpack_weights(const uint8_t* data, size_t size, const std::vector<bool>& has_scale, Network& network) {
    const uint64_t expected = weight_section_size(network, has_scale);
    if (expected != size)
        return Status(StatusCode::corrupt, "section 'WGHT': expected " + std::to_string(expected) +
                                               " bytes from the metadata, got " + std::to_string(size));
    // The size matched the metadata (at most 8 layers of 256 x 256), so these allocations are bounded.
    ByteReader r(data, size);
    for (size_t l = 0; l < network.layers.size(); ++l) {
        Layer& layer = network.layers[l];
        const auto n = static_cast<size_t>(layer.output_width);
        const uint8_t* weights = r.bytes(n * static_cast<size_t>(layer.input_width));
        layer.weights.assign(weights, weights + n * static_cast<size_t>(layer.input_width));
        uint64_t pad_begin = r.position();
        r.bytes(static_cast<size_t>(round_up(pad_begin, kWeightAlignment) - pad_begin));
        if (!zero_bytes(data, pad_begin, r.position()))
            return Status(StatusCode::corrupt, layer_name(l) + ": non-zero padding after the weights");
        layer.scales.clear();
        if (has_scale[l])
            for (size_t i = 0; i < n; ++i) layer.scales.push_back(r.f32());
        layer.biases.clear();
        for (size_t i = 0; i < n; ++i) layer.biases.push_back(r.u16());
        pad_begin = r.position();
        r.bytes(static_cast<size_t>(round_up(pad_begin, kLayerAlignment) - pad_begin));
        if (!zero_bytes(data, pad_begin, r.position()))
            return Status(StatusCode::corrupt, layer_name(l) + ": non-zero padding after the biases");
        NMC_RETURN_IF_ERROR(check_layer_values(layer, l));
    }
    if (!r.ok()) return Status(StatusCode::internal, "section 'WGHT': layout size and reader disagree");
    return Status::success();
}

}  // namespace nmc
