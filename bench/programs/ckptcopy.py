# A 180M-weight MLP trained with Adam, checkpointed every 50 s the way many loops do it: a deep
# copy of the model's and the optimizer's state (to hand to a writer), serialised into memory,
# then written out and dropped.
# Recorded: 2.9-4.0 GiB while training (above 3.8 GiB for one reading in five); each checkpoint
# climbs from 4 to 6.8 GiB over 10 s, past the 4 GiB the replays start from, holds it for 10 s
# at one core and falls back to 2.9 (two checkpoints in the run).
import copy, io, os, tempfile, time
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(54); torch.set_num_threads(2)
net = nn.Sequential(nn.Linear(2048, 12288), nn.ReLU(), nn.Linear(12288, 12288), nn.ReLU(),
                    nn.Linear(12288, 10))
opt = torch.optim.Adam(net.parameters(), lr=1e-5)
path = os.path.join(tempfile.gettempdir(), "ckptcopy-%d.pt" % os.getpid())
t0 = time.time(); last_ckpt = t0; step = 0
while time.time() - t0 < 180:
    x = torch.randn(32, 2048); y = torch.randint(0, 10, (32,))
    loss = F.cross_entropy(net(x), y)
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if time.time() - last_ckpt > 50:
        state = copy.deepcopy({"model": net.state_dict(), "optim": opt.state_dict()})
        buffer = io.BytesIO(); torch.save(state, buffer)
        with open(path, "wb") as f: f.write(buffer.getbuffer())
        del state, buffer; os.remove(path)
        print("checkpoint", step, flush=True)
        last_ckpt = time.time()
print("done", step, flush=True)
