# Text preprocessing in one thread before training: a Python tokenizer builds a vocabulary and
# encodes a corpus held in memory as strings (about 60 s on one core), the strings are freed, and
# a language model trains on the token tensors at two threads.
import random, time
import torch, torch.nn as nn
random.seed(12); torch.manual_seed(12); torch.set_num_threads(2)
words = ["".join(random.choice("abcdefghij") for _ in range(random.randint(2, 7)))
         for _ in range(5000)]
t0 = time.time(); lines = []
while time.time() - t0 < 20:  # the corpus arrives as text
    lines.append(" ".join(random.choice(words) for _ in range(64)))
vocab, tokens = {}, []
for line in lines:  # tokenising, one core
    tokens.append([vocab.setdefault(w, len(vocab)) for w in line.split()])
    for w in line.split():  # a normaliser's pass per word
        w.lower().strip().encode("utf-8")
data = torch.tensor(tokens); del lines, tokens
print("prep", round(time.time() - t0), len(vocab), tuple(data.shape), flush=True)
emb = nn.Embedding(len(vocab), 128)
rnn = nn.GRU(128, 384, batch_first=True)
head = nn.Linear(384, len(vocab))
params = list(emb.parameters()) + list(rnn.parameters()) + list(head.parameters())
opt = torch.optim.Adam(params, lr=1e-3)
t1 = time.time(); n = 0
while time.time() - t1 < 140:
    x = data[torch.randint(0, len(data), (64,))]
    out, _ = rnn(emb(x[:, :-1]))
    loss = nn.functional.cross_entropy(head(out).reshape(-1, len(vocab)), x[:, 1:].reshape(-1))
    opt.zero_grad(); loss.backward(); opt.step(); n += 1
print("done", n, float(loss), flush=True)
