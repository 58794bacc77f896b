// SPDX-License-Identifier: GPL-3.0-or-later
#include "services/translation_service.h"

#include <algorithm>
#include <optional>

#include <QFileInfo>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrent>

#include "services/training_controller.h"
#include "ts/analysis/embeddings.h"
#include "ts/decode/shortlist.h"
#include "ts/decode/translator.h"
#include "ts/model/errors.h"
#include "ts/lm/lm_export.h"
#include "ts/onnx/onnx_export.h"

namespace ts::ui {

namespace {

QStringList to_qt(const std::vector<std::string>& items) {
  QStringList out;
  for (const auto& s : items) out << QString::fromStdString(s);
  return out;
}

ModelInfo describe_model(Translator& t, const QString& label, const QString& checkpoint, qint64 step) {
  ModelInfo info;
  info.label = label;
  info.checkpoint = checkpoint;
  const auto& p = t.pipeline();
  info.direction = QString::fromStdString(p.direction.str());
  info.src_language = QString::fromStdString(p.src_language.name);
  info.tgt_language = QString::fromStdString(p.tgt_language.name);
  info.step = step;
  info.parameters = t.model()->parameter_count();
  const auto& c = t.model()->config();
  info.encoder_layers = c.encoder_layers;
  info.decoder_layers = c.decoder_layers;
  info.heads = c.heads;
  return info;
}

// A [rows, cols] CPU float tensor as a FloatMatrix (the first `rows` rows).
FloatMatrix to_matrix(const at::Tensor& t, std::int64_t rows) {
  const auto c = t.slice(0, 0, rows).contiguous();
  const float* p = c.data_ptr<float>();
  return FloatMatrix(static_cast<int>(c.size(0)), static_cast<int>(c.size(1)), std::vector<float>(p, p + c.numel()));
}

QVector<float> to_qvector(const std::vector<float>& v) { return QVector<float>(v.begin(), v.end()); }

// Special tokens (PAD, UNK, BOS, EOS: ids 0-3) are not words: neither plotted nor neighbours.
constexpr std::int64_t kFirstWord = Vocab::kEos + 1;

}  // namespace

// Lives on the service's thread; owns the model. Results are posted back to the service.
class TranslationService::Worker : public QObject {
 public:
  explicit Worker(TranslationService* service) : service_(service) {}

  void set(std::shared_ptr<Translator> translator, const ModelInfo& info) {
    translator_ = std::move(translator);
    label_ = info.label;
    // The tables belong to the previous model.
    embeddings_[0].reset();
    embeddings_[1].reset();
    has_projection_[0] = has_projection_[1] = false;
    post([info](TranslationService* s) {
      s->has_model_ = true;
      s->info_ = info;
      Q_EMIT s->modelChanged(info);
    });
  }

  void load(const QString& path) {
    try {
      auto loaded = load_checkpoint(QFile::encodeName(path).toStdString(), at::Device(at::kCPU));
      if (loaded.meta.config.decode.shortlist)  // the run's shortlist, when its settings ask for it
        loaded.model->set_shortlist(shortlist_beside(QFile::encodeName(path).toStdString(),
                                                     loaded.model->src_vocab_size(), loaded.model->tgt_vocab_size()));
      const auto step = static_cast<qint64>(loaded.meta.position.step);
      auto translator = std::make_shared<Translator>(loaded.model, std::move(loaded.pipeline));
      const QString label = QObject::tr("checkpoint %1 (step %2)").arg(QFileInfo(path).fileName()).arg(step);
      auto info = describe_model(*translator, label, path, step);
      info.decode = loaded.meta.config.decode;
      set(std::move(translator), info);
    } catch (const std::exception& e) {
      post([path, m = QString::fromStdString(error_message(e))](TranslationService* s) {
        Q_EMIT s->loadFailed(path, m);
      });
    }
  }

  void tables(ModelTables r, int positions, int tokens) {
    r.model = label_;
    if (!translator_) {
      r.error = QObject::tr("Load a checkpoint or start training to see the model's positions and embeddings.");
    } else {
      try {
        auto& model = translator_->model();
        const auto& pipeline = translator_->pipeline();
        const at::Tensor table = model->position_table();  // [P, D]
        r.learned_positions = model->learned_positions();
        r.max_positions = static_cast<int>(table.size(0));
        r.d_model = static_cast<int>(table.size(1));
        const auto shown = std::clamp<std::int64_t>(positions, 1, table.size(0));
        const FloatMatrix rows = to_matrix(table, shown);
        r.positions = rows.rows;
        r.position_table = to_qvector(rows.data);
        r.position_similarity = to_qvector(cosine_similarity_matrix(rows).data);
        r.shared_embeddings = pipeline.shared_vocab && model->config().share_embeddings;
        for (bool target : {false, true}) {
          const FloatMatrix& all = embeddings(target);
          const Vocab& vocab = target ? *pipeline.tgt_vocab : *pipeline.src_vocab;
          EmbeddingProjection& side = target ? r.target : r.source;
          side.language = QString::fromStdString(target ? pipeline.tgt_language.name : pipeline.src_language.name);
          side.vocab_size = all.rows;
          // Vocab ids are in frequency order after the specials (Vocab::build), so the most
          // frequent tokens are the first ids.
          std::vector<int> ids;
          for (std::int64_t id = kFirstWord; id < all.rows && static_cast<int>(ids.size()) < tokens; ++id)
            ids.push_back(static_cast<int>(id));
          const Projection2D pca = pca_2d(select_rows(all, ids));
          projection_[target] = pca;
          has_projection_[target] = true;
          for (std::size_t i = 0; i < ids.size(); ++i) {
            side.ids << ids[i];
            side.tokens << QString::fromStdString(vocab.token(ids[i]));
            side.x << pca.coordinates.at(static_cast<int>(i), 0);
            side.y << pca.coordinates.at(static_cast<int>(i), 1);
          }
          side.explained_x = pca.explained[0];
          side.explained_y = pca.explained[1];
        }
      } catch (const std::exception& e) {
        r.error = QString::fromStdString(error_message(e));
      }
    }
    post_result([r](TranslationService* s) { Q_EMIT s->tablesReady(r); });
  }

  void neighbours(TokenNeighbours r, int k) {
    r.model = label_;
    const QString side = r.target ? QObject::tr("target") : QObject::tr("source");
    if (!translator_) {
      r.error = QObject::tr("Load a checkpoint or start training to see the model's positions and embeddings.");
    } else if (r.query.trimmed().isEmpty()) {
      r.error = QObject::tr("Type a token of the %1 vocabulary.").arg(side);
    } else {
      try {
        const auto& pipeline = translator_->pipeline();
        const Vocab& vocab = r.target ? *pipeline.tgt_vocab : *pipeline.src_vocab;
        const FloatMatrix& all = embeddings(r.target);
        // The token as typed, then as a subword's word-initial piece ("▁haus"), then lowercased:
        // what a person types rarely carries the tokenizer's marks.
        const QString typed = r.query.trimmed();
        const QString marker = QStringLiteral("\u2581");
        QStringList candidates{typed};
        if (!typed.startsWith(marker)) candidates << marker + typed;
        candidates << typed.toLower();
        if (!typed.startsWith(marker)) candidates << marker + typed.toLower();
        std::int64_t id = -1;
        for (const QString& c : candidates)
          if (vocab.contains(c.toStdString())) {
            id = vocab.id(c.toStdString());
            r.token = c;
            break;
          }
        if (id < 0 || id >= all.rows) {
          r.error = QObject::tr("\u201c%1\u201d is not in the %2 vocabulary.").arg(typed, side);
        } else {
          r.token_id = id;
          std::vector<int> specials;
          for (std::int64_t s = 0; s < kFirstWord; ++s) specials.push_back(static_cast<int>(s));
          const auto found = nearest_neighbours(all, static_cast<int>(id), k, specials);
          if (found.empty() && k > 0)
            r.error =
                QObject::tr("\u201c%1\u201d has an all-zero embedding: it has no direction to compare.").arg(r.token);
          const bool projected = has_projection_[r.target];
          const Projection2D& pca = projection_[r.target];
          r.projected = projected;
          if (projected) {
            const auto q = pca.project(all.row(static_cast<int>(id)));
            r.x = q[0];
            r.y = q[1];
          }
          for (const auto& n : found) {
            r.ids << n.row;
            r.tokens << QString::fromStdString(vocab.token(n.row));
            r.similarities << n.similarity;
            if (projected) {
              const auto q = pca.project(all.row(n.row));
              r.xs << q[0];
              r.ys << q[1];
            }
          }
        }
      } catch (const std::exception& e) {
        r.error = QString::fromStdString(error_message(e));
      }
    }
    post_result([r](TranslationService* s) { Q_EMIT s->neighboursReady(r); });
  }

  void translate(TranslationResult request, DecodeConfig decode, bool attention) {
    TranslationResult r = std::move(request);
    r.model = label_;
    if (!translator_) {
      r.error = QObject::tr("No model yet: train one or load a checkpoint.");
    } else {
      try {
        const auto t = translator_->translate(r.source.toStdString(), decode, attention);
        r.text = QString::fromStdString(t.text);
        r.source_tokens = to_qt(t.source_tokens);
        r.target_tokens = to_qt(t.target_tokens);
        r.score = t.best.score;
        r.log_prob = t.best.log_prob;
        for (double lp : t.best.token_log_probs) r.token_log_probs << lp;
        for (const auto& c : t.nbest) r.nbest.push_back({QString::fromStdString(c.text), c.score, c.log_prob});
        r.milliseconds = t.milliseconds;
        if (attention) r.attention = t.attention_json();
        r.beam_tree = t.beam_tree_json();
      } catch (const std::exception& e) {
        r.error = QString::fromStdString(error_message(e));
      }
    }
    post([r](TranslationService* s) { Q_EMIT s->translated(r); });
  }

 private:
  // One side's embedding table, copied from the model once per model (reset by set()).
  const FloatMatrix& embeddings(bool target) {
    auto& cached = embeddings_[target];
    if (!cached) {
      const at::Tensor t = translator_->model()->embedding_table(target);
      cached = to_matrix(t, t.size(0));
    }
    return *cached;
  }

  // Like post() for requests that are not counted as pending (tables, neighbours).
  template <class F>
  void post_result(F&& f) {
    QMetaObject::invokeMethod(
        service_, [s = service_, f = std::forward<F>(f)] { f(s); }, Qt::QueuedConnection);
  }

  template <class F>
  void post(F&& f) {
    QMetaObject::invokeMethod(
        service_,
        [s = service_, f = std::forward<F>(f)] {
          f(s);
          s->setPending(-1);
        },
        Qt::QueuedConnection);
  }

  TranslationService* service_;
  std::shared_ptr<Translator> translator_;
  QString label_;                             // of translator_, stamped on every result
  std::optional<FloatMatrix> embeddings_[2];  // [source, target] tables of translator_
  Projection2D projection_[2];                // the last requestTables() projection per side
  bool has_projection_[2] = {false, false};
};

TranslationService::TranslationService(QObject* parent) : QObject(parent) {
  qRegisterMetaType<ts::ui::TranslationResult>();
  qRegisterMetaType<ts::ui::ModelInfo>();
  qRegisterMetaType<ts::ui::ModelTables>();
  qRegisterMetaType<ts::ui::TokenNeighbours>();
  worker_ = new Worker(this);
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  thread_.setObjectName(QStringLiteral("translation"));
  thread_.start();
}

TranslationService::~TranslationService() {
  thread_.quit();
  thread_.wait();
}

void TranslationService::setPending(int delta) {
  const bool was = isBusy();
  pending_ += delta;
  if (was != isBusy()) Q_EMIT busyChanged(isBusy());
}

void TranslationService::setSnapshot(const ModelSnapshot& snapshot) {
  if (!snapshot.translator) return;
  setPending(+1);
  QMetaObject::invokeMethod(
      worker_,
      [w = worker_, snapshot] {
        w->set(snapshot.translator, describe_model(*snapshot.translator, snapshot.label, QString(), snapshot.step));
      },
      Qt::QueuedConnection);
}

void TranslationService::loadCheckpoint(const QString& path) {
  setPending(+1);
  Q_EMIT loading(path);
  QMetaObject::invokeMethod(
      worker_, [w = worker_, path] { w->load(path); }, Qt::QueuedConnection);
}

bool TranslationService::onnxExportAvailable() { return onnx_export_available(); }

void TranslationService::exportModel(const QString& checkpoint, const QString& folder, bool onnx) {
  using Outcome = QPair<bool, QString>;
  auto* watcher = new QFutureWatcher<Outcome>(this);
  connect(watcher, &QFutureWatcher<Outcome>::finished, this, [this, watcher, folder] {
    const Outcome outcome = watcher->result();
    watcher->deleteLater();
    if (outcome.first)
      Q_EMIT modelExported(folder, outcome.second);
    else
      Q_EMIT exportFailed(folder, outcome.second);
  });
  watcher->setFuture(QtConcurrent::run([checkpoint, folder, onnx]() -> Outcome {
    try {
      const auto s =
          export_model_as(QFile::encodeName(checkpoint).toStdString(), QFile::encodeName(folder).toStdString(),
                          onnx ? ExportFormat::kOnnx : ExportFormat::kFolder);
      return {true, QObject::tr("%1 parameters, %2 files, %3 MB")
                        .arg(s.parameters)
                        .arg(s.files.size())
                        .arg(static_cast<double>(s.bytes) / 1e6, 0, 'f', 1)};
    } catch (const std::exception& e) {
      return {false, QString::fromStdString(error_message(e))};
    }
  }));
}

quint64 TranslationService::translate(const QString& text, const DecodeConfig& decode, bool record_attention) {
  TranslationResult request;
  request.id = next_id_++;
  request.source = text;
  setPending(+1);
  QMetaObject::invokeMethod(
      worker_, [w = worker_, request, decode, record_attention] { w->translate(request, decode, record_attention); },
      Qt::QueuedConnection);
  return request.id;
}

quint64 TranslationService::requestTables(int positions, int tokens) {
  ModelTables request;
  request.id = next_id_++;
  QMetaObject::invokeMethod(
      worker_, [w = worker_, request, positions, tokens] { w->tables(request, positions, tokens); },
      Qt::QueuedConnection);
  return request.id;
}

quint64 TranslationService::findNeighbours(bool target, const QString& token, int k) {
  TokenNeighbours request;
  request.id = next_id_++;
  request.target = target;
  request.query = token;
  QMetaObject::invokeMethod(
      worker_, [w = worker_, request, k] { w->neighbours(request, k); }, Qt::QueuedConnection);
  return request.id;
}

}  // namespace ts::ui
