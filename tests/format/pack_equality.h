// Field-by-field comparison of two Packs for round-trip tests (floats compared bit for bit), and pack files compared
// byte for byte without the one field that differs between two runs of the same training.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/pack.h"

namespace nmc::testing {

// Adds a GoogleTest failure naming the first differing field; returns whether the packs are identical.
bool expect_same_pack(const Pack& a, const Pack& b);

// The pack file at `path` as write_pack() writes it with the informational training time zeroed, and the bits per
// texel the pack records of its own file (which the number of digits of that time changes, by a byte of META):
// what two runs of one training on one material and seed must give byte for byte. Empty, with a test failure, when
// it cannot be read.
std::vector<uint8_t> pack_bytes_without_training_time(const std::string& path);

}  // namespace nmc::testing
