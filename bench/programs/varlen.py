# A language model trained on batches of variable length, as NLP loaders give them without
# bucketing: most batches are short, one in about thirty is long (a long document), and memory
# jumps for that step only; every 60 s a validation pass at the longest length.
import time, random
import torch, torch.nn as nn
torch.manual_seed(31); random.seed(31); torch.set_num_threads(2)
vocab, d = 3000, 160
emb = nn.Embedding(vocab, d)
enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 4, 512, batch_first=True), 2)
head = nn.Linear(d, vocab)
params = list(emb.parameters()) + list(enc.parameters()) + list(head.parameters())
opt = torch.optim.Adam(params, lr=3e-4)
def step(seq, batch):
    x = torch.randint(0, vocab, (batch, seq))
    out = head(enc(emb(x[:, :-1])))
    loss = nn.functional.cross_entropy(out.reshape(-1, vocab), x[:, 1:].reshape(-1))
    opt.zero_grad(); loss.backward(); opt.step()
t0 = time.time(); last_val = t0; n = 0
while time.time() - t0 < 180:
    seq = 384 if random.random() < 1 / 30 else random.choice([32, 48, 64, 96])
    step(seq, 24); n += 1
    if time.time() - last_val > 60:
        with torch.no_grad():
            for _ in range(6):
                head(enc(emb(torch.randint(0, vocab, (24, 384))))).argmax(-1)
        print("val", n, flush=True)
        last_val = time.time()
print("done", n, flush=True)
