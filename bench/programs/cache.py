# Training that keeps what it computes: every step appends its batch's embeddings to an
# in-memory index (for retrieval or hard-negative mining), so memory climbs steadily for the whole
# run; every 50 s the index is searched in full (a burst of CPU and a temporary similarity matrix).
import time
import torch, torch.nn as nn
torch.manual_seed(8); torch.set_num_threads(2)
enc = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 256))
opt = torch.optim.Adam(enc.parameters(), lr=1e-4)
index = []
t0 = time.time(); last_search = t0; step = 0
while time.time() - t0 < 200:
    x = torch.randn(512, 256)
    e = enc(x)
    loss = (e - x).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    index.append(e[:32].detach().clone())  # a sample of each batch
    if time.time() - last_search > 50:
        with torch.no_grad():
            keys = torch.cat(index)
            hits = 0
            for q in range(0, 4096, 512):
                hits += (torch.randn(512, 256) @ keys.T).argmax(1).sum().item()
        print("search", step, len(keys), hits, flush=True)
        del keys
        last_search = time.time()
print("done", step, flush=True)
