// SPDX-License-Identifier: GPL-3.0-or-later
// The "Masks" tab of Model anatomy (see masks_tab.h).
#include "anatomy/masks_tab.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "anatomy/anatomy_util.h"
#include "shell/studio_state.h"
#include "ts/model/positional.h"
#include "ts/text/corpus.h"

namespace ts::ui {

using anatomy::fill_heatmap;
using anatomy::kPad;
using anatomy::make_heatmap;
using anatomy::note;
using anatomy::set_text_ticks;

MasksTab::MasksTab(const StudioState* state, QWidget* parent) : QWidget(parent), state_(state) {
  auto* layout = new QVBoxLayout(this);
  auto* controls = new QHBoxLayout;
  length_ = new QSpinBox(this);
  length_->setObjectName(QStringLiteral("maskLength"));
  length_->setRange(1, 64);
  length_->setValue(10);
  length_->setToolTip(tr("Target length of the subsequent (causal) mask"));
  controls->addWidget(new QLabel(tr("Causal mask length:"), this));
  controls->addWidget(length_);
  controls->addStretch(1);
  layout->addLayout(controls);
  causal_plot_ = new QCustomPlot(this);
  causal_plot_->setObjectName(QStringLiteral("causalMaskPlot"));
  causal_map_ = make_heatmap(causal_plot_, tr("May attend (1) / hidden (0)"));
  causal_plot_->xAxis->setLabel(tr("Key position"));
  causal_plot_->yAxis->setLabel(tr("Query position"));
  causal_plot_->setMinimumHeight(260);
  layout->addWidget(causal_plot_, 1);
  layout->addWidget(note(tr("Subsequent mask: position i of the decoder sees positions 0…i only, so it cannot peek "
                            "at the word it has to predict."),
                         this));
  padding_plot_ = new QCustomPlot(this);
  padding_plot_->setObjectName(QStringLiteral("paddingMaskPlot"));
  padding_map_ = make_heatmap(padding_plot_, tr("Token (1) / pad (0)"));
  padding_plot_->xAxis->setLabel(tr("Position"));
  padding_plot_->yAxis->setLabel(tr("Sentence of the batch"));
  padding_plot_->setMinimumHeight(200);
  layout->addWidget(padding_plot_, 1);
  layout->addWidget(note(tr("Padding mask of a batch of three source sentences of the corpus (split at spaces): "
                            "shorter sentences are padded to the longest, and no query attends to a pad."),
                         this));
  connect(length_, &QSpinBox::valueChanged, this, &MasksTab::redraw);
}

void MasksTab::redraw() {
  const int n = length_->value();
  fill_heatmap(causal_plot_, causal_map_, causal_mask_values(n), n, n, QCPRange(0, 1));

  // Three source sentences of different lengths (in words) from the start of the corpus; a fixed
  // batch when the corpus has none such.
  QStringList sentences;
  std::set<int> lengths;
  if (auto corpus = state_->corpus()) {
    const auto pairs = oriented_pairs(*corpus, state_->direction());
    for (std::size_t i = 0; i < pairs.size() && i < 500 && sentences.size() < 3; ++i) {
      const QString s = QString::fromStdString(pairs[i].src).simplified();
      const int words = static_cast<int>(s.split(QLatin1Char(' '), Qt::SkipEmptyParts).size());
      if (words >= 1 && words <= 24 && lengths.insert(words).second) sentences << s;
    }
  }
  if (sentences.size() < 3)
    sentences = {QStringLiteral("I see a cat ."), QStringLiteral("The dog runs ."),
                 QStringLiteral("We are here today with friends .")};
  std::vector<std::vector<std::int64_t>> batch;
  QStringList labels;
  for (const QString& s : sentences) {
    const QStringList words = s.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    std::vector<std::int64_t> ids;
    for (int w = 0; w < words.size(); ++w) ids.push_back(w + 4);  // any non-pad id: only pads matter here
    batch.push_back(ids);
    labels << (s.size() > 28 ? s.left(27) + QChar(0x2026) : s);
  }
  std::size_t width = 0;
  for (const auto& row : batch) width = std::max(width, row.size());
  for (auto& row : batch) row.resize(width, kPad);  // what the batcher does
  set_text_ticks(padding_plot_->yAxis, labels);
  fill_heatmap(padding_plot_, padding_map_, padding_mask_values(batch, kPad), static_cast<int>(batch.size()),
               static_cast<int>(width), QCPRange(0, 1));
}

}  // namespace ts::ui
