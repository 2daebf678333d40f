# A recommendation model: a large embedding table and a small tower. The first 40 s only build
# the vocabulary and load interactions (nearly idle, waiting as on I/O, memory growing); training
# with Adam then adds the optimizer's two moments of the whole table at its first step; a
# checkpoint every 50 s serializes the table in memory.
import io, time
import torch, torch.nn as nn
torch.manual_seed(35); torch.set_num_threads(2)
t0 = time.time(); rows = []
while time.time() - t0 < 40:
    rows.append(torch.randint(0, 400000, (20000, 2)))
    time.sleep(0.05)
pairs = torch.cat(rows); print("loaded", len(pairs), flush=True)
table = nn.Embedding(400000, 128)
tower = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 1))
opt = torch.optim.Adam(list(table.parameters()) + list(tower.parameters()), lr=1e-3)
t1 = time.time(); last_ckpt = t1; n = 0
while time.time() - t1 < 140:
    k = torch.randint(0, len(pairs), (1024,)); p = pairs[k]
    z = torch.cat([table(p[:, 0]), table(p[:, 1])], 1)
    loss = nn.functional.binary_cross_entropy_with_logits(tower(z).squeeze(1), torch.rand(1024))
    opt.zero_grad(); loss.backward(); opt.step(); n += 1
    if time.time() - last_ckpt > 50:
        buf = io.BytesIO(); torch.save(table.state_dict(), buf)
        print("ckpt", n, buf.tell(), flush=True); del buf
        last_ckpt = time.time()
print("done", n, flush=True)
