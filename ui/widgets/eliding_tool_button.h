// SPDX-License-Identifier: GPL-3.0-or-later
// A tool button whose text is cut with "…" to the width it gets, instead of asking for the width of the
// whole text (the Configuration panel's section headers carry a summary that made the dock scroll
// sideways at 1280 x 800). The whole text stays in the tooltip when it is cut.
#pragma once

#include <QToolButton>

namespace ts::ui {

class ElidingToolButton : public QToolButton {
  Q_OBJECT
 public:
  explicit ElidingToolButton(QWidget* parent = nullptr);
  /// The text to show, cut to the button's width when it does not fit.
  void setFullText(const QString& text);
  QString fullText() const { return full_text_; }
  /// The tooltip shown when the text fits (the whole text is added below it when it is cut).
  void setBaseToolTip(const QString& tip);
  QSize minimumSizeHint() const override;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void elide();
  QString full_text_, base_tip_;
};

}  // namespace ts::ui
