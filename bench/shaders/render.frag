// bench/vulkan_render_bench.cpp's scene (render_scene.glsl) in a fragment shader: the pixel's level of detail from
// the derivatives of its uv, as GPUs choose a texture's mip.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(constant_id = 0) const int kMaxWidth = 256;
layout(constant_id = 1) const uint kReference = 0;
#define NMC_MAX_WIDTH kMaxWidth
#include "nmc_decode.glsl"
#include "render_scene.glsl"

layout(location = 0) in vec2 screen;
layout(location = 0) out vec4 colour;

void main() {
    const vec3 ray = scene_ray(screen);
    vec2 uv;
    const bool plane = scene_plane_uv(ray, uv);
    const float lod = nmc_level_of_detail(dFdx(uv), dFdy(uv));  // in uniform control flow (derivatives)
    colour = plane ? scene_shade(uv, lod, ray) : kSky;
}
