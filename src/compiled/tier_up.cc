#include "compiled/tier_up.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <sstream>

#include "cache/code_cache.h"
#include "common/cores.h"
#include "compiled/cpu_native.h"
#include "compiled/host_compiler.h"

namespace ww::compiled {

// What the code and its compile threads share: the threads outlive the
// code when a unit is still compiling as the program ends (it then fills
// the cache and the thread leaves).
struct TierShared {
  Request base;
  TierUpOptions opts;
  uint32_t ndef = 0;
  std::vector<uint32_t> words;  // bytecode words by defined function
  // By defined function: 0 not reported, 1 queued, 2 taken into a unit.
  std::unique_ptr<std::atomic<uint8_t>[]> state;
  // By defined function: reports so far (TierProfile::hot), which order
  // the queue.
  std::unique_ptr<std::atomic<uint32_t>[]> score;
  // By defined function: compiled code is loaded (NativeCode::runnable),
  // and the unit that holds it.
  std::unique_ptr<std::atomic<uint8_t>[]> ready;
  std::unique_ptr<std::atomic<const NativeCode*>[]> code;
  // By defined function: the loaded units' entries, which units call each
  // other through (rt::CpuInst::direct; written with atomic stores).
  std::unique_ptr<rt::CpuEntryFn[]> direct;
  std::atomic<bool> stop{false};

  std::mutex mu;
  std::condition_variable cv;
  std::deque<uint32_t> queue;
  // Units of earlier runs (the record), and which holds each function
  // (-1: none); the preload of their cached code is the first task.
  std::vector<std::vector<uint32_t>> recorded;
  std::vector<int32_t> recorded_unit;
  bool preload = false;
  std::vector<std::vector<uint32_t>> made;  // this run's new units
  // Units running -O1 code (Request::quick), compiled again at -O2 when
  // nothing is queued: the program gets faster as it runs.
  std::deque<std::vector<uint32_t>> upgrades;
  std::vector<std::shared_ptr<const NativeCode>> units;  // loaded: kept loaded
  uint32_t threads = 0;
  TierUpStats stats;
  std::string record_key;  // "" without a cache
};

namespace {

std::string record_key(const Request& r) {
  if (!r.cache.enabled) return "";
  const std::vector<uint8_t>& bytes = r.module->module.bytes;
  return cache_key({"tier-up units", r.metered ? "metered" : "", r.deadline ? "deadline" : "",
                    std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())});
}

// The record: one unit per line, its defined functions ascending.
std::vector<std::vector<uint32_t>> read_record(const Request& r, const std::string& key, uint32_t ndef) {
  std::vector<std::vector<uint32_t>> units;
  if (key.empty()) return units;
  std::string note;
  auto payload = CodeCache(r.cache).get(key, &note);
  if (!payload) return units;
  std::istringstream in(std::string(payload->begin(), payload->end()));
  std::string line;
  std::vector<bool> seen(ndef, false);
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<uint32_t> unit;
    uint64_t d = 0;
    bool ok = true;
    while (ls >> d) {
      // A record that does not fit the module (it never should) is dropped.
      if (d >= ndef || seen[d] || (!unit.empty() && d <= unit.back())) ok = false;
      if (!ok) break;
      unit.push_back(uint32_t(d));
    }
    if (!ok) return {};
    for (uint32_t x : unit) seen[x] = true;
    if (!unit.empty()) units.push_back(std::move(unit));
  }
  return units;
}

void write_record(const TierShared& st, const std::vector<std::vector<uint32_t>>& units) {
  if (st.record_key.empty()) return;
  std::string text;
  for (const auto& u : units) {
    for (size_t k = 0; k < u.size(); ++k) text += (k ? " " : "") + std::to_string(u[k]);
    text += "\n";
  }
  // A cache that cannot be written only costs the next run its head start.
  (void)CodeCache(st.base.cache).put(st.record_key, std::vector<uint8_t>(text.begin(), text.end()));
}

// The next unit, under st.mu: the most reported queued function, with its
// recorded unit when it has one (as recorded, so that its compile hits the
// cache), else with the next most reported functions up to the unit's size.
std::vector<uint32_t> take_unit(TierShared& st) {
  // Functions a unit took are dropped from the queue; the rest by score.
  std::erase_if(st.queue, [&](uint32_t d) { return st.state[d].load(std::memory_order_relaxed) == 2; });
  std::stable_sort(st.queue.begin(), st.queue.end(), [&](uint32_t a, uint32_t b) {
    return st.score[a].load(std::memory_order_relaxed) > st.score[b].load(std::memory_order_relaxed);
  });
  std::vector<uint32_t> unit;
  if (st.queue.empty()) return unit;
  // A very large function waits until nothing else is queued: its compile
  // takes a thread for a minute, and a run shorter than that would lose
  // it and save nothing, where smaller units reach the cache one by one.
  const auto giant = [&](uint32_t d) { return st.words[d] > st.opts.quick_words; };
  auto first = std::find_if(st.queue.begin(), st.queue.end(), [&](uint32_t d) { return !giant(d); });
  if (first == st.queue.end()) first = st.queue.begin();
  const int32_t r = st.recorded_unit[*first];
  if (r >= 0) {
    // Recorded units are taken whole (here or by the preload, both under
    // st.mu), so none of its functions is taken yet.
    unit = st.recorded[size_t(r)];
  } else {
    uint64_t words = 0;
    for (uint32_t def : st.queue) {
      if (st.recorded_unit[def] >= 0 || (giant(def) && def != *first)) continue;
      if (!unit.empty() && words + st.words[def] > st.opts.unit_words) break;
      unit.push_back(def);
      words += st.words[def];
    }
  }
  for (uint32_t d : unit) st.state[d].store(2);
  std::erase_if(st.queue, [&](uint32_t d) { return st.state[d].load(std::memory_order_relaxed) == 2; });
  std::sort(unit.begin(), unit.end());
  return unit;
}

Request unit_request(const TierShared& st, const std::vector<uint32_t>& unit) {
  Request req = st.base;
  req.functions = unit;
  for (uint32_t d : unit) req.quick |= st.words[d] > st.opts.quick_words;
  return req;
}

// Compiles (or finds in the cache) one unit and makes its functions run
// compiled. `optimise`: at -O2 whatever its size (an upgrade); its code
// replaces the unit's -O1 code, which stays loaded for the calls still in it.
void build_unit(TierShared& st, const std::vector<uint32_t>& unit, bool recorded, bool optimise = false) {
  Request req = unit_request(st, unit);
  if (optimise) req.quick = false;
  const auto t = std::chrono::steady_clock::now();
  Outcome out;
  auto r = compile_cpu(req, &out);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  std::vector<std::vector<uint32_t>> record;
  {
    std::lock_guard<std::mutex> g(st.mu);
    st.stats.compile_s += s;
    if (!r.ok() || !*r) {
      ++st.stats.failed;
      if (st.stats.error.empty()) st.stats.error = r.ok() ? "no code" : r.error().message;
      return;
    }
    st.units.push_back(*r);
    set_direct_calls(**r, st.direct.get());
    for (const auto& [d, fn] : cpu_entries(**r)) __atomic_store_n(&st.direct[d], fn, __ATOMIC_RELEASE);
    const bool upgrade = st.ready[unit[0]].load(std::memory_order_relaxed) != 0;
    for (uint32_t d : unit) {
      st.code[d].store(r->get(), std::memory_order_release);
      st.ready[d].store(1, std::memory_order_release);
    }
    if (!upgrade) st.stats.compiled += uint32_t(unit.size());
    if (req.quick) st.upgrades.push_back(unit);
    ++st.stats.units;
    if (out.cache_hit) ++st.stats.cache_hits;
    if (!recorded) {
      st.made.push_back(unit);
      record = st.recorded;
      record.insert(record.end(), st.made.begin(), st.made.end());
    }
  }
  if (!record.empty()) write_record(st, record);
}

void work(std::shared_ptr<TierShared> st) {
  bool preload = false;
  {
    std::lock_guard<std::mutex> g(st->mu);
    preload = std::exchange(st->preload, false);
  }
  // The recorded units the cache holds load first, hot or not yet.
  if (preload)
    for (size_t k = 0; k < st->recorded.size() && !st->stop.load(); ++k) {
      const std::vector<uint32_t>& unit = st->recorded[k];
      // An -O1 unit's -O2 code when an earlier run got that far.
      Request req = unit_request(*st, unit), optimised = req;
      optimised.quick = false;
      const bool o2 = req.quick && cached(optimised);
      if (!o2 && !cached(req)) continue;
      {
        std::lock_guard<std::mutex> g(st->mu);
        if (st->state[unit[0]].load() == 2) continue;  // taken since
        for (uint32_t d : unit) st->state[d].store(2);
      }
      build_unit(*st, unit, true, o2);
    }
  for (;;) {
    std::vector<uint32_t> unit;
    bool recorded = false, optimise = false;
    {
      std::unique_lock<std::mutex> g(st->mu);
      st->cv.wait(g, [&] { return st->stop.load() || !st->queue.empty() || !st->upgrades.empty(); });
      if (st->stop.load()) return;
      if (!st->queue.empty()) {
        unit = take_unit(*st);
        recorded = !unit.empty() && st->recorded_unit[unit[0]] >= 0;
      } else {
        unit = std::move(st->upgrades.front());
        st->upgrades.pop_front();
        recorded = optimise = true;
      }
    }
    if (!unit.empty()) build_unit(*st, unit, recorded, optimise);
  }
}

// Starts a compile thread when fewer run than the work could use.
void add_thread(const std::shared_ptr<TierShared>& st) {
  {
    std::lock_guard<std::mutex> g(st->mu);
    const uint32_t want = st->opts.workers ? st->opts.workers : std::max(1u, usable_cores() - 1);
    if (st->threads >= want) return;
    ++st->threads;
  }
  st->opts.keep(std::async(std::launch::async, [st] { work(st); }));
}

}  // namespace

class TieredCode final : public NativeCode, public std::enable_shared_from_this<TieredCode> {
 public:
  explicit TieredCode(std::shared_ptr<TierShared> st) : st_(std::move(st)), profile_(this) {
    profile_.every = st_->opts.threshold;
  }
  ~TieredCode() override {
    {
      std::lock_guard<std::mutex> g(st_->mu);
      st_->stop.store(true);
    }
    st_->cv.notify_all();
  }

  bool has(const StoreImpl& s, uint32_t def) const override {
    return def < st_->ndef && st_->ready[def].load(std::memory_order_acquire) && metered(s);
  }
  const std::atomic<uint8_t>* runnable(const StoreImpl& s) const override {
    return metered(s) ? st_->ready.get() : nullptr;
  }
  TrapCode call(StoreImpl& S, Store& api, uint32_t instance, uint32_t def, uint64_t* slots) const override {
    return st_->code[def].load(std::memory_order_acquire)->call(S, api, instance, def, slots);
  }
  TierProfile* profile() const override { return &profile_; }

  TierUpStats stats() const {
    std::lock_guard<std::mutex> g(st_->mu);
    return st_->stats;
  }

  // Reported by the interpreter each time a count passes another
  // multiple of the threshold.
  void hot(uint32_t def) {
    st_->score[def].fetch_add(1, std::memory_order_relaxed);
    if (st_->state[def].load(std::memory_order_relaxed) != 0) return;
    uint8_t z = 0;
    if (!st_->state[def].compare_exchange_strong(z, 1)) return;
    {
      std::lock_guard<std::mutex> g(st_->mu);
      ++st_->stats.hot;
      st_->queue.push_back(def);
    }
    st_->cv.notify_one();
    add_thread(st_);
  }

  void start_preload() {
    {
      std::lock_guard<std::mutex> g(st_->mu);
      if (st_->recorded.empty()) return;
      st_->preload = true;
    }
    add_thread(st_);
  }

 private:
  bool metered(const StoreImpl& s) const { return st_->base.metered == (s.limits.fuel != 0); }

  // The interpreter's counters: one array per thread and code.
  class Profile final : public TierProfile {
   public:
    explicit Profile(TieredCode* code) : code_(code), id_(next_id()) {}
    uint32_t* counts() override {
      struct Table {
        uint64_t id;
        std::unique_ptr<uint32_t[]> counts;
      };
      // A thread keeps the arrays of the last few codes it ran; the
      // interpreter asks at every entry (each call from compiled code).
      thread_local std::vector<Table> tables;
      thread_local Table* last = nullptr;
      if (last && last->id == id_) return last->counts.get();
      for (Table& t : tables)
        if (t.id == id_) {
          last = &t;
          return t.counts.get();
        }
      if (tables.size() >= 4) tables.erase(tables.begin());
      tables.push_back({id_, std::make_unique<uint32_t[]>(code_->st_->ndef)});
      last = &tables.back();
      return last->counts.get();
    }
    void hot(uint32_t def) override { code_->hot(def); }

   private:
    static uint64_t next_id() {
      static std::atomic<uint64_t> n{1};
      return n.fetch_add(1);
    }
    TieredCode* code_;
    uint64_t id_;
  };

  std::shared_ptr<TierShared> st_;
  mutable Profile profile_;
};

Result<std::shared_ptr<TieredCode>> start_tier_up(const Request& base, const TierUpOptions& opts) {
  if (!opts.keep) return make_error(kNoOffset, "tier-up needs a keeper for its compile threads");
  if (opts.threshold == 0 || (opts.threshold & (opts.threshold - 1)) != 0)
    return make_error(kNoOffset, "tier-up's threshold is a power of two");
  WW_TRY(find_host_compiler().status());
  auto st = std::make_shared<TierShared>();
  st->base = base;
  st->base.target = Target::Cpu;
  st->base.entries.clear();
  st->base.functions.clear();
  st->base.load = true;
  st->opts = opts;
  const BytecodeModule& bc = base.module->code.bytecode;
  st->ndef = uint32_t(base.module->module.funcs.size());
  st->words.resize(st->ndef);
  for (uint32_t d = 0; d < st->ndef; ++d) st->words[d] = bc.funcs[d].code_end - bc.funcs[d].code_begin;
  st->state = std::make_unique<std::atomic<uint8_t>[]>(st->ndef);
  st->score = std::make_unique<std::atomic<uint32_t>[]>(st->ndef);
  st->ready = std::make_unique<std::atomic<uint8_t>[]>(st->ndef);
  st->code = std::make_unique<std::atomic<const NativeCode*>[]>(st->ndef);
  st->direct = std::make_unique<rt::CpuEntryFn[]>(st->ndef);  // zeroed: no entries
  for (uint32_t d = 0; d < st->ndef; ++d) {
    st->state[d].store(0);
    st->score[d].store(0);
    st->ready[d].store(0);
    st->code[d].store(nullptr);
  }
  st->record_key = record_key(st->base);
  st->recorded = read_record(st->base, st->record_key, st->ndef);
  st->recorded_unit.assign(st->ndef, -1);
  for (size_t k = 0; k < st->recorded.size(); ++k)
    for (uint32_t d : st->recorded[k]) st->recorded_unit[d] = int32_t(k);
  auto code = std::make_shared<TieredCode>(st);
  code->start_preload();
  return code;
}

TierUpStats tier_up_stats(const TieredCode& code) { return code.stats(); }

std::shared_ptr<const NativeCode> as_native(const std::shared_ptr<TieredCode>& code) { return code; }

}  // namespace ww::compiled
