#include "anatomy_panel.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
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
template <class T>
void fill_heatmap(QCustomPlot* plot, QCPColorMap* map, const std::vector<T>& values, int rows, int cols,
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

}  // namespace

QList<QPair<int, int>> AnatomyPanel::noamComparisons() { return {{512, 4000}, {512, 8000}, {256, 4000}}; }

QList<int> AnatomyPanel::smoothingTargets() { return {2, 1, 0, 3, 3}; }

AnatomyPanel::AnatomyPanel(StudioState* state, QWidget* parent) : QWidget(parent), state_(state) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  tabs_ = new QTabWidget(this);
  tabs_->setObjectName(QStringLiteral("anatomyTabs"));
  tabs_->addTab(buildPositionalTab(), tr("Positional encoding"));
  tabs_->addTab(buildLearningRateTab(), tr("Learning rate"));
  tabs_->addTab(buildSmoothingTab(), tr("Label smoothing"));
  tabs_->addTab(buildMasksTab(), tr("Masks"));
  layout->addWidget(tabs_);

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

}  // namespace ts::ui
