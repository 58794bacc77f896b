// SPDX-License-Identifier: GPL-3.0-or-later
// Data-parallel collectives on c10d (see ts/train/distributed.h).
#include "ts/train/distributed.h"
#include "ts/model/torch_compat.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>
#include <torch/csrc/autograd/grad_mode.h>

// CMake sets TS_HAVE_GLOO (and TS_HAVE_NCCL) for this file only when the headers are there;
// LibTorch's c10d headers expose the backends only under these macros (Debian's TorchConfig
// defines USE_C10D_GLOO already; other builds may not).
#ifdef TS_HAVE_GLOO
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif
#ifdef TS_HAVE_NCCL
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace ts {

void DistributedConfig::validate() const {
  if (world_size < 1) throw std::invalid_argument(fmt::format("world_size must be at least 1 (got {})", world_size));
  if (rank < 0 || rank >= world_size)
    throw std::invalid_argument(
        fmt::format("rank must be in 0..{} for world_size {} (got {})", world_size - 1, world_size, rank));
  if (master_addr.empty()) throw std::invalid_argument("master_addr is empty");
  if (master_port < 1 || master_port > 65535)
    throw std::invalid_argument(fmt::format("master_port must be in 1..65535 (got {})", master_port));
  if (!(timeout_s > 0)) throw std::invalid_argument(fmt::format("timeout_s must be positive (got {})", timeout_s));
}

bool data_parallel_available() {
#ifdef TS_HAVE_GLOO
  return true;
#else
  return false;
#endif
}

std::string data_parallel_backend(const at::Device& device) {
#ifdef TS_HAVE_NCCL
  if (device.is_cuda()) return "NCCL";
#endif
  return data_parallel_available() ? "Gloo" : "none";
}

int free_port(const std::string& host) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("free_port: cannot create a socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;  // the kernel picks a free one
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof addr;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error(fmt::format("free_port: cannot bind a socket on {}", host));
  return ntohs(addr.sin_port);
}

#ifdef TS_HAVE_GLOO

namespace {

// c10::Error's what() carries a C++ backtrace; users need the first line.
std::string message_of(const std::exception& e) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) return c10->what_without_backtrace();
  return e.what();
}

bool is_loopback(const std::string& host) { return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0; }

// Parameters are flattened into buckets of this many elements: one allreduce per bucket, all
// buckets in flight at once, so copying the next bucket overlaps sending the previous one.
constexpr std::int64_t kBucketElements = 4 << 20;

}  // namespace

struct DataParallel::Impl {
  DistributedConfig config;
  at::Device device{at::kCPU};
  std::string backend;
  c10::intrusive_ptr<c10d::Store> store;
  // The concrete groups, not a base class: LibTorch 1.x derives them from ProcessGroup, 2.x from
  // Backend, with the same collective methods.
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#ifdef TS_HAVE_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;
#endif

  bool connected() const {
#ifdef TS_HAVE_NCCL
    if (nccl) return true;
#endif
    return static_cast<bool>(gloo);
  }
  // Starts a collective on the group: f(group) returns its Work.
  template <typename F>
  c10::intrusive_ptr<c10d::Work> start(F&& f) {
#ifdef TS_HAVE_NCCL
    if (nccl) return f(*nccl);
#endif
    return f(*gloo);
  }

  // Runs collectives and waits for them; failures name the operation and this rank.
  template <typename F>
  void run(const char* what, F&& f) {
    if (!connected()) throw std::logic_error(fmt::format("data-parallel {}: not connected", what));
    try {
      f();
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("data-parallel {} failed on rank {} of {} ({}): {}", what, config.rank,
                                           config.world_size, backend, message_of(e)));
    }
  }

  // Applies `op` to flat copies of `tensors` (grouped by dtype into buckets), then copies back.
  template <typename Op>
  void bucketed(const std::vector<at::Tensor>& tensors, Op&& op) {
    struct Bucket {
      at::Tensor flat;
      std::vector<at::Tensor> members;
      c10::intrusive_ptr<c10d::Work> work;
    };
    std::vector<Bucket> buckets;
    std::vector<at::Tensor> pending;
    std::int64_t pending_elements = 0;
    const auto flush = [&] {
      if (pending.empty()) return;
      Bucket b;
      b.flat = at::empty({pending_elements}, pending.front().options());
      std::int64_t offset = 0;
      for (const auto& t : pending) {
        b.flat.narrow(0, offset, t.numel()).copy_(t.reshape(-1));
        offset += t.numel();
      }
      b.members = std::move(pending);
      std::vector<at::Tensor> io{b.flat};
      b.work = op(io);
      buckets.push_back(std::move(b));
      pending.clear();
      pending_elements = 0;
    };
    for (const auto& t : tensors) {
      if (!pending.empty() &&
          (t.scalar_type() != pending.front().scalar_type() || pending_elements + t.numel() > kBucketElements))
        flush();
      pending.push_back(t);
      pending_elements += t.numel();
    }
    flush();
    for (auto& b : buckets) {
      b.work->wait();
      std::int64_t offset = 0;
      for (auto& t : b.members) {
        t.copy_(b.flat.narrow(0, offset, t.numel()).view(t.sizes()));
        offset += t.numel();
      }
    }
  }
};

DataParallel::DataParallel() : impl_(std::make_unique<Impl>()) {}
DataParallel::~DataParallel() = default;

void DataParallel::connect(const DistributedConfig& config, const at::Device& device) {
  config.validate();
  auto& s = *impl_;
  s.config = config;
  s.device = device;
  s.backend = data_parallel_backend(device);
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(config.timeout_s * 1000));
  const auto where = fmt::format("{}:{}", config.master_addr, config.master_port);
  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(config.master_port);
    options.isServer = config.rank == 0;
    options.numWorkers = static_cast<std::size_t>(config.world_size);
    options.waitWorkers = true;  // rank 0 returns once every rank has reached the store
    options.timeout = timeout;
    torch_compat::use_classic_tcp_store(options);
    s.store = c10::make_intrusive<c10d::TCPStore>(config.master_addr, options);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format(
        "data-parallel rendezvous at {} failed for rank {} of {} ({}): {}", where, config.rank, config.world_size,
        config.rank == 0 ? "serving the TCPStore" : "connecting to rank 0", message_of(e)));
  }
  try {
#ifdef TS_HAVE_NCCL
    if (s.backend == "NCCL") {
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      s.nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(s.store, config.rank, config.world_size, options);
    }
#endif
    if (!s.connected()) {
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      // On one machine, loopback; else the interface GLOO_SOCKET_IFNAME names (as PyTorch does),
      // else the address this host's name resolves to.
      const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
      if (is_loopback(config.master_addr))
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      else if (ifname && *ifname)
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      else
        options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      options->threads = 2;
      s.gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(s.store, config.rank, config.world_size, options);
    }
  } catch (const std::exception& e) {
    s.gloo.reset();
#ifdef TS_HAVE_NCCL
    s.nccl.reset();
#endif
    throw std::runtime_error(
        fmt::format("data-parallel: creating the {} process group (rendezvous {}) failed for rank {} of {}: {}",
                    s.backend, where, config.rank, config.world_size, message_of(e)));
  }
}

bool DataParallel::connected() const { return impl_->connected(); }
int DataParallel::rank() const { return impl_->config.rank; }
int DataParallel::world_size() const { return impl_->config.world_size; }
const DistributedConfig& DataParallel::config() const { return impl_->config; }
at::Device DataParallel::device() const { return impl_->device; }
std::string DataParallel::backend() const { return impl_->backend; }

void DataParallel::broadcast_parameters(Transformer& model) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> tensors;
  for (const auto& p : model->parameters()) tensors.push_back(p);
  for (const auto& b : model->buffers()) tensors.push_back(b);
  auto& s = *impl_;
  s.run("broadcast of the parameters", [&] {
    s.bucketed(tensors, [&](std::vector<at::Tensor>& io) { return s.start([&](auto& g) { return g.broadcast(io); }); });
  });
}

void DataParallel::all_reduce_gradients(Transformer& model, double scale) {
  torch::NoGradGuard no_grad;
  auto params = model->parameters();
  // Whether each rank has a gradient, summed alongside: a parameter no rank has a gradient for
  // stays without one (Adam skips it, as in one process) instead of getting zeros.
  std::vector<float> has_grad(params.size(), 0.0f);
  std::vector<at::Tensor> grads;
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto& p = params[i];
    if (p.grad().defined()) {
      has_grad[i] = 1;
    } else {
      p.mutable_grad() = at::zeros_like(p);
    }
    grads.push_back(p.grad());
  }
  auto defined = at::tensor(has_grad, at::kFloat).to(impl_->device);
  auto& s = *impl_;
  s.run("allreduce of the gradients", [&] {
    std::vector<at::Tensor> mask{defined};
    auto mask_work = s.start([&](auto& g) { return g.allreduce(mask); });
    s.bucketed(grads, [&](std::vector<at::Tensor>& io) {
      if (scale != 1.0) io.front().mul_(scale);
      return s.start([&](auto& g) { return g.allreduce(io); });
    });
    mask_work->wait();
  });
  const auto any = defined.cpu();
  for (std::size_t i = 0; i < params.size(); ++i)
    if (any[static_cast<std::int64_t>(i)].item<float>() == 0) params[i].mutable_grad() = at::Tensor();
}

void DataParallel::all_reduce_sum(std::vector<double>& values) {
  if (values.empty()) return;
  auto& s = *impl_;
  auto t = at::tensor(values, at::kDouble).to(s.device);
  s.run("allreduce", [&] {
    std::vector<at::Tensor> io{t};
    s.start([&](auto& g) { return g.allreduce(io); })->wait();
  });
  const auto cpu = t.cpu();
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = cpu[static_cast<std::int64_t>(i)].item<double>();
}

void DataParallel::broadcast(std::vector<double>& values) {
  if (values.empty()) return;
  auto& s = *impl_;
  auto t = at::tensor(values, at::kDouble).to(s.device);
  s.run("broadcast", [&] {
    std::vector<at::Tensor> io{t};
    s.start([&](auto& g) { return g.broadcast(io); })->wait();
  });
  const auto cpu = t.cpu();
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = cpu[static_cast<std::int64_t>(i)].item<double>();
}

void DataParallel::barrier() {
  auto& s = *impl_;
  s.run("barrier", [&] { s.start([&](auto& g) { return g.barrier(); })->wait(); });
}

#else  // no Gloo headers when this was built: the same interface, refusing to connect

namespace {
[[noreturn]] void unavailable() {
  throw std::runtime_error(
      "data-parallel training is not available: this build has no c10d Gloo support "
      "(install libgloo-dev and reconfigure)");
}
}  // namespace

struct DataParallel::Impl {
  DistributedConfig config;
  at::Device device{at::kCPU};
};
DataParallel::DataParallel() : impl_(std::make_unique<Impl>()) {}
DataParallel::~DataParallel() = default;
void DataParallel::connect(const DistributedConfig& config, const at::Device&) {
  config.validate();
  unavailable();
}
bool DataParallel::connected() const { return false; }
int DataParallel::rank() const { return impl_->config.rank; }
int DataParallel::world_size() const { return impl_->config.world_size; }
const DistributedConfig& DataParallel::config() const { return impl_->config; }
at::Device DataParallel::device() const { return impl_->device; }
std::string DataParallel::backend() const { return "none"; }
void DataParallel::broadcast_parameters(Transformer&) { unavailable(); }
void DataParallel::all_reduce_gradients(Transformer&, double) { unavailable(); }
void DataParallel::all_reduce_sum(std::vector<double>&) { unavailable(); }
void DataParallel::broadcast(std::vector<double>&) { unavailable(); }
void DataParallel::barrier() { unavailable(); }

#endif

}  // namespace ts
