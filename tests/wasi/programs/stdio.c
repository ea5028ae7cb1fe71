// stdin to stdout in upper case, counts to stderr, exit code 3.
#include <ctype.h>
#include <stdio.h>
int main(void) {
  long bytes = 0, lines = 0;
  int ch;
  while ((ch = getchar()) != EOF) {
    ++bytes;
    if (ch == '\n') ++lines;
    putchar(toupper(ch));
  }
  fprintf(stderr, "%ld bytes, %ld lines\n", bytes, lines);
  return 3;
}
