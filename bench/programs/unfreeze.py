# Fine-tuning by gradual unfreezing (as ULMFiT's schedule): a deep network whose head alone trains
# first, one more block of it unfrozen every 35 s; Adam creates its state for a parameter at its
# first step with a gradient, and the backward pass keeps more activations, so memory steps up at
# each unfreezing, each step later in the run than the one before (recorded: 0.44, 0.55, 0.67,
# 0.78 and 0.89 GiB, the steps at 36, 72, 108 and 142 s).
import time
import torch, torch.nn as nn
torch.manual_seed(32); torch.set_num_threads(2)
width = 3072
blocks = [nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(4)]
net = nn.Sequential(nn.Linear(512, width), nn.ReLU(), *blocks, nn.Linear(width, 10))
for p in net.parameters(): p.requires_grad_(False)
head = net[-1]
for p in head.parameters(): p.requires_grad_(True)
opt = torch.optim.Adam(net.parameters(), lr=1e-4)
x_all = torch.randn(20000, 512); y_all = torch.randint(0, 10, (20000,))
t0 = time.time(); unfrozen = 0
while time.time() - t0 < 180:
    if unfrozen < len(blocks) and time.time() - t0 > 35 * (unfrozen + 1):
        unfrozen += 1
        for p in blocks[-unfrozen].parameters(): p.requires_grad_(True)
        print("unfrozen", unfrozen, round(time.time() - t0), flush=True)
    k = torch.randint(0, len(x_all), (256,))
    loss = nn.functional.cross_entropy(net(x_all[k]), y_all[k])
    opt.zero_grad(); loss.backward(); opt.step()
print("done", float(loss), flush=True)
