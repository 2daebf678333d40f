# A policy-gradient learner (as PPO runs): 20 s of rollouts in a simulated environment, one
# observation at a time on one thread, appended to a buffer that grows with every step; then up
# to 10 s of updates, four passes over the buffer in minibatches on two threads; then the buffer
# is cleared. Recorded, memory ramps through the first rollout (0.26 -> 0.59 GiB); after it the
# allocator keeps the freed buffer's pages: 0.64 GiB through each rollout, 0.84 through each
# update. CPU alternates between 0.3-0.4 cores and two.
import time
import torch, torch.nn as nn
torch.manual_seed(35)
policy = nn.Sequential(nn.Linear(1024, 1024), nn.Tanh(), nn.Linear(1024, 16))
opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
t0 = time.time(); it = 0
while time.time() - t0 < 180:
    torch.set_num_threads(1)
    observations, actions = [], []
    started = time.time()
    while time.time() - started < 20:
        obs = torch.randn(16, 1024)  # 16 environments stepped together
        with torch.no_grad():
            act = torch.distributions.Categorical(logits=policy(obs)).sample()
        observations.append(obs); actions.append(act)
        time.sleep(0.004)  # the environments' step
    torch.set_num_threads(2)
    x = torch.cat(observations); a = torch.cat(actions)
    advantage = torch.randn(len(x))
    started = time.time()
    batches = [k for _ in range(4) for k in torch.randperm(len(x)).split(1024)]
    for k in batches:
        if time.time() - started > 10: break
        logp = torch.log_softmax(policy(x[k]), 1).gather(1, a[k, None]).squeeze(1)
        loss = -(logp * advantage[k]).mean()
        opt.zero_grad(); loss.backward(); opt.step()
    it += 1
    print("iteration", it, len(x), round(time.time() - t0), flush=True)
    del observations, actions, x, a, advantage
print("done", flush=True)
