// SPDX-License-Identifier: GPL-3.0-or-later
// AttentionPanel, part: its exports. The large map as PNG (through QCustomPlot) and as SVG (our own
// writer, attention_export.h), every weight of the translation as JSON, and the buttons that ask
// for a path first. The rest of the panel is in attention_panel.cpp.
#include "attention/attention_panel.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>

#include <nlohmann/json.hpp>

#include "attention/attention_export.h"
#include "widgets/attention_heatmap.h"
#include "widgets/bidi_delegate.h"
#include "widgets/plot_style.h"

namespace ts::ui {

bool AttentionPanel::exportPng(const QString& path, QString* error) {
  if (largeView()->cellCount() == 0) {
    if (error) *error = tr("Nothing to export: no attention map is shown.");
    return false;
  }
  QString target = path;
  if (QFileInfo(target).suffix().isEmpty()) target += QStringLiteral(".png");
  return export_plot(largeView()->plot(), target, error);
}

bool AttentionPanel::exportSvg(const QString& path, QString* error) {
  const AttentionMatrix m = data_.matrix(kind_, layer_, head_);
  if (m.empty()) {
    if (error) *error = tr("Nothing to export: no attention map is shown.");
    return false;
  }
  AttentionSvgInput in;
  in.title = viewTitle();
  in.subtitle = result_.text.isEmpty()
                    ? result_.source
                    : left_to_right(tr("%1  →  %2").arg(isolated(result_.source), isolated(result_.text)));
  in.row_title = AttentionData::rowTitle(kind_);
  in.column_title = AttentionData::columnTitle(kind_);
  in.rows = data_.rowLabels(kind_);
  in.columns = data_.columnLabels(kind_);
  in.values = to_qvector(m);
  in.causal = kind_ == AttentionKind::DecoderSelf;
  return write_export_file(path, attention_svg(in).toUtf8(), error);
}

bool AttentionPanel::exportJson(const QString& path, QString* error) const {
  if (data_.isEmpty()) {
    if (error) *error = tr("Nothing to export: no translation with attention is shown.");
    return false;
  }
  const std::string text = attention_export_json(result_).dump() + "\n";
  return write_export_file(path, QByteArray::fromStdString(text), error);
}

void AttentionPanel::exportPngClicked() {
  const QString name = QStringLiteral("attention-%1-L%2-%3.png")
                           .arg(QString::fromLatin1(AttentionData::jsonKey(kind_)))
                           .arg(layer_ + 1)
                           .arg(head_ < 0 ? QStringLiteral("avg") : QStringLiteral("H%1").arg(head_ + 1));
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export attention map as PNG"), name, tr("PNG images (*.png)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportPng(path, &error)) QMessageBox::warning(this, tr("Cannot export the image"), error);
}

void AttentionPanel::exportSvgClicked() {
  const QString name = QStringLiteral("attention-%1-L%2-%3.svg")
                           .arg(QString::fromLatin1(AttentionData::jsonKey(kind_)))
                           .arg(layer_ + 1)
                           .arg(head_ < 0 ? QStringLiteral("avg") : QStringLiteral("H%1").arg(head_ + 1));
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export attention map as SVG"), name, tr("SVG images (*.svg)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportSvg(path, &error)) QMessageBox::warning(this, tr("Cannot export the SVG"), error);
}

void AttentionPanel::exportJsonClicked() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export attention weights as JSON"),
                                                    QStringLiteral("attention.json"), tr("JSON files (*.json)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportJson(path, &error)) QMessageBox::warning(this, tr("Cannot export the weights"), error);
}

}  // namespace ts::ui
