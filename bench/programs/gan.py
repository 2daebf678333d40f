# A small GAN: generator and discriminator trained in turn on 32x32 images; every 45 s a large
# batch of samples is drawn and scored (an FID-like evaluation), then training goes on.
import time
import torch, torch.nn as nn
torch.manual_seed(5); torch.set_num_threads(2)
z = 128
G = nn.Sequential(nn.Linear(z, 256 * 4 * 4), nn.Unflatten(1, (256, 4, 4)),
                  nn.ConvTranspose2d(256, 128, 4, 2, 1), nn.BatchNorm2d(128), nn.ReLU(),
                  nn.ConvTranspose2d(128, 64, 4, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
                  nn.ConvTranspose2d(64, 3, 4, 2, 1), nn.Tanh())
D = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2),
                  nn.Conv2d(64, 128, 4, 2, 1), nn.LeakyReLU(0.2),
                  nn.Conv2d(128, 256, 4, 2, 1), nn.LeakyReLU(0.2),
                  nn.Flatten(), nn.Linear(256 * 4 * 4, 1))
og = torch.optim.Adam(G.parameters(), 2e-4, betas=(0.5, 0.999))
od = torch.optim.Adam(D.parameters(), 2e-4, betas=(0.5, 0.999))
real = torch.rand(20000, 3, 32, 32) * 2 - 1
bce = nn.BCEWithLogitsLoss()
t0 = time.time(); last_eval = t0; step = 0
while time.time() - t0 < 190:
    x = real[torch.randint(0, len(real), (64,))]
    fake = G(torch.randn(64, z))
    ld = bce(D(x), torch.ones(64, 1)) + bce(D(fake.detach()), torch.zeros(64, 1))
    od.zero_grad(); ld.backward(); od.step()
    lg = bce(D(fake), torch.ones(64, 1))
    og.zero_grad(); lg.backward(); og.step(); step += 1
    if time.time() - last_eval > 45:
        with torch.no_grad():
            samples = torch.cat([G(torch.randn(500, z)) for _ in range(10)])
            feats = D[:-1](samples)
            print("eval", step, feats.mean().item(), feats.var(0).mean().item(), flush=True)
        del samples, feats
        last_eval = time.time()
print("done", step, flush=True)
