# A sequence model trained on length-bucketed batches taken in order of length, as loaders that
# sort by length to save padding do: every epoch's batches grow from 16 to 512 tokens (the batch
# shrinking as they grow, by a token budget; five steps at each of 21 lengths), so memory swings
# with each length's steps and climbs through the epoch (on 2 cores one epoch takes the run).
import time
import torch, torch.nn as nn
torch.manual_seed(26); torch.set_num_threads(2)
vocab, dim = 8000, 256
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, 1024, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.out = nn.Linear(dim, vocab)
    def forward(self, tokens):
        return self.out(self.encoder(self.embed(tokens)))
net = Model()
opt = torch.optim.AdamW(net.parameters(), lr=3e-4)
lengths = [16 * 2 ** (k / 4) for k in range(21)]  # 16 to 512 tokens
t0 = time.time(); epoch = 0
while time.time() - t0 < 185:
    for length in lengths:
        length = int(length); batch = max(2, 16384 // length)
        for _ in range(5):
            tokens = torch.randint(0, vocab, (batch, length))
            loss = nn.functional.cross_entropy(net(tokens[:, :-1]).reshape(-1, vocab),
                                               tokens[:, 1:].reshape(-1))
            opt.zero_grad(); loss.backward(); opt.step()
        if time.time() - t0 > 185: break
    epoch += 1
    print("epoch", epoch, round(time.time() - t0), float(loss), flush=True)
print("done", flush=True)
