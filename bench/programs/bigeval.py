# A convolutional network trained at a batch of 32 and evaluated every 45 s at a batch of 512
# without gradients (the validation loader's larger batch, as jobs set it to finish sooner).
# Recorded: flat at 0.8-1.0 GiB while training; each evaluation lasts 25-35 s (two in the run)
# and its readings swing anywhere in 1.2-3.2 GiB, back to 0.9 after it.
import time
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(53); torch.set_num_threads(2)
net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3, padding=1),
                    nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(128, 128, 3, padding=1), nn.ReLU(),
                    nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(2048, 100))
opt = torch.optim.Adam(net.parameters(), lr=1e-4)
train_x = torch.randn(8000, 3, 64, 64); train_y = torch.randint(0, 100, (8000,))
val_x = torch.randn(2048, 3, 64, 64); val_y = torch.randint(0, 100, (2048,))
def evaluate():
    correct = 0
    with torch.no_grad():
        for b in range(0, len(val_x), 512):
            correct += (net(val_x[b:b + 512]).argmax(1) == val_y[b:b + 512]).sum().item()
    return correct / len(val_x)
t0 = time.time(); last_eval = t0; step = 0
while time.time() - t0 < 180:
    i = torch.randint(0, len(train_x), (32,))
    loss = F.cross_entropy(net(train_x[i]), train_y[i])
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if time.time() - last_eval > 45:
        print("eval", step, evaluate(), flush=True)
        last_eval = time.time()
print("done", step, flush=True)
