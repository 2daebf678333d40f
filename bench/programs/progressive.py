# Progressive resizing of a convolutional network: images of 32 pixels first, then 48, then 64
# (each stage's activations about twice the last), as fast image training schedules do; memory
# steps up at each stage and never comes back down.
import time
import torch, torch.nn as nn
torch.manual_seed(32); torch.set_num_threads(2)
net = nn.Sequential(nn.Conv2d(3, 48, 3, padding=1), nn.ReLU(), nn.Conv2d(48, 96, 3, padding=1),
                    nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(96, 96, 3, padding=1), nn.ReLU(),
                    nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(96 * 16, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
for size, seconds in ((32, 60), (48, 60), (64, 70)):
    t0 = time.time(); n = 0
    while time.time() - t0 < seconds:
        x = torch.randn(64, 3, size, size); y = torch.randint(0, 10, (64,))
        loss = nn.functional.cross_entropy(net(x), y)
        opt.zero_grad(); loss.backward(); opt.step(); n += 1
    print("stage", size, n, flush=True)
