# ResNet-50 and BERT-base (seq 128), batch 32, fp32 (TF32 off): PyTorch eager and
# torch.compile, CUDA events, median of 20 after warm-up. Random weights.
import statistics, sys, time, torch, torchvision
from transformers import BertConfig, BertModel
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
def bench(fn, args, n=20, warm=5):
    with torch.no_grad():
        for _ in range(warm): fn(*args)
        torch.cuda.synchronize()
        ts = []
        for _ in range(n):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(); fn(*args); b.record(); torch.cuda.synchronize()
            ts.append(a.elapsed_time(b))
    return statistics.median(ts)
dev = "cuda"
r50 = torchvision.models.resnet50().eval().to(dev)
x = torch.randn(32, 3, 224, 224, device=dev)
print(f"resnet50 b32 fp32: eager {bench(r50, (x,)):.2f} ms", flush=True)
t = time.time(); c = torch.compile(r50); 
print(f"resnet50 b32 fp32: compile {bench(c, (x,)):.2f} ms (compile+warm {time.time()-t:.0f} s)", flush=True)
bert = BertModel(BertConfig()).eval().to(dev)
ids = torch.randint(0, 30522, (32, 128), device=dev); mask = torch.ones(32, 128, dtype=torch.int64, device=dev)
f = lambda i, m: bert(input_ids=i, attention_mask=m)
print(f"bert-base b32 s128 fp32: eager {bench(f, (ids, mask)):.2f} ms", flush=True)
t = time.time(); cb = torch.compile(bert); g = lambda i, m: cb(input_ids=i, attention_mask=m)
print(f"bert-base b32 s128 fp32: compile {bench(g, (ids, mask)):.2f} ms (compile+warm {time.time()-t:.0f} s)", flush=True)
