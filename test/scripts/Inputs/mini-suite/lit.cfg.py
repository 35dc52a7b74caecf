# A two-test lit suite for test/scripts/run-lit.test: one passes, one is skipped.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import lit.formats

config.name = "mini"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".test"]
