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

// DLPack's ABI (Debian's libdlpack-dev): tensors in and out without a
// copy. Without the header the extension still takes and gives CUDA
// arrays through __cuda_array_interface__.
#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>
#define WW_HAVE_DLPACK 1
#endif

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

wasmwarp::UnknownImports unknown_imports_of(const std::string& s) {
  if (s == "error") return wasmwarp::UnknownImports::Error;
  if (s == "trap") return wasmwarp::UnknownImports::Trap;
  if (s == "default") return wasmwarp::UnknownImports::Default;
  throw py::value_error("unknown_imports must be None, 'trap' or 'default', not '" + s + "'");
}

// NumPy's array-interface type string of a value type ("<i4", ...).
const char* typestr_of(wasmwarp::ValueType t) {
  switch (t) {
    case wasmwarp::ValueType::I32: return "<i4";
    case wasmwarp::ValueType::I64: return "<i8";
    case wasmwarp::ValueType::F32: return "<f4";
    case wasmwarp::ValueType::F64: return "<f8";
    default: return "";
  }
}

// A column in GPU memory, from an object with __cuda_array_interface__
// (CuPy, PyTorch, Numba): 1-D, contiguous, of the parameter's type.
wasmwarp::Arg cuda_column(const py::handle& a, wasmwarp::ValueType t, const std::string& which) {
  py::dict cai = a.attr("__cuda_array_interface__");
  auto shape = cai["shape"].cast<py::tuple>();
  if (shape.size() != 1) throw py::value_error(which + " must be 1-D, not " + std::to_string(shape.size()) + "-D");
  const std::string have = cai["typestr"].cast<std::string>(), want = typestr_of(t);
  if (have != want)
    throw py::type_error(which + " is " + wasmwarp::type_name(t) + " (typestr " + want + "), given a CUDA array of " +
                         have);
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    auto strides = cai["strides"].cast<py::tuple>();
    if (strides[0].cast<int64_t>() != int64_t(want[2] - '0'))
      throw py::value_error(which + ": a CUDA array with gaps between its rows (make it contiguous)");
  }
  const auto ptr = cai["data"].cast<py::tuple>()[0].cast<uintptr_t>();
  return wasmwarp::Arg::device_column(reinterpret_cast<const void*>(ptr), t);
}

#ifdef WW_HAVE_DLPACK
// A tensor handed over through DLPack (an object with __dlpack__ but no
// __cuda_array_interface__): on a CUDA device, 1-D, contiguous. `keep`
// takes the capsule, whose tensor the caller releases after the call.
wasmwarp::Arg dlpack_column(const py::handle& a, wasmwarp::ValueType t, const std::string& which, py::list& keep) {
  py::tuple dev = a.attr("__dlpack_device__")();
  if (dev[0].cast<int>() != kDLCUDA) throw py::type_error(which + ": a DLPack tensor that is not on a CUDA device");
  py::capsule cap = a.attr("__dlpack__")();
  if (std::strcmp(cap.name(), "dltensor") != 0) throw py::value_error(which + ": a DLPack capsule already used");
  auto* m = static_cast<DLManagedTensor*>(cap.get_pointer());
  const DLTensor& x = m->dl_tensor;
  const uint8_t bits = t == wasmwarp::ValueType::I32 || t == wasmwarp::ValueType::F32 ? 32 : 64;
  const uint8_t code = t == wasmwarp::ValueType::F32 || t == wasmwarp::ValueType::F64 ? kDLFloat : kDLInt;
  if (x.ndim != 1) throw py::value_error(which + " must be 1-D, not " + std::to_string(x.ndim) + "-D");
  if (x.dtype.code != code || x.dtype.bits != bits || x.dtype.lanes != 1)
    throw py::type_error(which + " is " + wasmwarp::type_name(t) + ", given a DLPack tensor of another type");
  if (x.strides && x.strides[0] != 1) throw py::value_error(which + ": a DLPack tensor with gaps between its rows");
  cap.set_name("used_dltensor");
  keep.append(cap);
  return wasmwarp::Arg::device_column(static_cast<const uint8_t*>(x.data) + x.byte_offset, t);
}

// Releases the tensors dlpack_column took (their producers' memory).
void release_dlpack(py::list& keep) {
  for (const py::handle& h : keep) {
    auto* m = static_cast<DLManagedTensor*>(py::reinterpret_borrow<py::capsule>(h).get_pointer());
    if (m && m->deleter) m->deleter(m);
  }
  keep = py::list();
}
#endif

// One parameter's argument: a 1-D array of the parameter's dtype (a column,
// on the host or a CUDA device), None (the instance's index), or a Python
// number (the same for all).
wasmwarp::Arg arg_of(const py::handle& a, wasmwarp::ValueType t, size_t k, const std::string& fn, py::list& keep) {
  const std::string which = "argument " + std::to_string(k + 1) + " of '" + fn + "'";
  if (a.is_none()) return wasmwarp::Arg::index();
  if (t == wasmwarp::ValueType::V128) {
    // The vector's 16 bytes as in memory: bytes, bytearray, a uint8 array.
    std::string b;
    try {
      b = py::module_::import("builtins").attr("bytes")(a).cast<std::string>();
    } catch (const py::error_already_set&) {
      throw py::type_error(which + " is v128: give its 16 bytes (bytes, bytearray or a uint8 array)");
    }
    if (b.size() != 16) throw py::value_error(which + " is v128: 16 bytes, given " + std::to_string(b.size()));
    uint64_t lo, hi;
    std::memcpy(&lo, b.data(), 8);  // little-endian hosts
    std::memcpy(&hi, b.data() + 8, 8);
    return wasmwarp::Arg::v128(lo, hi);
  }
  if (py::hasattr(a, "__cuda_array_interface__")) return cuda_column(a, t, which);
#ifdef WW_HAVE_DLPACK
  if (!py::isinstance<py::array>(a) && py::hasattr(a, "__dlpack__") && py::hasattr(a, "__dlpack_device__"))
    return dlpack_column(a, t, which, keep);
#endif
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
// A result column left in GPU memory: exported as __cuda_array_interface__
// (CuPy, PyTorch, Numba) and DLPack, without a copy; it keeps the
// CallResult's device memory alive.
struct CudaArray {
  std::shared_ptr<const void> owner;
  const void* data = nullptr;
  uint64_t n = 0;
  wasmwarp::ValueType type = wasmwarp::ValueType::I32;
};

#ifdef WW_HAVE_DLPACK
// What a DLPack capsule of a CudaArray owns.
struct Exported {
  DLManagedTensor tensor{};
  int64_t shape[1] = {0};
  std::shared_ptr<const void> owner;
};

py::capsule to_dlpack(const CudaArray& a) {
  auto* e = new Exported;
  e->owner = a.owner;
  e->shape[0] = int64_t(a.n);
  DLTensor& x = e->tensor.dl_tensor;
  x.data = const_cast<void*>(a.data);
  x.device = {kDLCUDA, 0};  // wasmwarp runs on device 0
  x.ndim = 1;
  const bool f = a.type == wasmwarp::ValueType::F32 || a.type == wasmwarp::ValueType::F64;
  const bool narrow = a.type == wasmwarp::ValueType::I32 || a.type == wasmwarp::ValueType::F32;
  x.dtype = {uint8_t(f ? kDLFloat : kDLInt), uint8_t(narrow ? 32 : 64), 1};
  x.shape = e->shape;
  x.strides = nullptr;
  x.byte_offset = 0;
  e->tensor.manager_ctx = e;
  e->tensor.deleter = [](DLManagedTensor* m) { delete static_cast<Exported*>(m->manager_ctx); };
  // A capsule nobody consumed frees its tensor; a consumer renames it and
  // calls the deleter itself.
  return py::capsule(&e->tensor, "dltensor", [](PyObject* o) {
    if (!PyCapsule_IsValid(o, "dltensor")) return;
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(o, "dltensor"));
    if (m && m->deleter) m->deleter(m);
  });
}
#endif

py::tuple outcome(const wasmwarp::CallResult& r) {
  const uint64_t n = r.instances();
  const auto& types = r.result_types();
  py::list cols;
  for (size_t k = 0; k < types.size(); ++k) {
    if (const void* d = r.device_result(k)) {
      cols.append(py::cast(CudaArray{r.device_owner(), d, n, types[k]}));
      continue;
    }
    if (types[k] == wasmwarp::ValueType::V128) {
      // A row of its 16 bytes per instance, as in memory.
      py::array_t<uint8_t> col(std::vector<py::ssize_t>{py::ssize_t(n), 16});
      auto* out = col.mutable_data();
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t w[2] = {r.trapped(i) ? 0 : r.bits(i, k), r.trapped(i) ? 0 : r.bits_hi(i, k)};
        std::memcpy(out + i * 16, w, 16);  // little-endian hosts
      }
      cols.append(col);
      continue;
    }
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
  // Where each instance trapped: the module's trap_message(code, function)
  // names an unknown import from it.
  py::array_t<uint32_t> sites(std::vector<py::ssize_t>{py::ssize_t(n)});
  const wasmwarp::ResultColumns c = r.columns();
  std::memcpy(sites.mutable_data(), c.trap_function, n * sizeof(uint32_t));
  return py::make_tuple(cols, traps, sites);
}

// The arguments of a call of `fn`, one per parameter.
std::vector<wasmwarp::Arg> args_for(const wasmwarp::Module& mod, const std::string& fn, const py::sequence& args,
                                    py::list& keep) {
  auto type = mod.function_type(fn);
  if (!type) throw py::value_error(type.error().message);
  if (py::len(args) != type->params.size())
    throw py::type_error("'" + fn + "' takes " + std::to_string(type->params.size()) + " argument(s), given " +
                         std::to_string(py::len(args)));
  std::vector<wasmwarp::Arg> a;
  for (size_t k = 0; k < type->params.size(); ++k) a.push_back(arg_of(args[k], type->params[k], k, fn, keep));
  return a;
}

// calls: (export, args, repeat) per call of a chain.
std::vector<wasmwarp::Call> chain_for(const wasmwarp::Module& mod, const py::sequence& calls, py::list& keep) {
  std::vector<wasmwarp::Call> chain;
  for (const py::handle& item : calls) {
    auto c = item.cast<py::tuple>();
    wasmwarp::Call call;
    call.export_name = c[0].cast<std::string>();
    call.repeat = c[2].cast<uint64_t>();
    call.args = args_for(mod, call.export_name, c[1].cast<py::sequence>(), keep);
    chain.push_back(std::move(call));
  }
  return chain;
}

// A value of type t from its raw bits, as Python has it, and back.
py::object to_py(wasmwarp::ValueType t, uint64_t bits) {
  switch (t) {
    case wasmwarp::ValueType::I32: return py::int_(int32_t(uint32_t(bits)));
    case wasmwarp::ValueType::I64: return py::int_(int64_t(bits));
    case wasmwarp::ValueType::F32: {
      float f;
      const uint32_t b = uint32_t(bits);
      std::memcpy(&f, &b, 4);
      return py::float_(f);
    }
    case wasmwarp::ValueType::F64: {
      double d;
      std::memcpy(&d, &bits, 8);
      return py::float_(d);
    }
    default: return py::int_(bits);
  }
}
uint64_t from_py(wasmwarp::ValueType t, const py::handle& v) {
  switch (t) {
    case wasmwarp::ValueType::I32: return uint32_t(v.cast<int64_t>());
    case wasmwarp::ValueType::I64: return uint64_t(v.cast<int64_t>());
    case wasmwarp::ValueType::F32: {
      const float f = v.cast<float>();
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    case wasmwarp::ValueType::F64: {
      const double d = v.cast<double>();
      uint64_t b;
      std::memcpy(&b, &d, 8);
      return b;
    }
    default: return v.cast<uint64_t>();
  }
}

// Python callables serving the module's imports: host maps (module, name)
// to a callable taking the instance's index and the arguments and
// returning the result (a tuple for several). It runs with the GIL taken,
// from the engine's threads; an exception ends that instance with "host
// function failed". The callable is released under the GIL, whichever
// thread drops the last copy of the engine's options.
std::vector<wasmwarp::HostFunction> host_functions_of(const wasmwarp::Module& mod, const py::dict& host) {
  std::vector<wasmwarp::HostFunction> out;
  for (const wasmwarp::Import& im : mod.imports()) {
    py::tuple key = py::make_tuple(im.module, im.name);
    if (im.kind != wasmwarp::ExternKind::Function || !host.contains(key)) continue;
    std::shared_ptr<py::object> fn(new py::object(host[key]), [](py::object* o) {
      py::gil_scoped_acquire gil;
      delete o;
    });
    auto call = [fn, type = im.type](uint64_t instance, std::span<const uint64_t> args, std::span<uint64_t> results) {
      py::gil_scoped_acquire gil;
      try {
        py::tuple a(args.size() + 1);
        a[0] = py::int_(instance);
        for (size_t k = 0; k < args.size(); ++k) a[k + 1] = to_py(type.params[k], args[k]);
        py::object r = (*fn)(*a);
        if (results.size() == 1) results[0] = from_py(type.results[0], r);
        if (results.size() > 1) {
          auto seq = r.cast<py::sequence>();
          if (py::len(seq) != results.size()) return false;
          for (size_t k = 0; k < results.size(); ++k) results[k] = from_py(type.results[k], seq[k]);
        }
        return true;
      } catch (py::error_already_set& e) {
        e.discard_as_unraisable(*fn);  // Python reports it (sys.unraisablehook)
        return false;
      } catch (...) {
        return false;
      }
    };
    out.push_back({im.module, im.name, im.type, call});
  }
  return out;
}

// gpus=: None or "all" (every GPU), a count (the first N), or GPU numbers.
void gpus_of(const py::object& gpus, wasmwarp::EngineOptions::Gpu& g) {
  if (gpus.is_none() || (py::isinstance<py::str>(gpus) && gpus.cast<std::string>() == "all")) return;
  if (py::isinstance<py::int_>(gpus)) {
    const long k = gpus.cast<long>();
    if (k < 1) throw py::value_error("gpus: at least one GPU, not " + std::to_string(k));
    g.max_devices = unsigned(k);
    return;
  }
  if (py::isinstance<py::str>(gpus) || !py::isinstance<py::sequence>(gpus))
    throw py::value_error("gpus must be 'all', a count or a list of GPU numbers");
  for (py::handle d : gpus.cast<py::sequence>()) {
    const long k = d.cast<long>();
    if (k < 0) throw py::value_error("gpus: GPU numbers are 0 or more, not " + std::to_string(k));
    g.devices.push_back(int(k));
  }
  if (g.devices.empty()) throw py::value_error("gpus: an empty list");
}

wasmwarp::Engine engine_for(const std::string& backend, const std::string& tier, unsigned threads,
                            const wasmwarp::Module& mod, const py::dict& host, const std::string& unknown_imports,
                            const py::object& gpus = py::none(), long gpu_workers = 1) {
  wasmwarp::EngineOptions eo;
  eo.backend = backend_of(backend);
  eo.tier = tier_of(tier);
  eo.threads = threads;
  eo.host_functions = host_functions_of(mod, host);
  eo.unknown_imports = unknown_imports_of(unknown_imports);
  gpus_of(gpus, eo.gpu);
  if (gpu_workers < 1 || gpu_workers > 8)
    throw py::value_error("gpu_workers: 1 to 8, not " + std::to_string(gpu_workers));
  eo.gpu.tuning.wave_loops_per_gpu = unsigned(gpu_workers);
  return wasmwarp::Engine(eo);
}

// Runs `call(options)` interruptibly with the call options given.
// What a call takes besides its arguments (Python's keywords).
struct CallKnobs {
  uint64_t fuel = 0;
  double timeout = 0;
  bool launch_per_call = false;
  bool device = false;  // results stay on the GPU
};

// Runs `call(options)` interruptibly; then the DLPack tensors the
// arguments took (`keep`) go back to their producers, whatever happened.
template <class Call>
py::tuple run_call(const CallKnobs& k, py::list& keep, Call&& call) {
  std::atomic<bool> cancel{false};
  wasmwarp::CallOptions o;
  o.fuel = k.fuel;
  o.timeout_s = k.timeout;
  o.cancel = &cancel;
  o.gpu_launch_per_call = k.launch_per_call;
  o.results_on_device = k.device;
  struct Release {
    py::list& keep;
    ~Release() {
#ifdef WW_HAVE_DLPACK
      release_dlpack(keep);
#endif
    }
  } release{keep};
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
             const std::string& backend, const std::string& tier, unsigned threads, uint64_t fuel, double timeout,
             bool device, py::dict host, py::object gpus, long gpu_workers, const std::string& unknown_imports) {
            py::list keep;
            auto a = args_for(mod, fn, args, keep);
            auto engine = engine_for(backend, tier, threads, mod, host, unknown_imports, gpus, gpu_workers);
            return run_call({fuel, timeout, false, device}, keep,
                            [&](const wasmwarp::CallOptions& o) { return engine.call(mod, fn, n, a, o); });
          },
          py::arg("export"), py::arg("args"), py::arg("n"), py::arg("backend") = "auto", py::arg("tier") = "auto",
          py::arg("threads") = 0, py::arg("fuel") = 0, py::arg("timeout") = 0.0, py::arg("device") = false,
          py::arg("host") = py::dict(), py::arg("gpus") = py::none(), py::arg("gpu_workers") = 1,
          py::arg("unknown_imports") = "error")
      .def(
          "chain",
          [](const wasmwarp::Module& mod, py::sequence calls, uint64_t n, const std::string& backend,
             const std::string& tier, unsigned threads, uint64_t fuel, double timeout, bool launch_per_call,
             bool device, py::dict host, py::object gpus, long gpu_workers, const std::string& unknown_imports) {
            py::list keep;
            auto chain = chain_for(mod, calls, keep);
            auto engine = engine_for(backend, tier, threads, mod, host, unknown_imports, gpus, gpu_workers);
            return run_call({fuel, timeout, launch_per_call, device}, keep,
                            [&](const wasmwarp::CallOptions& o) { return engine.chain(mod, n, chain, o); });
          },
          py::arg("calls"), py::arg("n"), py::arg("backend") = "auto", py::arg("tier") = "auto", py::arg("threads") = 0,
          py::arg("fuel") = 0, py::arg("timeout") = 0.0, py::arg("launch_per_call") = false, py::arg("device") = false,
          py::arg("host") = py::dict(), py::arg("gpus") = py::none(), py::arg("gpu_workers") = 1,
          py::arg("unknown_imports") = "error")
      .def(
          "instances",
          [](const wasmwarp::Module& mod, uint64_t n, const std::string& backend, const std::string& tier,
             unsigned threads, py::dict host, const std::string& unknown_imports) {
            auto engine = engine_for(backend, tier, threads, mod, host, unknown_imports);
            auto r = [&] {
              py::gil_scoped_release nogil;
              return engine.instances(mod, n);
            }();
            if (!r) throw py::value_error(r.error().message);
            return *r;
          },
          py::arg("n"), py::arg("backend") = "auto", py::arg("tier") = "auto", py::arg("threads") = 0,
          py::arg("host") = py::dict(), py::arg("unknown_imports") = "error")
      .def(
          "trap_message",
          [](const wasmwarp::Module& mod, uint8_t code, uint32_t function) { return mod.trap_message(code, function); },
          py::arg("code"), py::arg("function"));

  py::class_<wasmwarp::Instances>(m, "_Instances")
      .def("count", &wasmwarp::Instances::count)
      .def("backend",
           [](const wasmwarp::Instances& b) { return b.backend() == wasmwarp::Backend::Gpu ? "gpu" : "cpu"; })
      .def(
          "call",
          [](wasmwarp::Instances& b, const wasmwarp::Module& mod, const std::string& fn, py::sequence args,
             uint64_t fuel, double timeout, bool device) {
            py::list keep;
            auto a = args_for(mod, fn, args, keep);
            return run_call({fuel, timeout, false, device}, keep,
                            [&](const wasmwarp::CallOptions& o) { return b.call(fn, a, o); });
          },
          py::arg("module"), py::arg("export"), py::arg("args"), py::arg("fuel") = 0, py::arg("timeout") = 0.0,
          py::arg("device") = false)
      .def(
          "chain",
          [](wasmwarp::Instances& b, const wasmwarp::Module& mod, py::sequence calls, uint64_t fuel, double timeout,
             bool launch_per_call, bool device) {
            py::list keep;
            auto chain = chain_for(mod, calls, keep);
            return run_call({fuel, timeout, launch_per_call, device}, keep,
                            [&](const wasmwarp::CallOptions& o) { return b.chain(chain, o); });
          },
          py::arg("module"), py::arg("calls"), py::arg("fuel") = 0, py::arg("timeout") = 0.0,
          py::arg("launch_per_call") = false, py::arg("device") = false)
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

  py::class_<CudaArray>(m, "CudaArray",
                        "A result column in GPU memory (CuPy, PyTorch: cupy.asarray(a), torch.from_dlpack(a))")
      .def_property_readonly("shape", [](const CudaArray& a) { return py::make_tuple(a.n); })
      .def_property_readonly("dtype", [](const CudaArray& a) { return py::dtype(dtype_of(a.type)); })
      .def("__len__", [](const CudaArray& a) { return a.n; })
      .def_property_readonly("__cuda_array_interface__",
                             [](const CudaArray& a) {
                               py::dict d;
                               d["shape"] = py::make_tuple(a.n);
                               d["typestr"] = typestr_of(a.type);
                               d["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(a.data), false);
                               d["strides"] = py::none();
                               d["version"] = 3;
                               // Written and synchronised before the call returned.
                               d["stream"] = py::none();
                               return d;
                             })
#ifdef WW_HAVE_DLPACK
      // The keywords (stream, max_version, ...) do not change what is
      // given: the columns are complete when the call returns.
      .def("__dlpack__", [](const CudaArray& a, const py::args&, const py::kwargs&) { return to_dlpack(a); })
      .def("__dlpack_device__", [](const CudaArray&) { return py::make_tuple(int(kDLCUDA), 0); })
#endif
      ;

  m.def(
      "trap_message", [](uint8_t code) { return wasmwarp::trap_message(code); }, py::arg("code"));
}
