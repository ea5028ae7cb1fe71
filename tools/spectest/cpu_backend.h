// The CPU backend's class, shared: the GPU backend keeps its instances in
// the same kind of Store (so instantiation, linking and registration are
// this code, not a copy) and only replaces how invokes run; ww-difftest
// instantiates modules through it so that both engines see identical
// imports.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend.h"
#include "store/store.h"

namespace ww::spectest {

class CpuBackend : public Backend {
 public:
  using Exports = std::map<std::string, ExternVal, std::less<>>;

  // `native`: with opts.compiled, the store's instances get compiled CPU
  // code (the GPU backend, which runs its own compiled code, says false).
  explicit CpuBackend(const BackendOptions& opts, bool native = true);

  const char* name() const override { return "cpu"; }
  void reset() override;
  InstantiateOutcome instantiate(std::shared_ptr<const CompiledModule> m) override;
  void register_instance(uint32_t instance, const std::string& as) override;
  ActionOutcome invoke(uint32_t instance, const std::string& field, const std::vector<Value>& args) override;
  ActionOutcome get(uint32_t instance, const std::string& field) override;
  std::map<std::string, uint64_t> tier_report() const override { return tiers_; }

  Store& store() { return *store_; }

  // The host module every spec script may import from (see the spec
  // interpreter's spectest.ml): print functions that do nothing visible,
  // four immutable globals, a table and a memory.
  static Exports make_spectest_exports(Store& store);

 protected:
  // Finds exported function `field` and checks the arguments against its
  // type: the function's store address, or an Error outcome in `err`.
  bool resolve_invoke(uint32_t instance, const std::string& field, const std::vector<Value>& args, uint32_t& func_addr,
                      ActionOutcome& err) const;
  // Runs the function on the CPU interpreter.
  ActionOutcome invoke_on_cpu(uint32_t func_addr, const std::vector<Value>& args);

  const BackendOptions& options() const { return opts_; }
  // Counts one entry of tier_report().
  void note_tier(const std::string& what) { tiers_[what]++; }

 private:
  // The compiled CPU code of a module, compiled once per script (the cache
  // makes the second script that has the module cheap).
  std::shared_ptr<const NativeCode> native_for(const std::shared_ptr<const CompiledModule>& cm);

  BackendOptions opts_;
  bool native_tier_;
  std::unique_ptr<Store> store_;
  std::map<std::string, Exports, std::less<>> registered_;
  std::map<const CompiledModule*, std::shared_ptr<const NativeCode>> native_;
  std::vector<std::shared_ptr<const CompiledModule>> native_modules_;  // keeps the keys' modules alive
  std::map<std::string, uint64_t> tiers_;
};

}  // namespace ww::spectest
