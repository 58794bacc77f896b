// SPDX-License-Identifier: GPL-3.0-or-later
// What became of a hypothesis that beam search considered (ts/decode/search.h's BeamTree): a closed
// set, named only where the tree leaves the process (the JSON the app's beam tree view reads).
#pragma once

#include <optional>
#include <string>

namespace ts {

enum class BeamNodeState {
  kRoot,      // the start of every hypothesis (<s>)
  kKept,      // stayed in the beam
  kPruned,    // among the top 2 x beam candidates of a step, but cut
  kFinished,  // ended with EOS or at the length limit
};

/// "root", "kept", "pruned", "finished".
inline const char* beam_node_state_name(BeamNodeState state) {
  switch (state) {
    case BeamNodeState::kRoot:
      return "root";
    case BeamNodeState::kKept:
      return "kept";
    case BeamNodeState::kPruned:
      return "pruned";
    case BeamNodeState::kFinished:
      return "finished";
  }
  return "kept";
}

/// The inverse of beam_node_state_name; nullopt for any other text.
inline std::optional<BeamNodeState> parse_beam_node_state(const std::string& name) {
  for (auto state : {BeamNodeState::kRoot, BeamNodeState::kKept, BeamNodeState::kPruned, BeamNodeState::kFinished})
    if (name == beam_node_state_name(state)) return state;
  return std::nullopt;
}

}  // namespace ts
