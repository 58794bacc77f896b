// SPDX-License-Identifier: GPL-3.0-or-later
// The Configuration panel's problems (part of ConfigPanel, config_panel.h): ExperimentConfig's own
// checks plus those that need this machine or the corpus, and advice that does not block training,
// listed live in a box; the fields a problem names are marked and their sections opened.
#include "configuration/config_panel.h"

#include <tuple>

#include <QFrame>
#include <QLabel>
#include <QPalette>
#include <QRegularExpression>
#include <QVBoxLayout>

#include "configuration/config_fields.h"
#include "configuration/config_panel_util.h"
#include "services/device_info.h"
#include "shell/studio_state.h"
#include "ts/text/split.h"
#include "ts/text/tokenizer.h"

namespace ts::ui {

using namespace config_util;

QFrame* ConfigPanel::buildProblemsBox() {
  problems_box_ = new QFrame(this);
  problems_box_->setObjectName(QStringLiteral("problemsBox"));
  problems_box_->setFrameShape(QFrame::StyledPanel);
  problems_box_->setAutoFillBackground(true);
  auto* problems_layout = new QVBoxLayout(problems_box_);
  problems_layout->setContentsMargins(8, 6, 8, 6);
  problems_label_ = small_label(problems_box_, QStringLiteral("problemsLabel"));
  problems_label_->setTextFormat(Qt::RichText);
  problems_layout->addWidget(problems_label_);
  return problems_box_;
}

void ConfigPanel::refreshProblems() {
  const ExperimentConfig& c = state_->config();
  QStringList problems;
  for (const auto& p : c.problems()) problems << QString::fromStdString(p);

  // Checks core cannot make without the machine or the corpus.
  if (c.train.device == DeviceChoice::kCuda && !cuda_available())
    problems << tr("train.device is cuda, but no CUDA GPU is available on this machine (choose auto or cpu)");
  if (!chinese_conversion_available()) {
    if (c.data.src_tokenizer.chinese != ChineseScript::kNone)
      problems << tr("data.src_tokenizer.chinese %1 needs OpenCC, which this build lacks (choose none)")
                      .arg(QString::fromLatin1(chinese_script_name(c.data.src_tokenizer.chinese)));
    if (!c.data.shared_vocab && c.data.tgt_tokenizer.chinese != ChineseScript::kNone)
      problems << tr("data.tgt_tokenizer.chinese %1 needs OpenCC, which this build lacks (choose none)")
                      .arg(QString::fromLatin1(chinese_script_name(c.data.tgt_tokenizer.chinese)));
  }
  const auto corpus = state_->corpus();
  if (corpus && c.data.dev >= 0 && c.data.test >= 0) {
    const std::size_t total = corpus->pairs.size();
    std::size_t dev = 0, test = 0;
    bool ok = true;
    for (const auto& [key, value, out] :
         {std::tuple{"data.dev", c.data.dev, &dev}, std::tuple{"data.test", c.data.test, &test}}) {
      try {
        *out = resolve_split_size(value, total);
      } catch (const std::exception&) {
        problems << tr("%1 (%2): a value of 1 or more is a number of pairs and must be whole")
                        .arg(QLatin1String(key), number(value));
        ok = false;
      }
    }
    if (ok && dev + test >= total)
      problems
          << tr("data.dev and data.test hold out %1 + %2 pairs: none of the corpus's %3 pairs is left for training")
                 .arg(count(dev), count(test), count(static_cast<std::int64_t>(total)));
  }

  // Advice that does not block training.
  QStringList notes;
  if ((c.train.schedule == LrSchedule::kLinear || c.train.schedule == LrSchedule::kCosine) && c.train.max_steps <= 0 &&
      c.train.budget_minutes <= 0)
    notes << tr("train.schedule %1 decays over train.max_steps or to the deadline of a time budget "
                "(\u201cTrain for\u201d); with neither the learning rate stays constant after warmup.")
                 .arg(QString::fromLatin1(lr_schedule_name(c.train.schedule)));
  if (c.decode.mode == DecodeMode::kBeam && c.decode.nbest > c.decode.beam)
    notes << tr("decode.nbest (%1) exceeds decode.beam (%2): beam search returns at most %2 translations.")
                 .arg(c.decode.nbest)
                 .arg(c.decode.beam);
  if (c.train.batch_tokens > 0 && c.train.batch_tokens < c.data.max_len)
    notes << tr("train.batch_tokens (%1) is below data.max_len (%2): the longest sentences fill a batch alone.")
                 .arg(c.train.batch_tokens)
                 .arg(c.data.max_len);

  // Which fields the messages name.
  QMap<QString, QStringList> flagged;
  for (const auto& e : editors_) {
    const QRegularExpression re(QStringLiteral("(?<![\\w.])%1(?!\\w)").arg(QRegularExpression::escape(e.field->key)));
    for (const QString& problem : problems)
      if (problem.contains(re)) flagged[e.field->key] << problem;
  }

  const bool had = !problems_.isEmpty();
  // Sections that newly hold a problem open, so the flagged field can be seen.
  for (auto it = flagged.cbegin(); it != flagged.cend(); ++it)
    if (!flagged_.contains(it.key()))
      if (const ConfigField* f = find_config_field(it.key())) setSectionExpanded(f->group, true);
  problems_ = problems;
  notes_ = notes;
  flagged_ = flagged;

  const QPalette p = palette();
  const QColor warn = warning_colour(p);
  for (auto& e : editors_) {
    const bool is_flagged = flagged.contains(e.field->key);
    e.label->setText(is_flagged ? QStringLiteral("\u26a0 ") + e.field->label : e.field->label);
    if (is_flagged)
      set_text_colour(e.label, warn);
    else
      e.label->setPalette(QPalette());
  }

  QString html;
  if (problems.isEmpty()) {
    html = QStringLiteral("<span style='color:%1'>\u2714 %2</span>")
               .arg(ok_colour(p).name(), tr("No problems: this configuration can be trained.").toHtmlEscaped());
  } else {
    html = QStringLiteral(
               "<b style='color:%1'>\u26a0 %2</b><ul style='margin-top:2px; margin-bottom:0px; -qt-list-indent:1'>")
               .arg(warn.name(),
                    (problems.size() == 1
                         ? tr("1 problem: training will not start until it is fixed")
                         : tr("%1 problems: training will not start until they are fixed").arg(problems.size()))
                        .toHtmlEscaped());
    for (const QString& item : problems) html += QStringLiteral("<li>%1</li>").arg(item.toHtmlEscaped());
    html += QStringLiteral("</ul>");
  }
  if (!notes.isEmpty()) {
    html += QStringLiteral("<div style='color:%1'>").arg(muted_colour(p).name());
    for (const QString& note : notes) html += QStringLiteral("<br>%1 %2").arg(tr("Note:"), note.toHtmlEscaped());
    html += QStringLiteral("</div>");
  }
  problems_label_->setText(html);
  QPalette box = problems_box_->palette();
  box.setColor(QPalette::Window,
               problems.isEmpty() ? p.color(QPalette::Window) : blend(p.color(QPalette::Window), warn, 0.12));
  problems_box_->setPalette(box);

  if (had != !problems.isEmpty()) Q_EMIT problemsChanged(!problems.isEmpty());
}

}  // namespace ts::ui
