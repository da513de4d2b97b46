/// The dashboard's page, style and script, served from the binary (no CDN, no framework): a
/// floor plan drawn from the room polygons when the site has them (one floor at a time), else a
/// board of rooms; nodes with their status; beacons in their rooms or at their estimated
/// positions, with the decision's explanation on hover or tap. Updates arrive by Server-Sent
/// Events from `/events`; the browser's EventSource reconnects by itself.
///
/// Every name shown comes from the config or the network, so the script builds the page with
/// `textContent` and attributes only, never HTML from data.
enum DashboardAssets {
    /// A tight policy: only our own script and style; the page never loads anything else.
    static let pageHeaders: [(name: String, value: String)] = [
        ("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:"),
        ("Cache-Control", "no-cache"), ("X-Content-Type-Options", "nosniff"),
    ]

    static let html = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Roomcast</title>
    <link rel="stylesheet" href="/dashboard.css">
    <script src="/dashboard.js" defer></script>
    </head>
    <body data-connected="false" data-updates="0">
    <header>
      <h1>Roomcast</h1>
      <span id="status" class="status">connecting…</span>
      <nav id="floors" aria-label="Floors"></nav>
    </header>
    <noscript><p class="note">The live map needs JavaScript; <a href="/api/state">/api/state</a> has the same data as JSON.</p></noscript>
    <main>
      <section id="view" aria-label="Rooms">
        <svg id="plan" role="group" aria-label="Floor plan" hidden></svg>
        <div id="board" hidden></div>
        <div id="away" class="away"></div>
      </section>
      <aside>
        <section id="details" class="card"><h2>Details</h2><p class="hint">Tap a beacon to see why it is where it is.</p></section>
        <section class="card"><h2>Nodes</h2><table id="nodes"><thead><tr><th>node</th><th>room</th><th>status</th><th>last seen</th><th>readings/s</th></tr></thead><tbody></tbody></table></section>
        <section class="card"><h2>Recent moves</h2><ol id="moves" aria-live="polite"></ol></section>
      </aside>
    </main>
    </body>
    </html>
    """#

    static let style = #"""
    :root { --bg: #f6f7f9; --fg: #1d2330; --muted: #6b7280; --card: #fff; --line: #d8dce3; --room: #eef3fb;
            --accent: #2563eb; --ok: #16a34a; --warn: #d97706; --bad: #dc2626; }
    @media (prefers-color-scheme: dark) {
      :root { --bg: #11141a; --fg: #e5e7eb; --muted: #9ca3af; --card: #1a1f29; --line: #2f3644; --room: #1c2535; --accent: #60a5fa; }
    }
    * { box-sizing: border-box; }
    body { margin: 0; font: 15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
    header { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: var(--card); }
    h1 { font-size: 1.15rem; margin: 0; }
    h2 { font-size: .95rem; margin: 0 0 .5rem; color: var(--muted); font-weight: 600; text-transform: uppercase; letter-spacing: .04em; }
    .status { font-size: .85rem; color: var(--muted); }
    body[data-connected="true"] .status { color: var(--ok); }
    nav button { font: inherit; border: 1px solid var(--line); background: var(--bg); color: var(--fg); border-radius: 999px; padding: .2rem .8rem; cursor: pointer; }
    nav button[aria-pressed="true"] { background: var(--accent); border-color: var(--accent); color: #fff; }
    main { display: grid; grid-template-columns: minmax(0, 2fr) minmax(280px, 1fr); gap: 1rem; padding: 1rem; }
    @media (max-width: 760px) { main { grid-template-columns: 1fr; padding: .5rem; } }
    .card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: .8rem; margin-bottom: 1rem; }
    #plan { width: 100%; height: auto; max-height: 75vh; background: var(--card); border: 1px solid var(--line); border-radius: 10px; touch-action: manipulation; }
    .room polygon { fill: var(--room); stroke: var(--muted); stroke-width: .05; }
    .room.occupied polygon { fill: color-mix(in srgb, var(--accent) 14%, var(--room)); }
    .room text { font-size: .38px; fill: var(--muted); text-anchor: middle; pointer-events: none; }
    line.doorway { stroke: var(--room); stroke-width: .12; stroke-linecap: butt; }
    .node circle { stroke: var(--card); stroke-width: .06; }
    .node[data-status="online"] circle { fill: var(--ok); }
    .node[data-status="silent"] circle { fill: var(--warn); }
    .node[data-status="offline"] circle, .node[data-status="unknown"] circle { fill: var(--bad); }
    .node text { font-size: .28px; fill: var(--fg); pointer-events: none; }
    .beacon { cursor: pointer; transition: transform .8s ease; }
    .beacon circle { fill: var(--accent); stroke: var(--card); stroke-width: .06; }
    .beacon.selected circle { stroke: var(--fg); stroke-width: .1; }
    .beacon text { font-size: .3px; fill: var(--fg); font-weight: 600; pointer-events: none; }
    #board { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: .7rem; }
    .room-card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: .7rem; min-height: 5rem; }
    .room-card h3 { margin: 0 0 .4rem; font-size: 1rem; }
    .chip { display: inline-block; margin: .15rem; padding: .2rem .6rem; border-radius: 999px; background: var(--accent); color: #fff; font-size: .85rem; cursor: pointer; border: 0; font: inherit; }
    .chip.selected { outline: 2px solid var(--fg); }
    .away { margin-top: .7rem; color: var(--muted); }
    .away .chip { background: var(--muted); }
    table { width: 100%; border-collapse: collapse; font-size: .85rem; }
    th, td { text-align: left; padding: .25rem .3rem; border-bottom: 1px solid var(--line); }
    td.status-online { color: var(--ok); } td.status-silent { color: var(--warn); } td.status-offline, td.status-unknown { color: var(--bad); }
    dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem .8rem; margin: 0 0 .6rem; }
    dt { color: var(--muted); } dd { margin: 0; }
    #moves { margin: 0; padding-left: 1.2rem; font-size: .85rem; max-height: 14rem; overflow: auto; }
    .hint, .note { color: var(--muted); }
    """#

    static let script = #"""
    "use strict";
    (() => {
      const svgNS = "http://www.w3.org/2000/svg";
      const $ = (id) => document.getElementById(id);
      // `#floor=1` opens that floor (a link per floor for a phone on each landing).
      const hashFloor = /floor=(-?\d+)/.exec(location.hash);
      let snap = null, prev = null, floor = hashFloor ? Number(hashFloor[1]) : null, selected = null, updates = 0;
      // The newest snapshot's `seq` on this connection; a new connection (the aggregator may have
      // restarted and counts from 1 again) takes whatever comes first.
      let lastSeq = null;
      const lastRoom = new Map();

      function el(tag, attrs, text, ns) {
        const e = ns ? document.createElementNS(svgNS, tag) : document.createElement(tag);
        for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
        if (text !== undefined) e.textContent = text;
        return e;
      }
      const ago = (t) => t ? Math.max(0, Math.round(snap.ts - t)) + " s ago" : "never";
      const label = (b) => b.name || b.id;
      const roomsOn = (f) => snap.rooms.filter((r) => r.floor === f);
      const roomByName = () => new Map(snap.rooms.map((r) => [r.name, r]));
      // Shown by the names people read (display names); keyed everywhere by the ids.
      const roomTitle = (name) => { const r = name != null && snap.rooms.find((r) => r.name === name); return (r && r.title) || name; };
      const nodeTitle = (name) => { const n = snap.nodes.find((n) => n.name === name); return (n && n.title) || name; };
      const hasGeometry = () => snap.rooms.some((r) => r.polygon && r.polygon.length >= 3);

      // Where a line across the polygon is inside it: the [from, to] stretches, along x at height
      // `at` (axis 0) or along y at `at` (axis 1). Half-open crossings, so a vertex counts once.
      function spans(poly, axis, at) {
        const other = 1 - axis, cuts = [];
        for (let i = 0; i < poly.length; i++) {
          const a = poly[i], b = poly[(i + 1) % poly.length];
          if ((a[other] <= at) !== (b[other] <= at)) cuts.push(a[axis] + (at - a[other]) / (b[other] - a[other]) * (b[axis] - a[axis]));
        }
        cuts.sort((p, q) => p - q);
        const out = [];
        for (let i = 0; i + 1 < cuts.length; i += 2) out.push([cuts[i], cuts[i + 1]]);
        return out;
      }

      // A point inside the room for its name and its unplaced beacons, with the room's width and
      // height through it. The corners' mean lies outside an L-shaped room (in the room in its
      // notch), so: the widest stretch across the room at the height of its area's centre, then
      // the middle of the stretch up and down through that.
      function anchor(poly) {
        let area = 0, cx = 0, cy = 0;
        for (let i = 0; i < poly.length; i++) {
          const a = poly[i], b = poly[(i + 1) % poly.length], cross = a[0] * b[1] - b[0] * a[1];
          area += cross; cx += (a[0] + b[0]) * cross; cy += (a[1] + b[1]) * cross;
        }
        const ys = poly.map((p) => p[1]);
        const y0 = Math.abs(area) > 1e-9 ? cy / (3 * area) : (Math.min(...ys) + Math.max(...ys)) / 2;
        const widest = (list) => list.reduce((best, s) => (s[1] - s[0] > best[1] - best[0] ? s : best), [0, 0]);
        const across = widest(spans(poly, 0, y0));
        if (!(across[1] > across[0])) {
          // No area to be inside (every corner on one line): the corners' mean, within the drawing.
          const xs = poly.map((p) => p[0]);
          return { x: xs.reduce((a, b) => a + b, 0) / poly.length, y: ys.reduce((a, b) => a + b, 0) / poly.length,
                   w: Math.max(...xs) - Math.min(...xs), h: Math.max(...ys) - Math.min(...ys) };
        }
        const x = (across[0] + across[1]) / 2;
        const up = spans(poly, 1, x).find((s) => s[0] <= y0 && y0 <= s[1]) || [y0, y0];
        const y = (up[0] + up[1]) / 2;
        const width = widest(spans(poly, 0, y).filter((s) => s[0] <= x && x <= s[1]));
        return { x, y, w: width[1] - width[0], h: up[1] - up[0] };
      }

      function renderFloors() {
        // Room-less nodes' floors too: a Pi on a landing above every room is drawn on a plan of its own.
        const floors = [...new Set(snap.rooms.map((r) => r.floor)
          .concat(snap.nodes.filter((n) => n.room == null && n.position && n.floor != null).map((n) => n.floor)))].sort((a, b) => a - b);
        if (floor === null || !floors.includes(floor)) floor = floors.length ? floors[0] : 0;
        const nav = $("floors");
        nav.replaceChildren();
        if (floors.length < 2) return;
        for (const f of floors) {
          const b = el("button", { type: "button", "aria-pressed": f === floor, "data-floor": f }, "Floor " + f);
          b.addEventListener("click", () => { floor = f; history.replaceState(null, "", "#floor=" + f); render(); });
          nav.append(b);
        }
      }

      function renderPlan() {
        const svg = $("plan");
        const rooms = roomsOn(floor).filter((r) => r.polygon && r.polygon.length >= 3);
        const names = new Set(rooms.map((r) => r.name));
        const points = rooms.flatMap((r) => r.polygon);
        // A node without a room on the floor its height puts it on.
        const nodes = snap.nodes.filter((n) => n.position && (names.has(n.room) || (n.room == null && n.floor === floor)));
        for (const n of nodes) points.push(n.position);
        if (!points.length) { svg.hidden = true; return; }
        const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
        // Labels are drawn to the right of their marker: room on that side for a node on the east wall.
        const minX = Math.min(...xs) - 0.6, maxX = Math.max(...xs) + 1.8, minY = Math.min(...ys) - 0.6, maxY = Math.max(...ys) + 0.6;
        // y grows upwards in the site's coordinates, downwards on screen.
        const sx = (x) => x - minX, sy = (y) => maxY - y;
        svg.setAttribute("viewBox", `0 0 ${(maxX - minX).toFixed(2)} ${(maxY - minY).toFixed(2)}`);
        svg.replaceChildren();
        svg.hidden = false;
        const occupied = new Set(snap.beacons.map((b) => b.room));
        for (const r of rooms) {
          const g = el("g", { class: "room" + (occupied.has(r.name) ? " occupied" : ""), "data-room": r.name }, undefined, true);
          g.append(el("polygon", { points: r.polygon.map((p) => `${sx(p[0])},${sy(p[1])}`).join(" ") }, undefined, true));
          const c = anchor(r.polygon);
          g.append(el("text", { x: sx(c.x), y: sy(c.y) }, r.title || r.name, true));
          svg.append(g);
        }
        // Doorways over every room's walls: a gap in the outline where the wall is open.
        for (const r of rooms) {
          for (const d of r.doorways || []) {
            if (d.length !== 2) continue;
            svg.append(el("line", { class: "doorway", "data-doorway": r.name, x1: sx(d[0][0]), y1: sy(d[0][1]),
                                    x2: sx(d[1][0]), y2: sy(d[1][1]) }, undefined, true));
          }
        }
        for (const n of nodes) {
          const g = el("g", { class: "node", "data-node": n.name, "data-status": n.status }, undefined, true);
          g.append(el("title", {}, `${n.title || n.name}: ${n.status}, last seen ${ago(n.last_seen)}, ${rate(n)} readings/s`, true));
          g.append(el("circle", { cx: sx(n.position[0]), cy: sy(n.position[1]), r: 0.18 }, undefined, true));
          g.append(el("text", { x: sx(n.position[0]) + 0.25, y: sy(n.position[1]) + 0.1 }, n.title || n.name, true));
          svg.append(g);
        }
        const byRoom = roomByName();
        // Beacons without a position are spread over their room, a sunflower round a point below
        // its name: 0.54 m apart while they fit, smaller and unlabelled when a room holds many.
        const unplaced = new Map();
        for (const b of snap.beacons) {
          if (!(b.position && b.position.length >= 2) && b.room) unplaced.set(b.room, (unplaced.get(b.room) || 0) + 1);
        }
        const slot = new Map();
        for (const b of snap.beacons) {
          const r = b.room && byRoom.get(b.room);
          if (!r || r.floor !== floor) continue;
          let x, y, size = 0.22, labelled = true;
          if (b.position && b.position.length >= 2) {
            // An estimate beyond the drawing (a room with no node near it) stays in view, at its edge.
            x = Math.min(Math.max(b.position[0], minX + 0.3), maxX - 0.3);
            y = Math.min(Math.max(b.position[1], minY + 0.3), maxY - 0.3);
          } else if (r.polygon) {
            const n = unplaced.get(r.name), k = slot.get(r.name) || 0;
            slot.set(r.name, k + 1);
            const c = anchor(r.polygon), w = c.w, h = c.h;
            const below = Math.min(0.5, 0.15 * h);
            const reach = Math.max(0.3, 0.45 * Math.min(w, h) - below);
            const spread = Math.min(0.36 * Math.sqrt(n), reach);
            // Neighbours in such a spread are 1.5 · spread / √n apart.
            size = Math.min(0.22, 0.6 * spread / Math.sqrt(n));
            labelled = n <= 6;
            const d = spread * Math.sqrt((k + 0.5) / n), a = k * 2.39996;
            x = c.x + d * Math.cos(a); y = c.y - below + d * Math.sin(a);
          } else continue;
          const g = el("g", { class: "beacon" + (selected === b.id ? " selected" : ""), "data-beacon": b.id, "data-room": b.room,
                              tabindex: 0, role: "button", "aria-label": `${label(b)} in ${roomTitle(b.room)}`, transform: `translate(${sx(x).toFixed(3)} ${sy(y).toFixed(3)})` }, undefined, true);
          g.append(el("title", {}, `${label(b)} in ${roomTitle(b.room)} (${Math.round(b.confidence * 100)} %)`, true));
          g.append(el("circle", { cx: 0, cy: 0, r: size.toFixed(3) }, undefined, true));
          if (labelled) g.append(el("text", { x: 0.3, y: -0.2 }, label(b), true));
          hook(g, b.id);
          svg.append(g);
        }
      }

      function chip(b) {
        const c = el("button", { type: "button", class: "chip beacon" + (selected === b.id ? " selected" : ""), "data-beacon": b.id,
                                 "data-room": b.room || "" }, label(b));
        hook(c, b.id);
        return c;
      }

      // The rooms as cards: every room of the floor, or beside a plan those it cannot draw (no
      // polygon: a garden with a node, a room fusion made of a node the site does not list).
      function renderBoard(rooms) {
        const board = $("board");
        board.replaceChildren();
        board.hidden = rooms.length === 0;
        for (const r of rooms) {
          const card = el("section", { class: "room-card room", "data-room": r.name });
          card.append(el("h3", {}, r.title || r.name));
          for (const b of snap.beacons.filter((b) => b.room === r.name)) card.append(chip(b));
          board.append(card);
        }
      }

      function renderAway() {
        const away = $("away");
        away.replaceChildren();
        const list = snap.beacons.filter((b) => b.room == null);
        if (!list.length) return;
        away.append(el("span", {}, "Away: "));
        for (const b of list) away.append(chip(b));
      }

      function rate(n) {
        const p = prev && prev.nodes.find((m) => m.name === n.name);
        // After an aggregator restart its count starts again from 0: no rate from that pair.
        if (!p || snap.ts <= prev.ts || n.readings < p.readings) return "–";
        return ((n.readings - p.readings) / (snap.ts - prev.ts)).toFixed(1);
      }

      function renderNodes() {
        const body = $("nodes").tBodies[0];
        body.replaceChildren();
        for (const n of snap.nodes) {
          const tr = el("tr", { class: "node-row", "data-node": n.name, "data-status": n.status });
          tr.append(el("td", {}, n.title || n.name), el("td", {}, n.room ? roomTitle(n.room) : "–"), el("td", { class: "status-" + n.status },
                    n.status + (n.clock_offset_s != null ? ` (clock ${n.clock_offset_s.toFixed(0)} s off)` : "")),
                    el("td", {}, ago(n.last_seen)), el("td", {}, rate(n)));
          body.append(tr);
        }
      }

      function renderDetails() {
        const box = $("details");
        const b = snap.beacons.find((b) => b.id === selected);
        if (!b) { box.replaceChildren(el("h2", {}, "Details"), el("p", { class: "hint" }, "Tap a beacon to see why it is where it is.")); return; }
        box.replaceChildren(el("h2", {}, label(b)));
        const dl = el("dl", { "data-beacon": b.id });
        const row = (k, v) => { if (v !== undefined && v !== null) dl.append(el("dt", {}, k), el("dd", {}, String(v))); };
        row("id", b.id);
        row("room", b.room ? roomTitle(b.room) : "away");
        row("last room", !b.room && b.last_room ? roomTitle(b.last_room) : null);
        row("confidence", Math.round(b.confidence * 100) + " %");
        row("since", ago(b.since));
        row("reason", b.reason);
        row("runner-up", b.runner_up ? roomTitle(b.runner_up) : null);
        row("margin", b.margin != null ? b.margin.toFixed(2) : null);
        row("position", b.position ? b.position.map((v) => v.toFixed(1)).join(", ") + " m" : null);
        box.append(dl);
        if (b.evidence && b.evidence.length) {
          const t = el("table", { class: "evidence" });
          t.append(el("thead")).append(el("tr"));
          for (const h of ["node", "room", "rssi", "distance", "age"]) t.tHead.rows[0].append(el("th", {}, h));
          const body = el("tbody");
          for (const e of b.evidence) {
            const tr = el("tr", { "data-node": e.node });
            tr.append(el("td", {}, nodeTitle(e.node)), el("td", {}, e.room ? roomTitle(e.room) : "–"), el("td", {}, e.rssi.toFixed(0) + " dBm"),
                      el("td", {}, e.distance != null ? e.distance.toFixed(1) + " m" : "–"), el("td", {}, ago(e.ts)));
            body.append(tr);
          }
          t.append(body);
          box.append(t);
        }
      }

      function hook(e, id) {
        // Only a new selection redraws: a redraw replaces the element under a resting pointer,
        // the browser reports the pointer entering the new one, and the page redrew nonstop.
        const pick = () => { if (selected === id) return; selected = id; render(); };
        e.addEventListener("click", pick);
        e.addEventListener("mouseenter", pick);
        e.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") pick(); });
      }

      function noteMoves() {
        const moves = $("moves");
        for (const b of snap.beacons) {
          const before = lastRoom.get(b.id);
          if (before !== undefined && before !== b.room) {
            // Latency: from the aggregator's decision to this page showing it (one clock when on one host).
            const latency = Math.round(Date.now() - b.ts * 1000);
            const li = el("li", { class: "move", "data-beacon": b.id, "data-from": before || "", "data-room": b.room || "",
                                  "data-latency-ms": latency }, `${label(b)}: ${before ? roomTitle(before) : "away"} → ${b.room ? roomTitle(b.room) : "away"}`);
            moves.prepend(li);
            while (moves.children.length > 30) moves.lastChild.remove();
          }
          lastRoom.set(b.id, b.room);
        }
        // A beacon the aggregator forgot leaves the page's memory too (a tablet left on for weeks).
        const present = new Set(snap.beacons.map((b) => b.id));
        for (const id of lastRoom.keys()) if (!present.has(id)) lastRoom.delete(id);
      }

      // Each update redraws the page; the control that had the keyboard's focus (a beacon, a floor)
      // is focused again in its new drawing, or a keyboard user is thrown back to the top every second.
      function focusKey() {
        const e = document.activeElement;
        if (!e || !e.dataset) return null;
        if (e.dataset.beacon !== undefined) return `[data-beacon="${CSS.escape(e.dataset.beacon)}"].${e.tagName === "BUTTON" ? "chip" : "beacon:not(.chip)"}`;
        if (e.dataset.floor !== undefined) return `#floors button[data-floor="${CSS.escape(e.dataset.floor)}"]`;
        return null;
      }

      function render() {
        if (!snap) return;
        const focused = focusKey();
        draw();
        if (focused) { const e = document.querySelector(focused); if (e) e.focus({ preventScroll: true }); }
      }

      function draw() {
        renderFloors();
        if (hasGeometry()) {
          renderPlan();
          renderBoard(roomsOn(floor).filter((r) => !(r.polygon && r.polygon.length >= 3)));
        } else {
          $("plan").hidden = true;
          renderBoard(roomsOn(floor));
        }
        renderAway();
        renderNodes();
        renderDetails();
      }

      function connect() {
        const source = new EventSource("/events");
        source.addEventListener("open", () => { lastSeq = null; });
        source.addEventListener("state", (e) => {
          const next = JSON.parse(e.data);
          // One built before the state this page already shows (it was queued while the first
          // was being made): showing it would undo a move, and list it twice in Recent moves.
          if (next.seq != null && lastSeq != null && next.seq <= lastSeq) return;
          if (next.seq != null) lastSeq = next.seq;
          prev = snap;
          snap = next;
          updates += 1;
          document.body.dataset.updates = String(updates);
          document.body.dataset.connected = "true";
          $("status").textContent = (snap.active ? "live" : "standby") + (snap.connected ? "" : " — broker unreachable");
          noteMoves();
          render();
        });
        source.addEventListener("error", () => {
          document.body.dataset.connected = "false";
          $("status").textContent = "reconnecting…";
          // A dropped stream is retried by the browser; one refused (503 when every stream slot
          // is taken, 401) is closed for good: open a new one a little later.
          if (source.readyState === EventSource.CLOSED) setTimeout(connect, 3000);
        });
      }
      connect();
    })();
    """#
}
