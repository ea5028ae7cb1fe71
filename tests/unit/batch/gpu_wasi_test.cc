// The host's half of read-only files on the device (batch/gpu_wasi.cc):
// after serving path_open, GpuWasiCalls hands a regular file beneath a
// read-only preopen to the device (one upload per file for the batch, a
// slot per instance), keeps everything else, and follows (or refuses) a
// renumber or a change of rights of what the device holds. No GPU needed: the
// device's table is a fake that records what it was given.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "exec/gpu/host_calls/gpu_wasi.h"
#include "runtime/runtime.h"
#include "wasi/wasi_abi.h"

namespace ww::batch {
namespace {

/* wat2wasm of:
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_renumber" (func (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_fdstat_set_rights" (func (param i32 i64 i64) (result i32)))
  (memory 1)
  (func (export "_start")))
*/
const std::vector<uint8_t> kModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x23, 0x05, 0x60, 0x09, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7e,
    0x7e, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x03, 0x7f,
    0x7e, 0x7e, 0x01, 0x7f, 0x60, 0x00, 0x00, 0x02, 0x99, 0x01, 0x04, 0x16, 0x77, 0x61, 0x73, 0x69, 0x5f, 0x73, 0x6e,
    0x61, 0x70, 0x73, 0x68, 0x6f, 0x74, 0x5f, 0x70, 0x72, 0x65, 0x76, 0x69, 0x65, 0x77, 0x31, 0x09, 0x70, 0x61, 0x74,
    0x68, 0x5f, 0x6f, 0x70, 0x65, 0x6e, 0x00, 0x00, 0x16, 0x77, 0x61, 0x73, 0x69, 0x5f, 0x73, 0x6e, 0x61, 0x70, 0x73,
    0x68, 0x6f, 0x74, 0x5f, 0x70, 0x72, 0x65, 0x76, 0x69, 0x65, 0x77, 0x31, 0x08, 0x66, 0x64, 0x5f, 0x63, 0x6c, 0x6f,
    0x73, 0x65, 0x00, 0x01, 0x16, 0x77, 0x61, 0x73, 0x69, 0x5f, 0x73, 0x6e, 0x61, 0x70, 0x73, 0x68, 0x6f, 0x74, 0x5f,
    0x70, 0x72, 0x65, 0x76, 0x69, 0x65, 0x77, 0x31, 0x0b, 0x66, 0x64, 0x5f, 0x72, 0x65, 0x6e, 0x75, 0x6d, 0x62, 0x65,
    0x72, 0x00, 0x02, 0x16, 0x77, 0x61, 0x73, 0x69, 0x5f, 0x73, 0x6e, 0x61, 0x70, 0x73, 0x68, 0x6f, 0x74, 0x5f, 0x70,
    0x72, 0x65, 0x76, 0x69, 0x65, 0x77, 0x31, 0x14, 0x66, 0x64, 0x5f, 0x66, 0x64, 0x73, 0x74, 0x61, 0x74, 0x5f, 0x73,
    0x65, 0x74, 0x5f, 0x72, 0x69, 0x67, 0x68, 0x74, 0x73, 0x00, 0x03, 0x03, 0x02, 0x01, 0x04, 0x05, 0x03, 0x01, 0x00,
    0x01, 0x07, 0x0a, 0x01, 0x06, 0x5f, 0x73, 0x74, 0x61, 0x72, 0x74, 0x00, 0x04, 0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b};
constexpr uint32_t kPathOpen = 0, kFdClose = 1, kFdRenumber = 2, kFdSetRights = 3;

// What the device's file table was given.
class RecordedFiles final : public gpu::DeviceFiles {
 public:
  explicit RecordedFiles(uint64_t id) : id_(id) {}
  uint64_t table_id() const override { return id_; }
  int32_t upload(const gpu::DeviceFile& f) override {
    if (files.size() == room) return -1;
    files.push_back({std::string(reinterpret_cast<const char*>(f.bytes), f.size), f.max_seek, {}, {}});
    std::memcpy(files.back().filestat, f.filestat, sizeof f.filestat);
    std::memcpy(files.back().fdstat, f.fdstat, sizeof f.fdstat);
    return int32_t(files.size() - 1);
  }
  struct File {
    std::string bytes;
    uint64_t max_seek;
    uint8_t filestat[64];
    uint8_t fdstat[24];
  };
  std::vector<File> files;
  size_t room = 100;

 private:
  const uint64_t id_;
};

class VectorMemory final : public GuestMemory {
 public:
  uint64_t size() const override { return bytes.size(); }
  const uint8_t* read(uint64_t p, uint64_t) override { return bytes.data() + p; }
  uint8_t* window(uint64_t p, uint64_t) override { return bytes.data() + p; }
  void written(uint64_t, uint64_t) override {}
  std::vector<uint8_t> bytes = std::vector<uint8_t>(65536);
};

struct Opened {
  uint32_t err, fd;
  int32_t slot;
  uint32_t file;
};

class GpuWasiFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ww-gpu-wasi-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "ro");
    std::filesystem::create_directories(dir_ / "rw");
    std::ofstream(dir_ / "ro" / "a.txt") << "hello";
    std::ofstream(dir_ / "ro" / "b.txt") << "world!!";
    auto cm = compile_module(kModule);
    ASSERT_TRUE(cm.ok()) << cm.error().to_string();
    cm_ = *cm;
    w_.argv0 = "t.wasm";
    w_.config.preopens = {{(dir_ / "ro").string(), "ro", false}, {(dir_ / "rw").string(), "rw", true}};
    calls_ = std::make_unique<GpuWasiCalls>(w_, cm_->module, out_, 0, 3);
    ASSERT_TRUE(calls_->open().ok());
  }
  void TearDown() override {
    calls_.reset();
    std::filesystem::remove_all(dir_);
  }
  // path_open(dirfd, path) for instance i: fds 3 and 4 are ro and rw.
  Opened open(uint32_t i, uint32_t dirfd, const std::string& path, uint64_t rights, uint32_t oflags = 0) {
    std::memcpy(mem_.bytes.data() + 100, path.data(), path.size());
    uint64_t io[9] = {dirfd, 1, 100, path.size(), oflags, rights, 0, 0, 200};
    const gpu::HostCall c = serve(i, kPathOpen, io);
    uint32_t fd = 0;
    std::memcpy(&fd, mem_.bytes.data() + 200, 4);
    return {uint32_t(io[0]), fd, c.fd_slot, c.file};
  }
  uint32_t close(uint32_t i, uint32_t fd) {
    uint64_t io[1] = {fd};
    EXPECT_EQ(serve(i, kFdClose, io).fd_slot, -1);
    return uint32_t(io[0]);
  }
  gpu::HostCall serve(uint32_t i, uint32_t func, uint64_t* io) {
    const gpu::HostCall c = serve_any(i, func, io);
    EXPECT_EQ(c.trap, TrapCode::None);
    return c;
  }
  gpu::HostCall serve_any(uint32_t i, uint32_t func, uint64_t* io) {
    gpu::HostCall c;
    c.instance = i;
    c.func = func;
    c.io = io;
    c.memory = &mem_;
    c.files = table_;
    calls_->serve(c);
    return c;
  }

  std::filesystem::path dir_;
  std::shared_ptr<const CompiledModule> cm_;
  WasiBatch w_;
  BatchResult out_;
  std::unique_ptr<GpuWasiCalls> calls_;
  RecordedFiles files_{1};
  RecordedFiles* table_ = &files_;  // the table the calls see
  VectorMemory mem_;
};

constexpr uint64_t kRead = wasi::kRightFdRead;

TEST_F(GpuWasiFiles, ABudgetOnlyWithAReadOnlyPreopen) {
  EXPECT_GT(calls_->device_wasi()->file_budget, 0u);
  EXPECT_EQ(calls_->device_wasi()->preopen_off, (std::vector<uint32_t>{0, 2, 4}));
  WasiBatch rw_only = w_;
  rw_only.config.preopens.erase(rw_only.config.preopens.begin());
  GpuWasiCalls other(rw_only, cm_->module, out_, 0, 1);
  EXPECT_EQ(other.device_wasi()->file_budget, 0u);
}

TEST_F(GpuWasiFiles, AReadOnlyFileGoesToTheDeviceOnceForTheBatch) {
  const Opened a0 = open(0, 3, "a.txt", kRead);
  EXPECT_EQ(a0.err, wasi::kSuccess);
  EXPECT_EQ(a0.fd, 5u);  // after stdio and the two preopens
  EXPECT_EQ(a0.slot, 0);
  EXPECT_EQ(a0.file, 0u);
  ASSERT_EQ(files_.files.size(), 1u);
  const RecordedFiles::File& f = files_.files[0];
  EXPECT_EQ(f.bytes, "hello");
  EXPECT_GT(f.max_seek, uint64_t(1) << 30);  // any file system allows more
  EXPECT_EQ(f.filestat[16], wasi::kFiletypeRegularFile);
  uint64_t size = 0;
  std::memcpy(&size, f.filestat + 32, 8);
  EXPECT_EQ(size, 5u);
  EXPECT_EQ(f.fdstat[0], wasi::kFiletypeRegularFile);

  // Another instance, the same file: its own slot, the same copy.
  const Opened a1 = open(1, 3, "a.txt", kRead);
  EXPECT_EQ(a1.slot, 0);
  EXPECT_EQ(a1.file, 0u);
  EXPECT_EQ(files_.files.size(), 1u);
  const Opened b0 = open(0, 3, "b.txt", kRead);
  EXPECT_EQ(b0.fd, 6u);
  EXPECT_EQ(b0.slot, 1);
  EXPECT_EQ(b0.file, 1u);
  EXPECT_EQ(files_.files[1].bytes, "world!!");
}

TEST_F(GpuWasiFiles, SlotsRunOutThenCloseFreesOne) {
  for (int32_t k = 0; k < int32_t(gpu::kDevFdSlots); ++k) EXPECT_EQ(open(0, 3, "a.txt", kRead).slot, k);
  const Opened extra = open(0, 3, "a.txt", kRead);
  EXPECT_EQ(extra.err, wasi::kSuccess);  // the host keeps serving it
  EXPECT_EQ(extra.slot, -1);
  EXPECT_EQ(close(0, 5), wasi::kSuccess);
  const Opened again = open(0, 3, "b.txt", kRead);
  EXPECT_EQ(again.fd, 5u);
  EXPECT_EQ(again.slot, 0);
  // Other instances' slots are their own.
  EXPECT_EQ(open(2, 3, "a.txt", kRead).slot, 0);
}

TEST_F(GpuWasiFiles, WritableOrRefusedOpensStayWithTheHost) {
  std::ofstream(dir_ / "rw" / "c.txt") << "data";
  const Opened rw = open(0, 4, "c.txt", kRead);  // beneath a writable preopen
  EXPECT_EQ(rw.err, wasi::kSuccess);
  EXPECT_EQ(rw.slot, -1);
  const Opened dir = open(0, 3, ".", kRead, wasi::kOflagDirectory);
  EXPECT_EQ(dir.err, wasi::kSuccess);
  EXPECT_EQ(dir.slot, -1);
  EXPECT_EQ(open(0, 3, "missing.txt", kRead).slot, -1);
  EXPECT_EQ(open(0, 3, "a.txt", kRead | wasi::kRightFdWrite).err, wasi::kNotcapable);
  EXPECT_TRUE(files_.files.empty());
}

// Instances run again with larger stacks go through a new wave loop, with
// a table of its own: the file goes to that table too, from the batch's
// descriptor, the same bytes.
TEST_F(GpuWasiFiles, ANewTableGetsTheFileAgain) {
  EXPECT_EQ(open(0, 3, "a.txt", kRead).file, 0u);
  RecordedFiles second(2);
  table_ = &second;
  calls_->begin(0, 3);
  const Opened again = open(0, 3, "b.txt", kRead);
  EXPECT_EQ(again.slot, 0);
  EXPECT_EQ(again.file, 0u);
  const Opened a = open(1, 3, "a.txt", kRead);
  EXPECT_EQ(a.file, 1u);
  ASSERT_EQ(second.files.size(), 2u);
  EXPECT_EQ(second.files[1].bytes, "hello");
  EXPECT_EQ(files_.files.size(), 1u);
}

TEST_F(GpuWasiFiles, ADeviceWithoutRoomLeavesTheFileToTheHost) {
  files_.room = 0;
  const Opened a = open(0, 3, "a.txt", kRead);
  EXPECT_EQ(a.err, wasi::kSuccess);
  EXPECT_EQ(a.slot, -1);
  // Tried once for the batch.
  files_.room = 100;
  EXPECT_EQ(open(1, 3, "a.txt", kRead).slot, -1);
}

// The device's copy of a file answers fd_fdstat_get (and checks rights)
// for every descriptor of it: one asked for with other rights stays the
// host's.
TEST_F(GpuWasiFiles, OtherRightsStayWithTheHost) {
  EXPECT_EQ(open(0, 3, "a.txt", kRead).slot, 0);
  const Opened other = open(1, 3, "a.txt", kRead | wasi::kRightFdSeek);
  EXPECT_EQ(other.err, wasi::kSuccess);
  EXPECT_EQ(other.slot, -1);
  EXPECT_EQ(open(2, 3, "a.txt", kRead).slot, 0);
  EXPECT_EQ(files_.files.size(), 1u);
}

// fd_renumber of a file the device holds, which renumbered its side first
// (it knew both open): the host's view of the slots follows, so the freed
// slot and number are given out again.
TEST_F(GpuWasiFiles, RenumberFollowsTheDevice) {
  ASSERT_EQ(open(0, 3, "a.txt", kRead).fd, 5u);
  ASSERT_EQ(open(0, 3, "b.txt", kRead).slot, 1);
  uint64_t io[2] = {5 | gpu::kDevRenumbered, 6};
  serve(0, kFdRenumber, io);
  EXPECT_EQ(io[0], wasi::kSuccess);
  // fd 6 is a.txt's now, in slot 0; slot 1 and fd 5 are free.
  const Opened next = open(0, 3, "b.txt", kRead);
  EXPECT_EQ(next.fd, 5u);
  EXPECT_EQ(next.slot, 1);
  EXPECT_EQ(close(0, 6), wasi::kSuccess);
  EXPECT_EQ(open(0, 3, "a.txt", kRead).slot, 0);
}

// One the device could not follow (a descriptor only the host knows open)
// ends the instance: it would go on reading the old numbers.
TEST_F(GpuWasiFiles, RenumberTheDeviceCannotFollowEndsTheInstance) {
  ASSERT_EQ(open(0, 3, "a.txt", kRead).slot, 0);
  const Opened dir = open(0, 3, ".", kRead, wasi::kOflagDirectory);
  ASSERT_EQ(dir.slot, -1);
  uint64_t io[2] = {5, dir.fd};
  EXPECT_EQ(serve_any(0, kFdRenumber, io).trap, TrapCode::HostError);
  // A renumber that fails changes nothing, so it is the program's errno.
  uint64_t bad[2] = {5, 40};
  serve(1, kFdRenumber, bad);
  EXPECT_EQ(bad[0], wasi::kBadf);
}

// Rights of a held file that shrink would not be checked on the device.
TEST_F(GpuWasiFiles, DroppingRightsOfAHeldFileEndsTheInstance) {
  ASSERT_EQ(open(0, 3, "a.txt", kRead).slot, 0);
  uint64_t same[3] = {5, kRead, 0};
  serve(0, kFdSetRights, same);
  EXPECT_EQ(same[0], wasi::kSuccess);
  uint64_t more[3] = {5, kRead | wasi::kRightFdWrite, 0};
  serve(0, kFdSetRights, more);
  EXPECT_EQ(more[0], wasi::kNotcapable);
  uint64_t none[3] = {5, 0, 0};
  EXPECT_EQ(serve_any(0, kFdSetRights, none).trap, TrapCode::HostError);
}

}  // namespace
}  // namespace ww::batch
