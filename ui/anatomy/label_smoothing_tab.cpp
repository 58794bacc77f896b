// SPDX-License-Identifier: GPL-3.0-or-later
// The "Label smoothing" tab of Model anatomy (see label_smoothing_tab.h).
#include "anatomy/label_smoothing_tab.h"

#include <vector>

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "anatomy/anatomy_util.h"
#include "ts/model/positional.h"
#include "ts/train/config.h"

namespace ts::ui {

using anatomy::fill_heatmap;
using anatomy::kPad;
using anatomy::make_heatmap;
using anatomy::note;
using anatomy::set_text_ticks;

QList<int> LabelSmoothingTab::smoothingTargets() { return {2, 1, 0, 3, 3}; }

LabelSmoothingTab::LabelSmoothingTab(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("smoothingTab"));
  auto* layout = new QVBoxLayout(this);
  auto* controls = new QHBoxLayout;
  smoothing_ = new QDoubleSpinBox(this);
  smoothing_->setObjectName(QStringLiteral("lsSmoothing"));
  smoothing_->setRange(0.0, 0.99);
  smoothing_->setDecimals(2);
  smoothing_->setSingleStep(0.05);
  smoothing_->setToolTip(tr("Label smoothing ε; follows train.label_smoothing of the configuration"));
  vocab_ = new QSpinBox(this);
  vocab_->setObjectName(QStringLiteral("lsVocab"));
  vocab_->setRange(4, 64);
  vocab_->setValue(8);
  vocab_->setToolTip(tr("Size of the toy vocabulary (columns)"));
  controls->addWidget(new QLabel(tr("Smoothing:"), this));
  controls->addWidget(smoothing_);
  controls->addWidget(new QLabel(tr("Vocabulary size:"), this));
  controls->addWidget(vocab_);
  controls->addStretch(1);
  layout->addLayout(controls);
  plot_ = new QCustomPlot(this);
  plot_->setObjectName(QStringLiteral("lsHeatmap"));
  map_ = make_heatmap(plot_, tr("Target probability"));
  plot_->xAxis->setLabel(tr("Token id"));
  plot_->yAxis->setLabel(tr("Example (reference token)"));
  layout->addWidget(plot_, 1);
  layout->addWidget(note(tr("The distribution the loss trains towards, as LibTorch's cross_entropy computes it: "
                            "ε/V on every token (pad included) and 1 − ε + ε/V on the reference. A reference equal "
                            "to the pad id (0) is ignored: its row is empty. (The Annotated Transformer spreads "
                            "ε/(V−2) and keeps pad at 0.)"),
                         this));
  connect(smoothing_, &QDoubleSpinBox::valueChanged, this, &LabelSmoothingTab::redraw);
  connect(vocab_, &QSpinBox::valueChanged, this, &LabelSmoothingTab::redraw);
}

void LabelSmoothingTab::followConfig(const ExperimentConfig& config) {
  {
    const QSignalBlocker blocker(smoothing_);  // setting it would redraw through its signal: redraw once
    smoothing_->setValue(config.train.label_smoothing);
  }
  redraw();
}

void LabelSmoothingTab::redraw() {
  const int vocab = vocab_->value();
  const double smoothing = smoothing_->value();
  const QList<int> targets = smoothingTargets();
  std::vector<float> table;
  QStringList rows;
  for (int t : targets) {
    const auto q = label_smoothing_distribution(vocab, t, kPad, smoothing);
    table.insert(table.end(), q.begin(), q.end());
    rows << (t == kPad ? tr("ref %1 (pad, ignored)").arg(t) : tr("ref %1").arg(t));
  }
  QStringList cols;
  for (int c = 0; c < vocab; ++c) cols << (c == kPad ? tr("0 pad") : QString::number(c));
  set_text_ticks(plot_->xAxis, cols);
  set_text_ticks(plot_->yAxis, rows);
  fill_heatmap(plot_, map_, table, static_cast<int>(targets.size()), vocab, QCPRange(0, 1));
}

}  // namespace ts::ui
