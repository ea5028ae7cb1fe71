// WASI calls one by one, checked against calls.expected (node's WASI
// answers many differently): rights that shrink and are enforced, pwrite,
// fd_allocate, APPEND and SYNC flags, hard and symbolic links beneath
// their preopen, trailing slashes, "." and ".." in fd_readdir,
// fd_renumber, paths with a NUL or not UTF-8, poll_oneoff, sockets, and a
// read-only preopen that refuses every change. The errno values are
// wasmtime's but where this layer goes further (rights, fd_allocate, SYNC,
// ENOTCAPABLE beneath a read-only preopen). Run with the writable preopen
// "out" (empty) and the read-only "data" (holding in.txt).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wasi/api.h>

static __wasi_fd_t OUT, DATA;

// path_open with the path's length given, so that it may hold a NUL.
int32_t raw_path_open(int32_t fd, int32_t lookup, int32_t path, int32_t len, int32_t oflags, int64_t base,
                      int64_t inheriting, int32_t fdflags, int32_t out)
    __attribute__((__import_module__("wasi_snapshot_preview1"), __import_name__("path_open")));

int32_t raw_proc_raise(int32_t sig)
    __attribute__((__import_module__("wasi_snapshot_preview1"), __import_name__("proc_raise")));

static void say(const char* what, int e) { printf("%s: %d\n", what, e); }

static __wasi_fd_t open_at(__wasi_fd_t dir, const char* path, __wasi_oflags_t oflags, __wasi_rights_t rights,
                           __wasi_fdflags_t fdflags, int* err) {
  __wasi_fd_t fd = (__wasi_fd_t)-1;
  *err = __wasi_path_open(dir, 0, path, oflags, rights, rights, fdflags, &fd);
  return fd;
}

// The preopen named `name`.
static __wasi_fd_t preopen(const char* name) {
  for (__wasi_fd_t fd = 3;; ++fd) {
    __wasi_prestat_t p;
    char got[64] = {0};
    if (__wasi_fd_prestat_get(fd, &p) != 0) exit(2);
    if (p.u.dir.pr_name_len < sizeof got && __wasi_fd_prestat_dir_name(fd, (uint8_t*)got, p.u.dir.pr_name_len) == 0 &&
        strcmp(got, name) == 0)
      return fd;
  }
}

static int cmp(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

int main(void) {
  int e;
  OUT = preopen("out");
  DATA = preopen("data");
  const __wasi_rights_t rw = __WASI_RIGHTS_FD_READ | __WASI_RIGHTS_FD_WRITE | __WASI_RIGHTS_FD_SEEK |
                             __WASI_RIGHTS_FD_TELL | __WASI_RIGHTS_FD_FILESTAT_GET | __WASI_RIGHTS_FD_FDSTAT_SET_FLAGS |
                             __WASI_RIGHTS_FD_ALLOCATE;
  // A directory never has the rights only a file can use.
  __wasi_fdstat_t st;
  say("fdstat out", __wasi_fd_fdstat_get(OUT, &st));
  printf("out: directory %d, seek right %d, set_size right %d\n", st.fs_filetype == __WASI_FILETYPE_DIRECTORY,
         !!(st.fs_rights_base & __WASI_RIGHTS_FD_SEEK), !!(st.fs_rights_base & __WASI_RIGHTS_FD_FILESTAT_SET_SIZE));
  say("mkdir d", __wasi_path_create_directory(OUT, "d"));
  __wasi_fd_t f = open_at(OUT, "d/f", __WASI_OFLAGS_CREAT, rw, 0, &e);
  say("create d/f", e);

  // fd_pwrite at offsets leaves the descriptor's own offset alone.
  __wasi_size_t n = 0;
  __wasi_ciovec_t hello = {(const uint8_t*)"hello", 5}, x = {(const uint8_t*)"x", 1};
  say("pwrite 0", __wasi_fd_pwrite(f, &hello, 1, 0, &n));
  say("pwrite 10", __wasi_fd_pwrite(f, &x, 1, 10, &n));
  __wasi_filesize_t pos = 99;
  say("tell", __wasi_fd_tell(f, &pos));
  __wasi_filestat_t fs;
  say("filestat", __wasi_fd_filestat_get(f, &fs));
  printf("offset %llu, size %llu\n", (unsigned long long)pos, (unsigned long long)fs.size);
  say("allocate to 20", __wasi_fd_allocate(f, 15, 5));
  say("filestat", __wasi_fd_filestat_get(f, &fs));
  printf("size %llu\n", (unsigned long long)fs.size);

  // APPEND on and off.
  say("set append", __wasi_fd_fdstat_set_flags(f, __WASI_FDFLAGS_APPEND));
  say("write", __wasi_fd_write(f, &x, 1, &n));
  say("filestat", __wasi_fd_filestat_get(f, &fs));
  printf("size %llu\n", (unsigned long long)fs.size);
  say("fdstat", __wasi_fd_fdstat_get(f, &st));
  printf("flags %u\n", st.fs_flags);
  say("set sync", __wasi_fd_fdstat_set_flags(f, __WASI_FDFLAGS_SYNC));
  say("clear flags", __wasi_fd_fdstat_set_flags(f, 0));

  // Rights only shrink, and what is dropped is refused.
  say("drop write", __wasi_fd_fdstat_set_rights(f, rw & ~__WASI_RIGHTS_FD_WRITE, 0));
  say("write without the right", __wasi_fd_write(f, &x, 1, &n));
  say("pwrite without the right", __wasi_fd_pwrite(f, &x, 1, 0, &n));
  say("grant write again", __wasi_fd_fdstat_set_rights(f, rw, 0));
  say("fdstat", __wasi_fd_fdstat_get(f, &st));
  printf("write right %d, read right %d\n", !!(st.fs_rights_base & __WASI_RIGHTS_FD_WRITE),
         !!(st.fs_rights_base & __WASI_RIGHTS_FD_READ));
  __wasi_fd_t ro = open_at(OUT, "d/f", 0, __WASI_RIGHTS_FD_READ, 0, &e);
  say("open read-only", e);
  say("write to it", __wasi_fd_write(ro, &x, 1, &n));
  say("seek without the right", __wasi_fd_seek(ro, 0, __WASI_WHENCE_SET, &pos));

  // Links: hard, symbolic, and one that leads out.
  say("link d/h", __wasi_path_link(OUT, 0, "d/f", OUT, "d/h"));
  say("link following", __wasi_path_link(OUT, __WASI_LOOKUPFLAGS_SYMLINK_FOLLOW, "d/f", OUT, "d/h2"));
  say("filestat", __wasi_fd_filestat_get(f, &fs));
  printf("nlink %llu\n", (unsigned long long)fs.nlink);
  say("symlink d/l", __wasi_path_symlink("f", OUT, "d/l"));
  uint8_t buf[256];
  say("readlink d/l", __wasi_path_readlink(OUT, "d/l", buf, sizeof buf, &n));
  printf("target %.*s\n", (int)n, buf);
  say("symlink to /etc/passwd", __wasi_path_symlink("/etc/passwd", OUT, "d/abs"));
  say("symlink to ../../up", __wasi_path_symlink("../../up", OUT, "d/up"));
  __wasi_fd_t up;
  say("follow d/up", __wasi_path_open(OUT, __WASI_LOOKUPFLAGS_SYMLINK_FOLLOW, "d/up", 0, 0, 0, 0, &up));
  say("open d/l without following", __wasi_path_open(OUT, 0, "d/l", 0, 0, 0, 0, &up));
  say("filestat d/l", __wasi_path_filestat_get(OUT, 0, "d/l", &fs));
  printf("symbolic link %d\n", fs.filetype == __WASI_FILETYPE_SYMBOLIC_LINK);
  __wasi_filestat_t before;
  say("filestat d/f", __wasi_path_filestat_get(OUT, 0, "d/f", &before));
  say("set the link's mtime",
      __wasi_path_filestat_set_times(OUT, 0, "d/l", 0, 1000000000ull * 1000000, __WASI_FSTFLAGS_MTIM));
  say("filestat d/l", __wasi_path_filestat_get(OUT, 0, "d/l", &fs));
  printf("link mtime %llu\n", (unsigned long long)(fs.mtim / 1000000000ull));
  say("filestat d/f", __wasi_path_filestat_get(OUT, 0, "d/f", &fs));
  printf("file mtime unchanged %d\n", fs.mtim == before.mtim);
  say("mtime and now",
      __wasi_path_filestat_set_times(OUT, 0, "d/f", 0, 0, __WASI_FSTFLAGS_MTIM | __WASI_FSTFLAGS_MTIM_NOW));

  // fd_readdir: "." and ".." first, then the entries.
  __wasi_fd_t d = open_at(OUT, "d", __WASI_OFLAGS_DIRECTORY, __WASI_RIGHTS_FD_READDIR | __WASI_RIGHTS_FD_SEEK, 0, &e);
  say("open d", e);
  say("fdstat d", __wasi_fd_fdstat_get(d, &st));
  printf("d: seek right %d, readdir right %d\n", !!(st.fs_rights_base & __WASI_RIGHTS_FD_SEEK),
         !!(st.fs_rights_base & __WASI_RIGHTS_FD_READDIR));
  say("readdir", __wasi_fd_readdir(d, buf, sizeof buf, 0, &n));
  char* names[16];
  int k = 0;
  for (__wasi_size_t at = 0; at + sizeof(__wasi_dirent_t) <= n && k < 16;) {
    __wasi_dirent_t de;
    memcpy(&de, buf + at, sizeof de);
    at += sizeof de;
    names[k] = calloc(1, de.d_namlen + 1);
    memcpy(names[k++], buf + at, de.d_namlen);
    at += de.d_namlen;
  }
  qsort(names, k, sizeof names[0], cmp);
  for (int i = 0; i < k; ++i) printf("entry %s\n", names[i]);
  say("seek a directory", __wasi_fd_seek(d, 0, __WASI_WHENCE_CUR, &pos));
  say("read a directory", __wasi_fd_read(d, (const __wasi_iovec_t*)&hello, 1, &n));

  // fd_renumber: the destination closes and takes the file.
  say("renumber f to d", __wasi_fd_renumber(f, d));
  say("fdstat f", __wasi_fd_fdstat_get(f, &st));
  say("fdstat d", __wasi_fd_fdstat_get(d, &st));
  printf("d is a regular file %d\n", st.fs_filetype == __WASI_FILETYPE_REGULAR_FILE);
  say("renumber to a closed one", __wasi_fd_renumber(d, f));

  // Trailing slashes, as the kernel rules for them.
  say("unlink d/h/", __wasi_path_unlink_file(OUT, "d/h/"));
  say("unlink d/", __wasi_path_unlink_file(OUT, "d/"));
  say("rmdir d/ (not empty)", __wasi_path_remove_directory(OUT, "d/"));
  say("rename d/ to e/", __wasi_path_rename(OUT, "d/", OUT, "e/"));
  say("symlink to e/new/", __wasi_path_symlink("x", OUT, "e/new/"));
  say("rmdir e/f", __wasi_path_remove_directory(OUT, "e/f"));

  // O_SYNC and O_DSYNC are kept, and said.
  __wasi_fd_t sy = open_at(OUT, "e/sync", __WASI_OFLAGS_CREAT, rw, __WASI_FDFLAGS_SYNC | __WASI_FDFLAGS_DSYNC, &e);
  say("create with sync", e);
  say("fdstat", __wasi_fd_fdstat_get(sy, &st));
  printf("flags %u\n", st.fs_flags);

  // A path with a NUL in it, and one that is not UTF-8.
  __wasi_fd_t nul;
  say("open \"e/f\\0\"", raw_path_open(OUT, 0, (int32_t) "e/f\0", 4, 0, 0, 0, 0, (int32_t)&nul));
  say("open \"e/\\xff\"", raw_path_open(OUT, 0, (int32_t) "e/\xff", 3, 0, 0, 0, 0, (int32_t)&nul));

  // Sockets: there are none.
  say("shutdown stdout", __wasi_sock_shutdown(1, __WASI_SDFLAGS_RD));
  say("shutdown a closed fd", __wasi_sock_shutdown(77, __WASI_SDFLAGS_RD));
  say("raise", raw_proc_raise(15));

  // poll_oneoff: a file is ready at once, ahead of a clock; a clock alone
  // comes when due.
  __wasi_subscription_t sub[2];
  __wasi_event_t ev[2];
  memset(sub, 0, sizeof sub);
  sub[0].userdata = 1;
  sub[0].u.tag = __WASI_EVENTTYPE_FD_READ;
  sub[0].u.u.fd_read.file_descriptor = d;
  sub[1].userdata = 2;
  sub[1].u.tag = __WASI_EVENTTYPE_CLOCK;
  sub[1].u.u.clock.id = __WASI_CLOCKID_MONOTONIC;
  sub[1].u.u.clock.timeout = 60000000000ull;
  say("poll file and clock", __wasi_poll_oneoff(sub, ev, 2, &n));
  printf("events %u, first %llu\n", (unsigned)n, (unsigned long long)ev[0].userdata);
  sub[1].u.u.clock.timeout = 1000000;
  say("poll clock", __wasi_poll_oneoff(sub + 1, ev, 1, &n));
  printf("events %u, type %u\n", (unsigned)n, ev[0].type);
  sub[0].u.u.fd_read.file_descriptor = OUT;
  say("poll a directory", __wasi_poll_oneoff(sub, ev, 1, &n));

  // A read-only preopen refuses every change.
  say("symlink in data", __wasi_path_symlink("in.txt", DATA, "l"));
  say("link into data", __wasi_path_link(DATA, 0, "in.txt", DATA, "h"));
  say("rename in data", __wasi_path_rename(DATA, "in.txt", DATA, "in2.txt"));
  say("set times in data", __wasi_path_filestat_set_times(DATA, 0, "in.txt", 0, 0, __WASI_FSTFLAGS_MTIM_NOW));
  say("readlink in data (not a link)", __wasi_path_readlink(DATA, "in.txt", buf, sizeof buf, &n));
  return 0;
}
