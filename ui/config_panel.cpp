// SPDX-License-Identifier: GPL-3.0-or-later
#include "config_panel.h"
#include "widget_lifetime.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <unordered_map>

#include <QAbstractSpinBox>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontMetrics>
#include <QFormLayout>
#include <QFrame>
#include <QFutureWatcher>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QRegularExpression>
#include <QRegularExpressionValidator>
#include <QSaveFile>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "auto_fit.h"
#include "config_fields.h"
#include "device_info.h"
#include "recipe_notes.h"
#include "studio_state.h"
#include "ts/model/size.h"
#include "ts/text/split.h"
#include "ts/text/tokenizer.h"

namespace ts::ui {

// Token type frequencies per side, counted off the GUI thread. The vocabulary a setting of
// data.min_freq / data.max_vocab gives is then a binary search, so those edits stay instant.
struct VocabularyCounts {
  struct Side {
    std::vector<int> frequencies;  // one per token type, descending
    bool subword = false;          // bpe/unigram: the frequencies are of words (an upper bound)
  };
  Side src, tgt;
  double average_tokens = 12;
  std::string error;
};

namespace {

constexpr std::int64_t kSpecials = 4;          // PAD, UNK, BOS, EOS
constexpr std::int64_t kFallbackVocab = 8000;  // before (or without) a count

bool is_cjk_language(const std::string& code) { return code == "zh" || code == "ja" || code == "cmn" || code == "jpn"; }
bool is_subword(const std::string& kind) { return kind == "bpe" || kind == "unigram"; }

// The tokenizer each side really uses (as prepare_data decides it).
TokenizerConfig effective_tokenizer(const DataConfig& data, bool source, const Direction& direction) {
  if (data.shared_vocab) return data.src_tokenizer;
  TokenizerConfig c = source ? data.src_tokenizer : data.tgt_tokenizer;
  if (data.cjk_chars && c.kind == "word" && is_cjk_language(source ? direction.src_code : direction.tgt_code)) c.kind = "char";
  return c;
}

// Subword sides are counted in words: the SentencePiece vocabulary cannot usefully exceed that.
TokenizerConfig counting_tokenizer(TokenizerConfig c) {
  if (is_subword(c.kind)) {
    c.kind = "word";
    c.punctuation = "split";
  }
  if (!chinese_conversion_available()) c.chinese = "none";
  return c;
}

std::shared_ptr<const VocabularyCounts> count_vocabulary(std::shared_ptr<const Corpus> corpus, Direction direction,
                                                         DataConfig data, std::shared_ptr<std::atomic<bool>> cancel) {
  auto out = std::make_shared<VocabularyCounts>();
  try {
    const TokenizerConfig src_config = effective_tokenizer(data, true, direction);
    const TokenizerConfig tgt_config = effective_tokenizer(data, false, direction);
    const auto src_tokenizer = make_tokenizer(counting_tokenizer(src_config));
    const auto tgt_tokenizer = make_tokenizer(counting_tokenizer(tgt_config));
    std::unordered_map<std::string, int> src_types, tgt_types;
    auto& tgt_map = data.shared_vocab ? src_types : tgt_types;
    double tokens = 0;
    std::size_t n = 0;
    for (const auto& pair : corpus->pairs) {
      if ((++n & 1023) == 0 && cancel->load()) return nullptr;
      const std::string& src = direction.english_is_source ? pair.english : pair.other;
      const std::string& tgt = direction.english_is_source ? pair.other : pair.english;
      const auto s = src_tokenizer->tokenize(src);
      const auto t = tgt_tokenizer->tokenize(tgt);
      for (const auto& token : s) ++src_types[token];
      for (const auto& token : t) ++tgt_map[token];
      tokens += static_cast<double>(std::max(s.size(), t.size()) + 1);  // + EOS / BOS
    }
    auto frequencies = [](const std::unordered_map<std::string, int>& types) {
      std::vector<int> f;
      f.reserve(types.size());
      for (const auto& item : types) f.push_back(item.second);
      std::sort(f.begin(), f.end(), std::greater<int>());
      return f;
    };
    out->src.frequencies = frequencies(src_types);
    out->tgt.frequencies = data.shared_vocab ? out->src.frequencies : frequencies(tgt_types);
    out->src.subword = is_subword(src_config.kind);
    out->tgt.subword = is_subword(tgt_config.kind);
    if (n > 0) out->average_tokens = tokens / static_cast<double>(n);
  } catch (const std::exception& e) {
    out->error = e.what();
  }
  return out;
}

// What the vocabulary counts depend on; vocab_size, min_freq and max_vocab are applied afterwards.
std::string counting_key(const Corpus* corpus, const Direction& direction, const DataConfig& data) {
  auto tok = [](TokenizerConfig c) {
    c.vocab_size = 0;
    c.character_coverage = 0;
    return c.to_json().dump();
  };
  return std::to_string(reinterpret_cast<std::uintptr_t>(corpus)) + '|' + corpus->path + '|' +
         std::to_string(corpus->pairs.size()) + '|' + direction.str() +
         (direction.english_is_source ? "|en|" : "|xx|") + tok(data.src_tokenizer) + tok(data.tgt_tokenizer) +
         (data.shared_vocab ? "|shared" : "") + (data.cjk_chars ? "|cjk" : "");
}

std::int64_t side_vocabulary(const VocabularyCounts::Side* counts, const TokenizerConfig& tok, const DataConfig& data) {
  std::int64_t size;
  if (is_subword(tok.kind)) {
    size = tok.vocab_size;
    if (counts && !counts->frequencies.empty())
      size = std::min<std::int64_t>(size, static_cast<std::int64_t>(counts->frequencies.size()) + 256);
    size += kSpecials;
  } else if (counts) {
    const auto& f = counts->frequencies;
    // frequencies are descending: the types kept are those before the first one below min_freq
    const auto kept = std::upper_bound(f.begin(), f.end(), data.min_freq, std::greater<int>()) - f.begin();
    size = kept + kSpecials;
  } else {
    size = kFallbackVocab;
  }
  if (data.max_vocab > 0) size = std::min<std::int64_t>(size, data.max_vocab);
  return std::max<std::int64_t>(size, kSpecials);
}

// Colours that read on light and dark palettes alike: the hue is fixed, the lightness follows the window.
bool is_dark(const QPalette& p) { return p.color(QPalette::Window).lightness() < 128; }
QColor error_colour(const QPalette& p) { return is_dark(p) ? QColor(0xff, 0x8a, 0x80) : QColor(0xc6, 0x28, 0x28); }
QColor warning_colour(const QPalette& p) { return is_dark(p) ? QColor(0xff, 0xc1, 0x4d) : QColor(0x9a, 0x56, 0x00); }
QColor ok_colour(const QPalette& p) { return is_dark(p) ? QColor(0x81, 0xc7, 0x84) : QColor(0x2e, 0x7d, 0x32); }
QColor blend(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(a.redF() * (1 - t) + b.redF() * t, a.greenF() * (1 - t) + b.greenF() * t,
                          a.blueF() * (1 - t) + b.blueF() * t);
}
QColor muted_colour(const QPalette& p) { return blend(p.color(QPalette::WindowText), p.color(QPalette::Window), 0.4); }

void set_text_colour(QWidget* w, const QColor& c) {
  QPalette p = w->palette();
  p.setColor(QPalette::WindowText, c);
  p.setColor(QPalette::Text, c);
  p.setColor(QPalette::ButtonText, c);
  w->setPalette(p);
}

QString number(double v) { return QLocale().toString(v, 'g', 10); }
QString count(std::int64_t v) { return QLocale().toString(static_cast<qlonglong>(v)); }

// A real-valued spin box that shows numbers as %g (1e-09 as readily as 1000) and steps linearly,
// by factors, or in fractions below 1 and counts above (data.dev / data.test).
class RealSpinBox : public QDoubleSpinBox {
 public:
  RealSpinBox(StepMode mode, double step, QWidget* parent) : QDoubleSpinBox(parent), mode_(mode), step_(step) {
    setDecimals(15);  // values are rounded to this many decimals: keep 1e-12 intact
    setSingleStep(mode == StepMode::Linear ? step : 1);
  }

  QString textFromValue(double value) const override { return locale().toString(value, 'g', 10); }

  double valueFromText(const QString& text) const override {
    if (!specialValueText().isEmpty() && text.trimmed() == specialValueText()) return minimum();
    bool ok = false;
    const double v = parse(text, &ok);
    return ok ? v : value();
  }

  QValidator::State validate(QString& input, int&) const override {
    const QString t = input.trimmed();
    if (!specialValueText().isEmpty() && t == specialValueText()) return QValidator::Acceptable;
    if (t.isEmpty()) return QValidator::Intermediate;
    bool ok = false;
    const double v = parse(t, &ok);
    if (ok) return v >= minimum() && v <= maximum() ? QValidator::Acceptable : QValidator::Intermediate;
    static const QRegularExpression partial(QStringLiteral("^[0-9eE+\\-.,' \u00a0\u202f]*$"));
    return partial.match(t).hasMatch() ? QValidator::Intermediate : QValidator::Invalid;
  }

  void fixup(QString& input) const override { input = textFromValue(value()); }

  void stepBy(int steps) override {
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

 private:
  double parse(const QString& text, bool* ok) const {
    double v = locale().toDouble(text.trimmed(), ok);
    if (!*ok) v = QLocale::c().toDouble(text.trimmed(), ok);
    return v;
  }
  StepMode mode_;
  double step_;
};

QLabel* small_label(QWidget* parent, const QString& object_name) {
  auto* label = new QLabel(parent);
  label->setObjectName(object_name);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return label;
}

}  // namespace

// ------------------------------------------------------------------------------------------ setup

ConfigPanel::ConfigPanel(StudioState* state, QWidget* parent) : QWidget(parent), state_(state) {
  buildUi();
  connect(state_, &StudioState::configChanged, this, &ConfigPanel::refresh);
  connect(state_, &StudioState::corpusChanged, this, &ConfigPanel::refresh);
  connect(state_, &StudioState::directionChanged, this, &ConfigPanel::refresh);
  applyColours();
  refresh();
}

ConfigPanel::~ConfigPanel() {
  disconnect_children(this);  // the fields' editingFinished, sent as ~QWidget moves the focus
  if (cancel_) cancel_->store(true);  // the count holds its own copies; it just stops early
}

void ConfigPanel::buildUi() {
  auto* layout = new QVBoxLayout(this);

  // Preset row: chooser, reset, file buttons.
  auto* preset_row = new QHBoxLayout;
  auto* preset_label = new QLabel(tr("&Preset:"), this);
  preset_combo_ = new QComboBox(this);
  preset_combo_->setObjectName(QStringLiteral("presetCombo"));
  preset_combo_->setPlaceholderText(tr("custom"));
  preset_combo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  for (const auto& name : preset_names()) {
    const QString n = QString::fromStdString(name);
    preset_combo_->addItem(n, n);
    preset_combo_->setItemData(preset_combo_->count() - 1, QString::fromStdString(preset_description(name)), Qt::ToolTipRole);
  }
  preset_combo_->setToolTip(tr("Start from the settings of a seed tutorial, the built-in demo or the tiny test model. "
                               "Device and thread choices are kept."));
  preset_label->setBuddy(preset_combo_);
  reset_button_ = new QPushButton(tr("&Reset to preset"), this);
  reset_button_->setObjectName(QStringLiteral("resetPresetButton"));
  reset_button_->setToolTip(tr("Undo every change made since the preset was chosen (device and threads are kept)."));
  auto* load_button = new QPushButton(tr("&Load…"), this);
  load_button->setObjectName(QStringLiteral("loadConfigButton"));
  load_button->setToolTip(tr("Read a configuration from a JSON file (as written by Save… or used by "
                             "transformer-studio-cli train --config)."));
  auto* save_button = new QPushButton(tr("&Save…"), this);
  save_button->setObjectName(QStringLiteral("saveConfigButton"));
  save_button->setToolTip(tr("Write this configuration as JSON, for later or for transformer-studio-cli train --config."));
  preset_row->addWidget(preset_label);
  preset_row->addWidget(preset_combo_);
  preset_row->addWidget(reset_button_);
  preset_row->addStretch(1);
  preset_row->addWidget(load_button);
  preset_row->addWidget(save_button);
  layout->addLayout(preset_row);

  preset_description_ = small_label(this, QStringLiteral("presetDescription"));
  preset_status_ = small_label(this, QStringLiteral("presetStatus"));
  file_status_ = small_label(this, QStringLiteral("fileStatus"));
  file_status_->hide();
  layout->addWidget(preset_description_);
  recipe_ = new RecipeNotes(state_, this);  // under the description, shown while the preset is `auto`
  layout->addWidget(recipe_);
  layout->addWidget(preset_status_);
  layout->addWidget(file_status_);

  // Live size estimate.
  auto* size_box = new QGroupBox(tr("Estimated size"), this);
  size_box->setObjectName(QStringLiteral("sizeBox"));
  auto* size_form = new QFormLayout(size_box);
  size_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  parameters_ = small_label(size_box, QStringLiteral("parameterCount"));
  weights_ = small_label(size_box, QStringLiteral("weightsSize"));
  memory_ = small_label(size_box, QStringLiteral("memoryEstimate"));
  batch_ = small_label(size_box, QStringLiteral("batchTokens"));
  vocab_ = small_label(size_box, QStringLiteral("vocabEstimate"));
  QFont bold = parameters_->font();
  bold.setBold(true);
  parameters_->setFont(bold);
  memory_->setFont(bold);
  parameters_->setToolTip(tr("Weights the model will have. Exact for the vocabulary sizes below, which are "
                             "estimated from the corpus before the tokenizers are trained."));
  memory_->setToolTip(tr("Weights, gradients and the two Adam moments (4 copies), plus the activations of one "
                         "batch kept for the backward pass. A rough guide, not a guarantee."));
  size_form->addRow(tr("Parameters:"), parameters_);
  size_form->addRow(tr("Weights:"), weights_);
  size_form->addRow(tr("Training memory:"), memory_);
  size_form->addRow(tr("Batch:"), batch_);
  size_form->addRow(tr("Vocabulary:"), vocab_);
  layout->addWidget(size_box);

  // Problems, listed live.
  problems_box_ = new QFrame(this);
  problems_box_->setObjectName(QStringLiteral("problemsBox"));
  problems_box_->setFrameShape(QFrame::StyledPanel);
  problems_box_->setAutoFillBackground(true);
  auto* problems_layout = new QVBoxLayout(problems_box_);
  problems_layout->setContentsMargins(8, 6, 8, 6);
  problems_label_ = small_label(problems_box_, QStringLiteral("problemsLabel"));
  problems_label_->setTextFormat(Qt::RichText);
  problems_layout->addWidget(problems_label_);
  layout->addWidget(problems_box_);

  // Every field, by section, in a scroll area.
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
    if (auto* grid = qobject_cast<QGridLayout*>(section.body->layout())) grid->setColumnMinimumWidth(0, label_width + 4);
  scroll_->setWidget(fields);
  layout->addWidget(scroll_, 1);

  connect(preset_combo_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (updating_ || index < 0) return;
    clearFieldErrors();
    recipe_->notePresetChosen();  // corpora opened later keep this choice (no switch to auto)
    state_->applyPreset(preset_combo_->itemData(index).toString());
  });
  // Choosing the current preset again from the list resets to it.
  connect(preset_combo_, &QComboBox::activated, this, [this](int index) {
    if (index >= 0 && reset_button_->isEnabled() &&
        preset_combo_->itemData(index).toString() == QString::fromStdString(state_->config().preset))
      reset_button_->click();
  });
  connect(reset_button_, &QPushButton::clicked, this, [this] {
    clearFieldErrors();
    if (state_->config().preset == "auto" && recipe_->resetToFit()) return;  // back to what auto chose
    state_->applyPreset(QString::fromStdString(state_->config().preset));
  });
  // A new fit changes what the configuration is compared with.
  connect(recipe_, &RecipeNotes::fitChanged, this, [this] {
    const bool was = updating_;
    updating_ = true;
    refreshPreset();
    updating_ = was;
  });
  connect(save_button, &QPushButton::clicked, this, [this] {
    QSettings settings;
    const QString dir = settings.value(QStringLiteral("configPanel/lastDir"), QDir::homePath()).toString();
    const QString name = QString::fromStdString(state_->config().preset) + QStringLiteral(".json");
    QString path = QFileDialog::getSaveFileName(this, tr("Save configuration"), QDir(dir).filePath(name),
                                                tr("JSON files (*.json);;All files (*)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".json");
    settings.setValue(QStringLiteral("configPanel/lastDir"), QFileInfo(path).absolutePath());
    saveConfig(path);
  });
  connect(load_button, &QPushButton::clicked, this, [this] {
    QSettings settings;
    const QString dir = settings.value(QStringLiteral("configPanel/lastDir"), QDir::homePath()).toString();
    const QString path = QFileDialog::getOpenFileName(this, tr("Load configuration"), dir,
                                                      tr("JSON files (*.json);;All files (*)"));
    if (path.isEmpty()) return;
    settings.setValue(QStringLiteral("configPanel/lastDir"), QFileInfo(path).absolutePath());
    loadConfig(path);
  });
}

QWidget* ConfigPanel::buildSection(const QString& group) {
  auto* container = new QWidget(this);
  auto* outer = new QVBoxLayout(container);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->setSpacing(0);

  Section section;
  section.title = group_title(group);
  section.header = new QToolButton(container);
  section.header->setObjectName(QStringLiteral("section.") + group);
  section.header->setCheckable(true);
  section.header->setAutoRaise(true);
  section.header->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  section.header->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  QFont font = section.header->font();
  font.setBold(true);
  section.header->setFont(font);
  section.header->setToolTip(tr("Show or hide the %1 settings").arg(section.title));
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
          const QString text = device == QLatin1String("auto")
                                   ? tr("auto: %1").arg(default_device_description())
                                   : device;
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

void ConfigPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange && scroll_ && !updating_) {
    applyColours();
    refresh();
  }
}

void ConfigPanel::applyColours() {
  const QPalette p = palette();
  for (auto& e : editors_) {
    set_text_colour(e.error, error_colour(p));
    set_text_colour(e.hint, muted_colour(p));
  }
  set_text_colour(preset_description_, muted_colour(p));
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

// --------------------------------------------------------------------------------------- refresh

void ConfigPanel::refresh() {
  const bool was = updating_;
  updating_ = true;
  const ExperimentConfig& c = state_->config();
  const nlohmann::json j = c.to_json();
  for (auto& e : editors_) {
    showEditorValue(e, config_value(j, e.field->key));
    const bool relevant = !e.field->relevant || e.field->relevant(c);
    e.widget->setEnabled(relevant);
    e.label->setEnabled(relevant);
  }
  refreshProblems();
  refreshPreset();
  refreshHints();
  refreshSections();
  refreshSize();
  updating_ = was;
  startCounting();
}

void ConfigPanel::refreshPreset() {
  const ExperimentConfig& c = state_->config();
  const QString name = QString::fromStdString(c.preset);
  const int index = preset_combo_->findData(name);
  {
    const QSignalBlocker blocker(preset_combo_);
    preset_combo_->setCurrentIndex(index);  // -1 shows the "custom" placeholder
  }
  QStringList changed;
  nlohmann::json base;
  // `auto` fitted: changes are counted from what the recipe chose for these inputs.
  const auto fit = index >= 0 && c.preset == "auto" ? recipe_->currentFit() : nullptr;
  const bool fitted = fit && fit->ok();
  if (index >= 0) {
    ExperimentConfig p = fitted ? fit->config : preset(c.preset);
    p.train.device = c.train.device;  // applyPreset keeps these, so they are not changes
    p.train.threads = c.train.threads;
    p.train.budget_minutes = c.train.budget_minutes;
    if (!fitted) p.train.precision = c.train.precision;  // the fit chooses the precision
    base = p.to_json();
  }
  const nlohmann::json now = c.to_json();
  for (auto& e : editors_) {
    QString tip = e.tooltip;
    bool differs = false;
    if (index >= 0) {
      const nlohmann::json was = config_value(base, e.field->key);
      differs = was != config_value(now, e.field->key);
      if (differs) {
        changed << e.field->key;
        tip += QStringLiteral("<p>%1</p>").arg(tr("Preset \u201c%1\u201d: %2").arg(name, display_value(was)).toHtmlEscaped());
      }
    }
    for (const QString& problem : flagged_.value(e.field->key))
      tip += QStringLiteral("<p style='color:%1'>\u26a0 %2</p>").arg(warning_colour(palette()).name(), problem.toHtmlEscaped());
    e.label->setToolTip(tip);
    e.widget->setToolTip(tip);
    QFont f = e.label->font();
    f.setBold(differs);
    e.label->setFont(f);
  }

  preset_description_->setText(index >= 0 ? QString::fromStdString(preset_description(c.preset))
                                          : tr("Settings not based on a preset (from a file or edited from defaults)."));
  if (index < 0) {
    preset_status_->setText(tr("custom"));
  } else if (changed.isEmpty() && c.preset == "auto") {
    preset_status_->setText(fitted ? tr("Preset \u201cauto\u201d as fitted to this corpus, direction, budget and "
                                        "machine.")
                                   : tr("Preset \u201cauto\u201d, not fitted yet."));
  } else if (changed.isEmpty()) {
    preset_status_->setText(tr("Preset \u201c%1\u201d as published.").arg(name));
  } else {
    QStringList shown = changed.mid(0, 4);
    QString list = shown.join(QStringLiteral(", "));
    if (changed.size() > shown.size()) list += tr(" and %1 more").arg(changed.size() - shown.size());
    preset_status_->setText(changed.size() == 1 ? tr("custom (from %1): 1 change, in bold below: %2").arg(name, list)
                                                : tr("custom (from %1): %2 changes, in bold below: %3").arg(name).arg(changed.size()).arg(list));
  }
  reset_button_->setEnabled(index >= 0 && !changed.isEmpty());
}

void ConfigPanel::refreshProblems() {
  const ExperimentConfig& c = state_->config();
  QStringList problems;
  for (const auto& p : c.problems()) problems << QString::fromStdString(p);

  // Checks core cannot make without the machine or the corpus.
  if (c.train.device == "cuda" && !cuda_available())
    problems << tr("train.device is cuda, but no CUDA GPU is available on this machine (choose auto or cpu)");
  if (!chinese_conversion_available()) {
    if (c.data.src_tokenizer.chinese != "none")
      problems << tr("data.src_tokenizer.chinese %1 needs OpenCC, which this build lacks (choose none)")
                      .arg(QString::fromStdString(c.data.src_tokenizer.chinese));
    if (!c.data.shared_vocab && c.data.tgt_tokenizer.chinese != "none")
      problems << tr("data.tgt_tokenizer.chinese %1 needs OpenCC, which this build lacks (choose none)")
                      .arg(QString::fromStdString(c.data.tgt_tokenizer.chinese));
  }
  const auto corpus = state_->corpus();
  if (corpus && c.data.dev >= 0 && c.data.test >= 0) {
    const std::size_t total = corpus->pairs.size();
    std::size_t dev = 0, test = 0;
    bool ok = true;
    for (const auto& [key, value, out] : {std::tuple{"data.dev", c.data.dev, &dev}, std::tuple{"data.test", c.data.test, &test}}) {
      try {
        *out = resolve_split_size(value, total);
      } catch (const std::exception&) {
        problems << tr("%1 (%2): a value of 1 or more is a number of pairs and must be whole")
                        .arg(QLatin1String(key), number(value));
        ok = false;
      }
    }
    if (ok && dev + test >= total)
      problems << tr("data.dev and data.test hold out %1 + %2 pairs: none of the corpus's %3 pairs is left for training")
                      .arg(count(dev), count(test), count(static_cast<std::int64_t>(total)));
  }

  // Advice that does not block training.
  QStringList notes;
  if ((c.train.schedule == "linear" || c.train.schedule == "cosine") && c.train.max_steps <= 0 &&
      c.train.budget_minutes <= 0)
    notes << tr("train.schedule %1 decays over train.max_steps or to the deadline of a time budget "
                "(\u201cTrain for\u201d); with neither the learning rate stays constant after warmup.")
                 .arg(QString::fromStdString(c.train.schedule));
  if (c.decode.mode == "beam" && c.decode.nbest > c.decode.beam)
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
    html = QStringLiteral("<b style='color:%1'>\u26a0 %2</b><ul style='margin-top:2px; margin-bottom:0px; -qt-list-indent:1'>")
               .arg(warn.name(), (problems.size() == 1 ? tr("1 problem: training will not start until it is fixed")
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
  box.setColor(QPalette::Window, problems.isEmpty() ? p.color(QPalette::Window) : blend(p.color(QPalette::Window), warn, 0.12));
  problems_box_->setPalette(box);

  if (had != !problems.isEmpty()) Q_EMIT problemsChanged(!problems.isEmpty());
}

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
        hint = v > 0 && v < 1 ? tr("%1 % = %2 of %3 pairs").arg(number(v * 100), count(std::int64_t(n)), count(std::int64_t(total)))
                              : tr("%1 of %2 pairs").arg(count(std::int64_t(n)), count(std::int64_t(total)));
      } catch (const std::exception&) {
      }
    } else if (key == QLatin1String("model.heads") && c.model.heads > 0 && c.model.d_model % c.model.heads == 0) {
      hint = tr("%1 dimensions per head").arg(c.model.d_model / c.model.heads);
    } else if (key == QLatin1String("model.d_ff") && c.model.d_model > 0) {
      hint = tr("%1 \u00d7 d_model").arg(number(std::round(10.0 * c.model.d_ff / c.model.d_model) / 10));
    } else if (key == QLatin1String("train.lr") && c.train.schedule == "noam" && c.model.d_model > 0) {
      const double warmup = std::max(1, c.train.warmup);
      hint = tr("peak %1 at step %2").arg(QLocale().toString(c.train.lr / std::sqrt(c.model.d_model * warmup), 'g', 3),
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
    QString s = QString::fromStdString(t.kind);
    if (is_subword(t.kind)) s += QStringLiteral(" %1").arg(count(t.vocab_size));
    if (t.lowercase) s += tr(", lowercase");
    return s;
  };
  for (auto it = sections_.begin(); it != sections_.end(); ++it) {
    const QString& group = it.key();
    QString summary;
    if (group == QLatin1String("data")) {
      summary = tr("dev %1 \u00b7 test %2 \u00b7 max length %3").arg(number(c.data.dev), number(c.data.test)).arg(c.data.max_len);
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
                    .arg(QString::fromStdString(c.train.optimizer), QString::fromStdString(c.train.schedule), number(c.train.lr),
                         c.train.batch_tokens > 0 ? tr("%1 tokens/batch").arg(count(c.train.batch_tokens))
                                                  : tr("%1 sentences/batch").arg(count(c.train.batch_sentences)));
      summary += c.train.budget_minutes > 0 ? tr(" \u00b7 %1 budget").arg(format_budget(c.train.budget_minutes))
                                            : tr(" \u00b7 no budget");
    } else if (group == QLatin1String("compute")) {
      summary = QString::fromStdString(c.train.device) + QStringLiteral(" \u00b7 ") +
                (c.train.threads == 0 ? tr("all %1 cores").arg(cpu_cores()) : (c.train.threads == 1 ? tr("1 thread") : tr("%1 threads").arg(c.train.threads))) +
                QStringLiteral(" \u00b7 ") + QString::fromStdString(c.train.precision);
    } else if (group == QLatin1String("decode")) {
      summary = QString::fromStdString(c.decode.mode);
      if (c.decode.mode == "beam") summary += QStringLiteral(" %1").arg(c.decode.beam);
    }
    int flagged = 0;
    for (auto f_it = flagged_.cbegin(); f_it != flagged_.cend(); ++f_it)
      if (const ConfigField* f = find_config_field(f_it.key()); f && f->group == group) ++flagged;
    QString text = it->title + QStringLiteral("   \u2014   ") + summary;
    if (flagged > 0) text += QStringLiteral("   \u26a0 %1").arg(flagged);
    it->header->setText(text);
    if (flagged > 0)
      set_text_colour(it->header, warning_colour(palette()));
    else
      it->header->setPalette(QPalette());
  }
}

// ------------------------------------------------------------------------------------ size estimate

std::int64_t ConfigPanel::sourceVocabEstimate() const {
  const ExperimentConfig& c = state_->config();
  const TokenizerConfig tok = effective_tokenizer(c.data, true, state_->direction());
  return side_vocabulary(counts_ ? &counts_->src : nullptr, tok, c.data);
}

std::int64_t ConfigPanel::targetVocabEstimate() const {
  const ExperimentConfig& c = state_->config();
  const TokenizerConfig tok = effective_tokenizer(c.data, false, state_->direction());
  return side_vocabulary(counts_ ? &counts_->tgt : nullptr, tok, c.data);
}

double ConfigPanel::averageSentenceTokens() const { return counts_ ? counts_->average_tokens : 12.0; }

void ConfigPanel::refreshSize() {
  const ExperimentConfig& c = state_->config();
  const std::int64_t src = sourceVocabEstimate();
  const std::int64_t tgt = targetVocabEstimate();
  const double average = averageSentenceTokens();
  const ModelSize size = estimate_model_size(c, src, tgt, average);
  const double millions = static_cast<double>(size.parameters) / 1e6;
  parameters_->setText(tr("\u2248 %1 (%2 M)")
                           .arg(count(size.parameters), QLocale().toString(millions, 'f', millions < 10 ? 2 : 1)));
  weights_->setText(tr("%1 as 32-bit floats").arg(format_bytes(static_cast<double>(size.weight_bytes))));
  memory_->setText(tr("\u2248 %1").arg(format_bytes(static_cast<double>(size.training_bytes))));
  QString batch;
  if (c.train.batch_tokens > 0) {
    batch = tr("%1 tokens (\u2248 %2 sentences)")
                .arg(count(size.batch_tokens), count(static_cast<std::int64_t>(std::max(1.0, c.train.batch_tokens / average))));
  } else {
    batch = tr("%1 sentences \u2248 %2 tokens").arg(count(c.train.batch_sentences), count(size.batch_tokens));
  }
  if (c.train.accumulate > 1)
    batch += tr("; %1 batches per step \u2248 %2 tokens")
                 .arg(c.train.accumulate)
                 .arg(count(size.batch_tokens * c.train.accumulate));
  batch_->setText(batch);

  QString vocab;
  const bool shared = c.data.shared_vocab;
  if (shared)
    vocab = tr("shared \u2248 %1 tokens").arg(count(src));
  else
    vocab = tr("source \u2248 %1, target \u2248 %2 tokens").arg(count(src), count(tgt));
  if (counting_ && !counts_) vocab += tr(" (rough default; counting the corpus…)");
  else if (counting_) vocab += tr(" (recounting…)");
  else if (counts_ && !counts_->error.empty()) vocab += tr(" (rough default: %1)").arg(QString::fromStdString(counts_->error));
  else if (counts_) vocab += tr(" (counted in the corpus, specials included)");
  vocab_->setText(vocab);
}

void ConfigPanel::startCounting() {
  const auto corpus = state_->corpus();
  if (!corpus) return;
  const ExperimentConfig& c = state_->config();
  const std::string key = counting_key(corpus.get(), state_->direction(), c.data);
  if (key == counts_key_) return;
  counts_key_ = key;
  if (cancel_) cancel_->store(true);
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  const int serial = ++count_serial_;
  counting_ = true;
  refreshSize();
  using Result = std::shared_ptr<const VocabularyCounts>;
  auto* watcher = new QFutureWatcher<Result>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, serial] {
    watcher->deleteLater();
    if (serial != count_serial_) return;  // superseded
    counting_ = false;
    if (Result counts = watcher->result()) counts_ = std::move(counts);
    refreshSize();
  });
  watcher->setFuture(QtConcurrent::run(count_vocabulary, corpus, state_->direction(), c.data, cancel_));
}

// ------------------------------------------------------------------------------------------ files

void ConfigPanel::showFileStatus(const QString& text, bool error) {
  file_status_->setText(text);
  if (error)
    set_text_colour(file_status_, error_colour(palette()));
  else
    file_status_->setPalette(QPalette());
  file_status_->setVisible(!text.isEmpty());
}

bool ConfigPanel::saveConfig(const QString& path, QString* error) {
  const QByteArray bytes = QByteArray::fromStdString(state_->config().to_json().dump(2) + "\n");
  QSaveFile file(path);  // written to a temporary file and renamed: never a half-written config
  QString message;
  if (!file.open(QIODevice::WriteOnly))
    message = tr("%1: cannot be written (%2)").arg(path, file.errorString());
  else if (file.write(bytes) != bytes.size() || !file.commit())
    message = tr("%1: cannot be written (%2)").arg(path, file.errorString());
  if (!message.isEmpty()) {
    showFileStatus(message, true);
    if (error) *error = message;
    return false;
  }
  showFileStatus(tr("Saved to %1").arg(QDir::toNativeSeparators(path)), false);
  return true;
}

bool ConfigPanel::loadConfig(const QString& path, QString* error) {
  QString message;
  try {
    ExperimentConfig loaded = load_config_file(QFile::encodeName(path).toStdString());
    clearFieldErrors();
    state_->setConfig(loaded);
    showFileStatus(tr("Loaded %1").arg(QDir::toNativeSeparators(path)), false);
    return true;
  } catch (const std::exception& e) {
    message = QString::fromStdString(e.what());
  }
  if (!message.contains(QFileInfo(path).fileName())) message = path + QStringLiteral(": ") + message;
  showFileStatus(message, true);
  if (error) *error = message;
  return false;
}

}  // namespace ts::ui
