# A dataset whose samples are decoded on first use and cached (a dict from index to tensor, as
# many Dataset classes do), read in shuffled order: the first epoch fills the cache, the epochs
# after it read only from it.
# Recorded: a straight climb from 0.4 to 4.8 GiB over the first 62 s (0.15 GiB a reading, past
# the 4 GiB the replays start from at 52 s), then flat at 4.8-4.9 GiB.
import time
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(55); torch.set_num_threads(2)
N = 36_000
cache = {}
def sample(i):
    if i not in cache:
        g = torch.Generator().manual_seed(i)
        x = torch.randn(32768, generator=g)
        cache[i] = torch.tanh(x) + 0.1 * torch.cos(3 * x)  # "decoding": costs CPU on first use
    return cache[i]
net = nn.Sequential(nn.Linear(32768, 256), nn.ReLU(), nn.Linear(256, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
t0 = time.time(); epoch = 0
while time.time() - t0 < 180:
    for b in torch.randperm(N).split(64):
        x = torch.stack([sample(int(i)) for i in b]); y = (x[:, 0] > 0).long()
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        if time.time() - t0 >= 180: break
    epoch += 1
    print("epoch", epoch, len(cache), flush=True)
print("done", flush=True)
