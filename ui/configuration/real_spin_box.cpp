// SPDX-License-Identifier: GPL-3.0-or-later
// RealSpinBox: %g display, parsing in the locale or C notation, and the three step modes.
#include "configuration/real_spin_box.h"

#include <algorithm>
#include <cmath>

#include <QLocale>
#include <QRegularExpression>

namespace ts::ui {

RealSpinBox::RealSpinBox(StepMode mode, double step, QWidget* parent)
    : QDoubleSpinBox(parent), mode_(mode), step_(step) {
  setDecimals(15);  // values are rounded to this many decimals: keep 1e-12 intact
  setSingleStep(mode == StepMode::Linear ? step : 1);
}

QString RealSpinBox::textFromValue(double value) const { return locale().toString(value, 'g', 10); }

double RealSpinBox::valueFromText(const QString& text) const {
  if (!specialValueText().isEmpty() && text.trimmed() == specialValueText()) return minimum();
  bool ok = false;
  const double v = parse(text, &ok);
  return ok ? v : value();
}

QValidator::State RealSpinBox::validate(QString& input, int&) const {
  const QString t = input.trimmed();
  if (!specialValueText().isEmpty() && t == specialValueText()) return QValidator::Acceptable;
  if (t.isEmpty()) return QValidator::Intermediate;
  bool ok = false;
  const double v = parse(t, &ok);
  if (ok) return v >= minimum() && v <= maximum() ? QValidator::Acceptable : QValidator::Intermediate;
  static const QRegularExpression partial(QStringLiteral("^[0-9eE+\\-.,' \u00a0\u202f]*$"));
  return partial.match(t).hasMatch() ? QValidator::Intermediate : QValidator::Invalid;
}

void RealSpinBox::fixup(QString& input) const { input = textFromValue(value()); }

void RealSpinBox::stepBy(int steps) {
  double v = value();
  switch (mode_) {
    case StepMode::Linear:
      QDoubleSpinBox::stepBy(steps);
      return;
    case StepMode::Multiply:
      if (v <= 0) v = minimum() > 0 ? minimum() : 1;
      v *= std::pow(step_, steps);
      // Round to 3 significant digits so repeated steps stay readable (1e-3 * 2^3 = 0.008).
      if (v > 0) {
        const double scale = std::pow(10.0, std::floor(std::log10(v)) - 2);
        v = std::round(v / scale) * scale;
      }
      break;
    case StepMode::FractionOrCount:
      if (v < 1) {
        v += 0.05 * steps;
        if (v > 0.9501) v = 100;
      } else {
        v += 100.0 * steps;
        if (v < 1) v = 0.95;
      }
      v = std::round(v * 1000) / 1000;
      break;
  }
  setValue(std::clamp(v, minimum(), maximum()));
}

double RealSpinBox::parse(const QString& text, bool* ok) const {
  double v = locale().toDouble(text.trimmed(), ok);
  if (!*ok) v = QLocale::c().toDouble(text.trimmed(), ok);
  return v;
}

}  // namespace ts::ui
