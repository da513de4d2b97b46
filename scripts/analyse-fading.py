"""Packet to packet: how much a Kolakowski recording's RSSI changes between one anchor's
consecutive packets, while the tag stands and while it moves (docs/simulator.md, Radio).

usage: python3 scripts/analyse-fading.py DATA_DIR [calib|robot]
DATA_DIR holds kolakowski-calib/, kolakowski-robot/ and kolakowski-original/ (the shared
real dataset, CC BY 4.0, M. Kolakowski). Needs numpy. Pairs are consecutive packets at one
anchor at most 0.5 s apart; standing when the tag travelled under 2 cm from a second
before the first to a second after the second, moving when over 20 cm. Prints the number
of pairs, the standard deviation of the difference, its kurtosis, and the share of pairs
that are equal. `roomcast-bench radio` prints the same for the simulator's robot.
"""
import bisect
import gzip
import json
import math
import sys

import numpy as np

root = sys.argv[1].rstrip('/') + '/'
name = sys.argv[2] if len(sys.argv) > 2 else 'calib'
labels = {'calib': 'room_labels_derived__calibration_df.csv',
          'robot': 'room_labels_derived__test_robot_df.csv'}[name]
track = []
for i, line in enumerate(open(root + 'kolakowski-original/' + labels)):
    if i == 0:
        continue
    p = line.strip().split(',')
    track.append((float(p[1]) / 1e9, float(p[2]), float(p[3])))
track.sort()
tt = np.array([p[0] for p in track])
tx = np.array([p[1] for p in track])
ty = np.array([p[2] for p in track])


def position(t):
    i = bisect.bisect_left(tt, t)
    if i == 0 or i >= len(tt):
        return None
    f = (t - tt[i - 1]) / (tt[i] - tt[i - 1])
    return tx[i - 1] + f * (tx[i] - tx[i - 1]), ty[i - 1] + f * (ty[i] - ty[i - 1])


def travelled(t0, t1):
    """Path length between t0 and t1, sampled every 0.1 s."""
    total, last, t = 0.0, position(t0), t0 + 0.1
    while t <= t1 + 1e-9:
        p = position(t)
        if p is None or last is None:
            return None
        total += math.hypot(p[0] - last[0], p[1] - last[1])
        last, t = p, t + 0.1
    return total


by_anchor = {}
for line in gzip.open(root + f'kolakowski-{name}/raw.jsonl.gz'):
    r = json.loads(line)
    by_anchor.setdefault(r['node'], []).append((r['t'], r['rssi']))
standing, moving = [], []
for packets in by_anchor.values():
    packets.sort()
    for (t0, r0), (t1, r1) in zip(packets, packets[1:]):
        if t1 - t0 > 0.5:
            continue
        d = travelled(t0 - 1, t1 + 1)
        if d is None:
            continue
        if d < 0.02:
            standing.append(r1 - r0)
        elif d > 0.2:
            moving.append(r1 - r0)
for label, steps in (('standing', standing), ('moving', moving)):
    v = np.array(steps, float)
    print(f'{label}: {len(v)} pairs, sd {v.std():.2f} dB, kurtosis {np.mean(v**4) / np.mean(v**2)**2:.2f}, '
          f'equal {np.mean(v == 0):.3f}')
