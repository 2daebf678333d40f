# A small causal language model whose evaluation every 40 s generates text token by token with a
# key/value cache grown by concatenation (each new token's keys and values appended per layer, as
# simple decoders do): memory climbs through each generation, by the cache and its copies, and
# falls when it ends; CPU stays busy throughout.
import math, time
import torch, torch.nn as nn
torch.manual_seed(41); torch.set_num_threads(2)
V, D, L = 512, 256, 2
emb = nn.Embedding(V, D); out = nn.Linear(D, V)
qkv = nn.ModuleList(nn.Linear(D, 3 * D) for _ in range(L))
mlp = nn.ModuleList(nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))
                    for _ in range(L))
params = [p for m in (emb, out, qkv, mlp) for p in m.parameters()]
opt = torch.optim.Adam(params, lr=1e-3)
def attend(h, cache, layer):
    q, k, v = qkv[layer](h).chunk(3, -1)
    if cache is not None:
        k = torch.cat([cache[layer][0], k], 1); v = torch.cat([cache[layer][1], v], 1)
        cache[layer] = (k, v)
    a = q @ k.transpose(1, 2) / math.sqrt(D)
    if cache is None:
        t = h.shape[1]; a = a.masked_fill(torch.ones(t, t).triu(1).bool(), float("-inf"))
    h = h + a.softmax(-1) @ v
    return h + mlp[layer](h)
def forward(x, cache=None):
    h = emb(x)
    for layer in range(L): h = attend(h, cache, layer)
    return out(h)
def generate(batch, steps):
    x = torch.randint(0, V, (batch, 1)); cache = [(torch.zeros(batch, 0, D),) * 2 for _ in range(L)]
    tokens = [x]
    with torch.no_grad():
        for _ in range(steps):
            x = forward(x, cache)[:, -1].softmax(-1).multinomial(1); tokens.append(x)
    return torch.cat(tokens, 1)
t0 = time.time(); last_eval = t0; n = 0
while time.time() - t0 < 180:
    x = torch.randint(0, V, (16, 128))
    loss = nn.functional.cross_entropy(forward(x[:, :-1]).reshape(-1, V), x[:, 1:].reshape(-1))
    opt.zero_grad(); loss.backward(); opt.step(); n += 1
    if time.time() - last_eval > 40:
        print("generate", n, generate(64, 400).shape, flush=True)
        last_eval = time.time()
print("done", n, flush=True)
