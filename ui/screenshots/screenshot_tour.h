// SPDX-License-Identifier: GPL-3.0-or-later
// A tour of views saved as PNGs: each stop sets a view up (raises a panel, picks a tab), lets the
// event loop settle for a while (asynchronous work such as model tables and layouts lands) and grabs
// the window. It drives the windows from outside, through their public interface, and never runs a
// nested event loop. Used by the screenshot tool (app/screenshots) and its test; the desktop app
// does not link it (library ts_ui_screenshots).
#pragma once

#include <functional>
#include <vector>

#include <QObject>
#include <QPointer>
#include <QString>
#include <QWidget>

namespace ts::ui {

class MainWindow;
class LmWindow;

class ScreenshotTour : public QObject {
  Q_OBJECT
 public:
  /// How long each stop lets the event loop run before the grab, unless it says otherwise.
  static constexpr int kSettleMs = 400;

  /// Grabs `window` into `directory` (created when missing).
  ScreenshotTour(QWidget* window, QString directory, QObject* parent = nullptr);

  /// Adds a stop: `prepare` runs, then after `settle_ms` the window is saved as `name`.png. An empty
  /// name only prepares (to put a view back as it was).
  void add(const QString& name, std::function<void()> prepare, int settle_ms = kSettleMs);
  /// Runs the stops in order; ends with finished().
  void start();
  /// The files written so far, in order.
  const QStringList& written() const { return written_; }

 Q_SIGNALS:
  /// `error` is empty when every stop was saved; else it names the file that could not be written
  /// (or the window that went away) and the tour stopped there.
  void finished(const QString& error);

 private:
  struct Stop {
    QString name;
    std::function<void()> prepare;
    int settle_ms;
  };
  void next();

  QPointer<QWidget> window_;
  QString directory_;
  std::vector<Stop> stops_;
  std::size_t index_ = 0;
  QStringList written_;
};

/// The main window's stops: every panel raised in turn, then the beam tree's ranked layout, Compare's
/// confidence tab (when a comparison is shown), the decoder's self-attention and every tab of the
/// model anatomy. File names as in docs/screenshots.
void add_main_window_views(ScreenshotTour& tour, MainWindow& window);

/// The language-model window's stops: lm-generate (chart and generated text) and lm-attention.
void add_language_model_views(ScreenshotTour& tour, LmWindow& window);

}  // namespace ts::ui
