# Training followed by the export steps many pipelines end with: a network trained for 130 s,
# then a dynamically quantized copy, a TorchScript trace of the float model, and both saved to
# files; the copies and the serialisation buffers come on top of the trained model at the end
# (recorded: 0.91-1.07 GiB for 130 s, then 1.38-1.44).
import io, time
import torch, torch.nn as nn
torch.manual_seed(36); torch.set_num_threads(2)
width = 4096
net = nn.Sequential(nn.Linear(1024, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                    nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10))
opt = torch.optim.Adam(net.parameters(), lr=1e-4)
x_all = torch.randn(20000, 1024); y_all = torch.randint(0, 10, (20000,))
t0 = time.time()
while time.time() - t0 < 130:
    k = torch.randint(0, len(x_all), (128,))
    loss = nn.functional.cross_entropy(net(x_all[k]), y_all[k])
    opt.zero_grad(); loss.backward(); opt.step()
print("trained", float(loss), round(time.time() - t0), flush=True)
net.eval()
quantized = torch.quantization.quantize_dynamic(net, {nn.Linear}, dtype=torch.qint8)
traced = torch.jit.trace(net, x_all[:8])
files = []
for model in (quantized, traced):
    buffer = io.BytesIO()
    if isinstance(model, torch.jit.ScriptModule): torch.jit.save(model, buffer)
    else: torch.save(model.state_dict(), buffer)
    files.append(buffer.getvalue())
    print("saved", len(files[-1]), round(time.time() - t0), flush=True)
with torch.no_grad():
    agree = (quantized(x_all[:2048]).argmax(1) == traced(x_all[:2048]).argmax(1)).float().mean()
print("done", float(agree), round(time.time() - t0), flush=True)
time.sleep(10)
