# Stochastic weight averaging: a wide network trained with SGD and momentum for 110 s, then an
# averaged copy of its weights (AveragedModel deep-copies the model) updated after every step for
# the last 60 s, and a final pass over the data to recompute the average's batch-norm statistics.
import time
import torch, torch.nn as nn
from torch.optim.swa_utils import AveragedModel, update_bn
torch.manual_seed(25); torch.set_num_threads(2)
width = 6144
net = nn.Sequential(nn.Linear(1024, width), nn.BatchNorm1d(width), nn.ReLU(),
                    nn.Linear(width, width), nn.BatchNorm1d(width), nn.ReLU(),
                    nn.Linear(width, width), nn.BatchNorm1d(width), nn.ReLU(),
                    nn.Linear(width, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
x_all = torch.randn(30000, 1024); y_all = torch.randint(0, 10, (30000,))
average = None; t0 = time.time(); n = 0
while time.time() - t0 < 170:
    k = torch.randint(0, len(x_all), (64,))
    loss = nn.functional.cross_entropy(net(x_all[k]), y_all[k])
    opt.zero_grad(); loss.backward(); opt.step(); n += 1
    if average is None and time.time() - t0 > 110:
        average = AveragedModel(net)
        print("averaging from", n, flush=True)
    if average is not None: average.update_parameters(net)
loader = [(x_all[k:k + 512], y_all[k:k + 512]) for k in range(0, len(x_all), 512)]
update_bn(loader, average)
print("done", n, float(loss), flush=True)
