// SPDX-License-Identifier: GPL-3.0-or-later
// Small helpers shared by the Configuration panel's files (internal to ui/configuration/): the
// colours of errors, warnings and muted text, number formatting, and the panel's wrapped labels.
#pragma once

#include <cstdint>

#include <QColor>
#include <QLabel>
#include <QLocale>
#include <QPalette>
#include <QString>
#include <QWidget>

namespace ts::ui::config_util {

// Colours that read on light and dark palettes alike: the hue is fixed, the lightness follows the window.
inline bool is_dark(const QPalette& p) { return p.color(QPalette::Window).lightness() < 128; }
inline QColor error_colour(const QPalette& p) {
  return is_dark(p) ? QColor(0xff, 0x8a, 0x80) : QColor(0xc6, 0x28, 0x28);
}
inline QColor warning_colour(const QPalette& p) {
  return is_dark(p) ? QColor(0xff, 0xc1, 0x4d) : QColor(0x9a, 0x56, 0x00);
}
inline QColor ok_colour(const QPalette& p) { return is_dark(p) ? QColor(0x81, 0xc7, 0x84) : QColor(0x2e, 0x7d, 0x32); }
inline QColor blend(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(a.redF() * (1 - t) + b.redF() * t, a.greenF() * (1 - t) + b.greenF() * t,
                          a.blueF() * (1 - t) + b.blueF() * t);
}
inline QColor muted_colour(const QPalette& p) {
  return blend(p.color(QPalette::WindowText), p.color(QPalette::Window), 0.4);
}

inline void set_text_colour(QWidget* w, const QColor& c) {
  QPalette p = w->palette();
  p.setColor(QPalette::WindowText, c);
  p.setColor(QPalette::Text, c);
  p.setColor(QPalette::ButtonText, c);
  w->setPalette(p);
}

inline QString number(double v) { return QLocale().toString(v, 'g', 10); }
inline QString count(std::int64_t v) { return QLocale().toString(static_cast<qlonglong>(v)); }

// A word-wrapped, selectable label with an object name (the tests and the panel find it by name).
inline QLabel* small_label(QWidget* parent, const QString& object_name) {
  auto* label = new QLabel(parent);
  label->setObjectName(object_name);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return label;
}

}  // namespace ts::ui::config_util
