// The child protocol of `nmc batch`: each child `nmc compress ... --result FILE` writes its results to FILE, one JSON
// object with the keys of `nmc compress --json` and "result_version", or on failure "exit_code", "error" and
// "result_version" (docs/cli.md, "nmc compress", --result). The batch reads that file, not a child's printed text. A new version is made when a key the batch reads changes
// meaning or goes away; keys are added without one.
#pragma once

namespace nmc {

constexpr int kCompressResultVersion = 1;

}  // namespace nmc
