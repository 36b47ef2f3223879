// The model's forward pass in LibTorch operations, written step by step after docs/format-spec.md section 8
// so that the final quantised model computes what the CPU decoder computes (up to summation order).
// Every arithmetic step is its own tensor operation, so each is rounded separately, as the spec requires.
#include "compressor/model.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>
#include <cmath>

#include "core/number_formats.h"
#include "decoder/common/reference_math.h"
#include "decoder/cpu/cpu_decoder.h"

namespace nmc::detail {
namespace {

constexpr float kMinScale = 1e-8f;               // keeps an all-zero row's scale finite and non-zero

// Elements per task of the CPU loops below: large enough that threading pays.
constexpr int64_t kCpuGrain = 1 << 14;

// round_fp8's magic-number rounding (see there) for one float32.
float round_fp8_value(float x) {
    constexpr uint32_t kExponentMask = 0x7F800000u;
    constexpr uint32_t kMinNormalBits = 0x3C800000u;  // 2^-6
    constexpr uint32_t kShift = 20u << 23;            // times 2^20
    const float magnitude = std::min(std::abs(x), kFp8E4M3Max);
    const float magic = float_from_bits(std::max(float_bits(magnitude) & kExponentMask, kMinNormalBits) + kShift);
    return std::copysign((magnitude + magic) - magic, x);
}

bool cpu_float(const torch::Tensor& x) { return x.device().is_cpu() && x.scalar_type() == torch::kFloat; }

// f(in, out, n) over chunks of a contiguous float32 CPU tensor, threaded: the result tensor.
template <typename F>
torch::Tensor map_cpu_chunks(const torch::Tensor& x, F f) {
    const torch::Tensor in = x.contiguous();
    torch::Tensor out = torch::empty_like(in);
    const float* src = in.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    at::parallel_for(0, in.numel(), kCpuGrain, [&](int64_t begin, int64_t end) {
        f(src + begin, dst + begin, static_cast<size_t>(end - begin));
    });
    return out;
}

// out[i] = f(in[i]) over a contiguous float32 CPU tensor, threaded.
template <typename F>
torch::Tensor map_cpu(const torch::Tensor& x, F f) {
    return map_cpu_chunks(x, [&](const float* src, float* dst, size_t n) {
        for (size_t i = 0; i < n; ++i) dst[i] = f(src[i]);
    });
}

// fp8 rounding forward, identity backward, as one autograd node (on the CPU one pass over the data instead of
// the ~10 tensor operations of round_fp8 and `rounded + (x - x.detach())`).
struct Fp8StraightThrough : torch::autograd::Function<Fp8StraightThrough> {
    static torch::Tensor forward(torch::autograd::AutogradContext*, const torch::Tensor& x) { return round_fp8(x); }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext*,
                                                   torch::autograd::variable_list grad) {
        return {grad[0]};
    }
};

// spec 8.6: hgelu_clamped's t.
float hgelu_gate(float y) { return std::min(std::max(y * kOneThirdFloat32 + 0.5f, 0.0f), 1.0f); }

// The gradient of hgelu_clamped at y, the one LibTorch's autograd gives its expression: (y <= 3 ? t : 0) +
// min(y, 3) * (0 <= y/3 + 0.5 <= 1 ? 1/3 : 0). Also the binary16 activation's: its roundings pass straight through.
torch::autograd::variable_list hgelu_clamped_backward(torch::autograd::AutogradContext* ctx,
                                                      const torch::autograd::variable_list& grad) {
    const torch::Tensor y = ctx->get_saved_variables()[0];
    if (cpu_float(y) && cpu_float(grad[0])) {
        const torch::Tensor yc = y.contiguous();
        const torch::Tensor g = grad[0].contiguous();
        torch::Tensor out = torch::empty_like(yc);
        const float* ys = yc.data_ptr<float>();
        const float* gs = g.data_ptr<float>();
        float* dst = out.data_ptr<float>();
        at::parallel_for(0, yc.numel(), kCpuGrain, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                const float v = ys[i];
                const float u = v * kOneThirdFloat32 + 0.5f;
                const float slope = (v <= 3.0f ? hgelu_gate(v) : 0.0f) +
                                    (u >= 0.0f && u <= 1.0f ? std::min(v, 3.0f) * kOneThirdFloat32 : 0.0f);
                dst[i] = gs[i] * slope;
            }
        });
        return {out};
    }
    const torch::Tensor u = y * kOneThirdFloat32 + 0.5f;
    const torch::Tensor slope = (y <= 3.0f).to(y.scalar_type()) * u.clamp(0.0f, 1.0f) +
                                y.clamp_max(3.0f) * ((u >= 0.0f) & (u <= 1.0f)).to(y.scalar_type()) * kOneThirdFloat32;
    return {grad[0] * slope};
}

// spec 8.6's hgelu_clamped, a = min(y, 3) * t with t = min(max(y * float32(1/3) + 0.5, 0), 1), as one autograd
// node.
struct HgeluClamped : torch::autograd::Function<HgeluClamped> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& y) {
        ctx->save_for_backward({y});
        if (cpu_float(y)) return map_cpu(y, [](float v) { return std::min(v, 3.0f) * hgelu_gate(v); });
        return y.clamp_max(3.0f) * (y * kOneThirdFloat32 + 0.5f).clamp(0.0f, 1.0f);
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grad) {
        return hgelu_clamped_backward(ctx, grad);
    }
};

// spec 8.6's binary16 activation: h = f16(y), t = min(max(f16(h * c + 0.5), 0), 1), a = f16(min(h, 3) * t), with
// hgelu_clamped's gradient. On the CPU exactly the reference decoder's (its SIMD kernels'); on a GPU with LibTorch
// operations, where t's rounding goes through float32 first (h * c is exact, + 0.5 rounds once more): a rare
// double rounding in training only, since every pack is measured with the CPU decoder.
struct HgeluClampedBinary16 : torch::autograd::Function<HgeluClampedBinary16> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& y) {
        ctx->save_for_backward({y});
        if (cpu_float(y)) return map_cpu_chunks(y, hgelu_clamped_binary16_values);  // the CPU decoder's SIMD code
        const auto f16 = [](const torch::Tensor& x) { return x.to(torch::kHalf).to(torch::kFloat); };
        const torch::Tensor h = f16(y.clamp(-kFp16Max, kFp16Max));
        const torch::Tensor t = f16(h * kOneThirdBinary16 + 0.5f).clamp(0.0f, 1.0f);
        return f16(h.clamp_max(3.0f) * t);
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grad) {
        return hgelu_clamped_backward(ctx, grad);
    }
};

torch::Tensor straight_through(const torch::Tensor& rounded, const torch::Tensor& x) {
    // Forward: `rounded` exactly (x - x.detach() is 0). Backward: identity.
    return rounded + (x - x.detach());
}

torch::Tensor at_index(const torch::Tensor& table, const torch::Tensor& index) { return table.index_select(0, index); }

// spec 8.3: wrap (non-negative modulo) or clamp a texel coordinate into 0 .. size - 1.
torch::Tensor address(const torch::Tensor& coordinate, const torch::Tensor& size, AddressMode mode) {
    if (mode == AddressMode::wrap) return torch::remainder(coordinate, size);
    return torch::minimum(torch::maximum(coordinate, torch::zeros_like(coordinate)), size - 1);
}

}  // namespace

// spec 2.1 by the "magic number" trick: for |x| in [2^e, 2^(e+1)), adding m = 2^(e+20) leaves a float32 whose
// last mantissa bit is worth 2^(e-3), the E4M3 step at that exponent, so the add rounds |x| to E4M3 precision
// (ties to even, like every float32 add) and subtracting m again is exact. Below 2^-6 the step is the subnormal
// step 2^-9, so e is clamped to -6. |x| is clamped to 448 first: every larger magnitude saturates there.
// m is built from |x|'s exponent bits. Only elementwise arithmetic, no select: it is the hottest op of a step.
torch::Tensor round_fp8(const torch::Tensor& x) {
    torch::NoGradGuard no_grad;
    if (cpu_float(x)) return map_cpu(x, round_fp8_value);
    constexpr int32_t kExponentMask = 0x7F800000;
    constexpr int32_t kMinNormalBits = 0x3C800000;  // 2^-6
    constexpr int32_t kShift = 20 << 23;            // times 2^20
    const torch::Tensor magnitude = x.abs().clamp_max(kFp8E4M3Max);
    const torch::Tensor magic =
        (magnitude.view(torch::kInt32).bitwise_and(kExponentMask).clamp_min(kMinNormalBits) + kShift)
            .view(torch::kFloat);
    return torch::copysign((magnitude + magic) - magic, x);
}

torch::Tensor fp8_ste(const torch::Tensor& x) { return Fp8StraightThrough::apply(x); }

torch::Tensor fp16_ste(const torch::Tensor& x) {
    return straight_through(x.detach().to(torch::kHalf).to(torch::kFloat), x);
}

GeometryTables make_geometry_tables(int width, int height, int mip_count, const LatentShape& shape,
                                    const torch::Device& device) {
    std::vector<float> mip_w, mip_h;
    std::vector<int64_t> mip_w_index, mip_offset, mip_level0;
    int64_t texels = 0;
    for (int m = 0; m < mip_count; ++m) {
        const int w = std::max(1, width >> m);
        const int h = std::max(1, height >> m);
        mip_w.push_back(static_cast<float>(w));
        mip_h.push_back(static_cast<float>(h));
        mip_w_index.push_back(w);
        mip_offset.push_back(texels);
        mip_level0.push_back(std::min(m, shape.level_count - 2));  // spec 8.1
        texels += static_cast<int64_t>(w) * h;
    }
    std::vector<float> level_w, level_h;
    std::vector<int64_t> level_w_index, level_h_index, level_offset;
    int64_t latent_texels = 0;
    for (int k = 0; k < shape.level_count; ++k) {
        const int w = latent_level_size(width, shape.grid_scale, k);
        const int h = latent_level_size(height, shape.grid_scale, k);
        level_w.push_back(static_cast<float>(w));
        level_h.push_back(static_cast<float>(h));
        level_w_index.push_back(w);
        level_h_index.push_back(h);
        level_offset.push_back(latent_texels);
        latent_texels += static_cast<int64_t>(w) * h;
    }
    const auto floats = [&](const std::vector<float>& v) {
        return torch::tensor(v, torch::TensorOptions().dtype(torch::kFloat)).to(device);
    };
    const auto longs = [&](const std::vector<int64_t>& v) {
        return torch::tensor(v, torch::TensorOptions().dtype(torch::kLong)).to(device);
    };
    GeometryTables t;
    t.mip_width = floats(mip_w);
    t.mip_height = floats(mip_h);
    t.mip_width_index = longs(mip_w_index);
    t.mip_texel_offset = longs(mip_offset);
    t.mip_level0 = longs(mip_level0);
    t.level_width = floats(level_w);
    t.level_height = floats(level_h);
    t.level_width_index = longs(level_w_index);
    t.level_height_index = longs(level_h_index);
    t.level_offset = longs(level_offset);
    t.total_target_texels = texels;
    return t;
}

torch::Tensor Model::code_values(const torch::Tensor& codes) const {
    if (arithmetic == Arithmetic::float32) return codes * latent_step() + latent_lo;
    std::vector<float> table(size_t{1} << shape.bits);
    for (uint32_t q = 0; q < table.size(); ++q) table[q] = dequantise_latent_binary16(latent_lo, latent_step(), q);
    const torch::Tensor values = torch::tensor(table).to(codes.device());
    return values.index_select(0, codes.reshape({-1}).to(torch::kLong)).view(codes.sizes());
}

torch::Tensor Model::latent_codes(const torch::Tensor& values) const {
    const auto max_code = static_cast<float>((1 << shape.bits) - 1);
    return torch::round((values.detach().clamp(latent_lo, latent_hi) - latent_lo) / latent_step()).clamp(0.0f, max_code);
}

// spec 7 and 8.6: hidden layers E4M3 weights; the last layer Int8 with scale max|w| / 127 per output (or E4M3,
// optionally scaled by max|w| / 448); FP16 biases. Scales are constants of the step (no gradient through them).
QuantizedLayer Model::quantize_layer(size_t l) const {
    const bool last = l + 1 == weights.size();
    const torch::Tensor& w = weights[l];
    QuantizedLayer q;
    q.biases = fp16_ste(biases[l]);
    if (!last || (network.output_weight_type == WeightType::e4m3 && !network.output_has_scale)) {
        q.weights = fp8_ste(w);
        return q;
    }
    const bool int8 = network.output_weight_type == WeightType::int8;
    const float limit = int8 ? 127.0f : kFp8E4M3Max;
    q.scales = (w.detach().abs().amax(1) / limit).clamp_min(kMinScale);
    const torch::Tensor scaled = w / q.scales.unsqueeze(1);
    const torch::Tensor rounded =
        int8 ? torch::round(scaled.detach()).clamp(-127.0f, 127.0f) : round_fp8(scaled.detach());
    q.weights = straight_through(rounded, scaled);
    return q;
}

torch::Tensor forward(const Model& model, const torch::Tensor& x, const torch::Tensor& y, const torch::Tensor& mip,
                      const ForwardMode& mode) {
    const GeometryTables& t = model.tables;
    const int64_t batch = x.size(0);
    const int64_t features = model.shape.feature_count;

    // spec 8 preamble: u = (x + 0.5) / w_m, v = (y + 0.5) / h_m.
    const torch::Tensor u = (x.to(torch::kFloat) + 0.5f) / at_index(t.mip_width, mip);
    const torch::Tensor v = (y.to(torch::kFloat) + 0.5f) / at_index(t.mip_height, mip);
    const torch::Tensor k0 = at_index(t.mip_level0, mip);  // spec 8.1

    // spec 8.2: sampling positions and the four texels of each level, k0 then k1.
    std::vector<torch::Tensor> corner_index;
    std::vector<torch::Tensor> frac_x, frac_y;
    torch::Tensor px0, py0;
    for (int level = 0; level < 2; ++level) {
        const torch::Tensor k = level == 0 ? k0 : k0 + 1;
        const torch::Tensor width_i = at_index(t.level_width_index, k);
        const torch::Tensor height_i = at_index(t.level_height_index, k);
        const torch::Tensor px = u * at_index(t.level_width, k) - 0.5f;
        const torch::Tensor py = v * at_index(t.level_height, k) - 0.5f;
        const torch::Tensor x0 = torch::floor(px);
        const torch::Tensor y0 = torch::floor(py);
        frac_x.push_back(px - x0);
        frac_y.push_back(py - y0);
        if (level == 0) {
            px0 = px;
            py0 = py;
        }
        const torch::Tensor ix0 = x0.to(torch::kLong);
        const torch::Tensor iy0 = y0.to(torch::kLong);
        const torch::Tensor xs[2] = {address(ix0, width_i, model.address_mode),
                                     address(ix0 + 1, width_i, model.address_mode)};
        const torch::Tensor ys[2] = {address(iy0, height_i, model.address_mode),
                                     address(iy0 + 1, height_i, model.address_mode)};
        const torch::Tensor base = at_index(t.level_offset, k);
        // spec 8.3 order: (x0, y0), (x0+1, y0), (x0, y0+1), (x0+1, y0+1).
        for (int cy = 0; cy < 2; ++cy)
            for (int cx = 0; cx < 2; ++cx) corner_index.push_back(base + ys[cy] * width_i + xs[cx]);
    }
    torch::Tensor corners =
        model.latents.index_select(0, torch::stack(corner_index, 1).reshape({-1})).view({batch, 8, features});
    if (mode.round_latents) {
        const torch::Tensor values = model.code_values(model.latent_codes(corners));
        corners = corners + (values - corners).detach();
    } else if (mode.latent_noise) {
        corners = corners + (torch::rand_like(corners) - 0.5f) * model.latent_step();
    }

    // spec 8.3: value = ((w00 * a + w10 * b) + w01 * c) + w11 * d, each operation rounded separately (binary16
    // arithmetic: the weights rounded to binary16 first, straight-through; its products are then exact). The eight
    // corners as views from one unbind: its backward is one stack, where eight select()s would each zero a
    // corners-sized gradient and add it to the others (measured 20% of a CPU step at 65536 texels).
    const std::vector<torch::Tensor> corner_views = corners.unbind(1);
    std::vector<torch::Tensor> inputs;
    for (int level = 0; level < 2; ++level) {
        const torch::Tensor fx = frac_x[level].unsqueeze(1);
        const torch::Tensor fy = frac_y[level].unsqueeze(1);
        const auto weight = [&](const torch::Tensor& w) {
            return model.arithmetic == Arithmetic::float32 ? w : fp16_ste(w);
        };
        const torch::Tensor w00 = weight((1.0f - fx) * (1.0f - fy));
        const torch::Tensor w10 = weight(fx * (1.0f - fy));
        const torch::Tensor w01 = weight((1.0f - fx) * fy);
        const torch::Tensor w11 = weight(fx * fy);
        const auto corner = [&](int c) { return corner_views[static_cast<size_t>(level * 4 + c)]; };
        inputs.push_back(((w00 * corner(0) + w10 * corner(1)) + w01 * corner(2)) + w11 * corner(3));
    }

    // spec 8.4: saw(t) = 2 * (t - floor(t)) - 1 of px * s, py * s, px * s + 0.25, py * s + 0.25 from level k0.
    const auto saw = [](const torch::Tensor& s) { return (s - torch::floor(s)) * 2.0f - 1.0f; };
    std::vector<torch::Tensor> encoding;
    for (float s : {1.0f, 2.0f, 4.0f}) {
        const torch::Tensor sx = px0 * s;
        const torch::Tensor sy = py0 * s;
        encoding.push_back(saw(sx));
        encoding.push_back(saw(sy));
        encoding.push_back(saw(sx + 0.25f));
        encoding.push_back(saw(sy + 0.25f));
    }
    // spec 8.5: [F features k0][F features k1][12 encoding][LOD m * 0.25][zeros].
    inputs.push_back(torch::stack(encoding, 1));
    inputs.push_back((mip.to(torch::kFloat) * 0.25f).unsqueeze(1));
    const int64_t padding = model.network.widths.front() - network_input_count(model.shape.feature_count);
    if (padding > 0) inputs.push_back(torch::zeros({batch, padding}, u.options()));
    torch::Tensor h = torch::cat(inputs, 1);

    // spec 8.6: every layer's input rounded to E4M3; acc = W x'; y = acc * scale + bias; hgelu_clamped.
    const size_t layers = model.weights.size();
    for (size_t l = 0; l < layers; ++l) {
        const torch::Tensor input = fp8_ste(h);
        torch::Tensor out;
        if (mode.quantize_weights) {
            const QuantizedLayer q = model.quantize_layer(l);
            out = torch::matmul(input, q.weights.t());
            if (q.scales.defined()) out = out * q.scales;
            out = out + q.biases;
        } else {
            out = torch::matmul(input, model.weights[l].t()) + model.biases[l];
        }
        if (l + 1 == layers) return out;
        h = model.arithmetic == Arithmetic::float32 ? HgeluClamped::apply(out) : HgeluClampedBinary16::apply(out);
    }
    return h;
}

StepLoss training_loss(const Model& model, const TargetTensors& targets, int batch_size, const ForwardMode& mode) {
    const GeometryTables& t = model.tables;
    const torch::Tensor index = torch::randint(t.total_target_texels, {batch_size},
                                               torch::TensorOptions().dtype(torch::kLong).device(t.mip_width.device()));
    return training_loss(model, targets, index, mode);
}

StepLoss training_loss(const Model& model, const TargetTensors& targets, const torch::Tensor& index,
                       const ForwardMode& mode) {
    const GeometryTables& t = model.tables;
    // The mip of each texel: how many mips start at or before it (minus mip 0, which starts at 0).
    const torch::Tensor mip =
        (index.unsqueeze(1) >= t.mip_texel_offset.unsqueeze(0)).sum(1, /*keepdim=*/false, torch::kLong) - 1;
    const torch::Tensor local = index - at_index(t.mip_texel_offset, mip);
    const torch::Tensor width = at_index(t.mip_width_index, mip);
    const torch::Tensor y = torch::div(local, width, "floor");
    const torch::Tensor x = local - y * width;

    const torch::Tensor output = forward(model, x, y, mip, mode);
    const torch::Tensor expected = targets.texels.index_select(0, index);
    StepLoss result;
    result.loss = ((output - expected).square() * targets.loss_weights).sum(1).mean();
    result.squared_error = (output.detach().clamp(0.0f, 1.0f) - expected).square().mean();
    return result;
}

}  // namespace nmc::detail
