#include "device_info.h"

#include <thread>

#include <torch/cuda.h>
#include <torch/version.h>

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

int cpu_cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

QString default_device_description() {
  if (cuda_available()) return QStringLiteral("CUDA GPU");
  return QStringLiteral("CPU (%1 cores)").arg(cpu_cores());
}

}  // namespace ts::ui
