#!/usr/bin/env python3
"""An Euler curve layer that learns: images with one hole or two holes (noisy
discs with round holes at random places), told apart by a logistic
regression on the soft Euler curve of the image, with the layer's thresholds
learned together with the regression. The superlevel sets of the bright disc
have Euler characteristic 1 - holes, so once a threshold sits between the
background and the disc, the two families separate.

    TOPOVOX_KERNELS_LIB=<build>/Kernels/libtopovox_kernels.a \
        python3 Torch/examples/learn_holes.py [--device cuda|cpu]

Prints the loss and accuracy as it trains and the learned thresholds and
mean curves per family; writes learned_curves.csv (and .png with matplotlib).
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from topovox_torch import EulerCurveLayer  # noqa: E402


def make_images(n, holes, size=48, generator=None):
    y, x = torch.meshgrid(torch.arange(size, dtype=torch.float32), torch.arange(size, dtype=torch.float32),
                          indexing="ij")
    out = []
    for _ in range(n):
        img = ((x - size / 2) ** 2 + (y - size / 2) ** 2 < (0.4 * size) ** 2).float()
        first = torch.rand(1, generator=generator).item() * 6.283
        for k in range(holes):
            angle = first + k * 3.1416  # opposite sides: two holes never merge
            cx, cy = size / 2 + 0.2 * size * torch.cos(torch.tensor(angle)), size / 2 + 0.2 * size * torch.sin(
                torch.tensor(angle))
            img[(x - cx) ** 2 + (y - cy) ** 2 < (0.08 * size) ** 2] = 0
        out.append(img + 0.1 * torch.randn(size, size, generator=generator))
    return torch.stack(out).unsqueeze(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    g = torch.Generator().manual_seed(0)
    x = torch.cat([make_images(64, 1, generator=g), make_images(64, 2, generator=g)]).to(args.device)
    labels = torch.cat([torch.zeros(64), torch.ones(64)]).to(args.device)
    # Superlevel sets of the image = sublevel sets of -image (weight -1).
    layer = EulerCurveLayer(torch.linspace(-1.2, 0.2, 8), weight=-1.0, alpha=0.0, lam=20.0,
                            learn_direction=False, learn_alpha=False).to(args.device)
    layer(x[:1])  # compiles the extension on first use: not part of the training time
    head = torch.nn.Linear(8, 1).to(args.device)
    opt = torch.optim.Adam(list(layer.parameters()) + list(head.parameters()), lr=0.02)
    start = time.time()
    for step in range(150):
        chi = layer(x).squeeze(1)  # (N, 8)
        logits = head(chi).squeeze(1)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 30 == 0 or step == 149:
            acc = ((logits > 0).float() == labels).float().mean().item()
            print("step %3d  loss %.4f  accuracy %.3f" % (step, loss.item(), acc), flush=True)
    print("trained in %.2f s on %s" % (time.time() - start, args.device))
    with torch.no_grad():
        chi = layer(x).squeeze(1)
    t = layer.thresholds.detach().cpu()
    one, two = chi[:64].mean(0).cpu(), chi[64:].mean(0).cpu()
    print("learned thresholds (of -image):", [round(v, 3) for v in t.tolist()])
    print("mean curve, one hole :", [round(v, 2) for v in one.tolist()])
    print("mean curve, two holes:", [round(v, 2) for v in two.tolist()])
    with open("learned_curves.csv", "w") as f:
        f.write("threshold,one_hole,two_holes\n")
        for row in zip(t.tolist(), one.tolist(), two.tolist()):
            f.write("%g,%g,%g\n" % row)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        order = t.argsort()
        plt.plot(t[order], one[order], "o-", label="one hole")
        plt.plot(t[order], two[order], "s-", label="two holes")
        plt.xlabel("learned threshold (of -image)")
        plt.ylabel("soft Euler characteristic")
        plt.legend()
        plt.savefig("learned_curves.png", dpi=100)
    except ImportError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
