# Writes gather.onnx: rows = Gather(table[16, 8], ids[n]) with node name '/emb/Gather'.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

table = numpy_helper.from_array(np.arange(128, dtype=np.float32).reshape(16, 8), "table")
node = helper.make_node("Gather", ["table", "ids"], ["rows"], name="/emb/Gather", axis=0)
graph = helper.make_graph(
    [node], "gather",
    [helper.make_tensor_value_info("ids", TensorProto.INT64, ["n"])],
    [helper.make_tensor_value_info("rows", TensorProto.FLOAT, ["n", 8])],
    initializer=[table])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
