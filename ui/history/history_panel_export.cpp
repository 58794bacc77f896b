// SPDX-License-Identifier: GPL-3.0-or-later
// The Run history panel's exports: every metric of the selected runs as CSV, the selected run as a
// self-contained HTML report, and the chart as PNG or PDF; each also through a save dialog that
// remembers its folder.
#include "history/history_panel.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QMessageBox>
#include <QSaveFile>
#include <QSettings>
#include <QStandardPaths>

#include <qcustomplot.h>

#include "history/history_util.h"
#include "services/device_info.h"
#include "ts/store/html_report.h"
#include "widgets/plot_style.h"

namespace ts::ui {

using history_util::ids_text;
using history_util::metric_label;
using history_util::q;

namespace {

QString csv_field(const QString& s) {
  if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) && !s.contains(QLatin1Char('\n'))) return s;
  QString out = s;
  out.replace(QLatin1String("\""), QLatin1String("\"\""));
  return QLatin1Char('"') + out + QLatin1Char('"');
}

QString export_dir() {
  QSettings settings;
  const QString dir = settings.value(QStringLiteral("history/exportDir")).toString();
  if (!dir.isEmpty() && QFileInfo(dir).isDir()) return dir;
  return QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
}
void remember_export_dir(const QString& file) {
  QSettings().setValue(QStringLiteral("history/exportDir"), QFileInfo(file).absolutePath());
}
QString ids_file_part(const std::vector<RunInfo>& runs) {
  QStringList ids;
  for (const auto& r : runs) ids << QString::number(r.id);
  return (runs.size() == 1 ? QStringLiteral("run-") : QStringLiteral("runs-")) + ids.join(QLatin1Char('-'));
}

}  // namespace

bool HistoryPanel::exportReport(const QString& path, QString* error) {
  auto fail = [&](const QString& message) {
    if (error) *error = message;
    setMessage(message, true);
    return false;
  };
  const auto runs = selectedRuns();
  if (runs.size() != 1 || !store_) return fail(tr("Select the one run to report on."));
  QByteArray html;
  try {
    ReportOptions options;
    options.version = version_with_commit().toStdString();
    html = QByteArray::fromStdString(html_report(*store_, runs.front().id, options));
  } catch (const std::exception& e) {
    return fail(tr("Cannot read the run: %1").arg(QString::fromUtf8(e.what())));
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(html) != html.size() || !file.commit())
    return fail(tr("Cannot write %1: %2").arg(path, file.errorString()));
  setMessage(tr("Report of run %1 saved to %2").arg(runs.front().id).arg(path), false);
  return true;
}

bool HistoryPanel::exportMetricsCsv(const QString& path, QString* error) {
  auto fail = [&](const QString& message) {
    if (error) *error = message;
    setMessage(message, true);
    return false;
  };
  const auto runs = selectedRuns();
  if (runs.empty() || !store_) return fail(tr("Select the runs whose metrics to export."));
  QByteArray out = "run_id,run_name,step,metric,value,time\n";
  std::size_t rows = 0;
  try {
    for (const auto& r : runs) {
      const QString prefix = QString::number(r.id) + QLatin1Char(',') + csv_field(q(r.name)) + QLatin1Char(',');
      for (const auto& m : store_->all_metrics(r.id)) {
        out += (prefix + QString::number(m.step) + QLatin1Char(',') + csv_field(q(m.name)) + QLatin1Char(',') +
                QString::number(m.value, 'g', QLocale::FloatingPointShortest) + QLatin1Char(',') +
                QString::number(m.time, 'f', 3) + QLatin1Char('\n'))
                   .toUtf8();
        ++rows;
      }
    }
  } catch (const std::exception& e) {
    return fail(tr("Cannot read the metrics: %1").arg(QString::fromUtf8(e.what())));
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(out) != out.size() || !file.commit())
    return fail(tr("%1: cannot write (%2)").arg(QDir::toNativeSeparators(path), file.errorString()));
  setMessage(tr("Exported %1 metric rows of %2 to %3.").arg(rows).arg(ids_text(runs), QDir::toNativeSeparators(path)));
  return true;
}

bool HistoryPanel::exportChart(const QString& path, QString* error) {
  QString message;
  if (chart()->graphCount() == 0) {
    message = tr("Nothing to export: select runs with %1 recorded first.").arg(metric_label(metric()));
  } else {
    chart()->replot(QCustomPlot::rpImmediateRefresh);
    if (export_plot(chart(), path, &message)) {
      setMessage(tr("Saved the chart to %1.").arg(QDir::toNativeSeparators(path)));
      return true;
    }
  }
  if (error) *error = message;
  setMessage(message, true);
  return false;
}

void HistoryPanel::exportCsvWithDialog() {
  const auto runs = selectedRuns();
  if (runs.empty()) return;
  const QString suggested = QDir(export_dir()).filePath(ids_file_part(runs) + QStringLiteral("-metrics.csv"));
  QString path = QFileDialog::getSaveFileName(this, tr("Export metrics"), suggested, tr("CSV files (*.csv)"));
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".csv");
  remember_export_dir(path);
  QString error;
  if (!exportMetricsCsv(path, &error)) QMessageBox::warning(this, tr("Export metrics"), error);
}

void HistoryPanel::exportReportWithDialog() {
  const auto runs = selectedRuns();
  if (runs.size() != 1) return;
  const QString suggested = QDir(export_dir()).filePath(ids_file_part(runs) + QStringLiteral("-report.html"));
  QString path = QFileDialog::getSaveFileName(this, tr("Export report"), suggested, tr("HTML pages (*.html)"));
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".html");
  remember_export_dir(path);
  QString error;
  if (!exportReport(path, &error)) QMessageBox::warning(this, tr("Export report"), error);
}

void HistoryPanel::exportChartWithDialog() {
  const auto runs = selectedRuns();
  if (chart()->graphCount() == 0) return;
  const QString png = tr("PNG image (*.png)"), pdf = tr("PDF document (*.pdf)");
  QString filter = png;
  const QString suggested =
      QDir(export_dir()).filePath(ids_file_part(runs) + QLatin1Char('-') + metric() + QStringLiteral(".png"));
  QString path =
      QFileDialog::getSaveFileName(this, tr("Export chart"), suggested, png + QStringLiteral(";;") + pdf, &filter);
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += filter == pdf ? QStringLiteral(".pdf") : QStringLiteral(".png");
  remember_export_dir(path);
  QString error;
  if (!exportChart(path, &error)) QMessageBox::warning(this, tr("Export chart"), error);
}

}  // namespace ts::ui
