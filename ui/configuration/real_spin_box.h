// SPDX-License-Identifier: GPL-3.0-or-later
// The Configuration panel's editor for real-valued fields: a spin box that shows numbers as %g
// (1e-09 as readily as 1000) and steps linearly, by factors, or in fractions below 1 and counts
// above (data.dev / data.test).
#pragma once

#include <QDoubleSpinBox>

#include "configuration/config_fields.h"

namespace ts::ui {

class RealSpinBox : public QDoubleSpinBox {
 public:
  RealSpinBox(StepMode mode, double step, QWidget* parent);

  QString textFromValue(double value) const override;
  double valueFromText(const QString& text) const override;
  QValidator::State validate(QString& input, int&) const override;
  void fixup(QString& input) const override;
  void stepBy(int steps) override;

 private:
  double parse(const QString& text, bool* ok) const;
  StepMode mode_;
  double step_;
};

}  // namespace ts::ui
