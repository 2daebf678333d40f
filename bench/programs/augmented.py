# What the two DataLoader programs share (workers.py, respawn.py; not a program of its own):
# images stored as bytes and decoded and augmented at every read (rounds of blur and colour
# jitter, then a random crop), and the small convolutional network that classifies them.
import torch, torch.nn as nn
from torch.utils.data import Dataset
class Augmented(Dataset):
    def __init__(self, n, rounds):
        self.raw = torch.randint(0, 255, (n, 3, 40, 40), dtype=torch.uint8)
        self.rounds = rounds
    def __len__(self): return len(self.raw)
    def __getitem__(self, i):
        x = self.raw[i].float() / 255
        for _ in range(self.rounds):
            x = torch.nn.functional.avg_pool2d(x.unsqueeze(0), 3, 1, 1).squeeze(0)
            x = x * (0.8 + 0.4 * torch.rand(3, 1, 1))
        k = torch.randint(0, 9, (2,))
        return x[:, k[0]:k[0] + 32, k[1]:k[1] + 32], int(i % 10)
def small_cnn():
    return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64 * 8 * 8, 10))
