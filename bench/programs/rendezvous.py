# A fine-tuning job that first waits for its peers (as torchrun's rendezvous does; here 45 s of
# polling, nearly idle, at the memory of its imports), then loads a model of 200 million
# parameters and fine-tunes it with SGD and momentum (its buffers appear at the first step).
import time
import torch, torch.nn as nn
torch.manual_seed(45); torch.set_num_threads(2)
t0 = time.time()
while time.time() - t0 < 45:
    time.sleep(0.5)
print("peers ready", flush=True)
layers = [m for _ in range(12) for m in (nn.Linear(4096, 4096), nn.ReLU())]
net = nn.Sequential(*layers, nn.Linear(4096, 10))
opt = torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9)
print("loaded", sum(p.numel() for p in net.parameters()), flush=True)
t1 = time.time(); n = 0
while time.time() - t1 < 120:
    x = torch.randn(64, 4096); y = torch.randint(0, 10, (64,))
    loss = nn.functional.cross_entropy(net(x), y)
    opt.zero_grad(); loss.backward(); opt.step(); n += 1
print("done", n, flush=True)
