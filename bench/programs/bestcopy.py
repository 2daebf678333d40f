# A wide MLP trained for eight minutes with early stopping's bookkeeping: a deep copy of the
# weights kept at every new best validation loss (checked every 20 s), the learning rate halved
# when it has not improved for three checks, and every 100 s a hard-example pass that scores all
# 100,000 training samples and trains the next 100 s on the hardest fifth of them.
import copy, time
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(24); torch.set_num_threads(2)
x = torch.randn(100000, 512); y = torch.randint(0, 20, (100000,))
x_val = torch.randn(5000, 512); y_val = torch.randint(0, 20, (5000,))
net = nn.Sequential(nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
                    nn.Linear(2048, 20))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=3)
best, best_state = float("inf"), None
pool = torch.arange(100000)
t0 = time.time(); last_check = last_mine = t0; step = 0
while time.time() - t0 < 480:
    i = pool[torch.randint(0, len(pool), (128,))]
    loss = F.cross_entropy(net(x[i]), y[i])
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if time.time() - last_check > 20:
        with torch.no_grad():
            val_loss = F.cross_entropy(net(x_val), y_val).item()
        sched.step(val_loss)
        if val_loss < best:
            best, best_state = val_loss, copy.deepcopy(net.state_dict())
        print("check", step, val_loss, flush=True)
        last_check = time.time()
    if time.time() - last_mine > 100:
        with torch.no_grad():
            losses = F.cross_entropy(net(x), y, reduction="none")
        pool = losses.topk(20000).indices
        print("mine", step, losses.mean().item(), flush=True)
        del losses
        last_mine = time.time()
net.load_state_dict(best_state)
print("done", step, best, flush=True)
