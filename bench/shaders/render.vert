// bench/vulkan_render_bench.cpp: one triangle that covers the frame; render.frag ray-traces the scene per pixel.
#version 450

layout(location = 0) out vec2 screen;  // -1 .. 1, y up

void main() {
    const vec2 corner = vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2));
    screen = corner * 2.0 - 1.0;
    screen.y = -screen.y;
    gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
