// SPDX-License-Identifier: GPL-3.0-or-later
#include "shell/studio_state.h"

#include <algorithm>
#include <cmath>

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QFile>
#include <QSettings>
#include <QtConcurrent/QtConcurrentRun>

#include "ts/train/auto_fit.h"
#include "ts/store/run_store.h"
#include "ts/text/demo_corpus.h"

namespace ts::ui {

namespace {
constexpr int kMaxRecent = 8;
const char* const kBudgetKey = "training/budgetMinutes";

double clamp_budget(double minutes) {
  return minutes >= 0 ? std::min(minutes, kMaxBudgetMinutes) : 0.0;  // NaN too becomes 0
}

// The built-in corpus, named as checkpoints and the run history record it.
std::shared_ptr<const Corpus> demo() {
  auto corpus = demo_corpus();
  corpus.path = StudioState::kDemoPath;
  return std::make_shared<const Corpus>(std::move(corpus));
}

// The QSettings key of a corpus file's direction: a hash of its absolute path (a path's slashes
// would nest QSettings groups).
QString direction_key(const QString& path) {
  const auto absolute = QFileInfo(path).absoluteFilePath().toUtf8();
  return QStringLiteral("corpusDirection/") +
         QString::fromLatin1(QCryptographicHash::hash(absolute, QCryptographicHash::Sha1).toHex());
}

Direction orient(const Corpus& corpus, bool english_is_source) {
  Direction d;
  d.english_is_source = english_is_source;
  d.src_code = english_is_source ? corpus.english.code : corpus.other.code;
  d.tgt_code = english_is_source ? corpus.other.code : corpus.english.code;
  return d;
}
}  // namespace

StudioState::StudioState(QObject* parent) : QObject(parent) {
  config_ = preset("demo");
  config_.train.budget_minutes = rememberedBudgetMinutes();
  database_path_ = QString::fromStdString(RunStore::default_path());
  corpus_ = demo();
  corpus_path_ = kDemoPath;
  direction_ = orient(*corpus_, true);
}

StudioState::~StudioState() {
  for (auto* watcher : pending_loads_) watcher->waitForFinished();
}

void StudioState::loadCorpus(const QString& path) {
  struct Loaded {
    std::shared_ptr<const Corpus> corpus;
    QString error;
  };
  const int serial = ++load_serial_;
  loading_path_ = path;
  Q_EMIT corpusLoading(path);
  auto* watcher = new QFutureWatcher<Loaded>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, path, serial] {
    watcher->deleteLater();
    if (serial != load_serial_) return;  // superseded by a later load
    loading_path_.clear();
    Loaded loaded = watcher->result();
    if (!loaded.corpus) {
      Q_EMIT corpusFailed(path, loaded.error);
      return;
    }
    direction_.english_is_source = rememberedEnglishIsSource(path);  // setCorpus keeps the orientation
    setCorpus(std::move(loaded.corpus), path);
  });
  watcher->setFuture(QtConcurrent::run([path]() -> Loaded {
    try {
      return {std::make_shared<const Corpus>(read_corpus(QFile::encodeName(path).toStdString())), {}};
    } catch (const std::exception& e) {
      return {nullptr, QString::fromStdString(e.what())};
    }
  }));
  pending_loads_.append(watcher);
  connect(watcher, &QObject::destroyed, this, [this, watcher] { pending_loads_.removeAll(watcher); });
}

bool StudioState::isLoading() const { return !loading_path_.isEmpty(); }

void StudioState::setCorpus(std::shared_ptr<const Corpus> corpus, const QString& path) {
  if (!corpus) return;
  corpus_ = std::move(corpus);
  corpus_path_ = path;
  direction_ = orient(*corpus_, direction_.english_is_source);
  if (path != kDemoPath) rememberRecent(path);
  Q_EMIT corpusChanged();
  Q_EMIT directionChanged();
}

void StudioState::loadDemoCorpus() { setCorpus(demo(), kDemoPath); }

bool StudioState::rememberedEnglishIsSource(const QString& path) {
  return QSettings().value(direction_key(path), false).toBool();
}

void StudioState::setEnglishIsSource(bool english_is_source, bool remember) {
  if (remember && !isDemo()) QSettings().setValue(direction_key(corpus_path_), english_is_source);
  if (english_is_source == direction_.english_is_source) return;
  direction_ = orient(*corpus_, english_is_source);
  Q_EMIT directionChanged();
}

void StudioState::setConfig(const ExperimentConfig& config) {
  config_ = config;
  Q_EMIT configChanged();
}

bool StudioState::applySetting(const QString& assignment, QString* error) {
  ExperimentConfig copy = config_;
  try {
    copy.set(assignment.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  setConfig(copy);
  return true;
}

bool StudioState::applyPreset(const QString& name, QString* error) {
  ExperimentConfig next;
  try {
    next = preset(name.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  next.train.device = config_.train.device;
  next.train.threads = config_.train.threads;
  next.train.precision = config_.train.precision;
  next.train.budget_minutes = config_.train.budget_minutes;
  setConfig(next);
  return true;
}

void StudioState::setBudgetMinutes(double minutes) {
  minutes = clamp_budget(minutes);
  QSettings().setValue(QLatin1String(kBudgetKey), minutes);
  if (minutes == config_.train.budget_minutes) return;
  ExperimentConfig next = config_;
  next.train.budget_minutes = minutes;
  setConfig(next);
}

double StudioState::rememberedBudgetMinutes() {
  bool ok = false;
  const double minutes = QSettings().value(QLatin1String(kBudgetKey)).toDouble(&ok);
  return ok ? clamp_budget(minutes) : kDefaultBudgetMinutes;
}

QString StudioState::runsDirectory() const {
  return QFileInfo(database_path_).absoluteDir().filePath(QStringLiteral("runs"));
}

QStringList StudioState::recentFiles() const { return QSettings().value(QStringLiteral("recentFiles")).toStringList(); }

void StudioState::rememberRecent(const QString& path) {
  QSettings settings;
  QStringList files = settings.value(QStringLiteral("recentFiles")).toStringList();
  const QString absolute = QFileInfo(path).absoluteFilePath();
  files.removeAll(absolute);
  files.prepend(absolute);
  while (files.size() > kMaxRecent) files.removeLast();
  settings.setValue(QStringLiteral("recentFiles"), files);
  Q_EMIT recentFilesChanged();
}

QString format_bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 4) {
    bytes /= 1000;
    ++unit;
  }
  return unit == 0 ? QStringLiteral("%1 B").arg(bytes, 0, 'f', 0)
                   : QStringLiteral("%1 %2").arg(bytes, 0, 'f', bytes < 10 ? 2 : 1).arg(units[unit]);
}

QString format_duration(double seconds) {
  if (seconds < 0) return QStringLiteral("–");
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) return QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QLatin1Char('0'));
  if (s >= 60) return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
  return QStringLiteral("%1 s").arg(s);
}

QString format_budget(double minutes) { return QString::fromStdString(minutes_text(minutes)); }

}  // namespace ts::ui
