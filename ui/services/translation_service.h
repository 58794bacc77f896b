// SPDX-License-Identifier: GPL-3.0-or-later
// Translation off the GUI thread: holds one model (a snapshot of the model being trained, or a
// checkpoint loaded from disk) on a worker thread and answers requests with plain result structs.
// Loading a checkpoint also happens on that thread.
#pragma once

#include <memory>
#include <optional>

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
  double score = 0;     // length-normalised score used to rank beams
  double log_prob = 0;  // total log-probability
};

struct TranslationResult {
  quint64 id = 0;
  QString source;
  QString text;  // best translation, detokenised
  double score = 0, log_prob = 0;
  QStringList source_tokens;        // as the model saw them, "</s>" last
  QStringList target_tokens;        // generated, "</s>" last when finished
  QVector<double> token_log_probs;  // one per target token
  QVector<TranslationCandidateView> nbest;
  double milliseconds = 0;  // decoding time
  /// {"source_tokens", "target_tokens", "encoder_self"/"decoder_self"/"cross": [layer][head][q][k]}
  /// (empty unless attention was requested)
  nlohmann::json attention;
  /// Beam search only (empty otherwise): {"nodes": [{"id", "parent", "token", "token_id", "step",
  /// "token_log_prob", "log_prob", "score", "state": "root"|"kept"|"pruned"|"finished", "rank"}],
  /// "best_path": [node ids from the root to the best hypothesis's leaf]}. Parents come before
  /// children; "rank" is the position in the n-best list (-1 when not returned).
  nlohmann::json beam_tree;
  QString model;  // label of the model that translated
  QString error;  // non-empty when translation failed
};

/// What a loaded model is, for the panels.
struct ModelInfo {
  QString label;                       // "checkpoint best.ckpt (step 1200)" / "training model at step 300"
  QString checkpoint;                  // path when loaded from disk
  QString direction;                   // "en-de"
  QString src_language, tgt_language;  // names
  qint64 step = 0;
  qint64 parameters = 0;
  int encoder_layers = 0, decoder_layers = 0, heads = 0;
  std::optional<DecodeConfig> decode;  // a checkpoint's own decode section; none for the model being trained
};

/// The 2-D PCA projection of one side's most frequent tokens (see TranslationService::requestTables).
struct EmbeddingProjection {
  QString language;                         // "German"
  qint64 vocab_size = 0;                    // rows of the embedding table
  QStringList tokens;                       // most frequent first, special tokens skipped
  QVector<qint64> ids;                      // their vocabulary ids
  QVector<double> x, y;                     // coordinates on the first and second principal component
  double explained_x = 0, explained_y = 0;  // share of these tokens' embedding variance (0..1)
};

/// The model's position table and token embeddings, computed on the worker thread.
struct ModelTables {
  quint64 id = 0;
  QString model;                   // label of the model
  QString error;                   // non-empty when there is no model or the request failed
  bool learned_positions = false;  // false: the fixed sinusoidal table
  int max_positions = 0;           // rows of the model's position table
  int positions = 0;               // rows returned (the first ones)
  int d_model = 0;
  QVector<float> position_table;       // [positions × d_model], row-major
  QVector<float> position_similarity;  // [positions × positions] cosine similarity, row-major
  bool shared_embeddings = false;      // source and target use one table
  EmbeddingProjection source, target;
};

/// The nearest neighbours of one token in one side's embedding space.
struct TokenNeighbours {
  quint64 id = 0;
  bool target = false;
  QString query;  // as asked
  QString token;  // the vocabulary entry found (e.g. "▁haus" for "Haus")
  qint64 token_id = -1;
  QStringList tokens;  // neighbours, most similar first (special tokens skipped)
  QVector<qint64> ids;
  QVector<double> similarities;  // cosine similarity to `token`
  /// Coordinates of `token` (x, y) and of each neighbour (xs, ys) in the side's projection of the
  /// last requestTables() for the current model; `projected` is false when there is none yet.
  bool projected = false;
  double x = 0, y = 0;
  QVector<double> xs, ys;
  QString model;
  QString error;  // e.g. "“xyz” is not in the target vocabulary."
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
  /// Writes the model of `checkpoint` as a folder (model.safetensors, config.json, tokenizers; see
  /// ts/train/model_export.h; a language model through ts/lm/lm_export.h) on the thread pool, with
  /// `onnx` also its ONNX graphs beside (ts/onnx/onnx_export.h, translation models only):
  /// `modelExported` or `exportFailed` follows.
  void exportModel(const QString& checkpoint, const QString& folder, bool onnx = false);
  /// Whether this build can write ONNX graphs (it was built with ONNX's library).
  static bool onnxExportAvailable();
  /// Queues a translation; `translated` follows with the same id.
  quint64 translate(const QString& text, const DecodeConfig& decode, bool record_attention = true);

  /// Queues a look at the model's tables: the first `positions` rows of the position table with
  /// their cosine similarities, and per side the PCA projection of the `tokens` most frequent
  /// tokens. `tablesReady` follows with the same id. Not counted in isBusy().
  quint64 requestTables(int positions, int tokens);
  /// Queues the `k` nearest neighbours (cosine similarity) of `token` in the source or target
  /// embedding table; `neighboursReady` follows with the same id. Not counted in isBusy().
  quint64 findNeighbours(bool target, const QString& token, int k);

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
  void tablesReady(const ts::ui::ModelTables& tables);
  void neighboursReady(const ts::ui::TokenNeighbours& neighbours);
  void modelExported(const QString& folder, const QString& summary);
  void exportFailed(const QString& folder, const QString& message);

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
Q_DECLARE_METATYPE(ts::ui::ModelTables)
Q_DECLARE_METATYPE(ts::ui::TokenNeighbours)
