#!/usr/bin/env bash
# Checks that AVX512-FP16 instructions in the CPU decoder library appear only in the two functions compiled for them
# (kernel_avx512bf16.cpp's activate_block_fp16 and hgelu_clamped_binary16_avx512fp16), so that every other function
# still runs on AVX-512 CPUs without FP16 (Zen 4 and 5): an inlining change that moved one into decode_tile_avx512bf16
# would otherwise only show as SIGILL on such a CPU. Usage: avx512fp16_confined.sh LIBRARY.a (exit 0: confined).
set -euo pipefail
library="$1"
command -v objdump >/dev/null || { echo "objdump not found (binutils)"; exit 77; }
# Instructions only AVX512-FP16 has: binary16 arithmetic (...ph, ...sh), vcvtps2phx / vcvtph2psx, vmovw; F16C's
# vcvtps2ph and vcvtph2ps are not among them.
objdump -d --no-show-raw-insn -C "$library" | awk '
  /^[0-9a-f]+ <.*>:$/ { name = $0; next }
  NF >= 2 {
    op = $2
    fp16 = (op ~ /^v.*(ph|sh|phx|psx)$/ && op != "vcvtps2ph") || op == "vmovw"
    if (fp16) { total++; if (name !~ /activate_block_fp16|hgelu_clamped_binary16_avx512fp16/) { bad++; print "outside: " op " in " name } }
  }
  END {
    if (total == 0) { print "no AVX512-FP16 instructions at all: is the library built with NMC_HAVE_AVX512FP16?"; exit 77 }
    print total " AVX512-FP16 instructions, " bad + 0 " outside their functions"
    exit bad > 0
  }'
