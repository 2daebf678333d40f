# An off-policy RL learner: a replay buffer that fills transition by transition up to its
# capacity, a small Q-network trained on samples of it, a target network synced periodically.
import time, sys
import torch, torch.nn as nn
torch.manual_seed(2); torch.set_num_threads(2)
obs, cap = 256, int(sys.argv[1]) if len(sys.argv) > 1 else 1500000
q = nn.Sequential(nn.Linear(obs, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 8))
target = nn.Sequential(nn.Linear(obs, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 8))
opt = torch.optim.Adam(q.parameters(), lr=1e-4)
chunks, filled = [], 0
state = torch.randn(obs)
t0 = time.time(); step = 0
while time.time() - t0 < 210:
    with torch.no_grad():  # act: 256 transitions per step into the buffer
        s = state + 0.1 * torch.randn(256, obs)
        a = q(s).argmax(1)
    if filled < cap:
        chunks.append(torch.cat([s, a.unsqueeze(1).float(), torch.randn(256, 1)], 1)); filled += 256
    state = s[-1]
    if len(chunks) >= 8:
        idx = torch.randint(0, len(chunks), (4,))
        batch = torch.cat([chunks[int(k)] for k in idx])
        x, r = batch[:, :obs], batch[:, -1]
        loss = ((q(x).max(1).values - (r + 0.99 * target(x).max(1).values.detach())) ** 2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
    step += 1
    if step % 500 == 0:
        target.load_state_dict(q.state_dict()); print("sync", step, filled, flush=True)
