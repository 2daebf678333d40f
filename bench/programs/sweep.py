# A hyperparameter sweep in one container: MLPs of four widths trained one after another, 48 s
# each (each trial's weights, gradients, Adam state and activations built, trained and freed),
# the widest second: memory steps up, comes down, and steps up again to a level not seen before.
import time
import torch, torch.nn as nn
torch.manual_seed(10); torch.set_num_threads(2)
x_all = torch.randn(20000, 1024); y_all = torch.randint(0, 10, (20000,))
def trial(width, seconds):
    net = nn.Sequential(nn.Linear(1024, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                        nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    t0 = time.time(); n = 0
    while time.time() - t0 < seconds:
        k = torch.randint(0, len(x_all), (256,))
        loss = nn.functional.cross_entropy(net(x_all[k]), y_all[k])
        opt.zero_grad(); loss.backward(); opt.step(); n += 1
    print("trial", width, n, float(loss), flush=True)
for width in (1024, 4096, 512, 2560):
    trial(width, 48)
print("done", flush=True)
