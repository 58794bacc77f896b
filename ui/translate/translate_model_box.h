// SPDX-License-Identifier: GPL-3.0-or-later
// The Translate panel's model source chooser: a line naming the model that translates (label,
// languages, step, size) and the buttons that pick it: a copy of the model being trained, or a
// checkpoint from disk; and whether to refresh the training copy after each validation.
#pragma once

#include <QGroupBox>

class QCheckBox;
class QLabel;
class QPushButton;

namespace ts::ui {

class StudioState;
class TrainingController;
class TranslationService;

class TranslateModelBox : public QGroupBox {
  Q_OBJECT
 public:
  TranslateModelBox(StudioState* state, TranslationService* service, TrainingController* controller,
                    QWidget* parent = nullptr);

  /// What the panel says when there is no model to translate with.
  static QString noModelText();

  /// Names the service's model, or the checkpoint on its way while `loading`.
  void updateModelLine(bool loading, const QString& loading_path);
  /// The training-model choices are available only while a model trains.
  void setTrainingRunning(bool training);
  /// Whether a stale copy of the training model is refreshed before translating.
  bool followTraining() const;

 private:
  StudioState* state_;
  TranslationService* service_;
  TrainingController* controller_;

  QLabel* model_ = nullptr;
  QPushButton* use_training_ = nullptr;
  QPushButton* load_ = nullptr;
  QCheckBox* follow_training_ = nullptr;
};

}  // namespace ts::ui
