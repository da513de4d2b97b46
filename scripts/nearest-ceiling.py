"""What a nearest-node rule could reach on a recording with hindsight (docs/fusion.md, Known limits).

usage: python3 scripts/nearest-ceiling.py SCENARIO_DIR [WINDOW_S]
SCENARIO_DIR is a recorded scenario with raw.jsonl.gz (Tests/RoomcastScenarioTests/Fixtures/kolakowski-calib, …).

Per settled second (the truth has held 10 s, after the first 30 s: the scorer's rule), the
room of the node with the loudest median raw RSSI over a window centred on that second —
a rule that sees the future, so no causal estimator of the same kind does better. Then the
same with one offset per node (−6…+6 dB, whole dB) chosen to score best on this very
recording: the most receiver calibration could give that rule. The offsets are printed as
`roomcast-sim score --rx-adjust`, to try on another recording.
"""
import bisect, gzip, json, math, statistics, sys


def load(root):
    layout = json.load(open(root + '/layout.json'))
    room = {n['name']: n['room'] for n in layout['nodes']}
    packets = {}
    for line in gzip.open(root + '/raw.jsonl.gz', 'rt'):
        p = json.loads(line)
        packets.setdefault(p['node'], []).append((p['t'], p['rssi']))
    for v in packets.values():
        v.sort()
    truth = [json.loads(line) for line in open(root + '/truth.jsonl')]
    start = layout['t0']
    settled = []
    for s in truth:
        k = math.ceil(s['t0'] + 10)
        while k <= s['t1']:
            if k >= start + 30:
                settled.append((k, s['room']))
            k += 1
    return room, packets, settled


def levels(packets, settled, window):
    """Per settled second, the median raw RSSI of each node that heard within the window."""
    times = {n: [p[0] for p in v] for n, v in packets.items()}
    out = []
    for t, _ in settled:
        heard = {}
        for n, v in packets.items():
            a, b = bisect.bisect_left(times[n], t - window), bisect.bisect_right(times[n], t + window)
            if b > a:
                heard[n] = statistics.median(p[1] for p in v[a:b])
        out.append(heard)
    return out


def accuracy(room, settled, heard, offset):
    right = 0
    for (_, truth), h in zip(settled, heard):
        if h:
            loudest = max(h, key=lambda n: h[n] + offset.get(n, 0))
            right += room[loudest] == truth
    return right / len(settled)


def main():
    root = sys.argv[1].rstrip('/')
    window = float(sys.argv[2]) if len(sys.argv) > 2 else 5
    room, packets, settled = load(root)
    name = root.split('/')[-1]
    heard = levels(packets, settled, window)
    print(f'{name}: {len(settled)} settled s; loudest median over ±{window:g} s: {accuracy(room, settled, heard, {}):.3f}')
    offset = {n: 0 for n in packets}
    best = accuracy(room, settled, heard, offset)
    for _ in range(2):
        for n in sorted(packets):
            keep = offset[n]
            for db in range(-6, 7):
                offset[n] = db
                a = accuracy(room, settled, heard, offset)
                if a > best + 1e-12:
                    best, keep = a, db
            offset[n] = keep
    print(f'{name}: with offsets chosen on it: {best:.3f}   --rx-adjust '
          + ','.join(f'{n}={offset[n]}' for n in sorted(offset)))


if __name__ == '__main__':
    main()
