// SPDX-License-Identifier: GPL-3.0-or-later
#include "anatomy_panel.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "plot_style.h"
#include "studio_state.h"
#include "ts/model/positional.h"
#include "ts/text/corpus.h"
#include "ts/train/schedule.h"

namespace ts::ui {

namespace {

constexpr int kPad = 0;  // Vocab::kPad (ts/text/vocab.h): the id the loss ignores

// A styled plot holding one discrete colour map (row 0 at the top, as matrices are read) and a
// colour scale beside it.
QCPColorMap* make_heatmap(QCustomPlot* plot, const QString& scaleLabel) {
  style_plot(plot);
  plot->setMinimumSize(260, 200);
  for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
    axis->grid()->setVisible(false);
    // Whole-number ticks: rows and columns are indices (never "2.5").
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    axis->setTicker(ticker);
    axis->setSubTicks(false);
  }
  plot->yAxis->setRangeReversed(true);
  auto* map = new QCPColorMap(plot->xAxis, plot->yAxis);
  map->setInterpolate(false);  // one flat colour per cell: each cell is one entry
  map->setTightBoundary(false);
  auto* scale = new QCPColorScale(plot);
  plot->plotLayout()->addElement(0, 1, scale);
  scale->setType(QCPAxis::atRight);
  scale->axis()->setLabel(scaleLabel);
  const QColor fg = plot->palette().color(QPalette::WindowText);
  scale->axis()->setBasePen(QPen(fg));
  scale->axis()->setTickPen(QPen(fg));
  scale->axis()->setSubTickPen(QPen(fg));
  scale->axis()->setTickLabelColor(fg);
  scale->axis()->setLabelColor(fg);
  map->setColorScale(scale);
  map->setGradient(viridis_gradient());  // after setColorScale, which hands the scale's gradient to the map
  auto* group = new QCPMarginGroup(plot);  // the scale lines up with the axis rect
  plot->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  return map;
}

// Fills `map` with a row-major [rows × cols] table: x = column index, y = row index.
template <class Container>
void fill_heatmap(QCustomPlot* plot, QCPColorMap* map, const Container& values, int rows, int cols,
                  QCPRange dataRange) {
  map->data()->setSize(cols, rows);
  map->data()->setRange(QCPRange(0, std::max(cols - 1, 0)), QCPRange(0, std::max(rows - 1, 0)));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) map->data()->setCell(c, r, static_cast<double>(values[static_cast<std::size_t>(r) * cols + c]));
  map->setDataRange(dataRange);
  plot->xAxis->setRange(-0.5, cols - 0.5);
  plot->yAxis->setRange(-0.5, rows - 0.5);
  plot->replot();
}

// Integer ticks with the given labels (used where there are few rows/columns).
void set_text_ticks(QCPAxis* axis, const QStringList& labels) {
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (int i = 0; i < labels.size(); ++i) ticker->addTick(i, labels[i]);
  axis->setTicker(ticker);
  axis->setSubTicks(false);
}

QLabel* note(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setWordWrap(true);
  label->setTextFormat(Qt::PlainText);
  return label;
}

QWidget* scrolled(QWidget* content) {
  auto* area = new QScrollArea;
  area->setWidgetResizable(true);
  area->setFrameShape(QFrame::NoFrame);
  area->setWidget(content);
  return area;
}

// Hovering a heatmap shows the cell under the mouse as a tooltip; the text is also kept in the
// plot's "hoverText" property (tests and screenshots read it).
void attach_hover(QCustomPlot* plot, QCPColorMap* map, std::function<QString(int column, int row, double value)> describe) {
  QObject::connect(plot, &QCustomPlot::mouseMove, plot, [plot, map, describe](QMouseEvent* event) {
    const QPointF pos = event->position();
    int column = -1, row = -1;
    QString text;
    if (map->visible() && plot->axisRect()->rect().contains(pos.toPoint()) && map->data()->keySize() > 0) {
      map->data()->coordToCell(plot->xAxis->pixelToCoord(pos.x()), plot->yAxis->pixelToCoord(pos.y()), &column, &row);
      if (column >= 0 && row >= 0 && column < map->data()->keySize() && row < map->data()->valueSize())
        text = describe(column, row, map->data()->cell(column, row));
    }
    plot->setProperty("hoverText", text);
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(plot->mapToGlobal(pos.toPoint()), text, plot);
  });
}

QString no_model_message() {
  return AnatomyPanel::tr("Load a checkpoint or start training to see the model's positions and embeddings.");
}

// Quotes a token for messages, showing subword marks as they are.
QString quoted(const QString& token) { return QStringLiteral("\u201c") + token + QStringLiteral("\u201d"); }

}  // namespace

QList<QPair<int, int>> AnatomyPanel::noamComparisons() { return {{512, 4000}, {512, 8000}, {256, 4000}}; }

QList<int> AnatomyPanel::smoothingTargets() { return {2, 1, 0, 3, 3}; }

AnatomyPanel::AnatomyPanel(StudioState* state, QWidget* parent) : QWidget(parent), state_(state) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  tabs_ = new QTabWidget(this);
  tabs_->setObjectName(QStringLiteral("anatomyTabs"));
  tabs_->addTab(buildPositionalTab(), tr("Positional encoding"));
  tabs_->addTab(buildModelPositionsTab(), tr("Model positions"));
  tabs_->addTab(buildLearningRateTab(), tr("Learning rate"));
  tabs_->addTab(buildSmoothingTab(), tr("Label smoothing"));
  tabs_->addTab(buildMasksTab(), tr("Masks"));
  tabs_->addTab(buildEmbeddingsTab(), tr("Embeddings"));
  layout->addWidget(tabs_);

  // The model's tables are read when one of their tabs is shown (they cost a pass over the
  // embeddings on the translation thread); spin-box steps are gathered into one request.
  request_timer_.setSingleShot(true);
  request_timer_.setInterval(150);
  connect(&request_timer_, &QTimer::timeout, this, &AnatomyPanel::maybeRequestTables);
  connect(tabs_, &QTabWidget::currentChanged, this, &AnatomyPanel::maybeRequestTables);
  showNoModel(no_model_message());

  connect(state_, &StudioState::configChanged, this, &AnatomyPanel::followConfig);
  connect(state_, &StudioState::corpusChanged, this, &AnatomyPanel::updateMasks);
  connect(state_, &StudioState::directionChanged, this, &AnatomyPanel::updateMasks);
  followConfig();
}

QWidget* AnatomyPanel::buildPositionalTab() {
  auto* tab = new QWidget;
  tab->setObjectName(QStringLiteral("positionalTab"));
  auto* layout = new QVBoxLayout(tab);
  auto* controls = new QHBoxLayout;
  pe_positions_ = new QSpinBox(tab);
  pe_positions_->setObjectName(QStringLiteral("pePositions"));
  pe_positions_->setRange(1, 1024);
  pe_positions_->setValue(100);
  pe_positions_->setToolTip(tr("Number of positions (rows of the table)"));
  pe_d_model_ = new QSpinBox(tab);
  pe_d_model_->setObjectName(QStringLiteral("peDModel"));
  pe_d_model_->setRange(2, 1024);
  pe_d_model_->setSingleStep(2);
  pe_d_model_->setToolTip(tr("Model dimension (columns of the table); follows model.d_model of the configuration"));
  pe_dimensions_ = new QLineEdit(QStringLiteral("4,5,6,7"), tab);
  pe_dimensions_->setObjectName(QStringLiteral("peDimensions"));
  pe_dimensions_->setToolTip(tr("Dimensions drawn as curves over positions, separated by commas "
                                "(4,5,6,7 as in the Annotated Transformer's figure)"));
  controls->addWidget(new QLabel(tr("Positions:"), tab));
  controls->addWidget(pe_positions_);
  controls->addWidget(new QLabel(tr("d_model:"), tab));
  controls->addWidget(pe_d_model_);
  controls->addWidget(new QLabel(tr("Curves of dimensions:"), tab));
  controls->addWidget(pe_dimensions_, 1);
  layout->addLayout(controls);
  pe_message_ = new QLabel(tab);
  pe_message_->setObjectName(QStringLiteral("peMessage"));
  pe_message_->setWordWrap(true);
  pe_message_->setVisible(false);
  layout->addWidget(pe_message_);

  auto* splitter = new QSplitter(Qt::Vertical, tab);
  pe_heatmap_ = new QCustomPlot(splitter);
  pe_heatmap_->setObjectName(QStringLiteral("peHeatmap"));
  pe_map_ = make_heatmap(pe_heatmap_, tr("PE value"));
  pe_heatmap_->xAxis->setLabel(tr("Dimension"));
  pe_heatmap_->yAxis->setLabel(tr("Position"));
  pe_curves_ = new QCustomPlot(splitter);
  pe_curves_->setObjectName(QStringLiteral("peCurves"));
  pe_curves_->setMinimumSize(260, 180);
  style_plot(pe_curves_);
  pe_curves_->xAxis->setLabel(tr("Position"));
  pe_curves_->yAxis->setLabel(tr("Encoding value"));
  pe_curves_->legend->setVisible(true);
  splitter->addWidget(pe_heatmap_);
  splitter->addWidget(pe_curves_);
  layout->addWidget(splitter, 1);
  layout->addWidget(note(tr("PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)): "
                            "each pair of dimensions is a sinusoid of its own wavelength, from 2π to 10000·2π."),
                         tab));

  connect(pe_positions_, &QSpinBox::valueChanged, this, &AnatomyPanel::updatePositional);
  connect(pe_d_model_, &QSpinBox::valueChanged, this, &AnatomyPanel::updatePositional);
  connect(pe_dimensions_, &QLineEdit::textChanged, this, &AnatomyPanel::updatePositional);
  return tab;
}

QWidget* AnatomyPanel::buildLearningRateTab() {
  auto* tab = new QWidget;
  tab->setObjectName(QStringLiteral("learningRateTab"));
  auto* layout = new QVBoxLayout(tab);
  auto* controls = new QHBoxLayout;
  lr_steps_ = new QSpinBox(tab);
  lr_steps_->setObjectName(QStringLiteral("lrSteps"));
  lr_steps_->setRange(100, 1000000);
  lr_steps_->setSingleStep(1000);
  lr_steps_->setValue(20000);
  lr_steps_->setToolTip(tr("Optimizer steps drawn. The linear and cosine schedules decay to train.max_steps "
                           "when it is set, otherwise to this number."));
  controls->addWidget(new QLabel(tr("Steps shown:"), tab));
  controls->addWidget(lr_steps_);
  controls->addStretch(1);
  layout->addLayout(controls);
  lr_summary_ = new QLabel(tab);
  lr_summary_->setObjectName(QStringLiteral("lrSummary"));
  lr_summary_->setWordWrap(true);
  layout->addWidget(lr_summary_);
  lr_plot_ = new QCustomPlot(tab);
  lr_plot_->setObjectName(QStringLiteral("lrPlot"));
  lr_plot_->setMinimumSize(260, 200);
  style_plot(lr_plot_);
  lr_plot_->xAxis->setLabel(tr("Step"));
  lr_plot_->yAxis->setLabel(tr("Learning rate"));
  lr_plot_->legend->setVisible(true);
  layout->addWidget(lr_plot_, 1);
  layout->addWidget(note(tr("Noam: lr = factor · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5) rises linearly for "
                            "warmup steps, peaks there, then decays as 1/√step. The dashed curves are the "
                            "Annotated Transformer's comparison (factor 1)."),
                         tab));
  connect(lr_steps_, &QSpinBox::valueChanged, this, &AnatomyPanel::updateLearningRate);
  return tab;
}

QWidget* AnatomyPanel::buildSmoothingTab() {
  auto* tab = new QWidget;
  tab->setObjectName(QStringLiteral("smoothingTab"));
  auto* layout = new QVBoxLayout(tab);
  auto* controls = new QHBoxLayout;
  ls_smoothing_ = new QDoubleSpinBox(tab);
  ls_smoothing_->setObjectName(QStringLiteral("lsSmoothing"));
  ls_smoothing_->setRange(0.0, 0.99);
  ls_smoothing_->setDecimals(2);
  ls_smoothing_->setSingleStep(0.05);
  ls_smoothing_->setToolTip(tr("Label smoothing ε; follows train.label_smoothing of the configuration"));
  ls_vocab_ = new QSpinBox(tab);
  ls_vocab_->setObjectName(QStringLiteral("lsVocab"));
  ls_vocab_->setRange(4, 64);
  ls_vocab_->setValue(8);
  ls_vocab_->setToolTip(tr("Size of the toy vocabulary (columns)"));
  controls->addWidget(new QLabel(tr("Smoothing:"), tab));
  controls->addWidget(ls_smoothing_);
  controls->addWidget(new QLabel(tr("Vocabulary size:"), tab));
  controls->addWidget(ls_vocab_);
  controls->addStretch(1);
  layout->addLayout(controls);
  ls_plot_ = new QCustomPlot(tab);
  ls_plot_->setObjectName(QStringLiteral("lsHeatmap"));
  ls_map_ = make_heatmap(ls_plot_, tr("Target probability"));
  ls_plot_->xAxis->setLabel(tr("Token id"));
  ls_plot_->yAxis->setLabel(tr("Example (reference token)"));
  layout->addWidget(ls_plot_, 1);
  layout->addWidget(note(tr("The distribution the loss trains towards, as LibTorch's cross_entropy computes it: "
                            "ε/V on every token (pad included) and 1 − ε + ε/V on the reference. A reference equal "
                            "to the pad id (0) is ignored: its row is empty. (The Annotated Transformer spreads "
                            "ε/(V−2) and keeps pad at 0.)"),
                         tab));
  connect(ls_smoothing_, &QDoubleSpinBox::valueChanged, this, &AnatomyPanel::updateSmoothing);
  connect(ls_vocab_, &QSpinBox::valueChanged, this, &AnatomyPanel::updateSmoothing);
  return tab;
}

QWidget* AnatomyPanel::buildMasksTab() {
  auto* content = new QWidget;
  auto* layout = new QVBoxLayout(content);
  auto* controls = new QHBoxLayout;
  mask_length_ = new QSpinBox(content);
  mask_length_->setObjectName(QStringLiteral("maskLength"));
  mask_length_->setRange(1, 64);
  mask_length_->setValue(10);
  mask_length_->setToolTip(tr("Target length of the subsequent (causal) mask"));
  controls->addWidget(new QLabel(tr("Causal mask length:"), content));
  controls->addWidget(mask_length_);
  controls->addStretch(1);
  layout->addLayout(controls);
  causal_plot_ = new QCustomPlot(content);
  causal_plot_->setObjectName(QStringLiteral("causalMaskPlot"));
  causal_map_ = make_heatmap(causal_plot_, tr("May attend (1) / hidden (0)"));
  causal_plot_->xAxis->setLabel(tr("Key position"));
  causal_plot_->yAxis->setLabel(tr("Query position"));
  causal_plot_->setMinimumHeight(260);
  layout->addWidget(causal_plot_, 1);
  layout->addWidget(note(tr("Subsequent mask: position i of the decoder sees positions 0…i only, so it cannot peek "
                            "at the word it has to predict."),
                         content));
  padding_plot_ = new QCustomPlot(content);
  padding_plot_->setObjectName(QStringLiteral("paddingMaskPlot"));
  padding_map_ = make_heatmap(padding_plot_, tr("Token (1) / pad (0)"));
  padding_plot_->xAxis->setLabel(tr("Position"));
  padding_plot_->yAxis->setLabel(tr("Sentence of the batch"));
  padding_plot_->setMinimumHeight(200);
  layout->addWidget(padding_plot_, 1);
  layout->addWidget(note(tr("Padding mask of a batch of three source sentences of the corpus (split at spaces): "
                            "shorter sentences are padded to the longest, and no query attends to a pad."),
                         content));
  connect(mask_length_, &QSpinBox::valueChanged, this, &AnatomyPanel::updateMasks);
  auto* tab = scrolled(content);
  tab->setObjectName(QStringLiteral("masksTab"));
  return tab;
}

void AnatomyPanel::followConfig() {
  const ExperimentConfig& config = state_->config();
  // Setting the spin boxes redraws through their signals; block them and redraw once.
  {
    const QSignalBlocker b1(pe_d_model_), b2(ls_smoothing_);
    pe_d_model_->setValue(config.model.d_model);
    ls_smoothing_->setValue(config.train.label_smoothing);
  }
  updatePositional();
  updateLearningRate();
  updateSmoothing();
  updateMasks();
}

void AnatomyPanel::updatePositional() {
  const int positions = pe_positions_->value();
  const int d = pe_d_model_->value();
  const auto table = sinusoidal_values(positions, d);
  fill_heatmap(pe_heatmap_, pe_map_, table, positions, d, QCPRange(-1, 1));

  // The chosen dimensions: those that are not numbers or not below d_model are named, not drawn.
  QStringList bad;
  QList<int> dims;
  const QStringList parts = pe_dimensions_->text().split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts);
  for (const QString& part : parts) {
    bool ok = false;
    const int dim = part.toInt(&ok);
    if (!ok || dim < 0 || dim >= d)
      bad << part;
    else if (!dims.contains(dim))
      dims << dim;
  }
  pe_message_->setVisible(!bad.isEmpty());
  if (!bad.isEmpty())
    pe_message_->setText(tr("Not drawn: %1 (dimensions are whole numbers from 0 to %2).").arg(bad.join(QStringLiteral(", "))).arg(d - 1));

  pe_curves_->clearGraphs();
  QVector<double> keys(positions);
  for (int p = 0; p < positions; ++p) keys[p] = p;
  for (int i = 0; i < dims.size(); ++i) {
    QVector<double> values(positions);
    for (int p = 0; p < positions; ++p) values[p] = table[static_cast<std::size_t>(p) * d + dims[i]];
    QCPGraph* graph = pe_curves_->addGraph();
    graph->setName(tr("dim %1").arg(dims[i]));
    graph->setPen(QPen(series_color(i), 1.6));
    graph->setData(keys, values, true);
  }
  pe_curves_->xAxis->setRange(0, std::max(positions - 1, 1));
  pe_curves_->yAxis->setRange(-1.1, 1.1);
  pe_curves_->replot();
}

void AnatomyPanel::updateLearningRate() {
  const ExperimentConfig& config = state_->config();
  const int steps = lr_steps_->value();
  const std::int64_t total = config.train.max_steps > 0 ? config.train.max_steps : steps;

  // About 4000 samples per curve, plus every curve's warmup step so the peaks are drawn exactly.
  const int stride = std::max(1, steps / 4000);
  std::set<int> sample{1, steps};
  for (int s = stride; s <= steps; s += stride) sample.insert(s);
  if (config.train.warmup > 0 && config.train.warmup <= steps) sample.insert(config.train.warmup);
  for (const auto& [d, warmup] : noamComparisons())
    if (warmup <= steps) sample.insert(warmup);
  QVector<double> keys(sample.begin(), sample.end());

  lr_plot_->clearGraphs();
  auto add = [&](const QString& name, const TrainConfig& tc, int d_model, int index, Qt::PenStyle style) {
    QVector<double> values;
    values.reserve(keys.size());
    for (double s : keys) values << learning_rate(tc, static_cast<std::int64_t>(s), total, d_model);
    QCPGraph* graph = lr_plot_->addGraph();
    graph->setName(name);
    graph->setPen(QPen(series_color(index), index == 0 ? 2.2 : 1.4, style));
    graph->setData(keys, values, true);
  };
  add(tr("This configuration: %1, d_model %2, warmup %3, lr %4")
          .arg(QString::fromStdString(config.train.schedule))
          .arg(config.model.d_model)
          .arg(config.train.warmup)
          .arg(config.train.lr),
      config.train, config.model.d_model, 0, Qt::SolidLine);
  int index = 1;
  for (const auto& [d, warmup] : noamComparisons()) {
    TrainConfig tc;
    tc.schedule = "noam";
    tc.lr = 1.0;
    tc.warmup = warmup;
    add(tr("Noam d_model %1, warmup %2").arg(d).arg(warmup), tc, d, index++, Qt::DashLine);
  }
  lr_plot_->rescaleAxes();
  lr_plot_->yAxis->setRangeLower(0);
  lr_plot_->replot();

  // The peak of this configuration's curve, read off the drawn data.
  double peak = 0, peak_step = 1;
  for (auto it = lr_plot_->graph(0)->data()->constBegin(); it != lr_plot_->graph(0)->data()->constEnd(); ++it)
    if (it->value > peak) {
      peak = it->value;
      peak_step = it->key;
    }
  lr_summary_->setText(tr("This configuration peaks at %1 (step %2).").arg(peak, 0, 'g', 4).arg(peak_step));
}

void AnatomyPanel::updateSmoothing() {
  const int vocab = ls_vocab_->value();
  const double smoothing = ls_smoothing_->value();
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
  set_text_ticks(ls_plot_->xAxis, cols);
  set_text_ticks(ls_plot_->yAxis, rows);
  fill_heatmap(ls_plot_, ls_map_, table, static_cast<int>(targets.size()), vocab, QCPRange(0, 1));
}

void AnatomyPanel::updateMasks() {
  const int n = mask_length_->value();
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
    sentences = {QStringLiteral("I see a cat ."), QStringLiteral("The dog runs ."), QStringLiteral("We are here today with friends .")};
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

// ---- The loaded model's tables ----------------------------------------------------------------

QWidget* AnatomyPanel::buildModelPositionsTab() {
  auto* content = new QWidget;
  auto* layout = new QVBoxLayout(content);
  mp_message_ = new QLabel(content);
  mp_message_->setObjectName(QStringLiteral("modelPositionsMessage"));
  mp_message_->setWordWrap(true);
  mp_message_->setTextFormat(Qt::PlainText);
  layout->addWidget(mp_message_);
  auto* controls = new QHBoxLayout;
  mp_count_ = new QSpinBox(content);
  mp_count_->setObjectName(QStringLiteral("modelPositionsCount"));
  mp_count_->setRange(2, 256);
  mp_count_->setValue(64);
  mp_count_->setToolTip(tr("How many positions (from position 0) of the model's table are drawn"));
  controls->addWidget(new QLabel(tr("Positions shown:"), content));
  controls->addWidget(mp_count_);
  controls->addStretch(1);
  layout->addLayout(controls);

  mp_learned_box_ = new QWidget(content);
  auto* learned_layout = new QVBoxLayout(mp_learned_box_);
  learned_layout->setContentsMargins(0, 0, 0, 0);
  learned_layout->addWidget(note(tr("The learned position table: one row per position, one column per dimension."), mp_learned_box_));
  mp_learned_ = new QCustomPlot(mp_learned_box_);
  mp_learned_->setObjectName(QStringLiteral("anatomyLearnedPositions"));
  mp_learned_map_ = make_heatmap(mp_learned_, tr("Value"));
  mp_learned_->xAxis->setLabel(tr("Dimension"));
  mp_learned_->yAxis->setLabel(tr("Position"));
  mp_learned_->setMinimumHeight(260);
  attach_hover(mp_learned_, mp_learned_map_, [](int column, int row, double value) {
    return tr("position %1, dimension %2: %3").arg(row).arg(column).arg(value, 0, 'f', 4);
  });
  learned_layout->addWidget(mp_learned_, 1);  // the plot takes the height, not its title
  layout->addWidget(mp_learned_box_, 1);

  mp_similarity_box_ = new QWidget(content);
  auto* similarity_layout = new QVBoxLayout(mp_similarity_box_);
  similarity_layout->setContentsMargins(0, 0, 0, 0);
  mp_similarity_title_ = note(QString(), mp_similarity_box_);
  similarity_layout->addWidget(mp_similarity_title_);
  mp_similarity_ = new QCustomPlot(mp_similarity_box_);
  mp_similarity_->setObjectName(QStringLiteral("anatomyPositionSimilarity"));
  mp_similarity_map_ = make_heatmap(mp_similarity_, tr("Cosine similarity"));
  mp_similarity_->xAxis->setLabel(tr("Position"));
  mp_similarity_->yAxis->setLabel(tr("Position"));
  mp_similarity_->setMinimumHeight(320);
  attach_hover(mp_similarity_, mp_similarity_map_, [](int column, int row, double value) {
    return tr("positions %1 and %2 (distance %3): cosine similarity %4")
        .arg(row)
        .arg(column)
        .arg(std::abs(row - column))
        .arg(value, 0, 'f', 3);
  });
  similarity_layout->addWidget(mp_similarity_, 1);
  layout->addWidget(mp_similarity_box_, 1);
  mp_note_ = note(QString(), content);
  mp_note_->setObjectName(QStringLiteral("modelPositionsNote"));
  layout->addWidget(mp_note_);
  layout->addStretch(0);

  connect(mp_count_, &QSpinBox::valueChanged, this, [this] {
    tables_stale_ = true;
    request_timer_.start();
  });
  positions_tab_ = scrolled(content);
  positions_tab_->setObjectName(QStringLiteral("modelPositionsTab"));
  return positions_tab_;
}

QWidget* AnatomyPanel::buildEmbeddingsTab() {
  auto* tab = new QWidget;
  tab->setObjectName(QStringLiteral("embeddingsTab"));
  embeddings_tab_ = tab;
  auto* layout = new QVBoxLayout(tab);
  auto* controls = new QHBoxLayout;
  emb_side_ = new QComboBox(tab);
  emb_side_->setObjectName(QStringLiteral("embeddingSide"));
  emb_side_->addItem(tr("Source"), false);
  emb_side_->addItem(tr("Target"), true);
  emb_side_->setSizeAdjustPolicy(QComboBox::AdjustToContents);  // the names follow the model's languages
  emb_side_->setToolTip(tr("Which embedding table: the encoder's (source language) or the decoder's (target language)"));
  emb_count_ = new QSpinBox(tab);
  emb_count_->setObjectName(QStringLiteral("embeddingCount"));
  emb_count_->setRange(50, 500);
  emb_count_->setSingleStep(50);
  emb_count_->setValue(200);
  emb_count_->setToolTip(tr("How many of the most frequent tokens are projected (special tokens are left out)"));
  controls->addWidget(new QLabel(tr("Embeddings:"), tab));
  controls->addWidget(emb_side_);
  controls->addWidget(new QLabel(tr("Most frequent tokens:"), tab));
  controls->addWidget(emb_count_);
  controls->addStretch(1);
  layout->addLayout(controls);

  auto* search = new QHBoxLayout;
  emb_search_ = new QLineEdit(tab);
  emb_search_->setObjectName(QStringLiteral("embeddingSearch"));
  emb_search_->setPlaceholderText(tr("A token, e.g. Hund"));
  emb_search_->setClearButtonEnabled(true);
  emb_search_->setToolTip(tr("Press Enter to list the tokens whose embeddings point the most in the same direction. "
                             "A subword's word-initial mark (\u2581) and the case are tried when the token as typed is not found."));
  emb_k_ = new QSpinBox(tab);
  emb_k_->setObjectName(QStringLiteral("embeddingK"));
  emb_k_->setRange(1, 50);
  emb_k_->setValue(10);
  emb_k_->setToolTip(tr("How many nearest neighbours are listed"));
  emb_find_ = new QPushButton(tr("Find neighbours"), tab);
  emb_find_->setObjectName(QStringLiteral("embeddingFind"));
  search->addWidget(new QLabel(tr("Token:"), tab));
  search->addWidget(emb_search_, 1);
  search->addWidget(new QLabel(tr("Neighbours:"), tab));
  search->addWidget(emb_k_);
  search->addWidget(emb_find_);
  layout->addLayout(search);
  emb_message_ = new QLabel(tab);
  emb_message_->setObjectName(QStringLiteral("embeddingMessage"));
  emb_message_->setWordWrap(true);
  emb_message_->setTextFormat(Qt::PlainText);
  layout->addWidget(emb_message_);

  auto* splitter = new QSplitter(Qt::Horizontal, tab);
  emb_scatter_ = new QCustomPlot(splitter);
  emb_scatter_->setObjectName(QStringLiteral("embeddingScatter"));
  emb_scatter_->setMinimumSize(300, 260);
  style_plot(emb_scatter_);
  emb_points_ = emb_scatter_->addGraph();
  emb_points_->setName(tr("tokens"));
  emb_points_->setLineStyle(QCPGraph::lsNone);
  QColor point = series_color(0);
  point.setAlpha(170);
  emb_points_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, point, point, 5));
  emb_neighbours_ = emb_scatter_->addGraph();
  emb_neighbours_->setName(tr("neighbours"));
  emb_neighbours_->setLineStyle(QCPGraph::lsNone);
  emb_neighbours_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(series_color(1), 2), Qt::NoBrush, 12));
  emb_query_ = emb_scatter_->addGraph();
  emb_query_->setName(tr("searched token"));
  emb_query_->setLineStyle(QCPGraph::lsNone);
  emb_query_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssStar, QPen(series_color(3), 2.5), Qt::NoBrush, 16));
  emb_scatter_->xAxis->setLabel(tr("PC 1"));
  emb_scatter_->yAxis->setLabel(tr("PC 2"));
  // Labels are thinned after every layout (resize, zoom, drag), just before drawing.
  connect(emb_scatter_, &QCustomPlot::afterLayout, this, &AnatomyPanel::thinScatterLabels);
  connect(emb_scatter_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) { scatterHover(e->position().toPoint()); });
  connect(emb_scatter_, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) { emb_press_ = e->position().toPoint(); });
  connect(emb_scatter_, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
    // A click (not a drag) on a token searches its neighbours.
    const QPoint pos = e->position().toPoint();
    if (e->button() != Qt::LeftButton || (pos - emb_press_).manhattanLength() > 3) return;
    const int i = scatterPointAt(pos);
    if (i >= 0) findToken(emb_labels_[i].item->text());
  });
  connect(emb_scatter_, &QCustomPlot::mouseDoubleClick, this, [this] { rescaleScatter(); });
  emb_scatter_->installEventFilter(this);
  emb_table_ = new QTableWidget(0, 2, splitter);
  emb_table_->setObjectName(QStringLiteral("embeddingNeighbours"));
  emb_table_->setHorizontalHeaderLabels({tr("Token"), tr("Cosine similarity")});
  emb_table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  emb_table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  emb_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  emb_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  emb_table_->setToolTip(tr("Double-click a neighbour to search its own neighbours"));
  emb_table_->setMinimumWidth(180);
  splitter->addWidget(emb_scatter_);
  splitter->addWidget(emb_table_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);
  layout->addWidget(splitter, 1);
  emb_note_ = note(QString(), tab);
  emb_note_->setObjectName(QStringLiteral("embeddingNote"));
  layout->addWidget(emb_note_);

  connect(emb_side_, &QComboBox::currentIndexChanged, this, [this] {
    updateEmbeddingScatter();
    // The search belongs to one side: ask the other side's table for the same token.
    if (!emb_search_->text().trimmed().isEmpty()) searchNeighbours();
  });
  connect(emb_count_, &QSpinBox::valueChanged, this, [this] {
    tables_stale_ = true;
    request_timer_.start();
  });
  connect(emb_search_, &QLineEdit::returnPressed, this, &AnatomyPanel::searchNeighbours);
  connect(emb_find_, &QPushButton::clicked, this, &AnatomyPanel::searchNeighbours);
  connect(emb_k_, &QSpinBox::valueChanged, this, [this] {
    if (!neighbours_.token.isEmpty()) requestNeighbours(neighbours_.query);
  });
  connect(emb_table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
    if (auto* item = emb_table_->item(row, 0)) findToken(item->text());
  });
  return tab;
}

void AnatomyPanel::setTranslationService(TranslationService* service) {
  if (service_) disconnect(service_, nullptr, this, nullptr);
  service_ = service;
  tables_request_ = neighbours_request_ = 0;
  tables_stale_ = true;
  if (!service) {
    showNoModel(no_model_message());
    return;
  }
  connect(service, &TranslationService::modelChanged, this, &AnatomyPanel::modelChanged);
  connect(service, &TranslationService::tablesReady, this, [this](const ModelTables& tables) {
    if (tables.id != tables_request_) return;  // an older request, or someone else's
    tables_request_ = 0;
    showTables(tables);
  });
  connect(service, &TranslationService::neighboursReady, this, [this](const TokenNeighbours& result) {
    if (result.id != neighbours_request_) return;
    neighbours_request_ = 0;
    showNeighbours(result);
  });
  if (service->hasModel())
    maybeRequestTables();
  else
    showNoModel(no_model_message());
}

void AnatomyPanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  maybeRequestTables();
}

void AnatomyPanel::modelChanged() {
  tables_stale_ = true;
  const QString reading = tr("Reading the tables of %1\u2026").arg(service_ ? service_->model().label : QString());
  if (tables_.model.isEmpty()) {  // otherwise the previous model's tables stay until the new ones come
    mp_message_->setText(reading);
    emb_message_->setText(reading);
  }
  maybeRequestTables();
}

void AnatomyPanel::maybeRequestTables() {
  if (!service_ || !service_->hasModel()) return;
  QWidget* current = tabs_->currentWidget();
  if (!tables_stale_ || !isVisible() || (current != positions_tab_ && current != embeddings_tab_)) return;
  tables_stale_ = false;
  tables_request_ = service_->requestTables(mp_count_->value(), emb_count_->value());
}

void AnatomyPanel::showNoModel(const QString& message) {
  tables_ = ModelTables();
  tables_.error = message;
  neighbours_ = TokenNeighbours();
  mp_message_->setText(message);
  mp_learned_box_->setVisible(false);
  mp_similarity_box_->setVisible(false);
  mp_note_->setVisible(false);
  emb_message_->setText(message);
  emb_note_->clear();
  emb_table_->setRowCount(0);
  updateEmbeddingScatter();
}

void AnatomyPanel::showTables(const ModelTables& tables) {
  if (!tables.error.isEmpty()) {
    showNoModel(tables.error);
    return;
  }
  tables_ = tables;
  const int p = tables.positions;
  mp_message_->setText(tr("%1: %2 positions, the first %3 of %4 shown, d_model %5.")
                           .arg(tables.model,
                                tables.learned_positions ? tr("learned") : tr("sinusoidal (fixed)"))
                           .arg(p)
                           .arg(tables.max_positions)
                           .arg(tables.d_model));
  mp_learned_box_->setVisible(tables.learned_positions);
  if (tables.learned_positions) {
    float top = 0;
    for (float v : tables.position_table) top = std::max(top, std::abs(v));
    fill_heatmap(mp_learned_, mp_learned_map_, tables.position_table, p, tables.d_model,
                 QCPRange(-std::max(top, 1e-6f), std::max(top, 1e-6f)));
  }
  mp_similarity_box_->setVisible(true);
  mp_similarity_title_->setText(tables.learned_positions
                                    ? tr("Cosine similarity between the learned positions (P \u00d7 P).")
                                    : tr("Cosine similarity between the model's sinusoidal positions (P \u00d7 P)."));
  fill_heatmap(mp_similarity_, mp_similarity_map_, tables.position_similarity, p, p, QCPRange(-1, 1));
  mp_note_->setVisible(true);
  mp_note_->setText(tables.learned_positions
                        ? tr("Learned positions start random; training pulls neighbouring positions together, which shows as "
                             "a bright band along the diagonal. Positions beyond the longest training sentences get no "
                             "gradient and stay close to their random start.")
                        : tr("This model adds the fixed sinusoidal table (drawn in the Positional encoding tab). Every "
                             "row has the same length and PE(i)\u00b7PE(j) = \u03a3 cos(\u03c9\u2096(i \u2212 j)), so the "
                             "similarity depends only on the distance |i \u2212 j|: every diagonal of the matrix is "
                             "constant. A learned table has no such constraint."));

  const auto side_name = [&](const EmbeddingProjection& side, const QString& kind) {
    return side.language.isEmpty() ? kind : tr("%1 (%2)").arg(kind, side.language);
  };
  emb_side_->setItemText(0, side_name(tables.source, tr("Source")));
  emb_side_->setItemText(1, side_name(tables.target, tr("Target")));
  emb_message_->clear();
  updateEmbeddingScatter();
  // A search shown before was projected on the previous tables: ask again for these.
  if (!neighbours_.query.isEmpty()) requestNeighbours(neighbours_.query);
}

bool AnatomyPanel::targetSide() const { return emb_side_->currentData().toBool(); }

const EmbeddingProjection& AnatomyPanel::currentProjection() const {
  return targetSide() ? tables_.target : tables_.source;
}

void AnatomyPanel::updateEmbeddingScatter() {
  for (const auto& label : emb_labels_) emb_scatter_->removeItem(label.item);
  emb_labels_.clear();
  emb_base_labels_ = 0;
  const EmbeddingProjection& side = currentProjection();
  emb_points_->setData(side.x, side.y);  // not sorted by x: QCustomPlot sorts a copy
  const QColor fg = emb_scatter_->palette().color(QPalette::WindowText);
  for (int i = 0; i < side.tokens.size(); ++i) {
    auto* item = new QCPItemText(emb_scatter_);
    item->setText(side.tokens[i]);
    item->position->setCoords(side.x[i], side.y[i]);
    item->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    item->setPadding(QMargins(5, 0, 0, 0));  // beside the point, not on it
    item->setColor(fg);
    item->setSelectable(false);
    item->setClipToAxisRect(true);
    emb_labels_.push_back({item, side.x[i], side.y[i], side.ids.value(i, -1), i, false});
  }
  emb_base_labels_ = static_cast<int>(emb_labels_.size());
  const bool any = !side.tokens.isEmpty();
  emb_scatter_->xAxis->setLabel(any ? tr("PC 1 (%1% of the variance)").arg(100 * side.explained_x, 0, 'f', 1) : tr("PC 1"));
  emb_scatter_->yAxis->setLabel(any ? tr("PC 2 (%1% of the variance)").arg(100 * side.explained_y, 0, 'f', 1) : tr("PC 2"));
  if (any)
    emb_note_->setText(tr("The %1 most frequent tokens of the %2 vocabulary (of %3 entries, special tokens left out), "
                          "projected on the two directions along which their embeddings vary most (PCA). Tokens used "
                          "alike tend to lie close together. Hover a point for its token, click it to list its nearest "
                          "neighbours; labels are thinned where they would overlap (zoom in to see more).")
                           .arg(side.tokens.size())
                           .arg(side.language.isEmpty() ? (targetSide() ? tr("target") : tr("source")) : side.language)
                           .arg(side.vocab_size));
  else
    emb_note_->clear();
  updateHighlights();
}

void AnatomyPanel::searchNeighbours() { requestNeighbours(emb_search_->text()); }

void AnatomyPanel::findToken(const QString& token) {
  tabs_->setCurrentWidget(embeddings_tab_);
  emb_search_->setText(token);
  requestNeighbours(token);
}

void AnatomyPanel::requestNeighbours(const QString& query) {
  if (!service_ || !service_->hasModel()) {
    emb_message_->setText(no_model_message());
    return;
  }
  if (query.trimmed().isEmpty()) {
    neighbours_ = TokenNeighbours();
    emb_table_->setRowCount(0);
    emb_message_->clear();
    updateHighlights();
    return;
  }
  neighbours_request_ = service_->findNeighbours(targetSide(), query, emb_k_->value());
}

void AnatomyPanel::showNeighbours(const TokenNeighbours& result) {
  neighbours_ = result;
  emb_table_->setRowCount(0);
  if (!result.error.isEmpty()) {
    emb_message_->setText(result.error);
  } else {
    const EmbeddingProjection& side = result.target ? tables_.target : tables_.source;
    emb_message_->setText(tr("The %1 tokens nearest to %2 (id %3) in the %4 embedding space, by cosine similarity.")
                              .arg(result.tokens.size())
                              .arg(quoted(result.token))
                              .arg(result.token_id)
                              .arg(side.language.isEmpty() ? (result.target ? tr("target") : tr("source")) : side.language));
    emb_table_->setRowCount(result.tokens.size());
    for (int i = 0; i < result.tokens.size(); ++i) {
      auto* token = new QTableWidgetItem(result.tokens[i]);
      token->setToolTip(tr("id %1").arg(result.ids.value(i)));
      auto* similarity = new QTableWidgetItem(QString::number(result.similarities.value(i), 'f', 3));
      similarity->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      similarity->setData(Qt::UserRole, result.similarities.value(i));
      emb_table_->setItem(i, 0, token);
      emb_table_->setItem(i, 1, similarity);
    }
  }
  updateHighlights();
}

void AnatomyPanel::updateHighlights() {
  // Labels added for neighbours outside the plotted tokens go; the plotted ones lose their bold.
  while (emb_labels_.size() > emb_base_labels_) {
    emb_scatter_->removeItem(emb_labels_.back().item);
    emb_labels_.pop_back();
  }
  QFont plain = emb_scatter_->font(), bold = plain;
  bold.setBold(true);
  for (auto& label : emb_labels_) {
    label.highlighted = false;
    label.item->setFont(plain);
  }
  QVector<double> nx, ny, qx, qy;
  const TokenNeighbours& n = neighbours_;
  const bool shown = n.error.isEmpty() && !n.token.isEmpty() && n.projected && n.target == targetSide() &&
                     !currentProjection().tokens.isEmpty();
  if (shown) {
    auto mark = [&](qint64 id, const QString& token, double x, double y) {
      for (int i = 0; i < emb_base_labels_; ++i)
        if (emb_labels_[i].id == id) {
          emb_labels_[i].highlighted = true;
          emb_labels_[i].item->setFont(bold);
          return;
        }
      auto* item = new QCPItemText(emb_scatter_);
      item->setText(token);
      item->position->setCoords(x, y);
      item->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
      item->setPadding(QMargins(5, 0, 0, 0));
      item->setColor(emb_scatter_->palette().color(QPalette::WindowText));
      item->setFont(bold);
      item->setSelectable(false);
      item->setClipToAxisRect(true);
      emb_labels_.push_back({item, x, y, id, -1, true});
    };
    mark(n.token_id, n.token, n.x, n.y);
    qx << n.x;
    qy << n.y;
    for (int i = 0; i < n.tokens.size() && i < n.xs.size(); ++i) {
      mark(n.ids.value(i), n.tokens[i], n.xs[i], n.ys.value(i));
      nx << n.xs[i];
      ny << n.ys.value(i);
    }
  }
  emb_neighbours_->setData(nx, ny);
  emb_query_->setData(qx, qy);
  rescaleScatter();
}

void AnatomyPanel::rescaleScatter() {
  if (emb_labels_.isEmpty()) {  // nothing plotted: a neutral frame rather than a microscopic one
    emb_scatter_->xAxis->setRange(-1, 1);
    emb_scatter_->yAxis->setRange(-1, 1);
    emb_scatter_->replot();
    return;
  }
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  bool first = true;
  for (const auto& label : emb_labels_) {
    if (first) {
      x0 = x1 = label.x;
      y0 = y1 = label.y;
      first = false;
    }
    x0 = std::min(x0, label.x);
    x1 = std::max(x1, label.x);
    y0 = std::min(y0, label.y);
    y1 = std::max(y1, label.y);
  }
  const double w = std::max(x1 - x0, 1e-6), h = std::max(y1 - y0, 1e-6);
  // Room on the right for the labels written beside the points.
  emb_scatter_->xAxis->setRange(x0 - 0.06 * w, x1 + 0.2 * w);
  emb_scatter_->yAxis->setRange(y0 - 0.08 * h, y1 + 0.08 * h);
  emb_scatter_->replot();
}

void AnatomyPanel::thinScatterLabels() {
  // The searched token is always labelled; then its neighbours by rank, then the other tokens in
  // frequency order, each only where it overlaps no label already placed and fits in the axis rect.
  const QRect area = emb_scatter_->axisRect()->rect();
  QVector<int> order;
  order.reserve(emb_labels_.size());
  QVector<bool> taken(emb_labels_.size(), false);
  QVector<qint64> highlight_ids{neighbours_.token_id};
  highlight_ids += neighbours_.ids;
  for (qint64 id : highlight_ids)
    for (int i = 0; i < emb_labels_.size(); ++i)
      if (!taken[i] && emb_labels_[i].highlighted && emb_labels_[i].id == id) {
        order << i;
        taken[i] = true;
        break;
      }
  for (int i = 0; i < emb_labels_.size(); ++i)
    if (!taken[i]) order << i;
  QVector<QRect> placed;
  for (int n = 0; n < order.size(); ++n) {
    const ScatterLabel& label = emb_labels_[order[n]];
    const QPoint at(qRound(emb_scatter_->xAxis->coordToPixel(label.x)), qRound(emb_scatter_->yAxis->coordToPixel(label.y)));
    const QFontMetrics metrics(label.item->font());
    const QRect box(at.x() + 5, at.y() - metrics.height() / 2, metrics.horizontalAdvance(label.item->text()), metrics.height());
    const bool searched = n == 0 && label.highlighted && label.id == neighbours_.token_id;
    bool visible = area.contains(at);
    if (visible && !searched) {
      visible = area.contains(box);
      for (const QRect& other : placed)
        if (visible && other.intersects(box)) visible = false;
    }
    label.item->setVisible(visible);
    if (visible) placed << box.adjusted(-3, -1, 3, 1);
  }
}

QStringList AnatomyPanel::visibleEmbeddingLabels() const {
  QStringList out;
  for (const auto& label : emb_labels_)
    if (label.item->visible()) out << label.item->text();
  return out;
}

int AnatomyPanel::scatterPointAt(const QPoint& pos) const {
  int best = -1;
  double best_d2 = 8.0 * 8.0;  // within 8 pixels
  for (int i = 0; i < emb_labels_.size(); ++i) {
    const double dx = emb_scatter_->xAxis->coordToPixel(emb_labels_[i].x) - pos.x();
    const double dy = emb_scatter_->yAxis->coordToPixel(emb_labels_[i].y) - pos.y();
    if (dx * dx + dy * dy < best_d2) {
      best_d2 = dx * dx + dy * dy;
      best = i;
    }
  }
  return best;
}

void AnatomyPanel::scatterHover(const QPoint& pos) {
  const int i = scatterPointAt(pos);
  QString text;
  if (i >= 0) {
    const ScatterLabel& label = emb_labels_[i];
    text = label.item->text();
    if (label.rank >= 0)
      text += tr("\nfrequency rank %1 (id %2)").arg(label.rank + 1).arg(label.id);
    else
      text += tr("\nid %1 (not among the most frequent tokens shown)").arg(label.id);
    if (label.id == neighbours_.token_id && label.highlighted)
      text += tr("\nthe searched token");
    const int n = neighbours_.ids.indexOf(label.id);
    if (n >= 0 && label.highlighted)
      text += tr("\ncosine similarity to %1: %2").arg(quoted(neighbours_.token)).arg(neighbours_.similarities.value(n), 0, 'f', 3);
    text += tr("\nPC 1 %1, PC 2 %2").arg(label.x, 0, 'f', 3).arg(label.y, 0, 'f', 3);
  }
  emb_hover_ = text;
  emb_scatter_->setProperty("hoverText", text);
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(emb_scatter_->mapToGlobal(pos), text, emb_scatter_);
}

bool AnatomyPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == emb_scatter_ && event->type() == QEvent::Leave && !emb_hover_.isEmpty()) {
    emb_hover_.clear();
    emb_scatter_->setProperty("hoverText", QString());
    QToolTip::hideText();
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace ts::ui
