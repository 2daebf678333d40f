# Training that stops for its checkpoint uploads: every 70 s the state is serialised into a
# buffer and sent to slow storage (a 20 s wait, CPU near zero, the buffer held), then training
# resumes at two threads.
import io, time
import torch, torch.nn as nn
torch.manual_seed(13); torch.set_num_threads(2)
net = nn.Sequential(nn.Conv2d(3, 48, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(48, 96, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Flatten(), nn.Linear(96 * 8 * 8, 512), nn.ReLU(), nn.Linear(512, 10))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
x_all = torch.randn(20000, 3, 32, 32); y_all = torch.randint(0, 10, (20000,))
t0 = time.time(); last = t0; step = 0
while time.time() - t0 < 210:
    k = torch.randint(0, len(x_all), (64,))
    loss = nn.functional.cross_entropy(net(x_all[k]), y_all[k])
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if time.time() - last > 70:
        buf = io.BytesIO()
        torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "x": x_all}, buf)
        sent = 0
        while sent < buf.getbuffer().nbytes:  # the upload: 20 s at the storage's pace
            time.sleep(0.5); sent += buf.getbuffer().nbytes // 40
        print("upload", step, buf.getbuffer().nbytes, flush=True)
        del buf
        last = time.time()
print("done", step, flush=True)
