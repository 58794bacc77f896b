// SPDX-License-Identifier: GPL-3.0-or-later
// Core's text in Qt: core speaks UTF-8 std::string, the widgets QString.
#pragma once

#include <string>

#include <QString>

namespace ts::ui {

/// A UTF-8 std::string from core as a QString.
inline QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace ts::ui
