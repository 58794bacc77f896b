// SPDX-License-Identifier: GPL-3.0-or-later
// Small text helpers shared by the attention explorer's parts (the panel, its head grid, its
// summary table and its large map). Internal to ui/attention/.
#pragma once

#include <algorithm>

#include <QObject>
#include <QString>
#include <QtGlobal>

namespace ts::ui::attention_util {

/// A share in [0, 1] as a whole percentage: "62%".
inline QString percent(double x) { return QStringLiteral("%1%").arg(qRound(std::clamp(x, 0.0, 1.0) * 100)); }

/// Tooltips are rich text when they look like it; tokens such as "<unk>" and "</s>" must show as
/// written.
inline QString plain_tooltip(const QString& text) {
  return QStringLiteral("<p style='white-space:pre'>%1</p>").arg(text.toHtmlEscaped());
}

/// "head 3", or "average of heads" for head -1.
inline QString head_name(int head) {
  return head < 0 ? QObject::tr("average of heads") : QObject::tr("head %1").arg(head + 1);
}

}  // namespace ts::ui::attention_util
