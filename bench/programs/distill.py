# Knowledge distillation in one job: a wide teacher trained with Adam for 50 s; its optimizer
# freed and the teacher frozen while a small student learns from its outputs for 60 s; then the
# teacher deleted and the student fine-tuned on the labels alone: memory steps down twice, CPU
# falls as the teacher's forward pass leaves each step.
import time
import torch, torch.nn as nn
torch.manual_seed(42); torch.set_num_threads(2)
x_all = torch.randn(30000, 512); y_all = torch.randint(0, 10, (30000,))
def mlp(width, depth):
    layers = [nn.Linear(512, width), nn.ReLU()]
    for _ in range(depth): layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(width, 10))
def batch():
    k = torch.randint(0, len(x_all), (256,)); return x_all[k], y_all[k]
def train(net, opt, seconds, loss_of):
    t0 = time.time(); n = 0
    while time.time() - t0 < seconds:
        x, y = batch(); loss = loss_of(net, x, y)
        opt.zero_grad(); loss.backward(); opt.step(); n += 1
    return n
teacher = mlp(3072, 4); opt = torch.optim.Adam(teacher.parameters(), lr=1e-4)
def labelled(m, x, y): return nn.functional.cross_entropy(m(x), y)
print("teacher", train(teacher, opt, 50, labelled), flush=True)
del opt; teacher.requires_grad_(False)
student = mlp(256, 2); opt = torch.optim.Adam(student.parameters(), lr=1e-3)
def distilled(m, x, y):
    with torch.no_grad(): soft = teacher(x).softmax(-1)
    return nn.functional.kl_div(m(x).log_softmax(-1), soft, reduction="batchmean")
print("distil", train(student, opt, 60, distilled), flush=True)
del teacher
print("finetune", train(student, opt, 50, labelled), flush=True)
print("done", flush=True)
