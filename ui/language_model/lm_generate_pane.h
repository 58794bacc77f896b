// SPDX-License-Identifier: GPL-3.0-or-later
// The Generate tab of the language-model window: the model generating, the sampling parameters
// (length, temperature, top-k, top-p, seed), the prompt with Generate and Stop, the text as it
// streams in (the prompt in bold) and a status line. The window runs the generation (LmService)
// and feeds the results in here.
#pragma once

#include <QWidget>

#include "services/lm_types.h"

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTextEdit;

namespace ts::ui {

class LmGeneratePane : public QWidget {
  Q_OBJECT
 public:
  explicit LmGeneratePane(QWidget* parent = nullptr);

  /// The prompt and sampling parameters shown.
  LmGenerateRequest request() const;
  /// Puts `text` in the prompt box, as typing would.
  void setPrompt(const QString& text);
  /// Clears the output and starts it with the prompt, in bold.
  void startOutput(const QString& prompt);
  /// Appends a streamed piece of text.
  void appendPiece(const QString& text);
  /// The generated text shown (prompt included).
  QString outputText() const;

  void setModelLabel(const QString& label);
  /// Top-k ranges over the model's vocabulary.
  void setVocabulary(int size);
  void setStatus(const QString& text);
  /// Says how a generation went: tokens, time, speed and model.
  void showFinished(const LmGeneration& generation);
  void setButtons(bool can_generate, bool generating);

 Q_SIGNALS:
  /// Generate was pressed, or Return in the prompt.
  void generateRequested();
  void stopRequested();
  void openCheckpointRequested();

 private:
  QLabel* model_label_ = nullptr;
  QLineEdit* prompt_ = nullptr;
  QSpinBox* length_ = nullptr;
  QDoubleSpinBox* temperature_ = nullptr;
  QSpinBox* top_k_ = nullptr;
  QDoubleSpinBox* top_p_ = nullptr;
  QSpinBox* seed_ = nullptr;
  QPushButton* generate_ = nullptr;
  QPushButton* stop_generation_ = nullptr;
  QTextEdit* output_ = nullptr;
  QLabel* generation_status_ = nullptr;
};

}  // namespace ts::ui
