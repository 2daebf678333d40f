# Multi-scale training of a small detector-like CNN, as YOLO-style training does: every 10 steps
# the input size is drawn again from 128 to 320 pixels, so the activations, and the memory the
# allocator holds for them, swing between batches at random for three minutes. Recorded: readings
# anywhere between 0.36 and 0.86 GiB (median 0.6) from one sample to the next.
import random, time
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(45); random.seed(45); torch.set_num_threads(2)
net = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.ReLU(),
                    nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
                    nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.ReLU(),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 20))
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
t0 = time.time(); step = 0; size = 224
while time.time() - t0 < 180:
    if step % 10 == 0:
        size = random.choice(range(128, 321, 32))
    x = torch.randn(32, 3, size, size); y = torch.randint(0, 20, (32,))
    loss = F.cross_entropy(net(x), y)
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if step % 100 == 0:
        print("step", step, size, flush=True)
print("done", step, flush=True)
