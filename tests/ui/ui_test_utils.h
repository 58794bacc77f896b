// Helpers for the QTest suites: fixture corpora written to a temporary directory and waiting on
// conditions while the event loop runs.
#pragma once

#include <functional>

#include <QAbstractButton>
#include <QApplication>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QMessageBox>
#include <QString>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

namespace ts::ui::test {

/// A small German–English corpus in the Anki format: `pairs` valid lines, plus `bad` malformed
/// ones (no tab) placed after the first pair. The file name makes the language German.
inline QString write_fixture_corpus(const QTemporaryDir& dir, int pairs = 40, int bad = 0,
                                    const QString& name = QStringLiteral("deu.txt")) {
  static const char* en[] = {"I see a cat.", "The dog runs.", "We are here.", "She reads a book.", "He is tall.",
                             "It is cold.", "They eat bread.", "You sing well.", "The house is big.", "I like tea."};
  static const char* de[] = {"Ich sehe eine Katze.", "Der Hund rennt.", "Wir sind hier.", "Sie liest ein Buch.",
                             "Er ist groß.", "Es ist kalt.", "Sie essen Brot.", "Du singst gut.",
                             "Das Haus ist groß.", "Ich mag Tee."};
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

/// Runs the event loop until `condition` holds or `ms` pass; returns whether it holds.
inline bool wait_until(const std::function<bool()>& condition, int ms = 10000) {
  QElapsedTimer clock;
  clock.start();
  while (!condition()) {
    if (clock.elapsed() > ms) return false;
    QTest::qWait(10);
  }
  return true;
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

}  // namespace ts::ui::test
