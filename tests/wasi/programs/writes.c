// Writing beneath a writable preopen: directories, create, append,
// rename, truncate, unlink, rmdir, a sorted listing; and a write that
// would leave it.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static int cmp(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }
static void say(const char* what, int ok) { printf("%s: %s\n", what, ok ? "ok" : strerror(errno)); }
int main(int argc, char** argv) {
  const char* tag = argc > 1 ? argv[1] : "none";
  say("mkdir out/sub", mkdir("out/sub", 0755) == 0);
  FILE* f = fopen("out/sub/a.txt", "w");
  say("create out/sub/a.txt", f != NULL);
  if (f) {
    fprintf(f, "hello %s\n", tag);
    fclose(f);
  }
  f = fopen("out/sub/a.txt", "a");
  if (f) {
    fprintf(f, "more\n");
    fclose(f);
  }
  char buf[128] = {0};
  f = fopen("out/sub/a.txt", "r");
  if (f) {
    fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
  }
  printf("read back: %s", buf);
  say("rename to out/b.txt", rename("out/sub/a.txt", "out/b.txt") == 0);
  int fd = open("out/b.txt", O_RDWR);
  say("ftruncate 5", fd >= 0 && ftruncate(fd, 5) == 0);
  if (fd >= 0) close(fd);
  struct stat st;
  if (stat("out/b.txt", &st) == 0) printf("size now %lld\n", (long long)st.st_size);
  say("unlink missing", unlink("out/missing.txt") == 0);
  f = fopen("out/c.txt", "w");
  if (f) fclose(f);
  say("unlink out/c.txt", unlink("out/c.txt") == 0);
  say("rmdir out/sub", rmdir("out/sub") == 0);
  say("write outside", fopen("out/../escape.txt", "w") != NULL);
  f = fopen(argc > 2 ? argv[2] : "out/keep.txt", "w");
  if (f) {
    fprintf(f, "kept by %s\n", tag);
    fclose(f);
  }
  DIR* d = opendir("out");
  char* names[32];
  int k = 0;
  struct dirent* e;
  while (d && (e = readdir(d)) && k < 32)
    if (e->d_name[0] != '.') names[k++] = strdup(e->d_name);
  if (d) closedir(d);
  qsort(names, k, sizeof names[0], cmp);
  for (int i = 0; i < k; ++i) printf("entry %s\n", names[i]);
  return 0;
}
