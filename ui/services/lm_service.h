// SPDX-License-Identifier: GPL-3.0-or-later
// Language-model work off the GUI thread: reading and checking a text file for the summary the
// window shows, loading an LM checkpoint, and generating text that streams back token by token.
// Holds one model to generate from (a snapshot of the model being trained, or a checkpoint).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include <QFutureWatcher>
#include <QList>
#include <QObject>
#include <QString>

#include "services/lm_types.h"

namespace ts::ui {

class LmService : public QObject {
  Q_OBJECT
 public:
  explicit LmService(QObject* parent = nullptr);
  /// Cancels a generation and waits for it and for a text being read.
  ~LmService() override;

  /// Reads and checks `path` with `config`'s tokenizer settings on a worker thread: textInspected
  /// or textFailed follow. A newer call supersedes one still running (its result is dropped).
  void inspectText(const QString& path, const LmConfig& config);
  bool isInspecting() const;

  /// Loads an LM checkpoint on a worker thread: modelChanged or modelFailed follow.
  void loadCheckpoint(const QString& path);
  /// Reads an LM checkpoint's configuration, text and step (to resume it) on a worker thread:
  /// checkpointInspected or checkpointFailed follow.
  void inspectCheckpoint(const QString& path);
  /// Writes the language model of `checkpoint` as a model folder into `folder` on a worker thread
  /// (ts/lm/lm_export.h): modelExported (with a summary) or exportFailed follow.
  void exportModel(const QString& checkpoint, const QString& folder);
  /// Generates from this model from now on (e.g. a copy of the model being trained).
  void setModel(const LmModelSnapshot& snapshot);
  bool hasModel() const { return static_cast<bool>(snapshot_.model); }
  const LmModelSnapshot& model() const { return snapshot_; }
  /// The model's configuration (block size, layers, heads); a default one without a model.
  LmConfig modelConfig() const;
  /// The model's vocabulary size, 0 without a model.
  int modelVocabulary() const;

  /// Starts generating on a worker thread. Returns false (and emits generationFailed) without a
  /// model or while another generation runs. `piece` streams the text; generationFinished ends it.
  bool generate(const LmGenerateRequest& request);
  /// Asks a running generation to stop after the current token.
  void stop();
  bool isGenerating() const { return generating_; }
  /// Blocks until the generation ended or `ms` passed, delivering its queued signals (tests).
  bool waitForGeneration(int ms);

 Q_SIGNALS:
  void textInspected(const ts::ui::LmTextInfo& info);
  void textFailed(const QString& path, const QString& message);
  void modelChanged(const QString& label);
  void modelFailed(const QString& path, const QString& message);
  void checkpointInspected(const ts::ui::LmCheckpointInfo& info);
  void checkpointFailed(const QString& path, const QString& message);
  void modelExported(const QString& folder, const QString& summary);
  void exportFailed(const QString& folder, const QString& message);
  void generationStarted();
  void piece(const QString& text);
  void generationFinished(const ts::ui::LmGeneration& generation);
  void generationFailed(const QString& message);

 private:
  using Delivery = std::function<void(LmService*)>;
  /// Runs `task` on the thread pool and its returned delivery on the GUI thread.
  void background(std::function<Delivery()> task);
  void joinGeneration();

  LmModelSnapshot snapshot_;
  QList<QFutureWatcher<Delivery>*> pending_;
  int inspect_serial_ = 0, load_serial_ = 0;
  bool inspecting_ = false;
  std::thread generation_;
  std::atomic<bool> stop_{false};
  bool generating_ = false;
};

}  // namespace ts::ui
