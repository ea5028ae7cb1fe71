// Descriptor reads as a program sees them (on the GPU the device serves
// these for read-only files): an offset of the instance's own (argv[1]),
// read and readv, seeks from each origin, past the end and before the
// start, pread, fstat, more files open at once than the device keeps,
// descriptors closed and reused, and the preopens' names.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <wasi/api.h>

static void show(const char* what, long long r) {
  if (r < 0) printf("%s: -1 %s\n", what, strerror(errno));
  else printf("%s: %lld\n", what, r);
  errno = 0;
}

int main(int argc, char** argv) {
  const int k = argc > 1 ? atoi(argv[1]) : 0;
  int fd = open("data/in.txt", O_RDONLY);
  show("open", fd >= 0);
  char b[32] = {0};
  show("seek own", lseek(fd, k % 9, SEEK_SET));
  show("read", read(fd, b, 5));
  printf("bytes '%s'\n", b);
  show("tell", lseek(fd, 0, SEEK_CUR));
  char x[4] = {0}, y[5] = {0};
  struct iovec iov[3] = {{x, 3}, {NULL, 0}, {y, 4}};
  show("readv", readv(fd, iov, 3));
  printf("readv '%s' '%s'\n", x, y);
  show("seek end-3", lseek(fd, -3, SEEK_END));
  memset(b, 0, sizeof b);
  show("read at end", read(fd, b, sizeof b - 1));
  printf("tail '%s'\n", b);
  show("read past", read(fd, b, 4));
  show("seek far", lseek(fd, 5000 + k, SEEK_SET));
  show("read far", read(fd, b, 4));
  show("seek before start", lseek(fd, -1, SEEK_SET));
  show("tell kept", lseek(fd, 0, SEEK_CUR));
  show("seek cur back", lseek(fd, -4990, SEEK_CUR));
  memset(b, 0, sizeof b);
  show("pread", pread(fd, b, 6, 11));
  printf("pread '%s'\n", b);
  show("pread past", pread(fd, b, 6, 1 << 20));
  show("tell after pread", lseek(fd, 0, SEEK_CUR));
  struct stat st;
  show("fstat", fstat(fd, &st));
  printf("size %lld regular %d\n", (long long)st.st_size, S_ISREG(st.st_mode));
  show("write to a read-only file", write(fd, "x", 1));
  // More at once than the device keeps for an instance (4): the rest are
  // the host's, and every one reads the same.
  int many[6];
  for (int i = 0; i < 6; ++i) many[i] = open(i % 2 ? "data/sub/nested.txt" : "data/in.txt", O_RDONLY);
  for (int i = 0; i < 6; ++i) {
    memset(b, 0, sizeof b);
    lseek(many[i], i, SEEK_SET);
    ssize_t n = read(many[i], b, 4);
    printf("file %d (fd %d): %zd '%s'\n", i, many[i] - fd, n, b);
  }
  for (int i = 0; i < 6; i += 2) close(many[i]);
  close(fd);
  show("read closed", read(fd, b, 1));
  int again = open("data/sub/nested.txt", O_RDONLY);
  memset(b, 0, sizeof b);
  show("reopened read", read(again, b, 3));
  printf("reopened '%s' reused %d\n", b, again == fd);
  // The preopens: fd 3 is data's; its name cut short, then closed.
  __wasi_prestat_t ps;
  printf("prestat 3: %d len %zu\n", __wasi_fd_prestat_get(3, &ps), (size_t)ps.u.dir.pr_name_len);
  char name[8] = {0};
  // node answers these two with other errnos than wasmtime and wasmwarp
  // (ENOBUFS, EINVAL): only "raw" (a GPU run against the CPU's) shows them.
  const int raw = argc > 2 && strcmp(argv[2], "raw") == 0;
  const int short_name = __wasi_fd_prestat_dir_name(3, (uint8_t*)name, 2);
  printf("name short: %d\n", raw ? short_name : short_name != 0);
  printf("name: %d '%s'\n", __wasi_fd_prestat_dir_name(3, (uint8_t*)name, sizeof name - 1), name);
  const int p0 = __wasi_fd_prestat_get(0, &ps), p4 = __wasi_fd_prestat_get(4, &ps);
  printf("prestat 0: %d, 4: %d, 99: %d\n", raw ? p0 : p0 != 0, raw ? p4 : p4 != 0, __wasi_fd_prestat_get(99, &ps));
  printf("close 3: %d, prestat 3: %d\n", __wasi_fd_close(3), __wasi_fd_prestat_get(3, &ps));
  return 0;
}
