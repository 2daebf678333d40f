# Image classification fed by a DataLoader with two worker processes that decode and augment
# every batch (forked: the process tree grows, and each worker holds its own copy of what it
# touches); every 60 s a validation pass in the main process alone, without workers.
import time
import torch, torch.nn as nn
from torch.utils.data import DataLoader, Dataset
torch.manual_seed(6); torch.set_num_threads(1)
class Augmented(Dataset):
    def __init__(self, n):
        self.raw = torch.randint(0, 255, (n, 3, 40, 40), dtype=torch.uint8)
    def __len__(self): return len(self.raw)
    def __getitem__(self, i):
        x = self.raw[i].float() / 255
        for _ in range(6):  # a costly augmentation: blur, jitter, random crop
            x = torch.nn.functional.avg_pool2d(x.unsqueeze(0), 3, 1, 1).squeeze(0)
            x = x * (0.8 + 0.4 * torch.rand(3, 1, 1))
        k = torch.randint(0, 9, (2,))
        return x[:, k[0]:k[0] + 32, k[1]:k[1] + 32], int(i % 10)
net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Flatten(), nn.Linear(64 * 8 * 8, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
train = DataLoader(Augmented(30000), batch_size=64, shuffle=True, num_workers=2,
                   persistent_workers=True)
val = torch.rand(4000, 3, 32, 32)
t0 = time.time(); last_val = t0; step = 0
while time.time() - t0 < 200:
    for x, y in train:
        loss = nn.functional.cross_entropy(net(x), y)
        opt.zero_grad(); loss.backward(); opt.step(); step += 1
        if time.time() - last_val > 60:
            with torch.no_grad():
                acc = sum((net(val[k:k + 200]).argmax(1) == 0).sum().item() for k in range(0, 4000, 200))
                for _ in range(3):
                    acc += sum(net(val[k:k + 200]).sum().item() for k in range(0, 4000, 200))
            print("val", step, acc, flush=True)
            last_val = time.time()
        if time.time() - t0 > 200: break
print("done", step, flush=True)
