// SPDX-License-Identifier: GPL-3.0-or-later
#include "services/lm_service.h"

#include <chrono>
#include <cmath>
#include <filesystem>

#include <QCoreApplication>
#include <QFile>
#include <QElapsedTimer>
#include <QThread>
#include <QtConcurrent/QtConcurrent>

#include "ts/lm/generate.h"
#include "ts/lm/lm_trainer.h"
#include "ts/lm/text_data.h"
#include "ts/model/errors.h"
#include "ts/lm/lm_export.h"
#include "widgets/qt_text.h"

namespace ts::ui {

namespace {

// Thrown from the streaming callback to end a generation early; never leaves this file.
struct GenerationStopped {};

LmTextInfo describe(const LmData& data, const QString& path) {
  LmTextInfo info;
  info.path = path;
  info.bytes = static_cast<qint64>(data.bytes);
  info.chars = static_cast<qint64>(data.chars);
  info.lines = static_cast<qint64>(data.lines);
  info.tokenizer = QString::fromLatin1(lm_tokenizer_name(data.codec.kind()));
  const auto& vocab = data.codec.vocab();
  const auto V = static_cast<std::int64_t>(vocab.size());
  info.vocab_size = static_cast<int>(V);
  info.train_tokens = data.train.numel();
  info.val_tokens = data.val.numel();
  info.bigram_loss = bigram_cross_entropy(data.train, data.val, V, 1.0);
  info.uniform_loss = std::log(static_cast<double>(V));
  const auto counts = at::bincount(at::cat({data.train, data.val}), {}, V);
  const auto* c = counts.data_ptr<std::int64_t>();
  for (std::int64_t id = 0; id < V; ++id)
    if (c[id] > 0) info.tokens.push_back({q(vocab.token(id)), c[id]});
  std::stable_sort(info.tokens.begin(), info.tokens.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return info;
}

// [1, H, T, T] per layer -> [layer][head][query][key].
LmAttention attention_of(const GenerateResult& result, const LmCodec& codec) {
  LmAttention a;
  for (const auto id : result.attention_ids) a.tokens << visible_token(q(codec.decode({id})));
  for (const auto& layer : result.attention) {
    const auto w = layer.select(0, 0).to(at::kDouble).contiguous();
    const auto H = w.size(0), T = w.size(1), S = w.size(2);
    const auto* p = w.data_ptr<double>();
    QVector<QVector<QVector<double>>> heads(static_cast<int>(H));
    for (std::int64_t h = 0; h < H; ++h) {
      heads[h].resize(static_cast<int>(T));
      for (std::int64_t t = 0; t < T; ++t) heads[h][t] = QVector<double>(p + (h * T + t) * S, p + (h * T + t + 1) * S);
    }
    a.weights << heads;
  }
  return a;
}

}  // namespace

LmService::LmService(QObject* parent) : QObject(parent) {
  static const bool registered = [] {
    qRegisterMetaType<ts::ui::LmTextInfo>();
    qRegisterMetaType<ts::ui::LmModelSnapshot>();
    qRegisterMetaType<ts::ui::LmGeneration>();
    qRegisterMetaType<ts::ui::LmCheckpointInfo>();
    return true;
  }();
  (void)registered;
}

LmService::~LmService() {
  stop_ = true;
  joinGeneration();
  for (auto* watcher : pending_) watcher->waitForFinished();
}

void LmService::joinGeneration() {
  if (generation_.joinable()) generation_.join();
}

void LmService::background(std::function<Delivery()> task) {
  auto* watcher = new QFutureWatcher<Delivery>(this);
  pending_ << watcher;
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
    pending_.removeOne(watcher);
    watcher->deleteLater();
    if (const auto deliver = watcher->result()) deliver(this);
  });
  watcher->setFuture(QtConcurrent::run(std::move(task)));
}

void LmService::inspectText(const QString& path, const LmConfig& config) {
  const int serial = ++inspect_serial_;
  inspecting_ = true;
  background([path, config, serial]() -> Delivery {
    try {
      auto info = describe(load_lm_text(path.toStdString(), config), path);
      return [info, serial](LmService* s) {
        if (serial != s->inspect_serial_) return;  // superseded by a newer call
        s->inspecting_ = false;
        Q_EMIT s->textInspected(info);
      };
    } catch (const std::exception& e) {
      return [path, serial, m = q(error_message(e))](LmService* s) {
        if (serial != s->inspect_serial_) return;
        s->inspecting_ = false;
        Q_EMIT s->textFailed(path, m);
      };
    }
  });
}

bool LmService::isInspecting() const { return inspecting_; }

void LmService::loadCheckpoint(const QString& path) {
  const int serial = ++load_serial_;
  background([path, serial]() -> Delivery {
    try {
      auto loaded = std::make_shared<LoadedLanguageModel>(load_lm_checkpoint(path.toStdString(), at::Device(at::kCPU)));
      LmModelSnapshot snapshot;
      snapshot.step = loaded->meta.step;
      snapshot.label = tr("checkpoint %1 (step %2)")
                           .arg(q(std::filesystem::path(path.toStdString()).filename().string()))
                           .arg(loaded->meta.step);
      snapshot.model = std::move(loaded);
      return [snapshot, serial](LmService* s) {
        if (serial == s->load_serial_) s->setModel(snapshot);
      };
    } catch (const std::exception& e) {
      return [path, serial, m = q(error_message(e))](LmService* s) {
        if (serial == s->load_serial_) Q_EMIT s->modelFailed(path, m);
      };
    }
  });
}

void LmService::inspectCheckpoint(const QString& path) {
  background([path]() -> Delivery {
    try {
      const auto meta = read_lm_checkpoint_meta(path.toStdString());
      LmCheckpointInfo info{path, meta.config, q(meta.text_path), meta.step};
      return [info](LmService* s) { Q_EMIT s->checkpointInspected(info); };
    } catch (const std::exception& e) {
      return [path, m = q(error_message(e))](LmService* s) { Q_EMIT s->checkpointFailed(path, m); };
    }
  });
}

void LmService::exportModel(const QString& checkpoint, const QString& folder) {
  background([checkpoint, folder]() -> Delivery {
    try {
      const auto s =
          export_any_model(QFile::encodeName(checkpoint).toStdString(), QFile::encodeName(folder).toStdString());
      const auto summary = QObject::tr("%1 parameters, %2 files, %3 MB")
                               .arg(s.parameters)
                               .arg(s.files.size())
                               .arg(static_cast<double>(s.bytes) / 1e6, 0, 'f', 1);
      return [folder, summary](LmService* service) { Q_EMIT service->modelExported(folder, summary); };
    } catch (const std::exception& e) {
      return [folder, m = q(error_message(e))](LmService* service) { Q_EMIT service->exportFailed(folder, m); };
    }
  });
}

void LmService::setModel(const LmModelSnapshot& snapshot) {
  if (!snapshot.model) return;
  snapshot_ = snapshot;
  Q_EMIT modelChanged(snapshot.label);
}

LmConfig LmService::modelConfig() const { return snapshot_.model ? snapshot_.model->meta.config : LmConfig(); }

int LmService::modelVocabulary() const {
  return snapshot_.model ? static_cast<int>(snapshot_.model->meta.codec.vocab().size()) : 0;
}

bool LmService::generate(const LmGenerateRequest& request) {
  if (generating_) {
    Q_EMIT generationFailed(tr("A generation is already running."));
    return false;
  }
  if (!snapshot_.model) {
    Q_EMIT generationFailed(tr("No model: train one, or open a language-model checkpoint."));
    return false;
  }
  joinGeneration();
  stop_ = false;
  generating_ = true;
  Q_EMIT generationStarted();
  // The worker owns a reference to the model, so a newer snapshot may replace ours meanwhile.
  generation_ = std::thread([this, request, snapshot = snapshot_] {
    const auto post = [this](std::function<void()> f) {
      QMetaObject::invokeMethod(this, std::move(f), Qt::QueuedConnection);
    };
    LmGeneration g;
    g.prompt = request.prompt;
    g.model = snapshot.label;
    GenerateOptions options;
    options.length = request.length;
    options.temperature = request.temperature;
    options.top_k = request.top_k;
    options.top_p = request.top_p;
    options.seed = request.seed;
    options.record_attention = request.record_attention;
    const auto t0 = std::chrono::steady_clock::now();
    // Snapshots are copies nobody trains, and one generation runs at a time: the weights are ours.
    auto model = snapshot.model->model;
    std::string text_so_far;
    QString error;
    try {
      const auto result = generate_text(model, snapshot.model->meta.codec, request.prompt.toStdString(), options,
                                        [&](const std::string& text) {
                                          if (stop_.load()) throw GenerationStopped{};
                                          ++g.tokens;
                                          text_so_far += text;
                                          post([this, t = q(text)] { Q_EMIT piece(t); });
                                        });
      g.text = q(result.text);
      g.tokens = static_cast<qint64>(result.ids.size());
      g.attention = attention_of(result, snapshot.model->meta.codec);
    } catch (const GenerationStopped&) {
      g.stopped = true;
      g.text = q(text_so_far);
    } catch (const std::exception& e) {
      error = q(error_message(e));
    }
    g.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    post([this, g, error] {
      generating_ = false;
      if (error.isEmpty())
        Q_EMIT generationFinished(g);
      else
        Q_EMIT generationFailed(error);
    });
  });
  return true;
}

void LmService::stop() {
  if (generating_) stop_ = true;
}

bool LmService::waitForGeneration(int ms) {
  QElapsedTimer clock;
  clock.start();
  while (generating_ && clock.elapsed() < ms) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    if (generating_) QThread::msleep(5);
  }
  return !generating_;
}

}  // namespace ts::ui
