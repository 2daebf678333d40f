# A wide MLP of 320M weights (1.2 GiB in fp32) trained with Adam for three minutes: the weights are
# made, then the first backward pass adds their gradients and the first optimizer step Adam's two
# moments, four copies of the model in all.
# Recorded: 1.4 GiB once the weights are made, then a climb of about 0.5 GiB every 2 s for 20 s
# to 5.4-6.4 GiB, past the 4 GiB the replays start from; 5.0-6.5 GiB from one reading to the
# next after that (each step's activations and gradients come and go).
import time
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(51); torch.set_num_threads(2)
net = nn.Sequential(nn.Linear(4096, 16384), nn.ReLU(), nn.Linear(16384, 12288), nn.ReLU(),
                    nn.Linear(12288, 4096), nn.ReLU(), nn.Linear(4096, 10))
print("weights", sum(p.numel() for p in net.parameters()), flush=True)
time.sleep(6)  # the data pipeline starting, as a job's does
opt = torch.optim.Adam(net.parameters(), lr=1e-5)
t0 = time.time(); step = 0
while time.time() - t0 < 180:
    x = torch.randn(32, 4096); y = torch.randint(0, 10, (32,))
    loss = F.cross_entropy(net(x), y)
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if step % 20 == 0: print("step", step, loss.item(), flush=True)
print("done", step, flush=True)
