// SPDX-License-Identifier: GPL-3.0-or-later
// Small formatting helpers shared by the language-model window's files (internal to
// ui/language_model/; not for use elsewhere).
#pragma once

#include <string>

#include <QLocale>
#include <QString>
#include "widgets/qt_text.h"

namespace ts::ui::lm_util {

using ts::ui::q;  // widgets/qt_text.h
/// A count with the locale's group separators ("12,345").
inline QString number(qint64 n) { return QLocale().toString(n); }

}  // namespace ts::ui::lm_util
