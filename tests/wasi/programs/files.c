// Reading inside a preopen: whole files, stat, seek and pread, a sorted
// directory listing, a subdirectory; and paths that leave it (a link that
// leaves it is sandbox.c's: node says ENOENT, wasmwarp ENOTCAPABLE).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static int cmp(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }
static void try_open(const char* path) {
  int fd = open(path, O_RDONLY);
  printf("open %s: %s\n", path, fd >= 0 ? "ok" : strerror(errno));
  if (fd >= 0) close(fd);
}
int main(void) {
  FILE* f = fopen("data/in.txt", "r");
  if (!f) {
    printf("fopen: %s\n", strerror(errno));
    return 1;
  }
  char buf[256];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  printf("read %zu: %s", n, buf);
  fclose(f);
  struct stat st;
  if (stat("data/in.txt", &st) == 0) printf("size %lld, regular %d\n", (long long)st.st_size, S_ISREG(st.st_mode));
  if (stat("data/sub", &st) == 0) printf("sub is a directory: %d\n", S_ISDIR(st.st_mode));
  int fd = open("data/in.txt", O_RDONLY);
  printf("seek end: %lld\n", (long long)lseek(fd, 0, SEEK_END));
  char two[3] = {0};
  printf("pread: %zd '%s'\n", pread(fd, two, 2, 6), two);
  printf("tell after seek 4: %lld\n", (long long)lseek(fd, 4, SEEK_SET));
  close(fd);
  DIR* d = opendir("data");
  char* names[64];
  int k = 0;
  struct dirent* e;
  while (d && (e = readdir(d)) && k < 64)
    if (e->d_name[0] != '.') names[k++] = strdup(e->d_name);
  if (d) closedir(d);
  qsort(names, k, sizeof names[0], cmp);
  for (int i = 0; i < k; ++i) printf("entry %s\n", names[i]);
  f = fopen("data/sub/nested.txt", "r");
  if (f && fgets(buf, sizeof buf, f)) printf("nested: %s", buf);
  try_open("data/missing.txt");
  try_open("data/../outside.txt");
  try_open("data/sub/../../outside.txt");
  try_open("/etc/passwd");
  return 0;
}
