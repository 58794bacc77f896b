// SPDX-License-Identifier: GPL-3.0-or-later
// Device and precision choices by name (see ts/model/compute.h).
#include "ts/model/compute.h"

#include <stdexcept>

namespace ts {

const char* device_choice_name(DeviceChoice device) {
  switch (device) {
    case DeviceChoice::kCpu:
      return "cpu";
    case DeviceChoice::kCuda:
      return "cuda";
    case DeviceChoice::kAuto:
      break;
  }
  return "auto";
}

DeviceChoice parse_device_choice(const std::string& name) {
  for (auto device : {DeviceChoice::kAuto, DeviceChoice::kCpu, DeviceChoice::kCuda})
    if (name == device_choice_name(device)) return device;
  throw std::invalid_argument("unknown device \"" + name + "\" (expected auto, cpu or cuda)");
}

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kAuto:
      return "auto";
    case Precision::kFp32:
      break;
  }
  return "fp32";
}

Precision parse_precision(const std::string& name) {
  for (auto precision : {Precision::kFp32, Precision::kBf16, Precision::kFp16, Precision::kAuto})
    if (name == precision_name(precision)) return precision;
  throw std::invalid_argument("unknown precision \"" + name + "\" (expected fp32, bf16, fp16 or auto)");
}

}  // namespace ts
