// SPDX-License-Identifier: GPL-3.0-or-later
// Formatting shared by the Dataset panel's files and its preview model (internal to ui/dataset/):
// language names, counts in the user's locale, and the text of a dev/test split setting.
#pragma once

#include <cstddef>

#include <QLocale>
#include <QString>

#include "ts/text/corpus.h"

namespace ts::ui::dataset {

/// The language's name, or its code where the file name named no known language ("Other").
inline QString lang_name(const Language& language) {
  return language.name.empty() || language.name == "Other" ? QString::fromStdString(language.code)
                                                           : QString::fromStdString(language.name);
}

inline QString number(std::size_t n) { return QLocale().toString(static_cast<qulonglong>(n)); }

inline QString split_value_text(double value) { return QString::number(value, 'g', 10); }

}  // namespace ts::ui::dataset
