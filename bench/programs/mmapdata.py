# Training on a dataset kept in a file and read through np.memmap, as memory-mapped datasets are:
# it is written in chunks first, then the first epoch reads it in order and the pages it touches
# stay resident, so memory climbs (for about 40 s on 2 cores) to the file's size (1 GiB) and stays
# there while later epochs read it at random.
import os, tempfile, time
import numpy as np
import torch, torch.nn as nn
torch.manual_seed(24); torch.set_num_threads(2)
rows, dims = 128000, 2048
path = os.path.join(tempfile.mkdtemp(), "features.f32")
writer = np.memmap(path, dtype=np.float32, mode="w+", shape=(rows, dims))
for k in range(0, rows, 8000):  # written in chunks, so the writer never holds much of it
    writer[k:k + 8000] = np.random.default_rng(k).standard_normal((8000, dims), np.float32)
writer.flush(); del writer
data = np.memmap(path, dtype=np.float32, mode="r", shape=(rows, dims))
labels = torch.randint(0, 10, (rows,))
net = nn.Sequential(nn.Linear(dims, 1536), nn.ReLU(), nn.Linear(1536, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
t0 = time.time(); epoch = 0
while time.time() - t0 < 190:
    order = np.arange(0, rows, 256) if epoch == 0 else np.random.permutation(rows // 256) * 256
    for k in order:
        x = torch.from_numpy(np.array(data[k:k + 256]))
        loss = nn.functional.cross_entropy(net(x), labels[k:k + 256])
        opt.zero_grad(); loss.backward(); opt.step()
        if time.time() - t0 > 190: break
    epoch += 1
    print("epoch", epoch, round(time.time() - t0), float(loss), flush=True)
os.remove(path)
print("done", flush=True)
