// SPDX-License-Identifier: GPL-3.0-or-later
// A translator file: everything translating needs from a run, in one file beside its checkpoint, that
// a process can read without LibTorch (LibTorch's own checkpoint format needs LibTorch, whose loading
// alone takes about half a second on Debian's build). `transformer-studio-cli translate` writes it
// the first time it loads a checkpoint (export_translator in ts/train/checkpoint.h); the LibTorch-free
// translator (app/translate) reads it.
//
// Layout: the 8 bytes "TSXLATE1", the header's length as a little-endian uint64, the header (JSON:
// the model's shape, its text pipeline, its decoding settings, the checkpoint it was made from, a
// checksum of the tensor bytes, and each tensor's name, shape and byte offset), zeros to a multiple
// of 64 bytes, then the tensors as little-endian fp32, row-major, each at its offset from there.
// When the run has a lexical shortlist (ts/decode/shortlist.h), the file carries it too: its
// options, vocabularies and the stamp of its file in the header's "shortlist", its two tables as the
// tensors "shortlist.candidates" and "shortlist.frequent" (token ids, exact in fp32 below 2^24).
//
// Why not the checkpoint itself: it also holds the optimizer's two moments (three times the weights)
// and is verified by SHA-256 as a whole on every load; this file is the weights alone.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memory>

#include "ts/decode/decode_config.h"
#include "ts/decode/shortlist.h"
#include "ts/infer/packed_model.h"

namespace ts {

/// Where the translator file of `checkpoint` (a checkpoint file, or an exported model folder) lives:
/// "<checkpoint>.translator", or "<folder>/model.translator".
std::string translator_file_for(const std::string& checkpoint);

/// What a checkpoint file was when a translator file was made from it: a later training run that
/// rewrites the checkpoint makes the translator file stale.
struct CheckpointStamp {
  std::uintmax_t size = 0;
  std::int64_t modified_ns = 0;  // last modification, ns since the epoch
  /// The stamp of the file at `path` now (size 0 and time 0 when it cannot be read).
  static CheckpointStamp of(const std::string& path);
  bool operator==(const CheckpointStamp& o) const { return size == o.size && modified_ns == o.modified_ns; }
};

struct TranslatorFile {
  TranslatorFile() = default;
  TranslatorFile(TranslatorFile&&) = default;  // the views keep pointing into the moved `data`
  TranslatorFile& operator=(TranslatorFile&&) = default;
  TranslatorFile(const TranslatorFile&) = delete;
  TranslatorFile& operator=(const TranslatorFile&) = delete;

  PackedModelShape shape;
  nlohmann::json pipeline;  // TextPipeline::to_json
  DecodeConfig decode;      // the model's own decoding settings
  CheckpointStamp made_from;
  std::map<std::string, WeightView> tensors;  // point into `data` (the model's weights alone)
  std::vector<float> data;
  /// The run's lexical shortlist as it was when the file was written (null: it had none), and the
  /// stamp of its file then (CheckpointStamp::of(shortlist_file(checkpoint)); zero when there was none).
  std::shared_ptr<const LexicalShortlist> shortlist;
  CheckpointStamp shortlist_made_from;

  /// The tensors by name, for PackedModel.
  WeightLookup lookup() const;
};

/// Writes a translator file at `path` (through a temporary file renamed into place, so a reader never
/// sees half of one). `tensors`: each name with its fp32 data and shape. Throws std::runtime_error
/// naming the path when it cannot write. With `shortlist`, the file carries it and
/// `shortlist_made_from`, the stamp of the file it was read from.
void write_translator_file(const std::string& path, const PackedModelShape& shape, const nlohmann::json& pipeline,
                           const DecodeConfig& decode, const CheckpointStamp& made_from,
                           const std::map<std::string, WeightView>& tensors,
                           const LexicalShortlist* shortlist = nullptr,
                           const CheckpointStamp& shortlist_made_from = {});

/// Reads a translator file; throws std::runtime_error naming `path` and what is wrong (not one, cut
/// short, a header that does not parse, a tensor outside the file, tensor bytes that do not match the
/// checksum, a shortlist that does not fit its vocabularies).
TranslatorFile read_translator_file(const std::string& path);

}  // namespace ts
