// SPDX-License-Identifier: GPL-3.0-or-later
// The document the panels share: the corpus in use, the translation direction and the experiment
// configuration. Panels read it and change it through these methods; every change is announced by a
// signal so the other panels follow. Corpus files are read off the GUI thread.
#pragma once

#include <memory>

#include <QFutureWatcher>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include "ts/text/corpus.h"
#include "ts/train/config.h"

namespace ts {
struct AutoFit;  // ts/train/auto_fit.h
}  // namespace ts

namespace ts::ui {

/// "Train for" until the person chooses otherwise, in minutes.
inline constexpr double kDefaultBudgetMinutes = 20;
/// The largest budget train.budget_minutes accepts (a year).
inline constexpr double kMaxBudgetMinutes = 525600;

class StudioState : public QObject {
  Q_OBJECT
 public:
  /// The path shown for the built-in demo corpus (also what checkpoints record).
  static constexpr const char* kDemoPath = "<demo>";

  /// Starts with the built-in demo corpus loaded, English→German, the "demo" preset, and the
  /// "Train for" budget remembered in QSettings (20 minutes at first).
  explicit StudioState(QObject* parent = nullptr);
  ~StudioState() override;

  std::shared_ptr<const Corpus> corpus() const { return corpus_; }
  /// The file the corpus came from, or kDemoPath.
  QString corpusPath() const { return corpus_path_; }
  bool isDemo() const { return corpus_path_ == kDemoPath; }
  const Direction& direction() const { return direction_; }
  const ExperimentConfig& config() const { return config_; }

  /// Reads a corpus file on a worker thread; emits corpusLoading, then corpusChanged or corpusFailed.
  /// A load already in progress is superseded (its result is dropped). The file opens in the
  /// direction last chosen for it (setEnglishIsSource), else into English, as a Tatoeba learner
  /// translates (German→English for deu.txt).
  void loadCorpus(const QString& path);
  bool isLoading() const;
  /// Replaces the corpus (already read). Keeps the direction's orientation (English first or
  /// not) and picks the other language from the new corpus.
  void setCorpus(std::shared_ptr<const Corpus> corpus, const QString& path);
  void loadDemoCorpus();

  /// Sets the direction; `englishIsSource` flips which side is the source. With `remember` the
  /// choice is kept in QSettings for the current corpus file (not for the demo corpus).
  void setEnglishIsSource(bool englishIsSource, bool remember = true);
  /// The direction remembered for a corpus file: English as the source or not (false, into
  /// English, when none was chosen).
  static bool rememberedEnglishIsSource(const QString& path);
  void setConfig(const ExperimentConfig& config);
  /// Applies "section.key=value" (as the CLI's --set). Returns false and fills `error` when the key
  /// or value is refused; the configuration is then unchanged.
  bool applySetting(const QString& assignment, QString* error = nullptr);
  /// Replaces the configuration by a preset, keeping the device, thread, precision and budget
  /// choices. Returns false (configuration unchanged, `error` naming the valid presets) for an
  /// unknown name.
  bool applyPreset(const QString& name, QString* error = nullptr);

  /// "Train for": train.budget_minutes of the configuration (0 = until stopped). Like the device it
  /// is kept when a preset is applied.
  double budgetMinutes() const { return config_.train.budget_minutes; }
  /// Sets the budget (clamped to 0 .. a year) and remembers it in QSettings for the next session.
  void setBudgetMinutes(double minutes);
  /// The budget remembered in QSettings (kDefaultBudgetMinutes when none).
  static double rememberedBudgetMinutes();

  /// The latest fit of the `auto` preset (ts/train/auto_fit.h), set by the Configuration panel; null
  /// before the first. A configuration with preset auto is such a fit plus the person's own edits.
  std::shared_ptr<const AutoFit> autoFit() const { return auto_fit_; }
  void setAutoFit(std::shared_ptr<const AutoFit> fit) { auto_fit_ = std::move(fit); }

  /// The run history database the app records into and shows.
  QString databasePath() const { return database_path_; }
  void setDatabasePath(const QString& path) { database_path_ = path; }
  /// Where new runs keep their checkpoints (a directory beside the database by default).
  QString runsDirectory() const;

  /// Recent corpus files (most recent first), kept in QSettings.
  QStringList recentFiles() const;

 Q_SIGNALS:
  void corpusLoading(const QString& path);
  void corpusChanged();
  void corpusFailed(const QString& path, const QString& message);
  void directionChanged();
  void configChanged();
  void recentFilesChanged();

 private:
  void rememberRecent(const QString& path);

  std::shared_ptr<const Corpus> corpus_;
  QString corpus_path_;
  Direction direction_;
  ExperimentConfig config_;
  std::shared_ptr<const AutoFit> auto_fit_;
  QString database_path_;
  QString loading_path_;
  int load_serial_ = 0;
  QList<QFutureWatcherBase*> pending_loads_;
};

/// Human-readable byte count ("1.4 MB").
QString format_bytes(double bytes);
/// Human-readable duration ("1 h 02 min", "3 min 05 s", "12 s").
QString format_duration(double seconds);
/// A time budget in minutes as "Train for" says it ("20 min", "1 h", "1 h 30 min", "7.5 min").
QString format_budget(double minutes);

}  // namespace ts::ui
