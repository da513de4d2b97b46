"""How much a tag's levels change in 10 s while it walks and while it stands (docs/fusion.md, Known limits).

usage: python3 scripts/analyse-motion.py DATA_DIR [SIMULATED_SCENARIO_DIR]
DATA_DIR holds danis-office/ and danis-original/ (the shared Daniş dataset, CC0 1.0), whose
samples carry the tag's annotated position, so each second is walking (over 0.3 m/s, now and
10 s before) or standing (under 0.1 m/s). SIMULATED_SCENARIO_DIR is optional: a scenario from
`roomcast-sim generate` (with raw.jsonl), whose beacons are reported one by one, fixed tags
marked. Needs numpy.

Per second: each node's median raw RSSI over the last 3 s, and its change since 10 s before;
the mean square of those changes over every node that heard both times, and over the three
loudest now (dB²). Printed as quartiles and the 90th percentile. If walking and standing
overlap, no test on the levels' change tells a slow walk from a tag that stands.
"""
import bisect, glob, gzip, json, math, statistics, sys

import numpy as np


def packets(path):
    opener = gzip.open if path.endswith('.gz') else open
    out = {}
    for line in opener(path, 'rt'):
        p = json.loads(line)
        out.setdefault(p['id'], {}).setdefault(p['node'], []).append((p['t'], p['rssi']))
    for nodes in out.values():
        for v in nodes.values():
            v.sort()
    return out


def changes(nodes, times, lag=10, window=3):
    stamps = {n: [p[0] for p in v] for n, v in nodes.items()}

    def level(n, t):
        a, b = bisect.bisect_left(stamps[n], t - window), bisect.bisect_right(stamps[n], t)
        return statistics.median(p[1] for p in nodes[n][a:b]) if b > a else None

    rows = []
    for t in times:
        now = {n: level(n, t) for n in nodes}
        then = {n: level(n, t - lag) for n in nodes}
        both = [n for n in nodes if now[n] is not None and then[n] is not None]
        if len(both) < 3:
            continue
        top = sorted(both, key=lambda n: -now[n])[:3]
        rows.append((np.mean([(now[n] - then[n]) ** 2 for n in both]),
                     np.mean([(now[n] - then[n]) ** 2 for n in top])))
    return np.array(rows)


def report(label, rows):
    if len(rows) == 0:
        print(f'{label}: no seconds')
        return
    q = lambda a: ' '.join(f'{np.percentile(a, p):5.1f}' for p in (25, 50, 75, 90))
    print(f'{label:34} n={len(rows):4}  all nodes {q(rows[:, 0])}   loudest 3 {q(rows[:, 1])}')


def main():
    root = sys.argv[1].rstrip('/')
    positions = []
    for f in glob.glob(root + '/danis-original/trk/*.mbd'):
        for line in open(f):
            p = line.split(',')
            if len(p) > 6:
                positions.append((float(p[0]), float(p[4]), float(p[5])))
    positions.sort()
    stamps = [p[0] for p in positions]

    def speed(t):
        i, j = bisect.bisect_left(stamps, t - 2), bisect.bisect_left(stamps, t + 2)
        if j >= len(positions) or i >= j or positions[j - 1][0] - positions[i][0] < 2:
            return None
        a, b = positions[i], positions[j - 1]
        return math.hypot(b[1] - a[1], b[2] - a[2]) / (b[0] - a[0])

    tags = packets(root + '/danis-office/raw.jsonl.gz')
    nodes = next(iter(tags.values()))
    seconds = np.arange(stamps[0], stamps[-1], 1.0)
    print('mean square change of each node\'s level over 10 s (dB²): 25th 50th 75th 90th percentile')
    report('danis, walking', changes(nodes, [t for t in seconds if (speed(t) or 0) > 0.3 and (speed(t - 10) or 0) > 0.3]))
    report('danis, standing', changes(nodes, [t for t in seconds if speed(t) is not None and speed(t) < 0.1]))
    if len(sys.argv) > 2:
        sim = sys.argv[2].rstrip('/')
        t0 = json.load(open(sim + '/layout.json'))['t0']
        duration = json.load(open(sim + '/layout.json'))['duration']
        heard = packets(sim + '/raw.jsonl')
        for b in json.load(open(sim + '/beacons.json')):
            if b['id'] in heard:
                kind = 'carried' if b.get('mobile', True) else 'fixed'
                report(f"simulated {b.get('name', b['id'])} ({kind})",
                       changes(heard[b['id']], np.arange(t0 + 30, t0 + duration - 20, 1.0)))


if __name__ == '__main__':
    main()
