// Field-by-field comparison of two Packs for round-trip tests (floats compared bit for bit).
#pragma once

#include "format/pack.h"

namespace nmc::testing {

// Adds a GoogleTest failure naming the first differing field; returns whether the packs are identical.
bool expect_same_pack(const Pack& a, const Pack& b);

}  // namespace nmc::testing
