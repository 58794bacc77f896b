#include "translation_service.h"

#include <QFileInfo>

#include "training_controller.h"
#include "ts/decode/translator.h"

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

}  // namespace

// Lives on the service's thread; owns the model. Results are posted back to the service.
class TranslationService::Worker : public QObject {
 public:
  explicit Worker(TranslationService* service) : service_(service) {}

  void set(std::shared_ptr<Translator> translator, const ModelInfo& info) {
    translator_ = std::move(translator);
    label_ = info.label;
    post([info](TranslationService* s) {
      s->has_model_ = true;
      s->info_ = info;
      Q_EMIT s->modelChanged(info);
    });
  }

  void load(const QString& path) {
    try {
      auto loaded = load_checkpoint(QFile::encodeName(path).toStdString(), at::Device(at::kCPU));
      const auto step = static_cast<qint64>(loaded.meta.position.step);
      auto translator = std::make_shared<Translator>(loaded.model, std::move(loaded.pipeline));
      const QString label = QObject::tr("checkpoint %1 (step %2)").arg(QFileInfo(path).fileName()).arg(step);
      const auto info = describe_model(*translator, label, path, step);
      set(std::move(translator), info);
    } catch (const std::exception& e) {
      post([path, m = QString::fromStdString(e.what())](TranslationService* s) { Q_EMIT s->loadFailed(path, m); });
    }
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
      } catch (const std::exception& e) {
        r.error = QString::fromStdString(e.what());
      }
    }
    post([r](TranslationService* s) { Q_EMIT s->translated(r); });
  }

 private:
  template <class F>
  void post(F&& f) {
    QMetaObject::invokeMethod(service_, [s = service_, f = std::forward<F>(f)] {
      f(s);
      s->setPending(-1);
    }, Qt::QueuedConnection);
  }

  TranslationService* service_;
  std::shared_ptr<Translator> translator_;
  QString label_;  // of translator_, stamped on every result
};

TranslationService::TranslationService(QObject* parent) : QObject(parent) {
  qRegisterMetaType<ts::ui::TranslationResult>();
  qRegisterMetaType<ts::ui::ModelInfo>();
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
  QMetaObject::invokeMethod(worker_, [w = worker_, snapshot] {
    w->set(snapshot.translator, describe_model(*snapshot.translator, snapshot.label, QString(), snapshot.step));
  }, Qt::QueuedConnection);
}

void TranslationService::loadCheckpoint(const QString& path) {
  setPending(+1);
  Q_EMIT loading(path);
  QMetaObject::invokeMethod(worker_, [w = worker_, path] { w->load(path); }, Qt::QueuedConnection);
}

quint64 TranslationService::translate(const QString& text, const DecodeConfig& decode, bool record_attention) {
  TranslationResult request;
  request.id = next_id_++;
  request.source = text;
  setPending(+1);
  QMetaObject::invokeMethod(worker_, [w = worker_, request, decode, record_attention] {
    w->translate(request, decode, record_attention);
  }, Qt::QueuedConnection);
  return request.id;
}

}  // namespace ts::ui
