#!/usr/bin/env python3
"""Turn the Daniş office's stationary recordings into a replayable scenario of still beacons.

Usage: python3 scripts/import-danis-still.py DATASET_DIR OUT_DIR [--sets set_1,set_2]
                                             [--minutes M] [--every K] [--boundary-margin METRES]

DATASET_DIR is a checkout of philotuxo/Position-Annotated-BLE-RSSI-Dataset (CC0 1.0; F. S. Daniş,
A. T. Naskali, A. T. Cemgil, C. Ersoy, Pervasive and Mobile Computing 81, 2022). Its hst/set_*/
folders hold, for each of 126 reference points, 30 minutes in which the beacon stood still on a
tripod and all twelve receivers logged it (`sensorNN_<x>_<y>_<z>.mbd`: time, receiver MAC,
beacon MAC, RSSI per packet). The tracks of the same office are Tests/RoomcastScenarioTests/Fixtures/danis-office.

The scenario uses danis-office's rooms and ids, so the two can be compared and taught from one
another: four quadrant zones split at x = 10.33 m and y = 8.82 m, each receiver in its quadrant
(the dataset's colour groups: sensor1x south-west, 2x north-west, 3x north-east, 4x south-east),
and the same synthetic iBeacon id. Every point is one session (the points were recorded one after
another, two minutes to months apart; here they follow each other in recording order, 300 s of
silence between them, each keeping its own packets' spacing; source.json lists every point with its
original start time and the shift applied). Its truth is the zone it stands in; a point closer than
--boundary-margin (default 0.5 m) to a split line has no truth, because the line runs through open
floor and a spot on it belongs to neither zone. The scenario's captures (nodes/*.btsnoop) are then
written by `roomcast-sim capture` (run it after this script).

--minutes keeps the first M minutes of each point (default: all 30); --every K keeps every K-th
point of each set in file-name order (default 1: all).
"""
import argparse
import glob
import gzip
import json
import os
import re
import sys

SPLIT_X, SPLIT_Y = 10.33, 8.82
WIDTH, DEPTH = 20.660138018121128, 17.64103475472807   # danis-office's zone rects
BEACON_ID = "ibeacon:6f0d8e5e-35b1-5877-b239-c99c8005ab0b-1-1"
MEASURED_POWER = -61                                      # danis-office's fit (its source.json)
ZONE_OF_GROUP = {"1": "q_sw", "2": "q_nw", "3": "q_ne", "4": "q_se"}
GAP = 300.0   # silence between points: longer than the away timeout, so each point starts afresh


def zone(x, y):
    return ("q_s" if y < SPLIT_Y else "q_n") + ("w" if x < SPLIT_X else "e")


def read_devices(dataset):
    """Receiver name -> (MAC, x, y, z) from cnf/tetam.dev."""
    text = open(os.path.join(dataset, "cnf", "tetam.dev")).read()
    line = next(l for l in text.splitlines() if l.startswith("Dongles:"))
    dongles = json.loads(line[len("Dongles:"):])
    return {v[2]: (mac, *v[0]) for mac, v in dongles.items()}


def points_of(folder):
    """(x, y, z) -> {sensor: path}, in file-name order of the points."""
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "sensor*_*.mbd"))):
        m = re.match(r"(sensor\d+)_([-\d.]+)_([-\d.]+)_([-\d.]+)\.mbd$", os.path.basename(path))
        if not m:
            sys.exit(f"{path}: not a sensor_<x>_<y>_<z>.mbd file")
        out.setdefault((float(m[2]), float(m[3]), float(m[4])), {})[m[1]] = path
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("out")
    ap.add_argument("--sets", default="set_1,set_2")
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--boundary-margin", type=float, default=0.5)
    a = ap.parse_args()
    if a.minutes <= 0 or a.every < 1 or a.boundary_margin < 0:
        sys.exit("--minutes must be positive, --every at least 1, --boundary-margin 0 or more")

    devices = read_devices(a.dataset)
    nodes = [{"name": name, "room": ZONE_OF_GROUP[name[len("sensor")]], "floor": 0,
              "x": x, "y": y, "z": z} for name, (_, x, y, z) in sorted(devices.items())]
    recorded = []   # (original start, set, (x, y, z), rows)
    for set_name in a.sets.split(","):
        points = list(points_of(os.path.join(a.dataset, "hst", set_name)).items())[::a.every]
        for (x, y, z), files in points:
            missing = sorted(set(devices) - set(files))
            if missing:
                sys.exit(f"{set_name} point ({x}, {y}): no file for {', '.join(missing)}")
            rows = []
            for sensor, path in files.items():
                for n, line in enumerate(open(path), 1):
                    f = line.strip().split(",")
                    if len(f) < 4:
                        sys.exit(f"{path}:{n}: expected time,receiver,beacon,rssi")
                    rssi = int(f[3])
                    if rssi >= 0:          # a receiver's placeholder, not a reception
                        continue
                    rows.append((float(f[0]), sensor, rssi))
            start = min(t for t, _, _ in rows)
            rows = sorted(r for r in rows if r[0] < start + a.minutes * 60)
            recorded.append((start, set_name, (x, y, z), rows))
    packets, truth, sessions = [], [], []
    clock = None
    for start, set_name, (x, y, z), rows in sorted(recorded, key=lambda r: r[0]):
        shift = 0.0 if clock is None else clock + GAP - start
        rows = [(round(t + shift, 6), node, rssi) for t, node, rssi in rows]
        t0, t1 = rows[0][0], rows[-1][0]
        clock = t1
        margin = min(abs(x - SPLIT_X), abs(y - SPLIT_Y))
        room = zone(x, y) if margin >= a.boundary_margin else None
        if room is not None:
            truth.append({"id": BEACON_ID, "t0": t0, "t1": t1, "room": room})
        sessions.append({"set": set_name, "x": x, "y": y, "z": z, "t0": t0, "t1": t1, "recorded_at": start,
                         "shift": shift, "zone": room, "metres_from_split": round(margin, 2), "packets": len(rows)})
        packets += rows
    t0 = packets[0][0]
    os.makedirs(a.out, exist_ok=True)
    layout = {
        "rooms": [{"name": "q_sw", "floor": 0, "rect": [0.0, 0.0, SPLIT_X, SPLIT_Y]},
                  {"name": "q_se", "floor": 0, "rect": [SPLIT_X, 0.0, WIDTH, SPLIT_Y]},
                  {"name": "q_nw", "floor": 0, "rect": [0.0, SPLIT_Y, SPLIT_X, DEPTH]},
                  {"name": "q_ne", "floor": 0, "rect": [SPLIT_X, SPLIT_Y, WIDTH, DEPTH]}],
        "nodes": nodes, "t0": t0, "duration": packets[-1][0] - t0}
    json.dump(layout, open(os.path.join(a.out, "layout.json"), "w"), indent=1)
    json.dump([{"id": BEACON_ID, "name": "danis-beacon1", "kind": "ibeacon", "measured_power": MEASURED_POWER,
                "interval": 0.5, "mobile": False}], open(os.path.join(a.out, "beacons.json"), "w"), indent=1)
    with open(os.path.join(a.out, "truth.jsonl"), "w") as f:
        for span in truth:
            f.write(json.dumps(span) + "\n")
    with gzip.GzipFile(os.path.join(a.out, "raw.jsonl.gz"), "wb", mtime=0) as f:
        for t, node, rssi in packets:
            f.write((json.dumps({"t": t, "node": node, "id": BEACON_ID, "rssi": rssi}) + "\n").encode())
    source = {
        "dataset": "Danis et al., Position Annotated BLE RSSI Dataset (TETAM office, 12 sensors), stationary reference points (hst/)",
        "origin": "philotuxo/Position-Annotated-BLE-RSSI-Dataset",
        "licence": "CC0 1.0",
        "attribution": "F. S. Danis, A. T. Naskali, A. T. Cemgil, C. Ersoy, Pervasive and Mobile Computing 81 (2022). Converted (not endorsed) by us.",
        "converted_by": "scripts/import-danis-still.py " + " ".join(sys.argv[3:]),
        "rooms_note": "danis-office's four quadrant zones; a point within boundary_margin of a split line has no truth",
        "boundary_margin": a.boundary_margin, "minutes_per_point": a.minutes, "every": a.every,
        "sessions": sessions}
    json.dump(source, open(os.path.join(a.out, "source.json"), "w"), indent=1)
    scored = sum(1 for s in sessions if s["zone"])
    print(f"wrote {a.out}: {len(sessions)} points ({scored} with a zone), {len(packets)} packets, "
          f"{sum(s['t1'] - s['t0'] for s in sessions) / 3600:.1f} h; now run: roomcast-sim capture --scenario {a.out}")


if __name__ == "__main__":
    main()
