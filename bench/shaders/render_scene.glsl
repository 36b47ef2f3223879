// The scene of bench/vulkan_render_bench.cpp, shared by render.frag (the material decoded in a fragment shader) and
// render.comp (the same per pixel in a compute pass): a lit, textured ground plane seen in perspective, shaded per
// pixel from the material's albedo, normal, roughness, metalness and ambient-occlusion maps. kReference picks where
// the material's values come from:
//   0: inference on sample: nmc_decode_trilinear (runtime/vulkan/shaders/nmc_decode.glsl): the pack decoded at the
//      two mips around the pixel's level of detail, blended by its fraction;
//   1: the source textures' pack-channel planes (every mip, the reference the pack was trained on) through ordinary
//      trilinear texture sampling.
// Both then rebuild each texture's file values (nmc_source_channels, spec 8.8-8.9) and shade alike, so the frames
// differ only by what the pack lost. Include after nmc_decode.glsl and the kReference constant.
#ifndef RENDER_SCENE_GLSL
#define RENDER_SCENE_GLSL

layout(set = 0, binding = 1) uniform sampler2D planes[4];  // pack channels 4i .. 4i+3, normalised to [0, 1]

// Where each material input comes from: a texture index and a channel of it (0xFFFFFFFF: absent, a default).
layout(push_constant) uniform Material {
    float aspect;         // the frame's width / height
    uint albedo;          // texture of the colour (3 channels)
    uint normal;          // texture of the normal map
    uint normal_flip_y;   // 1 when its file stores DirectX normals (Y down)
    uint roughness, roughness_channel, roughness_is_gloss;
    uint metalness, metalness_channel;
    uint occlusion, occlusion_channel;
    uint width, height;   // the frame's size in pixels (render.comp)
} material;

const uint kAbsent = 0xFFFFFFFFu;

float srgb_to_linear(float c) {
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}
float linear_to_srgb(float c) {
    return c <= 0.0031308 ? c * 12.92 : 1.055 * pow(c, 1.0 / 2.4) - 0.055;
}

// The pack's channel values at uv and level of detail lod (0 .. M-1), filtered trilinearly.
void material_values(vec2 uv, float lod, out float pack[16]) {
    const uint channels = nmc_word(NMC_HEADER_CHANNEL_COUNT);
    if (kReference == 1u) {
        for (uint c = 0u; c < channels; ++c) {
            // Constant indices into the sampler array (dynamic ones need an optional feature).
            vec4 group;
            switch (c / 4u) {
                case 0u: group = textureLod(planes[0], uv, lod); break;
                case 1u: group = textureLod(planes[1], uv, lod); break;
                case 2u: group = textureLod(planes[2], uv, lod); break;
                default: group = textureLod(planes[3], uv, lod); break;
            }
            const float normalised = group[c % 4u];
            const uint range = nmc_word(NMC_HEADER_CHANNEL_RANGES) + 2u * c;
            pack[c] = nmc_float(range) + (nmc_float(range + 1u) - nmc_float(range)) * normalised;
        }
        return;
    }
    nmc_decode_trilinear(uv.x, uv.y, lod, pack);
}

float channel_of(float pack[16], uint texture, uint channel, float fallback) {
    if (texture == kAbsent) return fallback;
    float values[4];
    nmc_source_channels(texture, pack, values);
    return values[channel];
}

// The camera ray through a point of the screen (-1 .. 1, y up): camera at (0, 1.0, 1.6) looking at (0, 0, -0.2).
vec3 scene_ray(vec2 screen) {
    const vec3 eye = vec3(0.0, 1.0, 1.6);
    const vec3 forward = normalize(vec3(0.0, 0.0, -0.2) - eye);
    const vec3 right = normalize(cross(forward, vec3(0.0, 1.0, 0.0)));
    const vec3 up = cross(right, forward);
    return normalize(forward + right * screen.x * material.aspect * 0.6 + up * screen.y * 0.6);
}

// Whether a ray meets the plane y = 0, and the uv it meets it at: (x, z) / 2 + 0.5 (wrapping materials repeat).
bool scene_plane_uv(vec3 ray, out vec2 uv) {
    const float t = ray.y < -1e-4 ? -1.0 / ray.y : 0.0;  // the eye is 1.0 above the plane
    const vec3 p = vec3(0.0, 1.0, 1.6) + ray * t;
    uv = p.xz * 0.5 + 0.5;
    return ray.y < -1e-4;
}

const vec4 kSky = vec4(0.55, 0.65, 0.8, 0.0);  // alpha 0: not the plane

// The display-encoded colour (alpha 1) of the plane at uv seen along `ray`, the material sampled at level of detail lod.
vec4 scene_shade(vec2 uv, float lod, vec3 ray) {
    float pack[16];
    material_values(uv, lod, pack);
    vec3 albedo = vec3(0.5);
    if (material.albedo != kAbsent) {
        float values[4];
        nmc_source_channels(material.albedo, pack, values);
        albedo = vec3(srgb_to_linear(values[0]), srgb_to_linear(values[1]), srgb_to_linear(values[2]));
    }
    vec3 n = vec3(0.0, 1.0, 0.0);
    if (material.normal != kAbsent) {
        float values[4];
        nmc_source_channels(material.normal, pack, values);
        vec3 tangent_space = vec3(values[0], values[1], values[2]) * 2.0 - 1.0;
        if (material.normal_flip_y == 1u) tangent_space.y = -tangent_space.y;
        // Tangent +x (u), bitangent -z (v grows towards the camera, so up the texture is -z), normal +y.
        n = normalize(vec3(tangent_space.x, tangent_space.z, -tangent_space.y));
    }
    float roughness = channel_of(pack, material.roughness, material.roughness_channel, 0.5);
    if (material.roughness_is_gloss == 1u) roughness = 1.0 - roughness;
    roughness = clamp(roughness, 0.04, 1.0);
    const float metalness = clamp(channel_of(pack, material.metalness, material.metalness_channel, 0.0), 0.0, 1.0);
    const float occlusion = clamp(channel_of(pack, material.occlusion, material.occlusion_channel, 1.0), 0.0, 1.0);

    // One directional light, GGX specular and Lambert diffuse, a little ambient.
    const vec3 l = normalize(vec3(-0.5, 0.8, 0.3));
    const vec3 v = -ray;
    const vec3 h = normalize(l + v);
    const float nl = max(dot(n, l), 0.0);
    const float nv = max(dot(n, v), 1e-3);
    const float nh = max(dot(n, h), 0.0);
    const float a2 = roughness * roughness * roughness * roughness;
    const float d = a2 / (3.14159265 * pow(nh * nh * (a2 - 1.0) + 1.0, 2.0));
    const float k = (roughness + 1.0) * (roughness + 1.0) / 8.0;
    const float g = (nl / (nl * (1.0 - k) + k)) * (nv / (nv * (1.0 - k) + k));
    const vec3 f0 = mix(vec3(0.04), albedo, metalness);
    const vec3 fresnel = f0 + (1.0 - f0) * pow(1.0 - max(dot(h, v), 0.0), 5.0);
    const vec3 specular = d * g * fresnel / max(4.0 * nl * nv, 1e-3);
    const vec3 diffuse = (1.0 - fresnel) * (1.0 - metalness) * albedo / 3.14159265;
    const vec3 lit = (diffuse + specular) * nl * 3.0 + albedo * 0.08 * occlusion;
    const vec3 mapped = lit / (1.0 + lit);  // Reinhard
    return vec4(linear_to_srgb(mapped.r), linear_to_srgb(mapped.g), linear_to_srgb(mapped.b), 1.0);
}

#endif
