// Runs one wast2json script (wabt 1.0.32 format) against a Backend and
// tallies every command by kind.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backend.h"

namespace ww::spectest {

// tests/spec/expected-failures.txt: `FILE.wast:LINE  reason` per line.
struct ExpectedFailures {
  std::map<std::string, std::map<uint32_t, std::string>> entries;  // file -> line -> reason
  const std::string* find(const std::string& file, uint32_t line) const;
};
// Parses the list; on a malformed line (no reason, bad line number) fills
// `error` with "PATH:N: why" and returns false.
bool parse_expected_failures(const std::string& path, ExpectedFailures& out, std::string& error);

struct Tally {
  uint64_t passed = 0, failed = 0, skipped = 0;
  Tally& operator+=(const Tally& o) {
    passed += o.passed;
    failed += o.failed;
    skipped += o.skipped;
    return *this;
  }
};

struct FileReport {
  std::string file;                    // the .wast name the script came from
  std::map<std::string, Tally> kinds;  // command kind -> tally
  // Problems that make the run fail: unlisted failures, unexpected passes.
  std::vector<std::string> unexpected;
  uint64_t expected_failures = 0;                // listed failures that failed as listed
  uint64_t wording_differs = 0;                  // rejected as required, with other words
  std::set<uint32_t> lines_seen;                 // lines of commands that passed or failed
  std::map<std::string, uint64_t> skip_reasons;  // reason -> count
  bool script_error = false;                     // the JSON itself could not be used
  // Invokes the backend ran on the CPU instead (ActionOutcome::ran_on_cpu):
  // reason -> count. Their commands are tallied as "KIND (ran on CPU)".
  std::map<std::string, uint64_t> ran_on_cpu;
  // The backend's tier_report() at the end of the script.
  std::map<std::string, uint64_t> tiers;
};

struct RunOptions {
  bool verbose = false;
  // Decode and validate modules, run nothing (--validate-only).
  bool validate_only = false;
  // When set, the line of the command being run is stored here first, so
  // that a parent process can say where a crashed script was.
  volatile uint32_t* current_line = nullptr;
};

FileReport run_script(const std::string& json_path, Backend& backend, const ExpectedFailures& xfail,
                      const RunOptions& opts);

// A FileReport crosses the pipe from the child that ran it as JSON.
std::string report_to_json(const FileReport& r);
bool report_from_json(const std::string& text, FileReport& out);

}  // namespace ww::spectest
