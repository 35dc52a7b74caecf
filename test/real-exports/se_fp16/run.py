"""On the GPU machine: run each artifact (kiln-run --device cuda) and onnxruntime (CPU), print max_err/max|ref|."""
import glob, os, subprocess, sys, tempfile, numpy as np, onnx, onnxruntime as ort
here = os.path.dirname(os.path.abspath(__file__))
kiln_run = sys.argv[1]
rows = []
for so in sorted(glob.glob(os.path.join(here, "art", "*.so"))):
    base = os.path.basename(so)[:-3]          # e.g. se_in.fp16
    name, prec = base.rsplit(".", 1)
    m = onnx.load(os.path.join(here, name + ".onnx"))
    wnames = [i.name for i in m.graph.input if i.name != "x"]
    for n in (1, 3):
        feeds = {"x": np.load(os.path.join(here, f"x{n}.npy"))}
        for w in wnames:
            feeds[w] = np.load(os.path.join(here, f"{name}.{w}.npy"))
        sess = ort.InferenceSession(os.path.join(here, name + ".onnx"), providers=["CPUExecutionProvider"])
        ref = sess.run(None, feeds)
        with tempfile.TemporaryDirectory() as d:
            args = [kiln_run, so, "--device", "cuda", "--output-dir", d]
            for k, v in feeds.items():
                p = os.path.join(d, f"in_{k}.npy"); np.save(p, v); args += ["--input", f"{k}={p}"]
            r = subprocess.run(args, capture_output=True, text=True)
            if r.returncode:
                rows.append((base, n, "RUNFAIL " + (r.stderr.strip().splitlines() or ["?"])[-1][:120])); continue
            outs = [np.load(os.path.join(d, o.name + ".npy")) for o in m.graph.output]
        errs = [float(np.max(np.abs(o.astype(np.float64) - r_)) / max(np.max(np.abs(r_)), 1e-30)) for o, r_ in zip(outs, ref)]
        rows.append((base, n, " ".join(f"{e:.2e}" for e in errs) + ("  FAIL" if max(errs) > 1e-2 else "")))
for r in rows:
    print(f"{r[0]:24s} batch {r[1]}  {r[2]}")
