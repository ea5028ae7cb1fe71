// wasmwarp's Python extension (_wasmwarp): the public C++ API
// (include/wasmwarp/wasmwarp.h) with NumPy arrays in and out. The Python
// layer (python/wasmwarp/__init__.py) adds argument handling and the Trap
// exception on top.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstring>
#include <future>
#include <thread>

#include "wasmwarp/wasmwarp.h"

namespace py = pybind11;

namespace {

// Python's dtype name for a WebAssembly value type ("" for refs, v128).
const char* dtype_of(wasmwarp::ValueType t) {
  switch (t) {
    case wasmwarp::ValueType::I32: return "int32";
    case wasmwarp::ValueType::I64: return "int64";
    case wasmwarp::ValueType::F32: return "float32";
    case wasmwarp::ValueType::F64: return "float64";
    default: return "";
  }
}

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }

wasmwarp::Backend backend_of(const std::string& s) {
  if (s == "auto") return wasmwarp::Backend::Auto;
  if (s == "cpu") return wasmwarp::Backend::Cpu;
  if (s == "gpu") return wasmwarp::Backend::Gpu;
  throw py::value_error("backend must be 'auto', 'cpu' or 'gpu', not '" + s + "'");
}

wasmwarp::Tier tier_of(const std::string& s) {
  if (s == "auto") return wasmwarp::Tier::Auto;
  if (s == "interp") return wasmwarp::Tier::Interpreter;
  if (s == "compiled") return wasmwarp::Tier::Compiled;
  throw py::value_error("tier must be 'auto', 'interp' or 'compiled', not '" + s + "'");
}

// One parameter's argument: a 1-D array of the parameter's dtype (a column),
// None (the instance's index), or a Python number (the same for all).
wasmwarp::Arg arg_of(const py::handle& a, wasmwarp::ValueType t, size_t k, const std::string& fn) {
  const std::string which = "argument " + std::to_string(k + 1) + " of '" + fn + "'";
  if (a.is_none()) return wasmwarp::Arg::index();
  if (py::isinstance<py::array>(a)) {
    py::array arr = py::reinterpret_borrow<py::array>(a);
    if (arr.ndim() != 1) throw py::value_error(which + " must be 1-D, not " + std::to_string(arr.ndim()) + "-D");
    const std::string want = dtype_of(t);
    const std::string have = py::str(arr.dtype()).cast<std::string>();
    if (have != want)
      throw py::type_error(which + " is " + wasmwarp::type_name(t) + " (dtype " + want + "), given dtype " + have);
    switch (t) {
      case wasmwarp::ValueType::I32: {
        auto c = py::array_t<int32_t, py::array::c_style | py::array::forcecast>::ensure(arr);
        return wasmwarp::Arg::column(std::span<const int32_t>(c.data(), size_t(c.size())));
      }
      case wasmwarp::ValueType::I64: {
        auto c = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(arr);
        return wasmwarp::Arg::column(std::span<const int64_t>(c.data(), size_t(c.size())));
      }
      case wasmwarp::ValueType::F32: {
        auto c = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(arr);
        return wasmwarp::Arg::column(std::span<const float>(c.data(), size_t(c.size())));
      }
      default: {
        auto c = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(arr);
        return wasmwarp::Arg::column(std::span<const double>(c.data(), size_t(c.size())));
      }
    }
  }
  switch (t) {
    case wasmwarp::ValueType::I32: return wasmwarp::Arg::i32(int32_t(a.cast<int64_t>()));
    case wasmwarp::ValueType::I64: return wasmwarp::Arg::i64(a.cast<int64_t>());
    case wasmwarp::ValueType::F32: return wasmwarp::Arg::f32(a.cast<float>());
    case wasmwarp::ValueType::F64: return wasmwarp::Arg::f64(a.cast<double>());
    default: throw py::type_error(which + " is " + wasmwarp::type_name(t) + ", which Python cannot pass");
  }
}

// Runs `call` with the GIL released, on a thread of its own, while this
// thread looks for Ctrl-C every 100 ms: a KeyboardInterrupt sets the cancel
// flag, and the call's running instances stop as "interrupted".
template <class Call>
auto run_interruptibly(std::atomic<bool>& cancel, Call&& call) {
  auto fut = std::async(std::launch::async, std::forward<Call>(call));
  bool interrupted = false;
  for (;;) {
    std::future_status s;
    {
      py::gil_scoped_release nogil;
      s = fut.wait_for(std::chrono::milliseconds(100));
    }
    if (s == std::future_status::ready) break;
    if (!interrupted && PyErr_CheckSignals() != 0) {
      interrupted = true;
      cancel.store(true);
    }
  }
  auto r = fut.get();
  if (interrupted) throw py::error_already_set();
  return r;
}

// The result columns and trap codes of a call as NumPy arrays.
py::tuple outcome(const wasmwarp::CallResult& r) {
  const uint64_t n = r.instances();
  const auto& types = r.result_types();
  py::list cols;
  for (size_t k = 0; k < types.size(); ++k) {
    const std::string dt = dtype_of(types[k]);
    if (dt.empty()) fail(std::string("a result of type ") + wasmwarp::type_name(types[k]) + " has no NumPy dtype");
    py::array col(py::dtype(dt), std::vector<py::ssize_t>{py::ssize_t(n)});
    auto* out = static_cast<uint8_t*>(col.mutable_data());
    const size_t w = types[k] == wasmwarp::ValueType::I32 || types[k] == wasmwarp::ValueType::F32 ? 4 : 8;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t b = r.trapped(i) ? 0 : r.bits(i, k);
      std::memcpy(out + i * w, &b, w);  // little-endian hosts
    }
    cols.append(col);
  }
  py::array_t<uint8_t> traps(std::vector<py::ssize_t>{py::ssize_t(n)});
  std::memcpy(traps.mutable_data(), r.trap_codes().data(), n);
  return py::make_tuple(cols, traps);
}

// The arguments of a call of `fn`, one per parameter.
std::vector<wasmwarp::Arg> args_for(const wasmwarp::Module& mod, const std::string& fn, const py::sequence& args) {
  auto type = mod.function_type(fn);
  if (!type) throw py::value_error(type.error().message);
  if (py::len(args) != type->params.size())
    throw py::type_error("'" + fn + "' takes " + std::to_string(type->params.size()) + " argument(s), given " +
                         std::to_string(py::len(args)));
  std::vector<wasmwarp::Arg> a;
  for (size_t k = 0; k < type->params.size(); ++k) a.push_back(arg_of(args[k], type->params[k], k, fn));
  return a;
}

// calls: (export, args, repeat) per call of a chain.
std::vector<wasmwarp::Call> chain_for(const wasmwarp::Module& mod, const py::sequence& calls) {
  std::vector<wasmwarp::Call> chain;
  for (const py::handle& item : calls) {
    auto c = item.cast<py::tuple>();
    wasmwarp::Call call;
    call.export_name = c[0].cast<std::string>();
    call.repeat = c[2].cast<uint64_t>();
    call.args = args_for(mod, call.export_name, c[1].cast<py::sequence>());
    chain.push_back(std::move(call));
  }
  return chain;
}

wasmwarp::Engine engine_for(const std::string& backend, const std::string& tier, unsigned threads) {
  wasmwarp::EngineOptions eo;
  eo.backend = backend_of(backend);
  eo.tier = tier_of(tier);
  eo.threads = threads;
  return wasmwarp::Engine(eo);
}

// Runs `call(options)` interruptibly with the call options given.
template <class Call>
py::tuple run_call(uint64_t fuel, double timeout, bool launch_per_call, Call&& call) {
  std::atomic<bool> cancel{false};
  wasmwarp::CallOptions o;
  o.fuel = fuel;
  o.timeout_s = timeout;
  o.cancel = &cancel;
  o.gpu_launch_per_call = launch_per_call;
  auto r = run_interruptibly(cancel, [&] { return call(o); });
  if (!r) throw py::value_error(r.error().message);
  return outcome(*r);
}

}  // namespace

PYBIND11_MODULE(_wasmwarp, m) {
  m.doc() = "wasmwarp's extension: run a WebAssembly export on many instances at once (CPU or GPU)";

  py::class_<wasmwarp::Module>(m, "_Module")
      .def_static(
          "load",
          [](const std::string& path) {
            auto r = wasmwarp::Module::from_file(path);
            if (!r) throw py::value_error(r.error().message);
            return *r;
          },
          py::arg("path"))
      .def_static(
          "from_bytes",
          [](py::bytes b) {
            std::string s = b;
            auto r = wasmwarp::Module::from_bytes(std::vector<uint8_t>(s.begin(), s.end()));
            if (!r) throw py::value_error(r.error().message);
            return *r;
          },
          py::arg("wasm"))
      .def("exports",
           [](const wasmwarp::Module& mod) {
             py::list out;
             for (const wasmwarp::Export& e : mod.exports()) {
               static const char* kinds[] = {"function", "table", "memory", "global"};
               py::list params, results;
               for (auto t : e.type.params) params.append(wasmwarp::type_name(t));
               for (auto t : e.type.results) results.append(wasmwarp::type_name(t));
               out.append(py::make_tuple(e.name, kinds[int(e.kind)], params, results));
             }
             return out;
           })
      .def(
          "call",
          [](const wasmwarp::Module& mod, const std::string& fn, py::sequence args, uint64_t n,
             const std::string& backend, const std::string& tier, unsigned threads, uint64_t fuel, double timeout) {
            auto a = args_for(mod, fn, args);
            auto engine = engine_for(backend, tier, threads);
            return run_call(fuel, timeout, false, [&](const wasmwarp::CallOptions& o) { return engine.call(mod, fn, n, a, o); });
          },
          py::arg("export"), py::arg("args"), py::arg("n"), py::arg("backend") = "auto", py::arg("tier") = "auto",
          py::arg("threads") = 0, py::arg("fuel") = 0, py::arg("timeout") = 0.0)
      .def(
          "chain",
          [](const wasmwarp::Module& mod, py::sequence calls, uint64_t n, const std::string& backend,
             const std::string& tier, unsigned threads, uint64_t fuel, double timeout, bool launch_per_call) {
            auto chain = chain_for(mod, calls);
            auto engine = engine_for(backend, tier, threads);
            return run_call(fuel, timeout, launch_per_call,
                            [&](const wasmwarp::CallOptions& o) { return engine.chain(mod, n, chain, o); });
          },
          py::arg("calls"), py::arg("n"), py::arg("backend") = "auto", py::arg("tier") = "auto",
          py::arg("threads") = 0, py::arg("fuel") = 0, py::arg("timeout") = 0.0, py::arg("launch_per_call") = false)
      .def(
          "instances",
          [](const wasmwarp::Module& mod, uint64_t n, const std::string& backend, const std::string& tier,
             unsigned threads) {
            auto engine = engine_for(backend, tier, threads);
            auto r = [&] {
              py::gil_scoped_release nogil;
              return engine.instances(mod, n);
            }();
            if (!r) throw py::value_error(r.error().message);
            return *r;
          },
          py::arg("n"), py::arg("backend") = "auto", py::arg("tier") = "auto", py::arg("threads") = 0);

  py::class_<wasmwarp::Instances>(m, "_Instances")
      .def("count", &wasmwarp::Instances::count)
      .def("backend",
           [](const wasmwarp::Instances& b) { return b.backend() == wasmwarp::Backend::Gpu ? "gpu" : "cpu"; })
      .def(
          "call",
          [](wasmwarp::Instances& b, const wasmwarp::Module& mod, const std::string& fn, py::sequence args,
             uint64_t fuel, double timeout) {
            auto a = args_for(mod, fn, args);
            return run_call(fuel, timeout, false, [&](const wasmwarp::CallOptions& o) { return b.call(fn, a, o); });
          },
          py::arg("module"), py::arg("export"), py::arg("args"), py::arg("fuel") = 0, py::arg("timeout") = 0.0)
      .def(
          "chain",
          [](wasmwarp::Instances& b, const wasmwarp::Module& mod, py::sequence calls, uint64_t fuel, double timeout,
             bool launch_per_call) {
            auto chain = chain_for(mod, calls);
            return run_call(fuel, timeout, launch_per_call,
                            [&](const wasmwarp::CallOptions& o) { return b.chain(chain, o); });
          },
          py::arg("module"), py::arg("calls"), py::arg("fuel") = 0, py::arg("timeout") = 0.0,
          py::arg("launch_per_call") = false)
      .def(
          "read_memory",
          [](const wasmwarp::Instances& b, uint64_t addr, uint64_t nbytes) {
            auto r = [&] {
              py::gil_scoped_release nogil;
              return b.read_memory(addr, nbytes);
            }();
            if (!r) throw py::value_error(r.error().message);
            py::array_t<uint8_t> out(std::vector<py::ssize_t>{py::ssize_t(b.count()), py::ssize_t(nbytes)});
            if (!r->empty()) std::memcpy(out.mutable_data(), r->data(), r->size());
            return out;
          },
          py::arg("addr"), py::arg("nbytes"))
      .def(
          "write_memory",
          [](wasmwarp::Instances& b, uint64_t addr, py::array_t<uint8_t, py::array::c_style> bytes, uint64_t record) {
            std::span<const uint8_t> span(bytes.data(), size_t(bytes.size()));
            auto r = [&] {
              py::gil_scoped_release nogil;
              return b.write_memory(addr, record, span);
            }();
            if (!r) throw py::value_error(r.error().message);
            return *r;
          },
          py::arg("addr"), py::arg("bytes"), py::arg("record"));

  m.def("trap_message", [](uint8_t code) { return wasmwarp::trap_message(code); }, py::arg("code"));
}
