# A CNN trained for eight minutes on 40,000 in-memory images, the loop a long job repeats for
# hours: an evaluation over 8,000 held-out images every 60 s (batches of 500, their activations
# on top of training's) and a checkpoint every 120 s (a deep copy of the model and Adam's state,
# serialized to memory).
import copy, io, time
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(21); torch.set_num_threads(2)
x_train = torch.randn(40000, 3, 32, 32); y_train = torch.randint(0, 10, (40000,))
x_val = torch.randn(8000, 3, 32, 32)
net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Flatten(), nn.Linear(64 * 8 * 8, 256), nn.ReLU(), nn.Linear(256, 10))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
t0 = time.time(); last_eval = last_ckpt = t0; step = 0
while time.time() - t0 < 480:
    i = torch.randint(0, 40000, (64,))
    loss = F.cross_entropy(net(x_train[i]), y_train[i])
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if time.time() - last_eval > 60:
        with torch.no_grad():
            scores = torch.cat([net(x_val[j:j + 500]) for j in range(0, 8000, 500)])
        print("eval", step, scores.argmax(1).float().mean().item(), flush=True)
        del scores
        last_eval = time.time()
    if time.time() - last_ckpt > 120:
        state = copy.deepcopy({"model": net.state_dict(), "opt": opt.state_dict()})
        buf = io.BytesIO(); torch.save(state, buf)
        print("ckpt", step, buf.tell(), flush=True)
        del state, buf
        last_ckpt = time.time()
print("done", step, flush=True)
