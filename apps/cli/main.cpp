#include "cli/cli.h"

int main(int argc, char** argv) { return tipbench::cli::main({argv, argv + argc}); }
