"""The Kolakowski flat's receivers calibrated by hand, as `aggregator calibrate` would (docs/fusion.md, Known limits).

usage: python3 scripts/one-metre-levels.py RSSI_DIR [TAG_HEIGHT_M]
RSSI_DIR holds kolakowski-original/ (the published dataset) and kolakowski-calib/ (as in Tests/RoomcastScenarioTests/Fixtures/).

`aggregator calibrate` takes the median level a node reads of a beacon carried round it at
1 m and suggests the rx_adjust that makes it read the beacon's 1 m power there. The flat's
anchors hang at 1.85-2.62 m, where no tag went, so this takes what comes closest: every
packet of the calibration walks heard while the tag (LiDAR position, at TAG_HEIGHT_M, 1.3
by default) was 0.5-1.5 m from the anchor, each scaled to 1 m by free-space loss. The
median per anchor, against the tag's 1 m power (beacons.json), gives each rx_adjust; they
are printed as `roomcast-sim score --rx-adjust`, to score on the calibration walks and on
the robot run.
"""
import bisect, csv, gzip, json, math, statistics, sys


def main():
    root = sys.argv[1]
    height = float(sys.argv[2]) if len(sys.argv) > 2 else 1.3
    original = root + '/kolakowski-original/'
    anchors = {'anchor' + r['id']: (float(r['x']), float(r['y']), float(r['z']))
               for r in csv.DictReader(open(original + 'anchors.csv'))}
    rows = sorted((float(r['ts']) / 1e9, float(r['x']), float(r['y']))
                  for r in csv.DictReader(open(original + 'room_labels_derived__calibration_df.csv')))
    times = [r[0] for r in rows]
    power = json.load(open(root + '/kolakowski-calib/beacons.json'))[0]['measured_power']
    levels = {a: [] for a in anchors}
    for line in gzip.open(root + '/kolakowski-calib/raw.jsonl.gz', 'rt'):
        p = json.loads(line)
        i = bisect.bisect_left(times, p['t'])
        if i == 0 or i == len(rows):
            continue
        (t0, x0, y0), (t1, x1, y1) = rows[i - 1], rows[i]
        if t1 - t0 > 2:  # no position between the walks
            continue
        f = (p['t'] - t0) / (t1 - t0)
        ax, ay, az = anchors[p['node']]
        d = math.dist((x0 + f * (x1 - x0), y0 + f * (y1 - y0), height), (ax, ay, az))
        if 0.5 <= d <= 1.5:
            levels[p['node']].append(p['rssi'] + 20 * math.log10(d))
    adjust = {}
    for a in sorted(anchors):
        if not levels[a]:
            print(f'{a}: no packet within 0.5-1.5 m')
            continue
        median = statistics.median(levels[a])
        adjust[a] = round((power - median) * 2) / 2
        print(f'{a}: {len(levels[a])} packets, median {median:.1f} dBm at 1 m, rx_adjust {adjust[a]:+.1f}')
    print('--rx-adjust ' + ','.join(f'{a}={v:g}' for a, v in adjust.items()))


if __name__ == '__main__':
    main()
