// SPDX-License-Identifier: GPL-3.0-or-later
// transformer-studio-cli-faults: the command-line program with the TS_FAULT fault plan installed, for
// tests/cli/fault_test.sh. Built with the tests, never installed: the product has no fault hook.
#include "cli_main.h"
#include "support/fault_plan.h"

int main(int argc, char** argv) {
  ts::test::install_fault_plan_from_environment();
  return cli_main(argc, argv);
}
