// argv and the environment as the program sees them.
#include <stdio.h>
#include <stdlib.h>
extern char** environ;
int main(int argc, char** argv) {
  printf("argc=%d\n", argc);
  for (int i = 1; i < argc; ++i) printf("argv[%d]=%s\n", i, argv[i]);
  int n = 0;
  for (char** e = environ; *e; ++e) ++n;
  printf("environ: %d\n", n);
  const char* names[] = {"GREETING", "EMPTY", "MISSING"};
  for (int i = 0; i < 3; ++i) {
    const char* v = getenv(names[i]);
    printf("%s=%s\n", names[i], v ? v : "(unset)");
  }
  return 0;
}
