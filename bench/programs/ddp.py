# Data-parallel training in two processes (torch.distributed with gloo on loopback, one thread
# each): gradients all-reduced every step; every 60 s rank 0 evaluates alone while rank 1 waits
# at a barrier, so CPU falls to one core for the evaluation.
import os, time
import torch, torch.nn as nn, torch.distributed as dist, torch.multiprocessing as mp
def work(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = "29533"
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(11 + rank); torch.set_num_threads(1)
    net = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(512, 1536), nn.ReLU(), nn.Linear(1536, 1536), nn.ReLU(),
                      nn.Linear(1536, 20)))
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x_all = torch.randn(30000, 512); y_all = torch.randint(0, 20, (30000,))
    val = torch.randn(40000, 512)
    t0 = time.time(); last_val = t0; step = 0
    while True:
        k = torch.randint(0, len(x_all), (128,))
        loss = nn.functional.cross_entropy(net(x_all[k]), y_all[k])
        opt.zero_grad(); loss.backward(); opt.step(); step += 1
        flags = torch.tensor([float(time.time() - t0 > 200), float(time.time() - last_val > 60)])
        dist.all_reduce(flags)  # every rank decides alike, on rank 0's clock or later
        if flags[0] > 0: break
        if flags[1] > 0:
            if rank == 0:
                with torch.no_grad():
                    preds = torch.cat([net.module(val[i:i + 500]) for i in range(0, 40000, 500)])
                    for _ in range(2):
                        preds += torch.cat([net.module(val[i:i + 500]) for i in range(0, 40000, 500)])
                print("val", step, float(preds.argmax(1).float().mean()), flush=True)
            dist.barrier()
            last_val = time.time()
    print("done", rank, step, flush=True)
    dist.destroy_process_group()
if __name__ == "__main__":
    mp.spawn(work, args=(2,), nprocs=2)
