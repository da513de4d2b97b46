"""How close to a zone's split line the Daniş tag is in the seconds the scorer judges (docs/fusion.md, Known limits).

usage: python3 scripts/analyse-boundaries.py DATA_DIR
DATA_DIR holds danis-office/ and danis-original/ (the shared Daniş dataset, CC0 1.0). The zones are
quadrants split at x = 10.33 m and y = 8.82 m with no wall between them, so which zone a second
belongs to is decided by the tag's annotated position alone. For every second at least 10 s into a
stay (the scorer's settled seconds, without its rule for a session's first 30 s), the distance from the annotated position to the nearer split
line, as the share of seconds within 0.25, 0.5, 1 and 2 m, overall and per track. A position
estimate has to be better than that distance to put those seconds in the right zone.
"""
import bisect, glob, json, os, sys

SPLIT_X, SPLIT_Y = 10.33, 8.82


def main():
    root = sys.argv[1].rstrip('/')
    samples = []
    for path in glob.glob(root + '/danis-original/trk/*_all_sensors.mbd'):
        track = os.path.basename(path).replace('_all_sensors.mbd', '')
        for line in open(path):
            p = line.split(',')
            if len(p) > 6:
                samples.append((float(p[0]), float(p[4]), float(p[5]), track))
    samples.sort()
    stamps = [s[0] for s in samples]
    truth = [json.loads(l) for l in open(root + '/danis-office/truth.jsonl')]
    seconds = []
    for span in truth:
        if span['room'] is None:
            continue
        t = span['t0'] + 10
        while t < span['t1']:
            i = bisect.bisect_left(stamps, t)
            if i < len(samples) and abs(samples[i][0] - t) < 1:
                _, x, y, track = samples[i]
                seconds.append((min(abs(x - SPLIT_X), abs(y - SPLIT_Y)), track))
            t += 1
    limits = (0.25, 0.5, 1, 2)

    def row(label, distances):
        shares = ' '.join(f'{sum(d < m for d in distances) / len(distances):6.2f}' for m in limits)
        print(f'{label:32} {len(distances):5} {shares}')

    print(f'{"settled seconds within (m)":32} {"n":>5} ' + ' '.join(f'{m:6}' for m in limits))
    row('all', [d for d, _ in seconds])
    for track in sorted({t for _, t in seconds}):
        row(track, [d for d, t in seconds if t == track])


if __name__ == '__main__':
    main()
