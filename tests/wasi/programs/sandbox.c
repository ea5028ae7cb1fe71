// wasmwarp's sandbox, checked against its own expected output (node's
// preopens are writable, and it reports a link out of one as ENOENT):
// creating, truncating and opening for writing are refused, reading still
// works, and a symbolic link that leaves the preopen is ENOTCAPABLE.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void try_open(const char* path, int flags) {
  int fd = open(path, flags, 0644);
  printf("open %s (%s): %s\n", path,
         (flags & O_CREAT)                 ? "create"
         : (flags & O_ACCMODE) == O_RDONLY ? "read"
                                           : "write",
         fd >= 0 ? "ok" : strerror(errno));
  if (fd >= 0) close(fd);
}
int main(void) {
  try_open("data/in.txt", O_RDONLY);
  try_open("data/in.txt", O_WRONLY);
  try_open("data/in.txt", O_RDWR);
  try_open("data/new.txt", O_WRONLY | O_CREAT);
  try_open("data/in.txt", O_WRONLY | O_TRUNC);
  try_open("data/link-out", O_RDONLY);
  printf("write to stdin: %s\n", write(0, "x", 1) < 0 ? strerror(errno) : "ok");
  return 0;
}
