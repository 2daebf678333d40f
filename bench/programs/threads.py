# A job whose CPU changes while its memory, once its tokens are built, does not: one thread while
# it tokenizes (memory growing), two while it trains, waits on a remote store between epochs
# (about 8 s of idle each), and a single-threaded metrics pass at the end.
import time
import torch, torch.nn as nn
torch.manual_seed(36)
net = nn.Sequential(nn.Linear(384, 1536), nn.ReLU(), nn.Linear(1536, 384))
opt = torch.optim.Adam(net.parameters(), lr=1e-4)
torch.set_num_threads(1); t0 = time.time(); toks = []
while time.time() - t0 < 25:
    toks.append(torch.randn(2000, 384).argsort(1)[:, :8])
print("tokenized", len(toks), flush=True)
for epoch in range(4):
    torch.set_num_threads(2); t1 = time.time(); n = 0
    while time.time() - t1 < 30:
        x = torch.randn(256, 384)
        loss = (net(x) - x).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step(); n += 1
    print("epoch", epoch, n, flush=True)
    time.sleep(8)
torch.set_num_threads(1); t2 = time.time()
with torch.no_grad():
    while time.time() - t2 < 20:
        net(torch.randn(512, 384)).std()
print("done", flush=True)
