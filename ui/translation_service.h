// Translation off the GUI thread: holds one model (a snapshot of the model being trained, or a
// checkpoint loaded from disk) on a worker thread and answers requests with plain result structs.
// Loading a checkpoint also happens on that thread.
#pragma once

#include <memory>

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>
#include <QVector>

#include <nlohmann/json.hpp>

#include "ts/train/config.h"

namespace ts {
class Translator;
}

namespace ts::ui {

struct ModelSnapshot;

struct TranslationCandidateView {
  QString text;
  double score = 0;       // length-normalised score used to rank beams
  double log_prob = 0;    // total log-probability
};

struct TranslationResult {
  quint64 id = 0;
  QString source;
  QString text;                       // best translation, detokenised
  double score = 0, log_prob = 0;
  QStringList source_tokens;          // as the model saw them, "</s>" last
  QStringList target_tokens;          // generated, "</s>" last when finished
  QVector<double> token_log_probs;    // one per target token
  QVector<TranslationCandidateView> nbest;
  double milliseconds = 0;            // decoding time
  /// {"source_tokens", "target_tokens", "encoder_self"/"decoder_self"/"cross": [layer][head][q][k]}
  /// (empty unless attention was requested)
  nlohmann::json attention;
  QString model;                      // label of the model that translated
  QString error;                      // non-empty when translation failed
};

/// What a loaded model is, for the panels.
struct ModelInfo {
  QString label;                      // "checkpoint best.ckpt (step 1200)" / "training model at step 300"
  QString checkpoint;                 // path when loaded from disk
  QString direction;                  // "en-de"
  QString src_language, tgt_language; // names
  qint64 step = 0;
  qint64 parameters = 0;
  int encoder_layers = 0, decoder_layers = 0, heads = 0;
};

class TranslationService : public QObject {
  Q_OBJECT
 public:
  explicit TranslationService(QObject* parent = nullptr);
  ~TranslationService() override;

  /// Uses a snapshot of the model being trained (from TrainingController::snapshotReady).
  void setSnapshot(const ModelSnapshot& snapshot);
  /// Loads a checkpoint on the worker thread: `modelChanged` or `loadFailed` follows.
  void loadCheckpoint(const QString& path);
  /// Queues a translation; `translated` follows with the same id.
  quint64 translate(const QString& text, const DecodeConfig& decode, bool record_attention = true);

  bool hasModel() const { return has_model_; }
  const ModelInfo& model() const { return info_; }
  /// True while a load or translation is in progress.
  bool isBusy() const { return pending_ > 0; }

 Q_SIGNALS:
  void loading(const QString& path);
  void modelChanged(const ts::ui::ModelInfo& info);
  void loadFailed(const QString& path, const QString& message);
  void translated(const ts::ui::TranslationResult& result);
  void busyChanged(bool busy);

 private:
  class Worker;
  void setPending(int delta);

  QThread thread_;
  Worker* worker_ = nullptr;
  bool has_model_ = false;
  ModelInfo info_;
  quint64 next_id_ = 1;
  int pending_ = 0;
};

}  // namespace ts::ui

Q_DECLARE_METATYPE(ts::ui::TranslationResult)
Q_DECLARE_METATYPE(ts::ui::ModelInfo)
