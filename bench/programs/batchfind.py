# A batch-size finder before training, as Lightning's scale_batch_size runs one: three steps at
# each batch size, doubling from 16 while a step stays under 4 s (up to 2048), so memory spikes
# higher and higher in the first half minute; then training at a quarter of the largest batch that
# passed, with a validation pass at that batch every 50 s.
import time
import torch, torch.nn as nn
torch.manual_seed(22); torch.set_num_threads(2)
net = nn.Sequential(nn.Conv2d(3, 48, 3, padding=1), nn.ReLU(),
                    nn.Conv2d(48, 48, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(48, 96, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Flatten(), nn.Linear(96 * 8 * 8, 10))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
def step(batch):
    x = torch.rand(batch, 3, 32, 32); y = torch.randint(0, 10, (batch,))
    loss = nn.functional.cross_entropy(net(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    return float(loss)
t0 = time.time(); batch = 16; fits = 16
while batch <= 2048:
    started = time.time()
    for _ in range(3): step(batch)
    took = (time.time() - started) / 3
    print("try", batch, round(took, 2), flush=True)
    if took > 4: break
    fits = batch; batch *= 2
batch = max(16, fits // 4)
print("training at", batch, round(time.time() - t0), flush=True)
last_val = time.time()
while time.time() - t0 < 180:
    loss = step(batch)
    if time.time() - last_val > 50:
        with torch.no_grad():
            right = sum((net(torch.rand(batch, 3, 32, 32)).argmax(1) == 0).sum().item()
                        for _ in range(20))
        print("val", right, round(time.time() - t0), flush=True)
        last_val = time.time()
print("done", loss, flush=True)
