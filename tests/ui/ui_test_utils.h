// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers for the QTest suites: fixture corpora written to a temporary directory and waiting on
// conditions while the event loop runs.
#pragma once

#include <algorithm>
#include <functional>

#include <QAbstractButton>
#include <QApplication>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QRect>
#include <QMessageBox>
#include <QSignalSpy>
#include <QString>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

namespace ts::ui::test {

/// A small German–English corpus in the Anki format: `pairs` valid lines, plus `bad` malformed
/// ones (no tab) placed after the first pair. The file name makes the language German.
inline QString write_fixture_corpus(const QTemporaryDir& dir, int pairs = 40, int bad = 0,
                                    const QString& name = QStringLiteral("deu.txt")) {
  static const char* en[] = {"I see a cat.", "The dog runs.",   "We are here.",   "She reads a book.", "He is tall.",
                             "It is cold.",  "They eat bread.", "You sing well.", "The house is big.", "I like tea."};
  static const char* de[] = {"Ich sehe eine Katze.", "Der Hund rennt.", "Wir sind hier.",  "Sie liest ein Buch.",
                             "Er ist groß.",         "Es ist kalt.",    "Sie essen Brot.", "Du singst gut.",
                             "Das Haus ist groß.",   "Ich mag Tee."};
  const QString path = QDir(dir.path()).filePath(name);
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return {};
  for (int i = 0; i < pairs; ++i) {
    file.write(QStringLiteral("%1\t%2\tattribution column of fixture line %3\n")
                   .arg(QString::fromUtf8(en[i % 10]), QString::fromUtf8(de[i % 10]))
                   .arg(i + 1)
                   .toUtf8());
    if (i == 0)
      for (int b = 0; b < bad; ++b) file.write("this line has no tab separator\n");
  }
  return path;
}

/// How long a wait may last before the test calls it a hang. Tests wait for events, never for an
/// amount of time: this bound only turns a hang into a failure, and is far above what any event
/// takes on a slow machine, one pinned to a single core, or one beside a busy process (CTest's own
/// --timeout of 900 s per test binary stays above it). `TS_TEST_HANG_MS` changes it.
inline int hang_guard_ms() {
  static const int ms = [] {
    const QByteArray env = qgetenv("TS_TEST_HANG_MS");
    bool ok = false;
    const int v = env.toInt(&ok);
    return ok && v > 0 ? v : 300000;
  }();
  return ms;
}

/// Runs the event loop until `condition` holds; returns false only when it still does not hold
/// after `ms` (at least hang_guard_ms(): a stated `ms` documents what the wait usually takes, and
/// is never a deadline that a slow machine could miss).
inline bool wait_until(const std::function<bool()>& condition, int ms = 0) {
  const qint64 limit = std::max(ms, hang_guard_ms());
  QElapsedTimer clock;
  clock.start();
  while (!condition()) {
    if (clock.elapsed() > limit) return false;
    QTest::qWait(10);
  }
  return true;
}

/// Runs the event loop until `spy` records one more emission than it holds now (QSignalSpy::wait's
/// meaning), with the hang guard above instead of a deadline.
inline bool wait_for_signal(QSignalSpy& spy) {
  const auto before = spy.count();
  return wait_until([&] { return spy.count() > before; });
}

/// The child of `parent` named `name`, with a warning naming it when there is none.
template <class T>
T* find_child(const QObject* parent, const char* name) {
  auto* w = parent->findChild<T*>(QString::fromLatin1(name));
  if (!w) qWarning("no widget named %s", name);
  return w;
}

/// Answers the next message box with `button` (closing during training asks a question).
inline void answer_next_message_box(QMessageBox::StandardButton button) {
  QTimer::singleShot(50, [button] {
    for (auto* w : QApplication::topLevelWidgets())
      if (auto* box = qobject_cast<QMessageBox*>(w); box && box->isVisible()) {
        box->button(button)->click();
        return;
      }
    answer_next_message_box(button);  // not shown yet
  });
}

/// The mean x of the dark pixels in a rectangle of a painted image (-1 when there are none): where
/// a cell's text stands, to tell left-aligned from right-aligned.
inline double ink_centre(const QImage& image, const QRect& band) {
  double sum = 0;
  int count = 0;
  for (int y = band.top(); y <= band.bottom(); ++y)
    for (int x = band.left(); x <= band.right(); ++x)
      if (qGray(image.pixel(x, y)) < 128) {
        sum += x;
        ++count;
      }
  return count > 0 ? sum / count : -1;
}

}  // namespace ts::ui::test
