# Batch size grown instead of the learning rate decayed ("don't decay the learning rate, increase
# the batch size"): a convolutional network trained at batch 32, the batch doubled every 40 s up
# to 256: the activations, and memory, step up at each doubling, late in the run too. Recorded,
# the readings swing with each step's activations (0.3-0.5 GiB at batch 32, 0.3-1.56 at 256), and
# their peaks step up 1.4-1.6x at each doubling (the last at 120 s).
import time
import torch, torch.nn as nn
torch.manual_seed(34); torch.set_num_threads(2)
net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(),
                    nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Flatten(), nn.Linear(128 * 16 * 16, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
t0 = time.time(); batch = 32
while time.time() - t0 < 180:
    if batch < 256 and time.time() - t0 > 40 * (batch // 32).bit_length():
        batch *= 2
        print("batch", batch, round(time.time() - t0), flush=True)
    x = torch.rand(batch, 3, 64, 64); y = torch.randint(0, 10, (batch,))
    loss = nn.functional.cross_entropy(net(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
print("done", float(loss), flush=True)
