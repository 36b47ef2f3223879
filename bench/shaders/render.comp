// bench/vulkan_render_bench.cpp's scene (render_scene.glsl) in a compute pass, one invocation a pixel: inference on
// sample as a deferred renderer runs it (the pixel's uv and level of detail, then its material in a compute shader).
// The level of detail from the uv of the neighbouring pixels (right and below), as a fragment shader's derivatives.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8) in;
layout(constant_id = 0) const int kMaxWidth = 256;
layout(constant_id = 1) const uint kReference = 0;
#define NMC_MAX_WIDTH kMaxWidth
#include "nmc_decode.glsl"
#include "render_scene.glsl"

layout(std430, set = 0, binding = 2) writeonly restrict buffer Frame {
    uint pixels[];  // RGBA8, row-major
};

// Pixel (x, y)'s centre on the screen (-1 .. 1, y up), as render.vert's triangle interpolates it.
vec2 screen_of(vec2 pixel) {
    const vec2 s = pixel / vec2(float(material.width), float(material.height)) * 2.0 - 1.0;
    return vec2(s.x, -s.y);
}

void main() {
    const uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= material.width || p.y >= material.height) return;
    const vec2 centre = vec2(p) + 0.5;
    const vec3 ray = scene_ray(screen_of(centre));
    vec2 uv;
    vec4 colour = kSky;
    if (scene_plane_uv(ray, uv)) {
        vec2 uv_right;
        vec2 uv_below;
        scene_plane_uv(scene_ray(screen_of(centre + vec2(1.0, 0.0))), uv_right);
        scene_plane_uv(scene_ray(screen_of(centre + vec2(0.0, 1.0))), uv_below);
        colour = scene_shade(uv, nmc_level_of_detail(uv_right - uv, uv_below - uv), ray);
    }
    pixels[p.y * material.width + p.x] = packUnorm4x8(colour);
}
