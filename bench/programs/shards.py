# A dataset streamed in shards, as WebDataset-style loaders and sharded corpora are read: each
# shard (about 0.9 GiB of samples) is loaded, trained on for 25 s and freed before the next is
# loaded, five shards in all: memory saws between the model alone and the model plus a shard
# (recorded: 1.19-1.25 GiB for 25 s, 0.33-0.38 for two or three readings, every 30 s).
import time
import torch, torch.nn as nn
torch.manual_seed(31); torch.set_num_threads(2)
net = nn.Sequential(nn.Linear(768, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
                    nn.Linear(2048, 10))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
t0 = time.time()
for shard in range(5):
    x_all = torch.randn(300000, 768); y_all = torch.randint(0, 10, (300000,))
    print("shard", shard, "loaded", round(time.time() - t0), flush=True)
    started = time.time()
    while time.time() - started < 25:
        k = torch.randint(0, len(x_all), (128,))
        loss = nn.functional.cross_entropy(net(x_all[k]), y_all[k])
        opt.zero_grad(); loss.backward(); opt.step()
    del x_all, y_all
    time.sleep(4)  # the next shard's download
print("done", float(loss), round(time.time() - t0), flush=True)
