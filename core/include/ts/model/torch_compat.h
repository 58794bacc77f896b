// SPDX-License-Identifier: GPL-3.0-or-later
// The one place where the LibTorch generations differ for us: Debian 12's 1.13 and the 2.x of
// Debian 13 (2.6) and of PyTorch's own builds. Everything else calls these and never tests a
// version itself; scripts/check-libtorch2.sh builds and tests against 2.x on every CI run.
#pragma once

#include <sstream>
#include <string>
#include <type_traits>

#include <ATen/autocast_mode.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <torch/optim/optimizer.h>
#include <torch/version.h>

/// True when the LibTorch compiled against is at least major.minor (from torch/version.h).
#define TS_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace ts::torch_compat {

/// The key of an optimizer's per-parameter state map: the parameter's TensorImpl address as text
/// in 1.13 (what its Adam writes), the address itself in 2.x.
using OptimizerStateKey = typename std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;

/// The key LibTorch's own optimizers use for parameter `p`, so that state we create or load is
/// the state their step() finds, and the other way round.
template <class Key = OptimizerStateKey>
Key optimizer_state_key(const at::Tensor& p) {
  void* impl = p.unsafeGetTensorImpl();
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream text;  // 1.13's c10::guts::to_string(TensorImpl*): the pointer streamed
    text << impl;
    return text.str();
  } else {
    return impl;
  }
}

// Autocast. 2.4 made the state per device type (is_autocast_enabled(kCUDA) and so on) and
// deprecated the old per-device functions, which then print a warning on every call.
inline bool autocast_enabled(c10::DeviceType device) {
#if TS_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(device);
#else
  return device == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

inline void set_autocast_enabled(c10::DeviceType device, bool enabled) {
#if TS_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_enabled(device, enabled);
#else
  if (device == c10::DeviceType::CUDA)
    at::autocast::set_enabled(enabled);
  else
    at::autocast::set_cpu_enabled(enabled);
#endif
}

inline c10::ScalarType autocast_dtype(c10::DeviceType device) {
#if TS_TORCH_AT_LEAST(2, 4)
  return at::autocast::get_autocast_dtype(device);
#else
  return device == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                         : at::autocast::get_autocast_cpu_dtype();
#endif
}

inline void set_autocast_dtype(c10::DeviceType device, c10::ScalarType dtype) {
#if TS_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_dtype(device, dtype);
#else
  if (device == c10::DeviceType::CUDA)
    at::autocast::set_autocast_gpu_dtype(dtype);
  else
    at::autocast::set_autocast_cpu_dtype(dtype);
#endif
}

namespace detail {
template <class T, class = void>
struct has_use_libuv : std::false_type {};
template <class T>
struct has_use_libuv<T, std::void_t<decltype(std::declval<T&>().useLibUV)>> : std::true_type {};
}  // namespace detail

/// c10d's TCPStore (data-parallel rendezvous): 2.2 added a libuv server and 2.4 made it the
/// default, which a LibTorch built without libuv (Debian's 2.6) refuses to start. The classic
/// server works on every version: ask for it where the option exists.
template <class TcpStoreOptions>
void use_classic_tcp_store(TcpStoreOptions& options) {
  if constexpr (detail::has_use_libuv<TcpStoreOptions>::value) options.useLibUV = false;
}

}  // namespace ts::torch_compat
