// SPDX-License-Identifier: GPL-3.0-or-later
// Attention over training: a probe sentence (train.probe) is translated by the model at every
// validation and its cross-attention kept. This panel collects those frames (live from the training
// controller, or from a past run in the history) and replays them with a slider, so one can watch
// the alignment between the sentence and its translation emerge as the model learns. A small chart
// follows two alignment statistics over the steps: sharpness (the mean of each output token's
// largest weight) and the normalised entropy of the attention rows.
//
// probe_panel.cpp builds it and holds the frames, the view and the replay; the probe sentence and
// status line are in probe_panel_sentence.cpp, the frame data (parsing, matrices, statistics) in
// probe_panel_frames.cpp, loading a past run and the JSON export in probe_panel_io.cpp, and the
// chart is ProbeAlignmentChart.
#pragma once

#include <vector>

#include <QFutureWatcher>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include <nlohmann/json.hpp>

#include "services/training_controller.h"  // Q_DECLARE_METATYPE(ts::ValidationResult), before moc sees the slot
#include "ts/text/corpus.h"
#include "ts/train/config.h"
#include "ts/train/events.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;
class QStackedWidget;
class QTimer;

namespace ts::ui {

class AttentionHeatmap;
class ProbeAlignmentChart;
class StudioState;

class ProbePanel : public QWidget {
  Q_OBJECT
 public:
  /// The probe's cross-attention at one validation.
  struct Frame {
    qint64 step = 0;
    QString source, text;
    QStringList source_tokens, target_tokens;
    int layers = 0, heads = 0, rows = 0, columns = 0;
    std::vector<float> cross;  // [layer][head][row][column], row-major; missing entries are 0
    nlohmann::json probe;      // as received, exported as is
    double weight(int layer, int head, int row, int column) const {
      return cross[((static_cast<std::size_t>(layer) * heads + head) * rows + row) * columns + column];
    }
  };

  /// Frames read from the run store off the GUI thread.
  struct LoadResult {
    qint64 run_id = 0;
    QVector<Frame> frames;
    QString error;
  };

  ProbePanel(StudioState* state, TrainingController* controller, QWidget* parent = nullptr);
  ~ProbePanel() override;

  /// Reads a probe JSON ({"source", "text", "source_tokens", "target_tokens", "cross"}). Returns
  /// false, with the reason, when it is not an object or has no cross-attention.
  static bool parseFrame(const nlohmann::json& probe, qint64 step, Frame* frame, QString* error = nullptr);
  /// The [target][source] weights of one layer and head; head -1 averages the heads.
  static QVector<QVector<double>> matrix(const Frame& frame, int layer, int head);
  /// Mean over the rows of each row's largest weight (1: every output token looks at one input).
  static double sharpness(const QVector<QVector<double>>& m);
  /// Mean over the rows of the row's entropy divided by log(columns) (0: one-hot, 1: uniform).
  static double normalizedEntropy(const QVector<QVector<double>>& m);
  /// A source sentence of 6 to 12 words (CJK: characters counted as two thirds of a word) from
  /// the dev split that training will use, the same one every time; the closest length when none
  /// fits. Empty for an empty corpus.
  static QString pickProbeSentence(const Corpus& corpus, const Direction& direction, const DataConfig& data);
  /// {"frames": [{"step", "source", "text", "source_tokens", "target_tokens", "cross"}, ...]}.
  static nlohmann::json framesJson(const QVector<Frame>& frames);
  /// Writes framesJson(frames) to `path`. Returns false and fills `error` on failure.
  static bool writeFrames(const QVector<Frame>& frames, const QString& path, QString* error = nullptr);

  /// Replaces the frames by those a past run recorded (read on a worker thread): `runLoaded` or
  /// `loadFailed` follows.
  void loadRun(const QString& db_path, qint64 run_id);
  bool isLoading() const;

  const QVector<Frame>& frames() const { return frames_; }
  /// Index of the frame shown (-1 when none).
  int currentFrame() const;
  void setCurrentFrame(int index);
  /// Layer shown (0-based) and head (-1 = average of heads).
  int layer() const;
  int head() const;
  bool isPlaying() const;
  /// The chart's marker position (the step of the frame shown).
  double markerStep() const;
  bool exportFrames(const QString& path, QString* error = nullptr) const { return writeFrames(frames_, path, error); }

 public Q_SLOTS:
  /// Adds the probe of a validation (ignored when it has none); frames stay ordered by step and a
  /// step seen again replaces its frame.
  void addValidation(const ts::ValidationResult& result);
  void clearFrames();
  void play();
  void pause();
  void togglePlay();
  /// Fills the probe sentence with pickProbeSentence() for the current corpus and applies it.
  void pickDevSentence();

 Q_SIGNALS:
  void framesChanged(int count);
  void currentFrameChanged(int index);
  void runLoaded(qint64 run_id, int frames);
  void loadFailed(const QString& message);

 private:
  void applyProbe();
  void followConfig();
  void setFrames(QVector<Frame> frames, int current);
  void updateCombos();
  void showFrame();
  void updateChart();
  void updateStatus();
  void updateEnabled();
  void advance();
  void onRunLoaded();
  void exportClicked();

  StudioState* state_;
  TrainingController* controller_;
  QVector<Frame> frames_;
  QString running_probe_;  // the probe of the run in progress (a change applies to the next run)
  QString replay_note_;    // what is shown when the frames come from a past run (loadRun)
  bool running_ = false;
  QString empty_text_;

  QLineEdit* sentence_ = nullptr;
  QPushButton* pick_ = nullptr;
  QLabel* status_ = nullptr;
  QStackedWidget* stack_ = nullptr;
  QLabel* empty_ = nullptr;
  QPushButton* play_ = nullptr;
  QSlider* slider_ = nullptr;
  QLabel* step_ = nullptr;
  QComboBox* layer_ = nullptr;
  QComboBox* head_ = nullptr;
  QPushButton* export_ = nullptr;
  AttentionHeatmap* heatmap_ = nullptr;
  ProbeAlignmentChart* chart_ = nullptr;
  QTimer* timer_ = nullptr;
  QFutureWatcher<LoadResult>* load_watcher_ = nullptr;
};

}  // namespace ts::ui
