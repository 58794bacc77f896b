// SPDX-License-Identifier: GPL-3.0-or-later
// The Configuration panel's form of fields (part of ConfigPanel, config_panel.h): one editor per
// row of config_fields(), in collapsible sections whose headers sum them up; an edit applied to the
// shared state or, refused, the reason shown next to the field; the derived hints beside the fields.
#include "configuration/config_panel.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <QAbstractSpinBox>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFontMetrics>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QRegularExpression>
#include <QRegularExpressionValidator>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QToolButton>
#include <QVBoxLayout>

#include "configuration/config_fields.h"
#include "configuration/config_panel_util.h"
#include "configuration/real_spin_box.h"
#include "configuration/vocabulary_counts.h"
#include "widgets/eliding_tool_button.h"
#include "services/device_info.h"
#include "shell/studio_state.h"
#include "ts/text/split.h"
#include "ts/text/tokenizer.h"

namespace ts::ui {

using namespace config_util;

// ------------------------------------------------------------------------------------------ build

QScrollArea* ConfigPanel::buildFields() {
  scroll_ = new QScrollArea(this);
  scroll_->setObjectName(QStringLiteral("fieldsScroll"));
  scroll_->setWidgetResizable(true);
  scroll_->setFrameShape(QFrame::NoFrame);
  auto* fields = new QWidget(scroll_);
  auto* fields_layout = new QVBoxLayout(fields);
  fields_layout->setContentsMargins(0, 0, 4, 0);
  fields_layout->setSpacing(2);
  editors_.reserve(config_fields().size());
  for (const QString& group : config_groups()) fields_layout->addWidget(buildSection(group));
  fields_layout->addStretch(1);
  // One label column width for every section, so the editors line up down the whole form; room
  // is left for the bold (changed) and flagged forms of the labels.
  int label_width = 0;
  for (const auto& e : editors_) {
    QFont f = e.label->font();
    f.setBold(true);
    label_width = std::max(label_width, QFontMetrics(f).horizontalAdvance(QStringLiteral("\u26a0 ") + e.field->label));
  }
  for (const auto& section : sections_)
    if (auto* grid = qobject_cast<QGridLayout*>(section.body->layout()))
      grid->setColumnMinimumWidth(0, label_width + 4);
  scroll_->setWidget(fields);
  return scroll_;
}

QWidget* ConfigPanel::buildSection(const QString& group) {
  auto* container = new QWidget(this);
  auto* outer = new QVBoxLayout(container);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->setSpacing(0);

  Section section;
  section.title = group_title(group);
  section.header = new ElidingToolButton(container);
  section.header->setObjectName(QStringLiteral("section.") + group);
  section.header->setCheckable(true);
  section.header->setAutoRaise(true);
  section.header->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  section.header->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  QFont font = section.header->font();
  font.setBold(true);
  section.header->setFont(font);
  section.header->setBaseToolTip(tr("Show or hide the %1 settings").arg(section.title));
  outer->addWidget(section.header);

  section.body = new QWidget(container);
  section.body->setObjectName(QStringLiteral("sectionBody.") + group);
  auto* grid = new QGridLayout(section.body);
  grid->setContentsMargins(18, 2, 4, 8);
  grid->setHorizontalSpacing(10);
  grid->setVerticalSpacing(4);
  grid->setColumnStretch(2, 1);
  outer->addWidget(section.body);

  int row = 0;
  QString subgroup;
  for (const auto& field : config_fields()) {
    if (field.group != group) continue;
    if (!field.subgroup.isEmpty() && field.subgroup != subgroup) {
      subgroup = field.subgroup;
      auto* heading = new QLabel(subgroup, section.body);
      heading->setObjectName(QStringLiteral("subgroupHeading"));
      QFont f = heading->font();
      f.setItalic(true);
      heading->setFont(f);
      heading->setContentsMargins(0, row == 0 ? 0 : 6, 0, 0);
      grid->addWidget(heading, row++, 0, 1, 3);
    }
    editors_.push_back({});
    Editor& e = editors_.back();
    e.field = &field;
    e.minimum = field.minimum;
    e.maximum = field.maximum;
    if (field.key == QLatin1String("train.threads")) e.maximum = std::max(1, cpu_cores());
    e.label = new QLabel(field.label, section.body);
    e.label->setObjectName(QStringLiteral("label.") + field.key);
    e.widget = createEditor(e);
    e.label->setBuddy(e.widget);
    e.hint = small_label(section.body, QStringLiteral("hint.") + field.key);
    e.error = small_label(section.body, QStringLiteral("error.") + field.key);
    e.error->hide();
    e.tooltip = field_tooltip(field);
    grid->addWidget(e.label, row, 0);
    grid->addWidget(e.widget, row, 1);
    grid->addWidget(e.hint, row, 2);
    ++row;
    grid->addWidget(e.error, row++, 1, 1, 2);
  }

  const bool expanded = !QSettings().value(QStringLiteral("configPanel/collapsed")).toStringList().contains(group);
  section.header->setChecked(expanded);
  section.header->setArrowType(expanded ? Qt::DownArrow : Qt::RightArrow);
  section.body->setVisible(expanded);
  connect(section.header, &QToolButton::toggled, this, [this, group](bool on) {
    setSectionExpanded(group, on);
    QSettings settings;
    QStringList collapsed = settings.value(QStringLiteral("configPanel/collapsed")).toStringList();
    collapsed.removeAll(group);
    if (!on) collapsed << group;
    settings.setValue(QStringLiteral("configPanel/collapsed"), collapsed);
  });
  sections_.insert(group, section);
  return container;
}

void ConfigPanel::setSectionExpanded(const QString& group, bool expanded) {
  auto it = sections_.find(group);
  if (it == sections_.end()) return;
  if (it->header->isChecked() != expanded) {
    it->header->setChecked(expanded);  // comes back here through toggled
    return;
  }
  it->header->setArrowType(expanded ? Qt::DownArrow : Qt::RightArrow);
  it->body->setVisible(expanded);
}

QWidget* ConfigPanel::createEditor(Editor& e) {
  const ConfigField& f = *e.field;
  const QString name = QStringLiteral("field.") + f.key;
  QWidget* widget = nullptr;
  switch (f.kind) {
    case FieldKind::Integer: {
      auto* spin = new QSpinBox(this);
      spin->setRange(static_cast<int>(e.minimum), static_cast<int>(e.maximum));
      spin->setSingleStep(static_cast<int>(f.step));
      spin->setGroupSeparatorShown(e.maximum >= 10000);
      QString special = f.special;
      if (f.key == QLatin1String("train.threads")) special = tr("all cores (%1)").arg(cpu_cores());
      spin->setSpecialValueText(special);
      spin->setKeyboardTracking(false);  // apply when typing is done, not at every digit
      spin->setCorrectionMode(QAbstractSpinBox::CorrectToNearestValue);
      connect(spin, &QSpinBox::valueChanged, this, [this, &e] { onEdited(e); });
      widget = spin;
      break;
    }
    case FieldKind::Real: {
      auto* spin = new RealSpinBox(f.step_mode, f.step, this);
      spin->setRange(e.minimum, e.maximum);
      spin->setSpecialValueText(f.special);
      spin->setKeyboardTracking(false);
      spin->setCorrectionMode(QAbstractSpinBox::CorrectToNearestValue);
      connect(spin, &QDoubleSpinBox::valueChanged, this, [this, &e] { onEdited(e); });
      widget = spin;
      break;
    }
    case FieldKind::Seed: {
      auto* edit = new QLineEdit(this);
      edit->setValidator(new QRegularExpressionValidator(QRegularExpression(QStringLiteral("[0-9]{1,20}")), edit));
      connect(edit, &QLineEdit::editingFinished, this, [this, &e] { onEdited(e); });
      widget = edit;
      break;
    }
    case FieldKind::Text: {
      auto* edit = new QLineEdit(this);
      edit->setClearButtonEnabled(true);
      connect(edit, &QLineEdit::editingFinished, this, [this, &e] { onEdited(e); });
      widget = edit;
      break;
    }
    case FieldKind::Toggle: {
      auto* check = new QCheckBox(this);
      connect(check, &QCheckBox::toggled, this, [this, &e] { onEdited(e); });
      widget = check;
      break;
    }
    case FieldKind::Choice: {
      auto* combo = new QComboBox(this);
      if (f.key == QLatin1String("train.device")) {
        for (const QString& device : available_devices()) {
          const QString text = device == QLatin1String("auto") ? tr("auto: %1").arg(default_device_description())
                                                               : device_description(device);
          combo->addItem(text, device);
        }
      } else {
        for (const QString& choice : f.choices) combo->addItem(choice, choice);
        if (f.key.endsWith(QLatin1String(".chinese")) && !chinese_conversion_available()) {
          // Offered but disabled, so people see the option exists and why it is unavailable.
          if (auto* model = qobject_cast<QStandardItemModel*>(combo->model())) {
            for (int i = 1; i < combo->count(); ++i) {
              model->item(i)->setEnabled(false);
              model->item(i)->setToolTip(tr("This build has no OpenCC, so Chinese scripts cannot be converted."));
            }
          }
        }
      }
      connect(combo, &QComboBox::currentIndexChanged, this, [this, &e] { onEdited(e); });
      widget = combo;
      break;
    }
  }
  widget->setObjectName(name);
  widget->setMinimumWidth(150);
  widget->setMaximumWidth(260);
  widget->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  if (qobject_cast<QAbstractSpinBox*>(widget) || qobject_cast<QComboBox*>(widget)) {
    // The wheel scrolls the form unless the field was clicked first: no accidental edits.
    widget->setFocusPolicy(Qt::StrongFocus);
    widget->installEventFilter(this);
  }
  return widget;
}

bool ConfigPanel::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Wheel) {
    auto* widget = qobject_cast<QWidget*>(watched);
    if (widget && !widget->hasFocus() && scroll_) {
      QCoreApplication::sendEvent(scroll_->verticalScrollBar(), event);
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

// ---------------------------------------------------------------------------------------- editing

void ConfigPanel::onEdited(Editor& e) {
  if (updating_) return;
  const nlohmann::json current = config_value(state_->config().to_json(), e.field->key);
  QString text;
  switch (e.field->kind) {
    case FieldKind::Integer: {
      const int v = static_cast<QSpinBox*>(e.widget)->value();
      if (current.is_number_integer() && current.get<long long>() == v) return;
      text = QString::number(v);
      break;
    }
    case FieldKind::Real: {
      const double v = static_cast<QDoubleSpinBox*>(e.widget)->value();
      if (current.is_number() && std::abs(current.get<double>() - v) <= 1e-12 * std::max(1.0, std::abs(v))) return;
      text = QString::fromStdString(nlohmann::json(v).dump());
      break;
    }
    case FieldKind::Seed: {
      text = static_cast<QLineEdit*>(e.widget)->text().trimmed();
      if (text.isEmpty() || (current.is_number_unsigned() && text == QString::number(current.get<std::uint64_t>()))) {
        showEditorValue(e, current);
        return;
      }
      break;
    }
    case FieldKind::Text: {
      const QString v = static_cast<QLineEdit*>(e.widget)->text();
      if (current.is_string() && QString::fromStdString(current.get<std::string>()) == v) return;
      text = assignment_value(nlohmann::json(v.toStdString()));
      break;
    }
    case FieldKind::Toggle: {
      const bool v = static_cast<QCheckBox*>(e.widget)->isChecked();
      if (current.is_boolean() && current.get<bool>() == v) return;
      text = v ? QStringLiteral("true") : QStringLiteral("false");
      break;
    }
    case FieldKind::Choice: {
      const QString v = static_cast<QComboBox*>(e.widget)->currentData().toString();
      if (current.is_string() && QString::fromStdString(current.get<std::string>()) == v) return;
      text = assignment_value(nlohmann::json(v.toStdString()));
      break;
    }
  }
  QString error;
  if (state_->applySetting(e.field->key + QLatin1Char('=') + text, &error)) {
    e.error->clear();
    e.error->hide();
    return;  // configChanged has refreshed every editor
  }
  // Refused: say why next to the field and show the value that is still in force.
  e.error->setText(QStringLiteral("\u2716 ") + error);
  e.error->show();
  const bool was = updating_;
  updating_ = true;
  showEditorValue(e, current);
  updating_ = was;
}

void ConfigPanel::showEditorValue(Editor& e, const nlohmann::json& value) {
  const QSignalBlocker blocker(e.widget);
  switch (e.field->kind) {
    case FieldKind::Integer: {
      auto* spin = static_cast<QSpinBox*>(e.widget);
      const double v = value.is_number() ? value.get<double>() : e.minimum;
      // A loaded value outside the usual range is shown as it is (and flagged by the problems), not clamped.
      spin->setRange(static_cast<int>(std::min(e.minimum, std::max(v, double(std::numeric_limits<int>::min())))),
                     static_cast<int>(std::max(e.maximum, std::min(v, double(std::numeric_limits<int>::max())))));
      spin->setValue(static_cast<int>(v));
      break;
    }
    case FieldKind::Real: {
      auto* spin = static_cast<QDoubleSpinBox*>(e.widget);
      const double v = value.is_number() ? value.get<double>() : e.minimum;
      spin->setRange(std::min(e.minimum, v), std::max(e.maximum, v));
      spin->setValue(v);
      break;
    }
    case FieldKind::Seed:
      static_cast<QLineEdit*>(e.widget)->setText(
          value.is_number_unsigned() ? QString::number(value.get<std::uint64_t>()) : display_value(value));
      break;
    case FieldKind::Text:
      static_cast<QLineEdit*>(e.widget)->setText(value.is_string() ? QString::fromStdString(value.get<std::string>())
                                                                   : display_value(value));
      break;
    case FieldKind::Toggle:
      static_cast<QCheckBox*>(e.widget)->setChecked(value.is_boolean() && value.get<bool>());
      break;
    case FieldKind::Choice: {
      auto* combo = static_cast<QComboBox*>(e.widget);
      const QString v = value.is_string() ? QString::fromStdString(value.get<std::string>()) : display_value(value);
      int index = combo->findData(v);
      if (index < 0) {
        // A value from a file or another panel that this list does not offer: show it, flagged.
        const bool device = e.field->key == QLatin1String("train.device");
        combo->addItem(device ? tr("%1 (not available here)").arg(v) : tr("%1 (not allowed)").arg(v), v);
        index = combo->count() - 1;
      }
      combo->setCurrentIndex(index);
      break;
    }
  }
}

void ConfigPanel::clearFieldErrors() {
  for (auto& e : editors_) {
    e.error->clear();
    e.error->hide();
  }
}

// ------------------------------------------------------------------------------------- refresh

void ConfigPanel::refreshHints() {
  const ExperimentConfig& c = state_->config();
  const auto corpus = state_->corpus();
  const std::size_t total = corpus ? corpus->pairs.size() : 0;
  for (auto& e : editors_) {
    const QString& key = e.field->key;
    QString hint;
    if ((key == QLatin1String("data.dev") || key == QLatin1String("data.test")) && corpus) {
      const double v = key == QLatin1String("data.dev") ? c.data.dev : c.data.test;
      try {
        const std::size_t n = resolve_split_size(v, total);
        hint =
            v > 0 && v < 1
                ? tr("%1 % = %2 of %3 pairs").arg(number(v * 100), count(std::int64_t(n)), count(std::int64_t(total)))
                : tr("%1 of %2 pairs").arg(count(std::int64_t(n)), count(std::int64_t(total)));
      } catch (const std::exception&) {}
    } else if (key == QLatin1String("model.heads") && c.model.heads > 0 && c.model.d_model % c.model.heads == 0) {
      hint = tr("%1 dimensions per head").arg(c.model.d_model / c.model.heads);
    } else if (key == QLatin1String("model.d_ff") && c.model.d_model > 0) {
      hint = tr("%1 \u00d7 d_model").arg(number(std::round(10.0 * c.model.d_ff / c.model.d_model) / 10));
    } else if (key == QLatin1String("train.lr") && c.train.schedule == LrSchedule::kNoam && c.model.d_model > 0) {
      const double warmup = std::max(1, c.train.warmup);
      hint = tr("peak %1 at step %2")
                 .arg(QLocale().toString(c.train.lr / std::sqrt(c.model.d_model * warmup), 'g', 3),
                      count(static_cast<std::int64_t>(warmup)));
    } else if (key == QLatin1String("train.accumulate") && c.train.accumulate > 1) {
      hint = tr("%1 batches per step").arg(c.train.accumulate);
    } else if (key == QLatin1String("decode.max_len_b") && c.decode.max_len_a <= 0 && c.decode.max_len_b <= 0) {
      hint = tr("both 0: 2 \u00d7 source + 10");
    } else if (!e.widget->isEnabled() && !e.field->irrelevant_note.isEmpty()) {
      hint = e.field->irrelevant_note;
    }
    e.hint->setText(hint);
  }
}

void ConfigPanel::refreshSections() {
  const ExperimentConfig& c = state_->config();
  auto tokenizer = [](const TokenizerConfig& t) {
    QString s = QString::fromLatin1(tokenizer_kind_name(t.kind));
    if (is_sentencepiece(t.kind)) s += QStringLiteral(" %1").arg(count(t.vocab_size));
    if (t.lowercase) s += tr(", lowercase");
    return s;
  };
  for (auto it = sections_.begin(); it != sections_.end(); ++it) {
    const QString& group = it.key();
    QString summary;
    if (group == QLatin1String("data")) {
      summary = tr("dev %1 \u00b7 test %2 \u00b7 max length %3")
                    .arg(number(c.data.dev), number(c.data.test))
                    .arg(c.data.max_len);
      if (c.data.shared_vocab) summary += tr(" \u00b7 shared vocabulary");
    } else if (group == QLatin1String("src_tokenizer")) {
      summary = tokenizer(c.data.src_tokenizer);
    } else if (group == QLatin1String("tgt_tokenizer")) {
      summary = c.data.shared_vocab ? tr("the source tokenizer (shared vocabulary)") : tokenizer(c.data.tgt_tokenizer);
    } else if (group == QLatin1String("model")) {
      summary = tr("%1+%2 layers \u00b7 d %3 \u00b7 %4 heads \u00b7 ff %5")
                    .arg(c.model.encoder_layers)
                    .arg(c.model.decoder_layers)
                    .arg(c.model.d_model)
                    .arg(c.model.heads)
                    .arg(c.model.d_ff);
    } else if (group == QLatin1String("train")) {
      summary = QStringLiteral("%1 \u00b7 %2 lr %3 \u00b7 %4")
                    .arg(QString::fromLatin1(optimizer_name(c.train.optimizer)),
                         QString::fromLatin1(lr_schedule_name(c.train.schedule)), number(c.train.lr),
                         c.train.batch_tokens > 0 ? tr("%1 tokens/batch").arg(count(c.train.batch_tokens))
                                                  : tr("%1 sentences/batch").arg(count(c.train.batch_sentences)));
      summary += c.train.budget_minutes > 0 ? tr(" \u00b7 %1 budget").arg(format_budget(c.train.budget_minutes))
                                            : tr(" \u00b7 no budget");
    } else if (group == QLatin1String("compute")) {
      summary =
          QString::fromLatin1(device_choice_name(c.train.device)) + QStringLiteral(" \u00b7 ") +
          (c.train.threads == 0 ? tr("all %1 cores").arg(cpu_cores())
                                : (c.train.threads == 1 ? tr("1 thread") : tr("%1 threads").arg(c.train.threads))) +
          QStringLiteral(" \u00b7 ") + QString::fromLatin1(precision_name(c.train.precision));
    } else if (group == QLatin1String("decode")) {
      summary = QString::fromLatin1(decode_mode_name(c.decode.mode));
      if (c.decode.mode == DecodeMode::kBeam) summary += QStringLiteral(" %1").arg(c.decode.beam);
    }
    int flagged = 0;
    for (auto f_it = flagged_.cbegin(); f_it != flagged_.cend(); ++f_it)
      if (const ConfigField* f = find_config_field(f_it.key()); f && f->group == group) ++flagged;
    QString text = it->title + QStringLiteral("   \u2014   ") + summary;
    if (flagged > 0) text += QStringLiteral("   \u26a0 %1").arg(flagged);
    it->header->setFullText(text);
    if (flagged > 0)
      set_text_colour(it->header, warning_colour(palette()));
    else
      it->header->setPalette(QPalette());
  }
}

}  // namespace ts::ui
