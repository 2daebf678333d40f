# A recurrent classifier trained with a small batch and evaluated every 45 s on a held-out set in
# batches eight times larger (no gradients, but the whole set's outputs kept for the metrics):
# memory rises for each evaluation and falls after it, CPU stays busy throughout.
import time
import torch, torch.nn as nn
torch.manual_seed(34); torch.set_num_threads(2)
rnn = nn.GRU(32, 192, 2, batch_first=True); head = nn.Linear(192, 5)
opt = torch.optim.Adam(list(rnn.parameters()) + list(head.parameters()), lr=1e-3)
held = torch.randn(6000, 80, 32)
t0 = time.time(); last_eval = t0; n = 0
while time.time() - t0 < 190:
    x = torch.randn(32, 80, 32); y = torch.randint(0, 5, (32,))
    loss = nn.functional.cross_entropy(head(rnn(x)[0][:, -1]), y)
    opt.zero_grad(); loss.backward(); opt.step(); n += 1
    if time.time() - last_eval > 45:
        with torch.no_grad():
            outs = [rnn(held[k:k + 256])[0] for k in range(0, len(held), 256)]
            print("eval", n, torch.cat(outs).mean().item(), flush=True)
        del outs
        last_eval = time.time()
print("done", n, flush=True)
