# A dual encoder for retrieval, evaluated every 40 s by recall@10 over a validation set that grows
# as labelled pairs arrive (6,000, then 3,000 more at each evaluation): each evaluation builds the
# full query-by-document similarity matrix, its size the square of the set's. Recorded: the
# evaluations last under 2 s, and two of the four fell between samples; the other two read 0.61
# and 0.69 GiB, 0.33-0.36 above the level, which the set's growth takes from 0.26 to 0.36 GiB.
import time
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(44); torch.set_num_threads(2)
enc_q = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 128))
enc_d = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 128))
opt = torch.optim.Adam(list(enc_q.parameters()) + list(enc_d.parameters()), lr=1e-3)
val_q, val_d = torch.randn(6000, 256), torch.randn(6000, 256)
t0 = time.time(); last_eval = t0; step = 0
while time.time() - t0 < 180:
    q, d = torch.randn(256, 256), torch.randn(256, 256)
    logits = enc_q(q) @ enc_d(d).T
    loss = F.cross_entropy(logits, torch.arange(256))
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if time.time() - last_eval > 40:
        with torch.no_grad():
            scores = enc_q(val_q) @ enc_d(val_d).T
            top = scores.topk(10, dim=1).indices
            recall = (top == torch.arange(len(val_q))[:, None]).any(1).float().mean().item()
        print("eval", step, len(val_q), recall, flush=True)
        del scores, top
        val_q = torch.cat([val_q, torch.randn(3000, 256)])
        val_d = torch.cat([val_d, torch.randn(3000, 256)])
        last_eval = time.time()
print("done", step, flush=True)
