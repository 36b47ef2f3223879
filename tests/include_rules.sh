#!/usr/bin/env bash
# The layering of docs/architecture.md, read from the #include lines: the decoders are peers (none includes another,
# decoder/common includes none), the compressor includes nothing from validate/ or decoder/cuda/ (it measures with
# quality/), quality/ nothing from validate/ or compressor/, and compressor/cuda nothing from decoder/.
# Usage: include_rules.sh SOURCE_ROOT (exit 0: every rule holds; each broken one is printed).
set -uo pipefail
cd "$1" || exit 2
status=0
# rule FOLDER FORBIDDEN_INCLUDE_PREFIX...: no source under FOLDER includes a header under a forbidden prefix.
rule() {
    local folder="$1"
    shift
    for prefix in "$@"; do
        if grep -rnE "^\s*#\s*include\s+\"${prefix}" "$folder" --include='*.h' --include='*.cpp' --include='*.cu' \
            --include='*.cuh'; then
            echo "^ $folder must not include $prefix"
            status=1
        fi
    done
}
rule decoder/common decoder/cpu/ decoder/cuda/ runtime/
rule decoder/cpu decoder/cuda/ runtime/
rule decoder/cuda decoder/cpu/ runtime/
rule runtime/vulkan decoder/cpu/ decoder/cuda/
rule compressor validate/ decoder/cuda/
rule compressor/cuda decoder/
rule quality validate/ compressor/
exit $status
