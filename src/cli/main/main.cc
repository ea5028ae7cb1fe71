#include "cli/cli.h"

int main(int argc, char** argv) { return ww::cli::main(argc, argv); }
