// SPDX-License-Identifier: GPL-3.0-or-later
// How the beam search view writes log-probabilities and scores (boxes, tooltips, summary, selection).
// Internal to ui/beam_search/.
#pragma once

#include <QString>

namespace ts::ui::beam {

inline QString format_lp(double v) { return QString::number(v, 'f', 2); }

}  // namespace ts::ui::beam
