// Golden tests of the code generator: the source codegen::generate writes
// for each module of tests/golden/modules/, for the CPU and the GPU, compared
// byte for byte with its file in tests/golden/expected/. A change to the
// generator then shows up in review as a diff of the code it writes
// (tests/golden/README.md).
//
// With WW_GOLDEN_UPDATE=1 in the environment (tests/golden/update.sh) the
// expected files are written instead of compared, and files no module makes
// any more are removed. Only this test reads the variable.
//
// A module's variants are "cpu gpu" unless its first lines say otherwise
// with a comment like ";; golden: cpu gpu gpu-sparse".
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/module_source.h"
#include "codegen/embedded.h"
#include "codegen/generator.h"
#include "compiled/compiled_tier.h"
#include "exec/gpu/gpu_backend.h"
#include "runtime/runtime.h"

namespace ww {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUpdateCommand = "bash tests/golden/update.sh";

const fs::path& golden_dir() {
  static const fs::path dir = fs::path(WW_SOURCE_DIR) / "tests" / "golden";
  return dir;
}

bool updating() {
  const char* v = std::getenv("WW_GOLDEN_UPDATE");
  return v && *v && std::string(v) != "0";
}

struct Variant {
  const char* name;    // as a module's ";; golden:" line names it
  const char* suffix;  // of its expected file
  codegen::Target target;
  MemoryLayout layout;
};

constexpr Variant kVariants[] = {
    {"cpu", ".cpu.cc", codegen::Target::Cpu, MemoryLayout::Interleaved},
    {"gpu", ".gpu.cu", codegen::Target::Gpu, MemoryLayout::Interleaved},
    {"gpu-sparse", ".gpu-sparse.cu", codegen::Target::Gpu, MemoryLayout::Sparse},
};

const Variant* find_variant(const std::string& name) {
  for (const Variant& v : kVariants)
    if (name == v.name) return &v;
  return nullptr;
}

// What compile_cpu and compile_gpu ask of the generator for a request with
// nothing set but the target and layout (compiled_tier.cc: codegen_options,
// then its fixed cap on units): every export, no fuel, no deadline, sparse
// misses chosen by the module's size. TheTierCompilesTheGoldenSource checks
// that the tiers still compile exactly this.
codegen::Options generator_options(const Variant& v) {
  codegen::Options o;
  o.target = v.target;
  o.layout = v.layout;
  o.sparse_misses = SparseMisses::BySize;
  o.max_units = 64;
  return o;
}

struct GoldenCase {
  std::string module;   // file stem in modules/
  std::string variant;  // a kVariants name, or what the module asked for
  std::string expected_file() const {
    const Variant* v = find_variant(variant);
    return module + (v ? v->suffix : "." + variant);
  }
};

// gtest names the failing case with this rather than its bytes.
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.module << ".wat, " << c.variant; }

// ";; golden: a b c" among the comment lines that open the file.
std::vector<std::string> variants_of(const fs::path& wat) {
  std::ifstream in(wat);
  std::string line;
  while (std::getline(in, line) && line.rfind(";;", 0) == 0) {
    const std::string tag = ";; golden:";
    if (line.rfind(tag, 0) != 0) continue;
    std::istringstream words(line.substr(tag.size()));
    std::vector<std::string> out;
    for (std::string w; words >> w;) out.push_back(w);
    return out;
  }
  return {"cpu", "gpu"};
}

std::vector<GoldenCase> golden_cases() {
  std::vector<fs::path> wats;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(golden_dir() / "modules", ec))
    if (e.path().extension() == ".wat") wats.push_back(e.path());
  std::sort(wats.begin(), wats.end());
  std::vector<GoldenCase> cases;
  for (const fs::path& w : wats)
    for (const std::string& v : variants_of(w)) cases.push_back({w.stem().string(), v});
  return cases;
}

std::string case_name(const testing::TestParamInfo<GoldenCase>& info) {
  std::string n = info.param.module + "_" + info.param.variant;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    lines.push_back(text.substr(pos, eol - pos));
    pos = eol + 1;
  }
  return lines;
}

// The region where the two differ (what lies between their common first
// and last lines) as one unified-diff hunk, each side cut to a few lines:
// enough to see what changed; the update command shows the rest as a diff.
std::string diff_excerpt(const std::string& expected, const std::string& actual, const std::string& name) {
  constexpr size_t kContext = 2, kShown = 12;
  const std::vector<std::string> a = split_lines(expected), b = split_lines(actual);
  size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
  size_t post = 0;
  while (post < a.size() - pre && post < b.size() - pre && a[a.size() - 1 - post] == b[b.size() - 1 - post]) ++post;
  const size_t a_end = a.size() - post, b_end = b.size() - post;
  const size_t from = pre > kContext ? pre - kContext : 0, after = std::min(kContext, post);
  std::ostringstream out;
  out << "--- tests/golden/expected/" << name << " (" << a.size() << " lines)\n"
      << "+++ generated (" << b.size() << " lines)\n"
      << "@@ -" << from + 1 << "," << a_end + after - from << " +" << from + 1 << "," << b_end + after - from
      << " @@\n";
  for (size_t i = from; i < pre; ++i) out << " " << a[i] << "\n";
  auto side = [&](const std::vector<std::string>& lines, size_t end, char mark) {
    for (size_t i = pre; i < end && i < pre + kShown; ++i) out << mark << lines[i] << "\n";
    if (end > pre + kShown) out << mark << "... " << end - pre - kShown << " more lines\n";
  };
  side(a, a_end, '-');
  side(b, b_end, '+');
  for (size_t i = a_end; i < a_end + after; ++i) out << " " << a[i] << "\n";
  if (a == b) out << "(they differ only in the final newline)\n";
  return out.str();
}

// The module's bytes and its translation; a build without wabt cannot read
// the text format, and skips.
struct Loaded {
  std::shared_ptr<const CompiledModule> cm;
  std::string skip;   // this build reads no text format
  std::string error;  // anything else that went wrong
};

Loaded load(const std::string& module) {
  const std::string path = (golden_dir() / "modules" / (module + ".wat")).string();
  auto bytes = cli::read_module_bytes(path);
  if (!bytes.ok()) {
    if (bytes.error().message.find("which this build cannot read") != std::string::npos)
      return {nullptr, bytes.error().message, ""};
    return {nullptr, "", bytes.error().to_string()};
  }
  auto cm = compile_module(std::move(*bytes));
  if (!cm.ok()) return {nullptr, "", path + ": " + cm.error().to_string()};
  return {*cm, "", ""};
}

class CodegenGolden : public testing::TestWithParam<GoldenCase> {};

TEST_P(CodegenGolden, GeneratedSourceIsTheExpectedFile) {
  const GoldenCase& c = GetParam();
  const Variant* v = find_variant(c.variant);
  ASSERT_TRUE(v) << "modules/" << c.module << ".wat asks for variant '" << c.variant
                 << "'; known: cpu, gpu, gpu-sparse";
  Loaded m = load(c.module);
  if (!m.skip.empty()) GTEST_SKIP() << m.skip;
  ASSERT_TRUE(m.cm) << m.error;
  // generate()'s source, before amalgamate() adds the runtime headers: they
  // are in the tree already, and a change to them is not the generator's.
  // It holds no path, time, build id or compiler version (those go into the
  // cache key, not the source), so nothing needs normalising.
  auto g = codegen::generate(*m.cm, generator_options(*v));
  ASSERT_TRUE(g.ok()) << g.error().message;
  const fs::path file = golden_dir() / "expected" / c.expected_file();
  const std::optional<std::string> expected = read_text(file);
  if (updating()) {
    if (expected != g->source) {
      fs::create_directories(file.parent_path());
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      out << g->source;
      ASSERT_TRUE(out.flush()) << "cannot write " << file;
      std::printf("golden: wrote tests/golden/expected/%s\n", c.expected_file().c_str());
    }
    return;
  }
  ASSERT_TRUE(expected) << "tests/golden/expected/" << c.expected_file() << " is missing; write it with `"
                        << kUpdateCommand << "` and review it";
  if (*expected != g->source)
    ADD_FAILURE() << "the generated source differs from its golden file:\n"
                  << diff_excerpt(*expected, g->source, c.expected_file()) << "If the change is intended, run `"
                  << kUpdateCommand << "` and review the diff of tests/golden/expected/ like code.";
}

// The golden options are the tiers': for the CPU and the GPU alike, the unit
// the compiler gets is the golden source with the runtime headers added.
TEST_P(CodegenGolden, TheTierCompilesTheGoldenSource) {
  const GoldenCase& c = GetParam();
  const Variant* v = find_variant(c.variant);
  ASSERT_TRUE(v);
  Loaded m = load(c.module);
  if (!m.skip.empty()) GTEST_SKIP() << m.skip;
  ASSERT_TRUE(m.cm) << m.error;
  compiled::Request req;
  req.module = m.cm;
  req.target = v->target == codegen::Target::Gpu ? compiled::Target::Gpu : compiled::Target::Cpu;
  req.layout = v->layout;
  req.cache.enabled = false;
  codegen::Toolchain tc = codegen::Toolchain::HostCxx;
  if (v->target == codegen::Target::Gpu) {
    if (!gpu::built_with_cuda()) GTEST_SKIP() << "built without CUDA";
    // The tier keys the code by NVRTC's version, so it needs NVRTC (but no GPU).
    if (auto nvrtc = gpu::nvrtc_version(); !nvrtc.ok()) GTEST_SKIP() << nvrtc.error().message;
    req.gpu_arch = 90;
    tc = codegen::Toolchain::Nvrtc;
  }
  auto units = compiled::translation_units(req);
  if (!units.ok()) GTEST_SKIP() << "the tier cannot prepare this target here: " << units.error().message;
  auto g = codegen::generate(*m.cm, generator_options(*v));
  ASSERT_TRUE(g.ok()) << g.error().message;
  ASSERT_EQ(g->units.size(), units->size());
  for (size_t u = 0; u < units->size(); ++u) {
    auto unit = codegen::amalgamate(g->units[u], tc);
    ASSERT_TRUE(unit.ok()) << unit.error().message;
    // Not EXPECT_EQ: the units hold the runtime headers, far too long to print.
    EXPECT_TRUE(*unit == (*units)[u]) << "unit " << u << " of " << c.expected_file()
                                      << " is not what the tier compiles: generator_options() no longer matches "
                                         "compiled_tier.cc's codegen_options";
  }
}

INSTANTIATE_TEST_SUITE_P(Modules, CodegenGolden, testing::ValuesIn(golden_cases()), case_name);

// Every expected file belongs to a module's variant: one left behind by a
// renamed or removed module would never be compared again.
TEST(CodegenGoldenFiles, EachBelongsToAModule) {
  std::set<std::string> wanted;
  for (const GoldenCase& c : golden_cases()) wanted.insert(c.expected_file());
  std::vector<std::string> stale;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(golden_dir() / "expected", ec)) {
    const std::string name = e.path().filename().string();
    // The folder's own .clang-format (generated code is never reformatted).
    if (name != ".clang-format" && !wanted.count(name)) stale.push_back(name);
  }
  std::sort(stale.begin(), stale.end());
  if (updating()) {
    for (const std::string& s : stale) {
      fs::remove(golden_dir() / "expected" / s);
      std::printf("golden: removed tests/golden/expected/%s\n", s.c_str());
    }
    return;
  }
  std::string list;
  for (const std::string& s : stale) list += " " + s;
  EXPECT_TRUE(stale.empty()) << "no module makes these files in tests/golden/expected/:" << list << "; `"
                             << kUpdateCommand << "` removes them";
}

}  // namespace
}  // namespace ww
