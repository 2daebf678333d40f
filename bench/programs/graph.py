# A graph network trained with neighbour sampling on a graph whose degrees follow a power law:
# each batch gathers the features of its nodes' neighbours, so a batch that draws a hub needs
# many times the memory of a typical one; memory is noisy with tall, irregular spikes.
import time
import torch, torch.nn as nn
torch.manual_seed(44); torch.set_num_threads(2)
N, F = 200000, 128
feats = torch.randn(N, F)
degree = (torch.distributions.Pareto(1.0, 1.1).sample((N,)) * 4).clamp(max=60000).long()
lin1 = nn.Linear(2 * F, 256); lin2 = nn.Linear(256, 8)
opt = torch.optim.Adam(list(lin1.parameters()) + list(lin2.parameters()), lr=1e-3)
t0 = time.time(); n = 0; most = 0
while time.time() - t0 < 180:
    nodes = torch.randint(0, N, (256,)); d = degree[nodes]
    nbrs = torch.randint(0, N, (int(d.sum()),))
    owner = torch.repeat_interleave(torch.arange(len(nodes)), d)
    msg = torch.relu(lin1(torch.cat([feats[nbrs], feats[nodes][owner]], 1)))
    agg = torch.zeros(len(nodes), 256).index_add(0, owner, msg) / d.unsqueeze(1)
    loss = nn.functional.cross_entropy(lin2(agg), torch.randint(0, 8, (len(nodes),)))
    opt.zero_grad(); loss.backward(); opt.step(); n += 1; most = max(most, int(d.sum()))
    if n % 200 == 0: print("step", n, most, flush=True)
print("done", n, flush=True)
