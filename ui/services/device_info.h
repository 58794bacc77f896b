// SPDX-License-Identifier: GPL-3.0-or-later
// Facts about the compute back end for the panels, without LibTorch headers in theirs.
#pragma once

#include <QString>
#include <QStringList>

namespace ts::ui {

/// "cpu", plus "cuda" when LibTorch sees a GPU; "auto" first.
QStringList available_devices();
bool cuda_available();
/// LibTorch's version string ("1.13.1").
QString libtorch_version();
/// Human description of what "auto" resolves to: "CPU (2 cores)" or "CUDA: NVIDIA H100".
QString default_device_description();
/// What the device list shows for one of available_devices(): "cpu: 16 cores", "cuda: NVIDIA H200
/// (139.8 GiB, compute 9.0)" (the first GPU, which "cuda" means), the name itself otherwise.
QString device_description(const QString& device);
/// Logical cores of this machine.
int cpu_cores();
/// "0.1.0 (commit 2ac6dc3a1b2c)".
QString version_with_commit();
/// The build's environment as HTML table rows (LibTorch, CPU and bf16, CUDA, threads).
QString environment_rows_html();

}  // namespace ts::ui
