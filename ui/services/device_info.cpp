// SPDX-License-Identifier: GPL-3.0-or-later
#include "services/device_info.h"

#include <thread>

#include <torch/cuda.h>
#include <torch/version.h>

#include "ts/host/cpu.h"
#include "ts/train/environment.h"

namespace ts::ui {

bool cuda_available() {
  static const bool available = torch::cuda::is_available();
  return available;
}

QStringList available_devices() {
  QStringList devices{QStringLiteral("auto"), QStringLiteral("cpu")};
  if (cuda_available()) devices << QStringLiteral("cuda");
  return devices;
}

QString libtorch_version() { return QStringLiteral(TORCH_VERSION); }

int cpu_cores() { return ts::cpu_cores(); }

QString gpu_name() {
  const auto& devices = gpu_report().devices;
  return devices.empty() || devices.front().name.empty() ? QStringLiteral("GPU")
                                                         : QString::fromStdString(devices.front().name);
}

QString device_description(const QString& device) {
  if (device == QLatin1String("cuda")) {
    const auto& devices = gpu_report().devices;
    return devices.empty() ? QStringLiteral("cuda: GPU")
                           : QStringLiteral("cuda: %1").arg(QString::fromStdString(describe_gpu(devices.front())));
  }
  if (device == QLatin1String("cpu")) return QStringLiteral("cpu: %1 cores").arg(cpu_cores());
  return device;
}

QString default_device_description() {
  if (cuda_available()) return QStringLiteral("CUDA: %1").arg(gpu_name());
  return QStringLiteral("CPU (%1 cores)").arg(cpu_cores());
}

QString version_with_commit() { return QString::fromStdString(version_string()); }

QString environment_rows_html() {
  QString rows;
  for (const auto& [what, value] : environment_report())
    rows += QStringLiteral("<tr><td><b>%1</b>&nbsp;</td><td>%2</td></tr>")
                .arg(QString::fromStdString(what).toHtmlEscaped(), QString::fromStdString(value).toHtmlEscaped());
  return rows;
}

}  // namespace ts::ui
