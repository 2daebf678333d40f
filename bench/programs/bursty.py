# A learner starved by its input: each step waits for a slow source (a remote store, a
# simulator; here a sleep of 0.5-3 s) and then trains on what arrived in a burst of 1-4 s at full
# speed; CPU swings between idle and two cores from one sample to the next.
import time, random
import torch, torch.nn as nn
torch.manual_seed(7); random.seed(7); torch.set_num_threads(2)
net = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                    nn.Linear(1024, 16))
opt = torch.optim.Adam(net.parameters(), lr=1e-4)
t0 = time.time(); steps = 0
while time.time() - t0 < 200:
    time.sleep(random.uniform(0.5, 3.0))  # waiting for data
    burst = time.time() + random.uniform(1.0, 4.0)
    while time.time() < burst:
        x = torch.randn(256, 512)
        loss = net(x).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step(); steps += 1
print("done", steps, flush=True)
