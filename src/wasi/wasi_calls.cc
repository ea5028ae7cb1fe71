// The calls that are neither descriptors' nor paths': arguments and the
// environment, clocks, random bytes, poll_oneoff, the process and sockets
// (of which this layer opens none); and the table of all calls.
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "wasi/wasi_internal.h"

namespace ww::wasi {

FuncType sig(std::initializer_list<ValType> params, bool errno_result) {
  FuncType t;
  t.params = params;
  if (errno_result) t.results = {ValType::I32};
  return t;
}

namespace {

// args_get / environ_get: pointers to NUL-terminated strings, and the strings.
uint32_t put_strings(const CallContext& c, const std::vector<std::string>& v, uint64_t ptrs, uint64_t buf) {
  for (const std::string& s : v) {
    if (!c.put_le<uint32_t>(ptrs, uint32_t(buf)) || !c.put(buf, s.c_str(), s.size() + 1)) return kFault;
    ptrs += 4;
    buf += s.size() + 1;
  }
  return kSuccess;
}

uint32_t put_sizes(const CallContext& c, const std::vector<std::string>& v, uint64_t count_ptr, uint64_t size_ptr) {
  uint64_t bytes = 0;
  for (const std::string& s : v) bytes += s.size() + 1;
  return c.put_le<uint32_t>(count_ptr, uint32_t(v.size())) && c.put_le<uint32_t>(size_ptr, uint32_t(bytes)) ? kSuccess
                                                                                                            : kFault;
}

clockid_t host_clock(uint32_t id, bool& ok) {
  ok = true;
  switch (id) {
    case kClockRealtime: return CLOCK_REALTIME;
    case kClockMonotonic: return CLOCK_MONOTONIC;
    case kClockProcessCputime: return CLOCK_PROCESS_CPUTIME_ID;
    case kClockThreadCputime: return CLOCK_THREAD_CPUTIME_ID;
  }
  ok = false;
  return CLOCK_REALTIME;
}

uint64_t now_ns(clockid_t id) {
  timespec t{};
  ::clock_gettime(id, &t);
  return ns_of(t);
}

#define RET(e) return ret(s, (e))
#define U32(k) uint32_t(s[k])

TrapCode args_get(const CallContext& c, uint64_t* s) { RET(put_strings(c, c.config().args, U32(0), U32(1))); }
TrapCode args_sizes_get(const CallContext& c, uint64_t* s) { RET(put_sizes(c, c.config().args, U32(0), U32(1))); }
TrapCode environ_get(const CallContext& c, uint64_t* s) { RET(put_strings(c, c.config().env, U32(0), U32(1))); }
TrapCode environ_sizes_get(const CallContext& c, uint64_t* s) { RET(put_sizes(c, c.config().env, U32(0), U32(1))); }

TrapCode clock_res_get(const CallContext& c, uint64_t* s) {
  bool ok;
  clockid_t id = host_clock(U32(0), ok);
  timespec t{};
  if (!ok) RET(kInval);
  if (clock_getres(id, &t) != 0) RET(errno_from_host(errno));
  RET(c.put_le<uint64_t>(U32(1), ns_of(t)) ? kSuccess : kFault);
}

TrapCode clock_time_get(const CallContext& c, uint64_t* s) {
  bool ok;
  clockid_t id = host_clock(U32(0), ok);
  timespec t{};
  if (!ok) RET(kInval);
  if (clock_gettime(id, &t) != 0) RET(errno_from_host(errno));
  RET(c.put_le<uint64_t>(U32(2), ns_of(t)) ? kSuccess : kFault);
}

TrapCode random_get(const CallContext& c, uint64_t* s) {
  const uint64_t buf = U32(0), len = U32(1);
  if (!c.in(buf, len)) RET(kFault);
  uint8_t* p = c.mem->window(buf, len);
  if (c.seeded_random(p, len)) {
    c.mem->written(buf, len);
    RET(kSuccess);
  }
  for (uint64_t done = 0; done < len;) {
    ssize_t n = getrandom(p + done, len - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) RET(errno_from_host(errno));
    done += uint64_t(n);
  }
  c.mem->written(buf, len);
  RET(kSuccess);
}

TrapCode proc_exit(const CallContext& c, uint64_t* s) {
  c.exit(U32(0));
  return TrapCode::Exit;
}

// No signals in WASI's sandbox (wasmtime: ENOTSUP).
TrapCode proc_raise(const CallContext&, uint64_t* s) { RET(kNotsup); }

TrapCode sched_yield_call(const CallContext&, uint64_t* s) {
  ::sched_yield();
  RET(kSuccess);
}

// No descriptor here is a socket: EBADF for a closed one, else ENOTSOCK
// (wasmtime's answers, whatever the arguments).
TrapCode sock_call(const CallContext& c, uint64_t* s) { RET(c.fd(U32(0)) ? kNotsock : kBadf); }

// One subscription of poll_oneoff, decoded: a clock's deadline on
// CLOCK_MONOTONIC, or a descriptor's readiness.
struct Sub {
  uint8_t type;
  uint64_t deadline = 0;  // clocks
  int host = -1;          // descriptors the kernel polls; -1: ready now
  bool ready = false;
  uint64_t nbytes = 0;
  uint16_t flags = 0;
};

// What subscription `sub` (48 bytes) waits for; an errno for the whole
// call as wasmtime gives: EINVAL for an unknown type, flag or clock (the
// CPU-time clocks included), EBADF for a descriptor that is closed, a
// directory, or a stream the other way.
uint32_t decode(const CallContext& c, const uint8_t* sub, uint64_t mono, uint64_t real, Sub& out) {
  out.type = sub[8];
  if (out.type == kEventClock) {
    uint32_t id;
    uint64_t timeout;
    uint16_t flags;
    std::memcpy(&id, sub + 16, 4);
    std::memcpy(&timeout, sub + 24, 8);
    std::memcpy(&flags, sub + 40, 2);
    if (flags & ~1u || (id != kClockRealtime && id != kClockMonotonic)) return kInval;
    const bool absolute = flags & 1;
    if (!absolute) out.deadline = mono + std::min(timeout, ~uint64_t{0} - mono);
    else if (id == kClockMonotonic) out.deadline = timeout;
    else out.deadline = mono + (timeout > real ? timeout - real : 0);
    return kSuccess;
  }
  if (out.type != kEventFdRead && out.type != kEventFdWrite) return kInval;
  uint32_t fd;
  std::memcpy(&fd, sub + 16, 4);
  const Context::Fd* f = c.fd(fd);
  const bool read = out.type == kEventFdRead;
  if (!f || f->directory() || (f->stream && !(read ? f->can_read : f->can_write))) return kBadf;
  // A file, memory and an empty stdin are ready at once; a pipe or a
  // terminal when the kernel says so.
  out.host = f->stream && !f->sink && f->host >= 0 ? f->host : -1;
  out.ready = out.host < 0;
  out.nbytes = 1;                                                  // as wasmtime's: "at least one"
  if (f->stream && f->host < 0 && read) out.flags = kEventHangup;  // an empty stdin is at its end
  return kSuccess;
}

// Waits until a descriptor is ready or the earliest clock's deadline
// passes (at once when something is ready already), and reports each
// subscription that is: clocks whose deadline passed, descriptors ready.
TrapCode poll_oneoff(const CallContext& c, uint64_t* s) {
  const uint64_t in = U32(0), out = U32(1), n = U32(2);
  if (n == 0) RET(kInval);
  if (!c.in(in, n * kSubscriptionSize) || !c.in(out, n * kEventSize)) RET(kFault);
  const uint8_t* subs = c.read(in, n * kSubscriptionSize);
  if (!subs) RET(kFault);
  const uint64_t start = now_ns(CLOCK_MONOTONIC), real = now_ns(CLOCK_REALTIME);
  std::vector<Sub> list(n);
  std::vector<pollfd> fds;
  std::vector<size_t> fd_sub;
  uint64_t earliest = ~uint64_t{0};
  bool ready = false;
  for (uint64_t k = 0; k < n; ++k) {
    if (uint32_t e = decode(c, subs + k * kSubscriptionSize, start, real, list[k]); e != kSuccess) RET(e);
    const Sub& sub = list[k];
    if (sub.type == kEventClock) earliest = std::min(earliest, sub.deadline);
    else if (sub.host >= 0) {
      fds.push_back({sub.host, short(sub.type == kEventFdRead ? POLLIN : POLLOUT), 0});
      fd_sub.push_back(k);
    }
    ready |= sub.ready;
  }
  for (;;) {
    const uint64_t now = now_ns(CLOCK_MONOTONIC);
    const uint64_t wait = ready || earliest <= now ? 0 : earliest - now;
    timespec t{time_t(wait / 1000000000ull), long(wait % 1000000000ull)};
    int r = 0;
    if (!fds.empty()) r = ::ppoll(fds.data(), fds.size(), earliest == ~uint64_t{0} && !ready ? nullptr : &t, nullptr);
    else if (wait) r = ::nanosleep(&t, nullptr);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) RET(errno_from_host(errno));
    for (size_t j = 0; j < fds.size(); ++j) {
      Sub& sub = list[fd_sub[j]];
      if (!fds[j].revents) continue;
      sub.ready = true;
      if (fds[j].revents & POLLHUP) sub.flags = kEventHangup;
      int avail = 0;
      if (sub.type == kEventFdRead && ::ioctl(sub.host, FIONREAD, &avail) == 0) sub.nbytes = uint64_t(avail);
    }
    const uint64_t after = now_ns(CLOCK_MONOTONIC);
    bool any = false;
    for (const Sub& sub : list) any |= sub.type == kEventClock ? sub.deadline <= after : sub.ready;
    if (any) break;
  }
  const uint64_t after = now_ns(CLOCK_MONOTONIC);
  uint32_t events = 0;
  for (uint64_t k = 0; k < n; ++k) {
    const Sub& sub = list[k];
    if (sub.type == kEventClock ? sub.deadline > after : !sub.ready) continue;
    uint8_t ev[kEventSize] = {};
    std::memcpy(ev, subs + k * kSubscriptionSize, 8);  // userdata
    ev[10] = sub.type;
    if (sub.type != kEventClock) {
      std::memcpy(ev + 16, &sub.nbytes, 8);
      std::memcpy(ev + 24, &sub.flags, 2);
    }
    c.put(out + uint64_t(events) * kEventSize, ev, sizeof ev);
    ++events;
  }
  RET(c.put_le<uint32_t>(U32(3), events) ? kSuccess : kFault);
}

#undef RET
#undef U32

}  // namespace

const std::vector<CallInfo>& misc_calls() {
  const ValType I = kI32, L = kI64;
  static const std::vector<CallInfo> table = {
      {"args_get", sig({I, I}), args_get},
      {"args_sizes_get", sig({I, I}), args_sizes_get},
      {"environ_get", sig({I, I}), environ_get},
      {"environ_sizes_get", sig({I, I}), environ_sizes_get},
      {"clock_res_get", sig({I, I}), clock_res_get},
      {"clock_time_get", sig({I, L, I}), clock_time_get},
      {"poll_oneoff", sig({I, I, I, I}), poll_oneoff},
      {"proc_exit", sig({I}, false), proc_exit},
      {"proc_raise", sig({I}), proc_raise},
      {"random_get", sig({I, I}), random_get},
      {"sched_yield", sig({}), sched_yield_call},
      {"sock_accept", sig({I, I, I}), sock_call},
      {"sock_recv", sig({I, I, I, I, I, I}), sock_call},
      {"sock_send", sig({I, I, I, I, I}), sock_call},
      {"sock_shutdown", sig({I, I}), sock_call},
  };
  return table;
}

const CallInfo* find_call(const std::string& name) {
  for (const auto* table : {&misc_calls(), &fd_calls(), &path_calls()})
    for (const CallInfo& c : *table)
      if (name == c.name) return &c;
  return nullptr;
}

}  // namespace ww::wasi
