# A recommender-style model: big embedding tables initialised chunk by chunk, Adam state at the
# first step, periodic evaluation that gathers every prediction, checkpoints into memory.
import io, time, sys
import torch, torch.nn as nn
torch.manual_seed(1); torch.set_num_threads(2)
rows, dim = int(sys.argv[1]) if len(sys.argv) > 1 else 600000, 64
class M(nn.Module):
    def __init__(s):
        super().__init__()
        s.user = nn.Embedding(rows, dim); s.item = nn.Embedding(rows, dim)
        s.mlp = nn.Sequential(nn.Linear(2 * dim, 256), nn.ReLU(), nn.Linear(256, 1))
    def forward(s, u, i):
        return s.mlp(torch.cat([s.user(u), s.item(i)], 1)).squeeze(1)
m = M()
for p in m.parameters():  # initialised chunk by chunk (under a second at these sizes)
    with torch.no_grad():
        flat = p.view(-1)
        for k in range(0, flat.numel(), 1 << 20):
            flat[k:k + (1 << 20)] = torch.randn(min(1 << 20, flat.numel() - k)) * 0.01
            time.sleep(0.002)
opt = torch.optim.Adam(m.parameters(), lr=1e-3)
evalu = torch.randint(0, rows, (400000,)); evali = torch.randint(0, rows, (400000,))
t0 = time.time(); step = 0
while time.time() - t0 < 200:
    u = torch.randint(0, rows, (4096,)); i = torch.randint(0, rows, (4096,))
    y = ((u % 7) == (i % 7)).float()
    loss = nn.functional.binary_cross_entropy_with_logits(m(u, i), y)
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if step % 400 == 0:
        with torch.no_grad():
            preds = [m(evalu[k:k + 8192], evali[k:k + 8192]) for k in range(0, len(evalu), 8192)]
            allp = torch.cat(preds); print("eval", step, float(allp.mean()), flush=True)
            del preds, allp
    if step % 700 == 0:
        buf = io.BytesIO(); torch.save({"m": m.state_dict(), "o": opt.state_dict()}, buf)
        print("ckpt", step, buf.tell(), flush=True); del buf
