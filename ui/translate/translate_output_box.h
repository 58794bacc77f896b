// SPDX-License-Identifier: GPL-3.0-or-later
// The Translate panel's output: a status line ("Translating…"), the translation in large type, its
// score and log-probability, the latency and model, an error line, each output token with the
// probability the model gave it (coloured from unsure to sure; a click shows which source tokens it
// read), and the n-best list (beam candidates or samples).
#pragma once

#include <QGroupBox>

class QLabel;
class QTableWidget;

namespace ts::ui {

class AttentionHeatmap;
struct TranslationResult;

class TranslateOutputBox : public QGroupBox {
  Q_OBJECT
 public:
  explicit TranslateOutputBox(QWidget* parent = nullptr);

  /// A grey line above the translation (what the panel is waiting for).
  void showStatus(const QString& text);
  void hideStatus();
  /// The error line, written in `color`.
  void showError(const QString& message, const QColor& color);
  void hideError();
  /// Empties the translation, its figures, the token probabilities and the n-best list.
  void clearResult();
  /// Shows a successful result (the error line goes): `model` translated it; the token cells are
  /// coloured by probability (confidence_color); no token is picked.
  void showResult(const TranslationResult& r, const QString& model);
  /// Caps the n-best table at about eight rows (more scroll).
  void fitNbestTable();
  /// Each token's tooltip: its probability, and the source token it attended to most in `heatmap`.
  void updateTokenTips(const TranslationResult& result, const AttentionHeatmap& heatmap);
  /// Marks output token `index` (-1: none) and writes, under the strip, the source tokens its
  /// cross-attention rests on in `heatmap` (row `index`), each tinted by its weight.
  void showTokenFocus(int index, const AttentionHeatmap& heatmap);
  int focusedToken() const { return focused_; }
  /// The line under the token strip (empty when no token is picked).
  QString focusText() const;

 Q_SIGNALS:
  /// The user clicked output token `index` in the token strip.
  void tokenClicked(int index);

 private:
  QLabel* status_ = nullptr;
  QLabel* output_ = nullptr;
  QLabel* score_ = nullptr;
  QLabel* latency_ = nullptr;
  QLabel* error_ = nullptr;
  QTableWidget* tokens_ = nullptr;
  QLabel* legend_ = nullptr;
  QLabel* focus_ = nullptr;
  QTableWidget* nbest_table_ = nullptr;
  int focused_ = -1;
};

}  // namespace ts::ui
