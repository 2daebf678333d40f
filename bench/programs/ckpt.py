# A wide model trained with Adam, checkpointed every 40 s the way many loops do it: a deep copy
# of the model and optimizer state (memory nearly doubles for the copy) serialized to disk; the
# run ends with an evaluation at four times the training batch.
import copy, io, time
import torch, torch.nn as nn
torch.manual_seed(9); torch.set_num_threads(2)
net = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                    nn.Linear(4096, 1024))
opt = torch.optim.Adam(net.parameters(), lr=1e-4)
t0 = time.time(); last_ckpt = t0; step = 0
while time.time() - t0 < 170:
    x = torch.randn(64, 1024)
    loss = (net(x) - x).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if time.time() - last_ckpt > 40:
        state = copy.deepcopy({"model": net.state_dict(), "opt": opt.state_dict()})
        buf = io.BytesIO(); torch.save(state, buf)
        print("ckpt", step, buf.tell(), flush=True)
        del state, buf
        last_ckpt = time.time()
with torch.no_grad():
    t1 = time.time(); total = 0.0
    while time.time() - t1 < 25:
        total += net(torch.randn(256, 1024)).sum().item()
print("done", step, total, flush=True)
