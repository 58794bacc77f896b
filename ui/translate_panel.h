// SPDX-License-Identifier: GPL-3.0-or-later
// The Translate panel: a text box (Enter translates), decoding options, the translation with its
// score, the n-best list, latency, and which source tokens each output token attended to.
// It translates with whatever model the TranslationService holds: a snapshot of the model being
// trained (refreshed on request, and after each validation when the user translates) or a checkpoint.
#pragma once

#include <QHash>
#include <QWidget>

#include "translation_service.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QSplitter;
class QTableWidget;
class QTimer;

namespace ts::ui {

class AttentionHeatmap;
class StudioState;
class TrainingController;

class TranslatePanel : public QWidget {
  Q_OBJECT
 public:
  TranslatePanel(StudioState* state, TranslationService* service, TrainingController* controller, QWidget* parent = nullptr);

  /// The decoding options as set in the panel (the configuration's defaults until changed).
  DecodeConfig decodeConfig() const;
  /// The cross-attention layer (0-based) and head (-1 = average of heads) shown in the heatmap.
  int attentionLayer() const;
  int attentionHead() const;
  AttentionHeatmap* heatmap() const { return heatmap_; }
  /// The result shown (id 0 before any).
  const TranslationResult& result() const { return result_; }

 public Q_SLOTS:
  /// Puts `text` in the input box and translates it with the current options.
  void translateText(const QString& text);
  /// Translates what the input box holds.
  void translate();

 protected:
  void showEvent(QShowEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  QWidget* buildModelBox();
  QWidget* buildOptionsBox();
  QWidget* buildOutputBox();
  QWidget* buildAttentionBox();
  void applyDecodeDefaults(const DecodeConfig& d);
  void updateModelLine();
  void updateDirectionHint();
  void updateEnabled();
  void updateModeOptions();
  void send();
  void showResult(const TranslationResult& result);
  void showError(const QString& message);
  void showAttention();
  void updateTokenTips();
  void fitOutput();
  void fitSplitter();
  bool snapshotIsStale() const;

  StudioState* state_;
  TranslationService* service_;
  TrainingController* controller_;

  QLabel* model_ = nullptr;
  QPushButton* use_training_ = nullptr;
  QPushButton* load_ = nullptr;
  QLabel* direction_ = nullptr;
  QLineEdit* input_ = nullptr;
  QPushButton* translate_ = nullptr;
  QComboBox* mode_ = nullptr;
  QComboBox* weights_ = nullptr;
  QSpinBox* beam_ = nullptr;
  QSpinBox* nbest_ = nullptr;
  QDoubleSpinBox* length_penalty_ = nullptr;
  QDoubleSpinBox* temperature_ = nullptr;
  QSpinBox* top_k_ = nullptr;
  QDoubleSpinBox* top_p_ = nullptr;
  QSpinBox* seed_ = nullptr;
  QCheckBox* follow_training_ = nullptr;
  QWidget* sample_row_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* output_ = nullptr;
  QLabel* score_ = nullptr;
  QLabel* latency_ = nullptr;
  QLabel* error_ = nullptr;
  QTableWidget* tokens_ = nullptr;
  QTableWidget* nbest_table_ = nullptr;
  QComboBox* layer_ = nullptr;
  QComboBox* head_ = nullptr;
  AttentionHeatmap* heatmap_ = nullptr;
  QTimer* snapshot_timeout_ = nullptr;
  QSplitter* splitter_ = nullptr;
  QWidget* output_box_ = nullptr;
  bool splitter_moved_ = false;  // the user placed the handle: keep it there
  QHash<QWidget*, QLabel*> option_labels_;

  TranslationResult result_;
  quint64 latest_id_ = 0;        // only this request's result is shown
  QString pending_text_;         // to translate once a fresh training snapshot arrives
  bool waiting_for_snapshot_ = false;
  bool waiting_for_load_ = false;  // Enter pressed while a checkpoint loads
  bool loading_ = false;
  QString loading_path_;
  qint64 last_validation_step_ = -1;
  DecodeConfig applied_defaults_;
};

}  // namespace ts::ui
