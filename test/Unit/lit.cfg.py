# -*- Python -*-
# lit configuration for the C++ unit tests (unittests/, GoogleTest): every
# executable under the build's unittests/ whose name ends in "Tests".

import os

import lit.formats

config.name = "BLOCKATTN-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.blockattn_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
