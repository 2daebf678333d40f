# An MLP trained for eight minutes on a stream of generated samples through a shuffle buffer, as
# streaming datasets do: the buffer of 300,000 samples of 1,024 floats (1.2 GiB) is allocated at
# once but its pages are touched as it fills, 16 new samples a step while it trains on random
# batches of what it holds (memory climbing for about three minutes); full, each new sample
# replaces a random one, and memory stays.
import time
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(23); torch.set_num_threads(2)
capacity, width = 300000, 1024
buffer = torch.empty(capacity, width); targets = torch.empty(capacity, dtype=torch.long)
filled = 0
net = nn.Sequential(nn.Linear(width, 512), nn.ReLU(), nn.Linear(512, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
t0 = time.time(); step = 0
while time.time() - t0 < 480:
    new_x = torch.randn(16, width); new_y = torch.randint(0, 10, (16,))
    if filled < capacity:
        slots = torch.arange(filled, filled + 16); filled += 16
    else:
        slots = torch.randint(0, capacity, (16,))
    buffer[slots] = new_x; targets[slots] = new_y
    i = torch.randint(0, filled, (128,))
    loss = F.cross_entropy(net(buffer[i]), targets[i])
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if step % 500 == 0:
        print("step", step, filled, flush=True)
print("done", step, flush=True)
