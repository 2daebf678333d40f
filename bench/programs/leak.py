# A loop that keeps its losses as tensors (the common mistake of logging `loss` rather than
# `loss.item()`): each kept loss holds its step's graph and activations, so memory climbs until
# the history is cleared every 70 s, when the logs are written. The allocator keeps what was
# freed, so the working set then stays flat until the kept losses outgrow it again.
import time
import torch, torch.nn as nn
torch.manual_seed(33); torch.set_num_threads(2)
net = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 512))
opt = torch.optim.Adam(net.parameters(), lr=1e-4)
history = []
t0 = time.time(); last_flush = t0; n = 0
while time.time() - t0 < 190:
    x = torch.randn(128, 512)
    loss = (net(x) - x).pow(2).mean()
    opt.zero_grad(); loss.backward(retain_graph=True); opt.step(); n += 1
    if n % 8 == 0: history.append(loss)
    if time.time() - last_flush > 70:
        print("flush", n, len(history), sum(l.item() for l in history) / len(history), flush=True)
        history.clear(); last_flush = time.time()
print("done", n, flush=True)
