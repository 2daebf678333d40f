# Curriculum training of a sequence model: short sequences and small batches first, then the
# sequence length and the batch double (a second stage), then a long evaluation.
import time
import torch, torch.nn as nn
torch.manual_seed(3); torch.set_num_threads(2)
vocab, d = 2000, 192
emb = nn.Embedding(vocab, d)
enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 4, 512, batch_first=True), 3)
head = nn.Linear(d, vocab)
params = list(emb.parameters()) + list(enc.parameters()) + list(head.parameters())
opt = torch.optim.AdamW(params, lr=3e-4)
data = torch.randint(0, vocab, (30000, 256))
def run(seq, batch, seconds):
    t0 = time.time(); n = 0
    while time.time() - t0 < seconds:
        k = torch.randint(0, len(data), (batch,))
        x = data[k, :seq]
        out = head(enc(emb(x[:, :-1])))
        loss = nn.functional.cross_entropy(out.reshape(-1, vocab), x[:, 1:].reshape(-1))
        opt.zero_grad(); loss.backward(); opt.step(); n += 1
    print("stage", seq, batch, n, flush=True)
run(32, 16, 80)
run(128, 32, 90)
with torch.no_grad():
    t0 = time.time(); outs = []
    for k in range(0, 3000, 50):
        outs.append(head(enc(emb(data[k:k + 50, :128]))).argmax(-1))
        if time.time() - t0 > 40: break
    print("eval", torch.cat(outs).float().mean(), flush=True)
