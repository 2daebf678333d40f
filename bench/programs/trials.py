# Two hyperparameter trials at a time in one container, as a tuner's local executor runs them: a
# pool of two worker processes, each trial an MLP of a random width and depth trained for 20-40 s
# with Adam, a new trial starting as soon as one ends (ten in all): memory is the sum of two trials
# that start and end at different times, and of the workers' copies of the data.
import time, random
import torch, torch.nn as nn
import torch.multiprocessing as mp
def trial(seed):
    rng = random.Random(seed); torch.manual_seed(seed); torch.set_num_threads(1)
    width = rng.choice([256, 512, 1024, 2048, 3072]); depth = rng.randint(2, 4)
    x_all = torch.randn(20000, 512); y_all = torch.randint(0, 10, (20000,))
    layers = [nn.Linear(512, width), nn.ReLU()]
    for _ in range(depth - 1): layers += [nn.Linear(width, width), nn.ReLU()]
    net = nn.Sequential(*layers, nn.Linear(width, 10))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    t0 = time.time(); seconds = rng.uniform(20, 40); n = 0
    while time.time() - t0 < seconds:
        k = torch.randint(0, len(x_all), (256,))
        loss = nn.functional.cross_entropy(net(x_all[k]), y_all[k])
        opt.zero_grad(); loss.backward(); opt.step(); n += 1
    return seed, width, depth, n, float(loss)
if __name__ == "__main__":
    with mp.Pool(2, maxtasksperchild=1) as pool:
        for result in pool.imap_unordered(trial, range(23, 33)):
            print("trial", *result, flush=True)
    print("done", flush=True)
