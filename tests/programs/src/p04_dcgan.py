"""A tiny DCGAN: ConvTranspose2d generator, Conv2d discriminator, BatchNorm, BCELoss, two Adam optimizers."""
import torch
import torch.nn as nn

from progutil import randn, seed_params, show

nz, ngf, ndf = 8, 8, 8


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 1, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


netG, netD = seed_params(Generator(), 1, 0.1), seed_params(Discriminator(), 2, 0.1)
criterion = nn.BCELoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))
real = torch.tanh(randn(6, 1, 16, 16, seed=3))
for i in range(4):
    netD.zero_grad()
    label = torch.full((6,), 1.0, dtype=torch.float)
    errD_real = criterion(netD(real), label)
    errD_real.backward()
    fake = netG(randn(6, nz, 1, 1, seed=10 + i))
    label.fill_(0.0)
    errD_fake = criterion(netD(fake.detach()), label)
    errD_fake.backward()
    optimizerD.step()
    netG.zero_grad()
    label.fill_(1.0)
    errG = criterion(netD(fake), label)
    errG.backward()
    optimizerG.step()
    show(f"[{i}] Loss_D", (errD_real + errD_fake).item())
    show(f"[{i}] Loss_G", errG.item())
print(fake.shape, errG.grad_fn.name())
