// SPDX-License-Identifier: GPL-3.0-or-later
// Base64 (RFC 4648, standard alphabet, '=' padding) for embedding binary blobs such as
// SentencePiece models in JSON.
#pragma once

#include <string>
#include <string_view>

namespace ts {

/// Encodes arbitrary bytes as padded base64.
std::string base64_encode(std::string_view bytes);

/// Decodes padded base64 (whitespace is not allowed). Throws std::invalid_argument on
/// characters outside the alphabet, a bad length or misplaced padding.
std::string base64_decode(std::string_view text);

}  // namespace ts
