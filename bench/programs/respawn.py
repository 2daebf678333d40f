# Image classification fed by a DataLoader whose two workers are started afresh every epoch
# (PyTorch's default, persistent_workers=False): each epoch of about 20 s forks two workers that
# decode and augment its batches and exit at its end, so the process tree's memory and CPU step up
# at every epoch's start and come back down at its end (for less than a 2 s sample); a validation
# pass after every third epoch.
import time
import torch, torch.nn as nn
from torch.utils.data import DataLoader
from augmented import Augmented, small_cnn
torch.manual_seed(21); torch.set_num_threads(1)
net = small_cnn()
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
data = Augmented(40000, rounds=4)
val = torch.rand(3000, 3, 32, 32)
t0 = time.time(); epoch = 0
while time.time() - t0 < 190:
    train = DataLoader(data, batch_size=64, sampler=torch.randperm(len(data))[:30000].tolist(),
                       num_workers=2)
    for x, y in train:
        loss = nn.functional.cross_entropy(net(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
    epoch += 1
    if epoch % 3 == 0:
        with torch.no_grad():
            right = sum((net(val[k:k + 250]).argmax(1) == 0).sum().item()
                        for k in range(0, len(val), 250))
        print("val", epoch, right, flush=True)
    print("epoch", epoch, round(time.time() - t0), float(loss), flush=True)
print("done", flush=True)
