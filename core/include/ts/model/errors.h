// SPDX-License-Identifier: GPL-3.0-or-later
// LibTorch's errors (c10::Error) carry a C++ backtrace in what(): messages shown to a person use
// the text without it.
#pragma once

#include <exception>
#include <string>

namespace ts {

/// e.what(), without LibTorch's backtrace when `e` is a c10::Error.
std::string error_message(const std::exception& e);

}  // namespace ts
