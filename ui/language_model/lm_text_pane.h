// SPDX-License-Identifier: GPL-3.0-or-later
// The "Text" box of the language-model window: the Open text… button, the open file's path, its
// summary (size, vocabulary, split, the bigram table's loss), a message when a file cannot be used,
// and the vocabulary table, most frequent token first. Reading the file is the window's business
// (LmService); this only shows what came back.
#pragma once

#include <QGroupBox>

#include "services/lm_types.h"

class QLabel;
class QTableWidget;

namespace ts::ui {

/// A token as the vocabulary table shows it: ⏎, ␣ and ⇥ for a newline, a space and a tab, U+XXXX for
/// another control character, the character itself otherwise.
QString visible_token(const QString& token);

class LmTextPane : public QGroupBox {
  Q_OBJECT
 public:
  explicit LmTextPane(QWidget* parent = nullptr);

  /// Shows an inspected text: path, summary and vocabulary; hides any earlier error.
  void showText(const LmTextInfo& info);
  /// Shows why a file cannot be used (the text shown before stays).
  void showError(const QString& message);
  void hideError();

 Q_SIGNALS:
  /// The Open text… button was pressed.
  void openRequested();

 private:
  QLabel* text_path_ = nullptr;
  QLabel* text_summary_ = nullptr;
  QLabel* text_error_ = nullptr;
  QTableWidget* vocab_table_ = nullptr;
};

}  // namespace ts::ui
