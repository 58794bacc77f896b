// SPDX-License-Identifier: GPL-3.0-or-later
#include "history/run_config_view.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <QCheckBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "history/history_util.h"
#include "history/run_table_model.h"
#include "shell/studio_state.h"
#include "widgets/bidi_delegate.h"

namespace ts::ui {

using history_util::metric_label;
using history_util::q;
using history_util::run_label;

namespace {

// A config value as a person reads it: strings without JSON quotes.
QString value_text(const nlohmann::json& j) { return j.is_string() ? q(j.get<std::string>()) : q(j.dump()); }

// {"a": {"b": 1}} -> {"a.b": "1"}, as `runs compare` does.
void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, QString>& out) {
  if (j.is_object() && !j.empty()) {
    for (const auto& item : j.items())
      flatten(item.value(), prefix.empty() ? item.key() : prefix + "." + item.key(), out);
  } else if (!prefix.empty()) {
    out[prefix] = value_text(j);
  }
}

void add_json_items(QTreeWidgetItem* parent, const nlohmann::json& j) {
  for (const auto& item : j.items()) {
    auto* child = new QTreeWidgetItem(parent, {q(item.key())});
    if (item.value().is_object())
      add_json_items(child, item.value());
    else
      child->setText(1, value_text(item.value()));
  }
}

QString bleu_text(const RunInfo& r) {
  return r.best_bleu ? QString::number(*r.best_bleu, 'f', 2) : QStringLiteral("–");
}

}  // namespace

RunConfigView::RunConfigView(QWidget* parent) : QWidget(parent) {
  auto* config_layout = new QVBoxLayout(this);
  config_layout->setContentsMargins(4, 4, 4, 4);
  auto* config_bar = new QHBoxLayout;
  note_ = new QLabel(this);
  note_->setObjectName(QStringLiteral("historyConfigNote"));
  note_->setWordWrap(true);
  all_ = new QCheckBox(tr("All settings"), this);
  all_->setObjectName(QStringLiteral("historyConfigAll"));
  all_->setToolTip(tr("With several runs selected, list every setting, not only those that differ"));
  config_bar->addWidget(note_, 1);
  config_bar->addWidget(all_);
  config_layout->addLayout(config_bar);
  tree_ = new QTreeWidget(this);
  tree_->setObjectName(QStringLiteral("historyConfig"));
  tree_->setItemDelegate(new BidiItemDelegate(tree_));  // e.g. an Arabic probe sentence, right to left
  tree_->setAlternatingRowColors(true);
  tree_->setUniformRowHeights(true);
  tree_->header()->setSectionResizeMode(QHeaderView::Interactive);
  config_layout->addWidget(tree_, 1);
  connect(all_, &QCheckBox::toggled, this, &RunConfigView::showAllToggled);
}

void RunConfigView::showRuns(const std::vector<RunInfo>& runs, const RunTableModel& model, const RunStore* store) {
  tree_->clear();
  all_->setVisible(runs.size() >= 2);
  if (runs.empty()) {
    tree_->setColumnCount(2);
    tree_->setHeaderLabels({tr("Setting"), tr("Value")});
    note_->setText(model.rowCount() ? tr("Select a run to see its configuration, or several to compare them.")
                                    : QString());
    return;
  }
  QFont bold = tree_->font();
  bold.setBold(true);

  if (runs.size() == 1) {
    const RunInfo& r = runs.front();
    tree_->setColumnCount(2);
    tree_->setHeaderLabels({tr("Setting"), run_label(r)});
    auto* run_item = new QTreeWidgetItem(tree_, {tr("run")});
    auto add = [run_item](const QString& key, const QString& value, const QString& tip = {}) {
      auto* item = new QTreeWidgetItem(run_item, {key, value});
      item->setToolTip(1, tip.isEmpty() ? value : tip);
      return item;
    };
    auto* status = add(tr("status"), QString::fromLatin1(run_status_name(r.status)) +
                                         (r.message.empty() ? QString() : QStringLiteral(" — ") + q(r.message)));
    status->setForeground(1, RunTableModel::statusColor(r.status));
    add(tr("corpus"), q(r.corpus_path));
    add(tr("pairs"), QString::number(r.corpus_pairs));
    if (!r.corpus_sha256.empty())
      add(tr("corpus SHA-256"), q(r.corpus_sha256).left(16) + QStringLiteral("…"), q(r.corpus_sha256));
    add(tr("direction"), q(r.direction));
    add(tr("preset"), q(r.preset));
    add(tr("steps"), QString::number(r.steps));
    add(tr("best BLEU"), bleu_text(r));
    add(tr("started"), RunTableModel::localTime(r.started_at, true));
    if (!r.ended_at.empty()) add(tr("ended"), RunTableModel::localTime(r.ended_at, true));
    add(tr("device"), q(r.device));
    add(tr("machine"), q(r.machine));
    add(tr("directory"), q(r.out_dir));
    if (!r.tags.empty()) add(tr("tags"), model.data(model.index(model.rowOf(r.id), RunTableModel::Tags)).toString());
    if (r.config.is_object()) {
      for (const auto& section : r.config.items()) {
        auto* item = new QTreeWidgetItem(tree_, {q(section.key())});
        if (section.value().is_object())
          add_json_items(item, section.value());
        else
          item->setText(1, value_text(section.value()));
      }
    }
    tree_->expandAll();
    tree_->resizeColumnToContents(0);
    note_->setText(tr("Full configuration of run #%1. Select several runs to compare them.").arg(r.id));
    return;
  }

  // Several runs: one column per run, the settings that differ (or all of them).
  QStringList headers{tr("Setting")};
  for (const auto& r : runs) headers << run_label(r);
  tree_->setColumnCount(headers.size());
  tree_->setHeaderLabels(headers);
  auto add_row = [&](QTreeWidgetItem* parent, const QString& key, const std::vector<QString>& values, bool differs) {
    QStringList texts{key};
    for (const auto& v : values) texts << v;
    auto* item = parent ? new QTreeWidgetItem(parent, texts) : new QTreeWidgetItem(tree_, texts);
    for (int c = 0; c < texts.size(); ++c) item->setToolTip(c, texts[c]);
    if (differs)
      for (int c = 0; c < texts.size(); ++c) item->setFont(c, bold);
    return item;
  };
  auto differs = [](const std::vector<QString>& values) {
    return std::any_of(values.begin(), values.end(), [&](const QString& v) { return v != values.front(); });
  };
  auto* summary = new QTreeWidgetItem(tree_, {tr("run")});
  auto summary_row = [&](const QString& key, auto value_of) {
    std::vector<QString> values;
    for (const auto& r : runs) values.push_back(value_of(r));
    add_row(summary, key, values, differs(values));
  };
  summary_row(tr("status"), [](const RunInfo& r) { return QString::fromLatin1(run_status_name(r.status)); });
  summary_row(tr("corpus"), [](const RunInfo& r) {
    return r.corpus_path == StudioState::kDemoPath ? QStringLiteral("<demo>") : QFileInfo(q(r.corpus_path)).fileName();
  });
  summary_row(tr("direction"), [](const RunInfo& r) { return q(r.direction); });
  summary_row(tr("preset"), [](const RunInfo& r) { return q(r.preset); });
  summary_row(tr("steps"), [](const RunInfo& r) { return QString::number(r.steps); });
  summary_row(tr("best BLEU"), [](const RunInfo& r) { return bleu_text(r); });
  for (const char* m : {"chrf", "dev_loss"}) {
    summary_row(tr("last %1").arg(metric_label(QLatin1String(m))), [store, m](const RunInfo& r) {
      try {
        const auto points = store ? store->metric(r.id, m) : std::vector<MetricPoint>{};
        return points.empty() ? QStringLiteral("–") : QString::number(points.back().value, 'f', 3);
      } catch (const std::exception&) {
        return QStringLiteral("?");
      }
    });
  }
  summary_row(tr("device"), [](const RunInfo& r) { return q(r.device); });

  std::vector<std::map<std::string, QString>> flat(runs.size());
  std::set<std::string> keys;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    flatten(runs[i].config, "", flat[i]);
    for (const auto& kv : flat[i]) keys.insert(kv.first);
  }
  auto* config = new QTreeWidgetItem(tree_, {tr("configuration")});
  int differing = 0;
  for (const auto& key : keys) {
    std::vector<QString> values;
    for (const auto& f : flat) {
      const auto it = f.find(key);
      values.push_back(it == f.end() ? QStringLiteral("–") : it->second);
    }
    const bool d = differs(values);
    differing += d ? 1 : 0;
    if (d || all_->isChecked()) add_row(config, q(key), values, d);
  }
  if (config->childCount() == 0) new QTreeWidgetItem(config, {tr("(identical)")});
  tree_->expandAll();
  tree_->resizeColumnToContents(0);
  note_->setText(differing == 0   ? tr("The %1 selected runs have the same configuration.").arg(runs.size())
                 : differing == 1 ? tr("1 setting differs (in bold).")
                                  : tr("%1 settings differ (in bold).").arg(differing));
}

}  // namespace ts::ui
