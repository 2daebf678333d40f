# A recommender's embedding table that grows as new IDs arrive, as online training does: every
# 35 s the vocabulary grows by half, so a larger table is allocated, the old rows copied into it,
# and Adam restarted on it (the old table and its moments freed). Recorded: memory steps up at
# each growth, from 0.62-0.72 GiB to 0.8-1, 1.1-1.5, 1.5-2.1 and 2.6-3 GiB, its readings swinging
# by up to a third within each step as the gradients, Adam's moments and the copies come and go.
import time
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(41); torch.set_num_threads(2)
dim, vocab = 128, 200000
table = nn.Embedding(vocab, dim)
head = nn.Sequential(nn.Linear(dim, 256), nn.ReLU(), nn.Linear(256, 1))
params = lambda: list(table.parameters()) + list(head.parameters())
opt = torch.optim.Adam(params(), lr=1e-3)
t0 = time.time(); last_growth = t0; step = 0
while time.time() - t0 < 180:
    ids = torch.randint(0, vocab, (512,)); y = torch.rand(512, 1)
    loss = F.mse_loss(head(table(ids)), y)
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if time.time() - last_growth > 35:
        grown = nn.Embedding(vocab + vocab // 2, dim)
        with torch.no_grad():
            grown.weight[:vocab] = table.weight
        table, vocab = grown, vocab + vocab // 2
        opt = torch.optim.Adam(params(), lr=1e-3)
        print("grew", step, vocab, flush=True)
        last_growth = time.time()
print("done", step, flush=True)
