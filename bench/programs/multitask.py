# Multi-task training that alternates between two tasks every 20 s: a convolutional network on
# 64-pixel images (large activations) and a small text classifier on token bags. Each switch
# frees one task's activations and builds the other's: memory and CPU alternate between two
# levels, a recurring pair of phases.
import time
import torch, torch.nn as nn
torch.manual_seed(46); torch.set_num_threads(2)
cnn = nn.Sequential(nn.Conv2d(3, 48, 3, padding=1), nn.ReLU(), nn.Conv2d(48, 48, 3, padding=1),
                    nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(48, 10))
text = nn.EmbeddingBag(20000, 64); text_head = nn.Linear(64, 4)
params = list(cnn.parameters()) + list(text.parameters()) + list(text_head.parameters())
opt = torch.optim.Adam(params, lr=1e-3)
def image_step():
    x = torch.randn(96, 3, 64, 64)
    return nn.functional.cross_entropy(cnn(x), torch.randint(0, 10, (96,)))
def text_step():
    x = torch.randint(0, 20000, (512, 40))
    return nn.functional.cross_entropy(text_head(text(x)), torch.randint(0, 4, (512,)))
t0 = time.time(); n = 0; task = 0
while time.time() - t0 < 180:
    t1 = time.time(); step = (image_step, text_step)[task]
    while time.time() - t1 < 20:
        loss = step(); opt.zero_grad(); loss.backward(); opt.step(); n += 1
    print("task", task, n, float(loss), flush=True); task = 1 - task
print("done", n, flush=True)
