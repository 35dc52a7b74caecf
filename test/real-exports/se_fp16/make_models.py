"""Small models isolating the fp16 CUDA failure of EfficientNet/MobileNetV3 (SE blocks, weights as inputs)."""
import sys, os, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

out = sys.argv[1]
rng = np.random.default_rng(0)
C, R, H = 16, 4, 8

def model(name, nodes, weights, as_inputs, outputs=("y",)):
    inputs = [h.make_tensor_value_info("x", T.FLOAT, ["N", C, H, H])]
    inits = []
    for wname, arr in weights.items():
        if as_inputs:
            inputs.append(h.make_tensor_value_info(wname, T.FLOAT, list(arr.shape)))
        else:
            inits.append(nh.from_array(arr, wname))
    outs = [h.make_tensor_value_info(o, T.FLOAT, None) for o in outputs]
    g = h.make_graph(nodes, name, inputs, outs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, os.path.join(out, name + ".onnx"))
    for wname, arr in weights.items():
        np.save(os.path.join(out, f"{name}.{wname}.npy"), arr)

w1 = (rng.standard_normal((R, C, 1, 1)) * 0.3).astype(np.float32)
b1 = (rng.standard_normal((R,)) * 0.1).astype(np.float32)
w2 = (rng.standard_normal((C, R, 1, 1)) * 0.3).astype(np.float32)
b2 = (rng.standard_normal((C,)) * 0.1).astype(np.float32)
wc = (rng.standard_normal((8, C, 1, 1)) * 0.3).astype(np.float32)
wd = (rng.standard_normal((C, 1, 3, 3)) * 0.3).astype(np.float32)
w3 = (rng.standard_normal((8, C, 3, 3)) * 0.1).astype(np.float32)

se = [h.make_node("GlobalAveragePool", ["x"], ["p"]),
      h.make_node("Conv", ["p", "w1", "b1"], ["c1"]),
      h.make_node("Relu", ["c1"], ["r1"]),
      h.make_node("Conv", ["r1", "w2", "b2"], ["c2"]),
      h.make_node("HardSigmoid", ["c2"], ["s"], alpha=1/6, beta=0.5),
      h.make_node("Mul", ["x", "s"], ["y"])]
sew = dict(w1=w1, b1=b1, w2=w2, b2=b2)
for tag, as_in in (("in", True), ("const", False)):
    model(f"se_{tag}", se, sew, as_in)
    model(f"gapconv_{tag}", se[:2], dict(w1=w1, b1=b1), as_in, outputs=("c1",))
    model(f"gapconv2_{tag}", se[:4], sew, as_in, outputs=("c2",))
    model(f"conv1x1_{tag}", [h.make_node("Conv", ["x", "wc"], ["y"])], dict(wc=wc), as_in)
    model(f"dw_{tag}", [h.make_node("Conv", ["x", "wd"], ["y"], group=C, pads=[1,1,1,1])], dict(wd=wd), as_in)
    model(f"conv3x3s2_{tag}", [h.make_node("Conv", ["x", "w3"], ["y"], strides=[2,2], pads=[1,1,1,1])], dict(w3=w3), as_in)
    model(f"hswish_{tag}", [h.make_node("Conv", ["x", "wc"], ["c"]), h.make_node("HardSwish", ["c"], ["y"])], dict(wc=wc), as_in)
for n in (1, 3):
    np.save(os.path.join(out, f"x{n}.npy"), rng.standard_normal((n, C, H, H)).astype(np.float32))
