# Image classification fed by a DataLoader with two worker processes that decode and augment
# every batch (forked: the process tree grows, and each worker holds its own copy of what it
# touches); every 60 s a validation pass in the main process alone, without workers.
import time
import torch, torch.nn as nn
from torch.utils.data import DataLoader
from augmented import Augmented, small_cnn
torch.manual_seed(6); torch.set_num_threads(1)
net = small_cnn()
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
train = DataLoader(Augmented(30000, rounds=6), batch_size=64, shuffle=True, num_workers=2,
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
