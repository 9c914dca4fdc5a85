// UTF-8 checked strictly, for every reader of text a user hands us: JSON headers, vocabularies,
// corpora. One validator, so "valid" means the same everywhere.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace gradformer {

/// The byte offset of the first byte that does not start a valid UTF-8 character, or nullopt if
/// the whole text is valid: shortest forms only, no surrogates, nothing past U+10FFFF.
std::optional<size_t> invalid_utf8_at(std::string_view text);

}  // namespace gradformer
