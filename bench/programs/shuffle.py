# Training on an in-memory dataset that is re-augmented every epoch (about 25 s): a new noisy,
# permuted copy is built chunk by chunk over a few seconds before the old one is dropped, so
# memory nearly doubles for a few seconds at every epoch boundary and comes back down.
import time
import torch, torch.nn as nn
torch.manual_seed(43); torch.set_num_threads(2)
base = torch.randn(120000, 1024); labels = torch.randint(0, 20, (120000,))
net = nn.Sequential(nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 20))
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
def augmented():
    perm = torch.randperm(len(base)); chunks = []
    for k in range(0, len(base), 4000):
        idx = perm[k:k + 4000]; chunks.append(base[idx] + 0.1 * torch.randn(len(idx), 1024))
        time.sleep(0.05)
    return torch.cat(chunks), labels[perm]
t0 = time.time(); data, y_all = augmented(); epoch = 0; n = 0; last = time.time()
while time.time() - t0 < 180:
    k = torch.randint(0, len(data), (512,))
    loss = nn.functional.cross_entropy(net(data[k]), y_all[k])
    opt.zero_grad(); loss.backward(); opt.step(); n += 1
    if time.time() - last > 25:
        new = augmented(); data, y_all = new; del new; epoch += 1
        print("epoch", epoch, n, float(loss), flush=True); last = time.time()
print("done", n, flush=True)
