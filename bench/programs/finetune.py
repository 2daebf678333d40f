# Transfer learning: a pretrained-like backbone frozen while the head trains (60 s), then the
# whole network unfrozen with a lower learning rate (its gradients and Adam state appear at once),
# with a checkpoint copied in memory every 40 s and a validation pass at the end.
import copy, time
import torch, torch.nn as nn
torch.manual_seed(9); torch.set_num_threads(2)
backbone = nn.Sequential(*[nn.Sequential(nn.Linear(1024, 1024), nn.GELU()) for _ in range(8)])
head = nn.Linear(1024, 100)
for p in backbone.parameters(): p.requires_grad_(False)
x_all = torch.randn(40000, 1024); y_all = torch.randint(0, 100, (40000,))
def train(opt, seconds, batch):
    t0 = time.time(); last_ckpt = t0; n = 0; ckpt = None
    while time.time() - t0 < seconds:
        k = torch.randint(0, len(x_all), (batch,))
        loss = nn.functional.cross_entropy(head(backbone(x_all[k])), y_all[k])
        opt.zero_grad(); loss.backward(); opt.step(); n += 1
        if time.time() - last_ckpt > 40:
            ckpt = copy.deepcopy({"b": backbone.state_dict(), "h": head.state_dict(),
                                  "o": opt.state_dict()})
            last_ckpt = time.time()
    return n
print("head", train(torch.optim.Adam(head.parameters(), 1e-3), 60, 128), flush=True)
for p in backbone.parameters(): p.requires_grad_(True)
print("all", train(torch.optim.Adam(list(backbone.parameters()) + list(head.parameters()), 1e-4),
                   100, 128), flush=True)
with torch.no_grad():
    acc = sum((head(backbone(x_all[k:k + 2000])).argmax(1) == y_all[k:k + 2000]).sum().item()
              for k in range(0, len(x_all), 2000))
print("val", acc / len(x_all), flush=True)
