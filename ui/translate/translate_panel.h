// SPDX-License-Identifier: GPL-3.0-or-later
// The Translate panel: a text box (Enter translates), decoding options, the translation with its
// score, the n-best list, latency, and which source tokens each output token attended to.
// It translates with whatever model the TranslationService holds: a snapshot of the model being
// trained (refreshed on request, and after each validation when the user translates) or a checkpoint.
// Its parts live in this folder: the model source chooser (translate_model_box.h), the decoding
// options (translate_options_box.h), the output with token probabilities and n-best list
// (translate_output_box.h) and the cross-attention heatmap (translate_attention_box.h); the panel
// holds the input row and the request flow between them and the service.
#pragma once

#include <QWidget>

#include "services/translation_service.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QSplitter;
class QTimer;

namespace ts::ui {

class AttentionHeatmap;
class StudioState;
class TrainingController;
class TranslateAttentionBox;
class TranslateModelBox;
class TranslateOptionsBox;
class TranslateOutputBox;

class TranslatePanel : public QWidget {
  Q_OBJECT
 public:
  TranslatePanel(StudioState* state, TranslationService* service, TrainingController* controller,
                 QWidget* parent = nullptr);

  /// The decoding options as set in the panel (the configuration's defaults until changed).
  DecodeConfig decodeConfig() const;
  /// The cross-attention layer (0-based) and head (-1 = average of heads) shown in the heatmap.
  int attentionLayer() const;
  int attentionHead() const;
  AttentionHeatmap* heatmap() const;
  TranslateOutputBox* outputBox() const { return output_box_; }
  /// The result shown (id 0 before any).
  const TranslationResult& result() const { return result_; }

 public Q_SLOTS:
  /// Puts `text` in the input box and translates it with the current options.
  void translateText(const QString& text);
  /// Translates what the input box holds.
  void translate();
  /// Picks output token `index` of the result shown (-1: none), as a click in the token strip does:
  /// its row is outlined in the heatmap and the source tokens it read are tinted under the strip.
  void focusToken(int index);

 protected:
  void showEvent(QShowEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void updateModelLine();
  void updateDirectionHint();
  void updateEnabled();
  void send();
  void showResult(const TranslationResult& result);
  void showError(const QString& message);
  void showAttention();
  void fitOutput();
  void fitSplitter();
  bool snapshotIsStale() const;

  StudioState* state_;
  TranslationService* service_;
  TrainingController* controller_;

  TranslateModelBox* model_box_ = nullptr;
  QLabel* direction_ = nullptr;
  QLineEdit* input_ = nullptr;
  QPushButton* translate_ = nullptr;
  TranslateOptionsBox* options_box_ = nullptr;
  TranslateOutputBox* output_box_ = nullptr;
  TranslateAttentionBox* attention_box_ = nullptr;
  QTimer* snapshot_timeout_ = nullptr;
  QSplitter* splitter_ = nullptr;
  bool splitter_moved_ = false;  // the user placed the handle: keep it there

  TranslationResult result_;
  quint64 latest_id_ = 0;  // only this request's result is shown
  QString pending_text_;   // to translate once a fresh training snapshot arrives
  bool waiting_for_snapshot_ = false;
  bool waiting_for_load_ = false;   // Enter pressed while a checkpoint loads
  bool waiting_for_model_ = false;  // asked with no model at all: translated when the first one arrives
  bool loading_ = false;
  QString loading_path_;
  qint64 last_validation_step_ = -1;
};

}  // namespace ts::ui
