# A transformer encoder trained for eight minutes with gradient accumulation (four micro-batches
# of 16 sequences per optimizer step), a learning rate warmed up over 300 steps and then decayed
# on a cosine, and a validation pass over 1,000 held-out sequences every 45 s.
import math, time
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(22); torch.set_num_threads(2)
vocab, length = 5000, 64
data = torch.randint(0, vocab, (20000, length)); labels = torch.randint(0, 4, (20000,))
val = torch.randint(0, vocab, (1000, length))
emb = nn.Embedding(vocab, 128)
layer = nn.TransformerEncoderLayer(128, 4, 512, batch_first=True)
enc = nn.TransformerEncoder(layer, 2); head = nn.Linear(128, 4)
params = list(emb.parameters()) + list(enc.parameters()) + list(head.parameters())
opt = torch.optim.AdamW(params, lr=3e-4)
def lr_at(step):
    return step / 300 if step < 300 else 0.5 * (1 + math.cos(math.pi * min(1, (step - 300) / 3000)))
sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
t0 = time.time(); last_val = t0; step = 0
while time.time() - t0 < 480:
    opt.zero_grad()
    for _ in range(4):
        i = torch.randint(0, 20000, (16,))
        loss = F.cross_entropy(head(enc(emb(data[i])).mean(1)), labels[i]) / 4
        loss.backward()
    opt.step(); sched.step(); step += 1
    if time.time() - last_val > 45:
        with torch.no_grad():
            out = torch.cat([head(enc(emb(val[j:j + 100])).mean(1)) for j in range(0, 1000, 100)])
        print("val", step, out.argmax(1).float().mean().item(), flush=True)
        del out
        last_val = time.time()
print("done", step, flush=True)
