import Shared
import Foundation

/// The site rasterised for position estimation: a grid of cells inside the room
/// polygons, and per positioned node and cell the expected path loss (log-distance
/// plus walls and floors crossed) and its uncertainty.
///
/// Built once from the site; read-only afterwards apart from reusable scratch
/// space, so an evaluation allocates nothing.
struct SiteGeometry {
    /// Cells of one floor's wall raster at most (16 MB of room ids).
    static let maximumRasterCells = 4_000_000.0

    /// One positioned node as the geometry sees it.
    struct PlacedNode {
        var engineIndex: Int
        var x: Double, y: Double, z: Double
        var floor: Int
    }

    /// A room outline on a floor, with the engine's room index and its space: walls stand
    /// between spaces, so the zones of one open plan share one (a room with walls is a space
    /// of its own, its room index). Its doorways are the stretches of its walls that are
    /// open (`rooms[].doorways`).
    struct Outline {
        var room: Int
        var space: Int
        var floor: Int
        var points: [(x: Double, y: Double)]
        var doorways: [Doorway] = []

        func contains(_ px: Double, _ py: Double) -> Bool {
            PlanGeometry.contains(x: px, y: py, count: points.count) { points[$0] }
        }

        /// Empty (from +∞ to −∞) for an outline without points.
        var bounds: (x0: Double, y0: Double, x1: Double, y1: Double) {
            PlanGeometry.bounds(count: points.count) { points[$0] } ?? (.infinity, .infinity, -.infinity, -.infinity)
        }

        /// A point inside the outline, nearest the middle of its bounds of a 16 × 16 sample
        /// (an L-shaped room's middle may be outside it); nil for an outline with no inside.
        func interiorPoint() -> (x: Double, y: Double)? {
            let b = bounds
            let mid = (x: (b.x0 + b.x1) / 2, y: (b.y0 + b.y1) / 2)
            if contains(mid.x, mid.y) { return mid }
            var best: (x: Double, y: Double)?, bestDistance = Double.infinity
            for i in 0..<16 {
                for j in 0..<16 {
                    let x = b.x0 + (Double(i) + 0.5) / 16 * (b.x1 - b.x0), y = b.y0 + (Double(j) + 0.5) / 16 * (b.y1 - b.y0)
                    let d = (x - mid.x) * (x - mid.x) + (y - mid.y) * (y - mid.y)
                    if d < bestDistance, contains(x, y) { best = (x, y); bestDistance = d }
                }
            }
            return best
        }
    }

    let resolution: Double
    let cellCount: Int
    let cellX: [Double], cellY: [Double], cellZ: [Double]
    let cellRoom: [Int]
    let cellXf: [Float], cellYf: [Float], cellZf: [Float]
    /// Per column: rooms with a cell within `geometry_radius` of the node — the only
    /// rooms evaluated when that node hears the beacon best (bounds the cost on large sites).
    let roomsNear: [[Int]]
    /// Cells are grouped by room: room r owns `roomStart[r] ..< roomEnd[r]`.
    let roomStart: [Int], roomEnd: [Int]
    /// Geometry column of each engine node index, or -1 when it has no position.
    let columnOfNode: [Int]
    let placed: [PlacedNode]
    /// Per column, per cell (column-major: `col * cellCount + cell`).
    let pathLoss: [Float]
    let weight: [Float]
    let logWeight: [Float]
    /// Expected loss between two positioned nodes (`from * placed.count + to`).
    let linkModels: [LinkModel]

    /// Path loss and its uncertainty on one node-to-node link.
    struct LinkModel {
        var loss: Double
        var sigma: Double
    }

    /// The wall- and floor-aware path loss between two points (dB, positive) and its
    /// uncertainty: log-distance (3-D, at least 0.3 m), walls counted on `from`'s floor
    /// raster when both are on one floor.
    static func model(from a: PlacedNode, to b: PlacedNode, rasters: [Int: FloorRaster],
                      settings: FusionSettings, model: FusionModel) -> (loss: Double, sigma: Double) {
        let dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z
        let d = max((dx * dx + dy * dy + dz * dz).squareRoot(), 0.3)
        let floors = abs(b.floor - a.floor)
        var walls = 0
        if floors == 0, let raster = rasters[a.floor] {
            walls = raster.walls(fromX: a.x, fromY: a.y, toX: b.x, toY: b.y)
        }
        let loss = 10 * settings.pathLossExponent * log10(d) + settings.wallLoss * Double(walls)
            + settings.floorLoss * Double(floors)
        return (loss, model.rssiSigma + model.wallSigma * Double(walls + floors))
    }

    /// The model of the link from the node in column `from` to the one in column `to`.
    func link(from: Int, to: Int) -> LinkModel { linkModels[from * placed.count + to] }

    // Scratch, reused by every evaluation.
    var sumW: [Float]
    var sumWR: [Float]
    var sumWRR: [Float]
    var sumLogW: [Float]
    var cellLL: [Float]

    /// Builds the grid. Returns nil when there is nothing to estimate over (no
    /// polygons, or fewer than two positioned nodes).
    init?(outlines: [Outline], roomCount: Int, nodes: [PlacedNode], nodeCount: Int, settings: FusionSettings, model: FusionModel) {
        guard !outlines.isEmpty, nodes.count >= 2 else { return nil }
        // Choose a resolution that keeps the grid within max_cells.
        var res = model.gridResolution
        var area = 0.0
        for o in outlines {
            let b = o.bounds
            area += max(0, b.x1 - b.x0) * max(0, b.y1 - b.y0)
        }
        if area / (res * res) > Double(model.maxCells) {
            res = (area / Double(model.maxCells)).squareRoot()
        }
        // The wall raster (at half the resolution) and the cell lattice span each floor's
        // bounding box, not its rooms: two small rooms kilometres apart (a typo in a
        // coordinate) would ask for billions of cells. The box bounds the resolution too.
        var boxes: [Int: (x0: Double, y0: Double, x1: Double, y1: Double)] = [:]
        for o in outlines {
            let b = o.bounds
            let box = boxes[o.floor] ?? (b.x0, b.y0, b.x1, b.y1)
            boxes[o.floor] = (min(box.x0, b.x0), min(box.y0, b.y0), max(box.x1, b.x1), max(box.y1, b.y1))
        }
        for box in boxes.values {
            let spanned = max(box.x1 - box.x0, 1) * max(box.y1 - box.y0, 1)
            res = max(res, 2 * (spanned / Self.maximumRasterCells).squareRoot())
        }
        resolution = res

        // Cells, grouped by room; cell centres on a grid anchored at the origin so
        // neighbouring rooms share one lattice.
        var cx: [Double] = [], cy: [Double] = [], cz: [Double] = [], cr: [Int] = []
        var start = [Int](repeating: 0, count: roomCount), end = [Int](repeating: 0, count: roomCount)
        for r in 0..<roomCount {
            start[r] = cx.count
            for o in outlines where o.room == r {
                let b = o.bounds
                var i = Int((b.x0 / res).rounded(.down))
                while (Double(i) + 0.5) * res <= b.x1 {
                    let x = (Double(i) + 0.5) * res
                    var j = Int((b.y0 / res).rounded(.down))
                    while (Double(j) + 0.5) * res <= b.y1 {
                        let y = (Double(j) + 0.5) * res
                        if x >= b.x0, y >= b.y0, o.contains(x, y) {
                            cx.append(x); cy.append(y)
                            cz.append(Double(o.floor) * model.floorHeight + model.beaconHeight)
                            cr.append(r)
                        }
                        j += 1
                    }
                    i += 1
                }
            }
            // A room narrower than the lattice's step (a closet or a hall on a site whose
            // garden coarsens the grid) gets no centre, and a room with no cell could never be
            // shown. It gets one cell, at a point inside it.
            if cx.count == start[r], let o = outlines.first(where: { $0.room == r }), let p = o.interiorPoint() {
                cx.append(p.x); cy.append(p.y)
                cz.append(Double(o.floor) * model.floorHeight + model.beaconHeight)
                cr.append(r)
            }
            end[r] = cx.count
        }
        guard !cx.isEmpty else { return nil }
        cellCount = cx.count
        cellX = cx; cellY = cy; cellZ = cz; cellRoom = cr
        let floors = cz.map { Int((($0 - model.beaconHeight) / model.floorHeight).rounded()) }
        cellXf = cx.map(Float.init); cellYf = cy.map(Float.init); cellZf = cz.map(Float.init)
        var near: [[Int]] = []
        for node in nodes {
            var list: [Int] = []
            for r in 0..<roomCount where start[r] < end[r] {
                let radius2 = model.geometryRadius * model.geometryRadius
                if (start[r]..<end[r]).contains(where: { c in
                    let dx = cx[c] - node.x, dy = cy[c] - node.y, dz = cz[c] - node.z
                    return dx * dx + dy * dy + dz * dz <= radius2
                }) { list.append(r) }
            }
            near.append(list)
        }
        roomsNear = near
        roomStart = start; roomEnd = end

        var columns = [Int](repeating: -1, count: nodeCount)
        for (col, n) in nodes.enumerated() where n.engineIndex < nodeCount { columns[n.engineIndex] = col }
        columnOfNode = columns
        placed = nodes

        // Wall counting walks the segment node→cell over a fine raster of room ids.
        let rasters = FloorRaster.build(outlines: outlines, resolution: res / 2)
        var pl = [Float](repeating: 0, count: nodes.count * cellCount)
        var w = pl, lw = pl
        for (col, node) in nodes.enumerated() {
            for c in 0..<cellCount {
                let cell = PlacedNode(engineIndex: -1, x: cx[c], y: cy[c], z: cz[c], floor: floors[c])
                let link = Self.model(from: node, to: cell, rasters: rasters, settings: settings, model: model)
                let wt = 1 / (link.sigma * link.sigma)
                pl[col * cellCount + c] = Float(-link.loss)
                w[col * cellCount + c] = Float(wt)
                lw[col * cellCount + c] = Float(log(wt))
            }
        }
        pathLoss = pl; weight = w; logWeight = lw
        // Node to node, for calibration from the nodes' own beacons: the transmitter at
        // its own height, not a beacon's.
        var links = [LinkModel](repeating: LinkModel(loss: 0, sigma: 0), count: nodes.count * nodes.count)
        for (a, tx) in nodes.enumerated() {
            for (b, rx) in nodes.enumerated() where a != b {
                let link = Self.model(from: tx, to: rx, rasters: rasters, settings: settings, model: model)
                links[a * nodes.count + b] = LinkModel(loss: link.loss, sigma: link.sigma)
            }
        }
        linkModels = links
        sumW = [Float](repeating: 0, count: cellCount)
        sumWR = sumW; sumWRR = sumW; sumLogW = sumW; cellLL = sumW
    }

    /// Log-likelihood of the cells of `rooms` given per-column measurements `m` (RSSI
    /// minus the beacon's 1 m power), with the beacon's true power offset profiled out
    /// under a Gaussian prior of `powerSigma`, and the columns `unheard` that hear nothing,
    /// each below its floor (on the measurements' scale). Fills `cellLL` for those cells;
    /// returns the best cell.
    @discardableResult
    mutating func cellLikelihood(columns: UnsafeBufferPointer<Int>, measurements: UnsafeBufferPointer<Double>,
                                 unheard: UnsafeBufferPointer<Int> = UnsafeBufferPointer(start: nil, count: 0),
                                 floors: UnsafeBufferPointer<Double> = UnsafeBufferPointer(start: nil, count: 0),
                                 powerSigma: Double, rooms: [Int]) -> Int {
        let count = cellCount
        let prior = Float(1 / (powerSigma * powerSigma))
        var best = -1
        var bestLL = -Float.infinity
        let starts = roomStart, ends = roomEnd
        sumW.withUnsafeMutableBufferPointer { sw in
        sumWR.withUnsafeMutableBufferPointer { swr in
        sumWRR.withUnsafeMutableBufferPointer { swrr in
        sumLogW.withUnsafeMutableBufferPointer { slw in
        cellLL.withUnsafeMutableBufferPointer { ll in
        pathLoss.withUnsafeBufferPointer { pl in
        weight.withUnsafeBufferPointer { wt in
        logWeight.withUnsafeBufferPointer { lw in
            for r in rooms {
                let lo = starts[r], hi = ends[r]
                for c in lo..<hi { sw[c] = prior; swr[c] = 0; swrr[c] = 0; slw[c] = 0 }
                for k in 0..<columns.count {
                    let base = columns[k] * count
                    let m = Float(measurements[k])
                    for c in lo..<hi {
                        let r = m - pl[base + c]
                        let w = wt[base + c]
                        sw[c] += w
                        swr[c] += w * r
                        swrr[c] += w * r * r
                        slw[c] += lw[base + c]
                    }
                }
                for c in lo..<hi {
                    // Σw(r-b)² + b²/σb² at the optimal offset b = Σwr / (Σw + 1/σb²).
                    let cost = swrr[c] - swr[c] * swr[c] / sw[c]
                    ll[c] = 0.5 * (slw[c] - cost)
                }
                // A node that does not hear the beacon: the level the cell gives it (at that
                // offset) lies below its floor. Scored by the Gaussian tail above the floor, as
                // a squared excess: a cell that would put the node that far above its floor is
                // as unlikely as one whose level there would be read that far off.
                for k in 0..<unheard.count {
                    let base = unheard[k] * count
                    let floor = Float(floors[k])
                    for c in lo..<hi {
                        let excess = swr[c] / sw[c] + pl[base + c] - floor
                        if excess > 0 { ll[c] -= 0.5 * wt[base + c] * excess * excess }
                    }
                }
                for c in lo..<hi where ll[c] > bestLL { bestLL = ll[c]; best = c }
            }
        }}}}}}}}
        return best
    }

    /// Log of the summed cell likelihood of each of `rooms` (after `cellLikelihood`),
    /// written into `out` (every other room gets `-.infinity`); also the
    /// likelihood-weighted mean position.
    func roomLikelihood(into out: inout [Double], bestCell: Int, rooms: [Int]) -> (x: Double, y: Double, z: Double) {
        for r in out.indices { out[r] = -.infinity }
        let peak = cellLL[bestCell]
        var sx: Float = 0, sy: Float = 0, sz: Float = 0, total: Float = 0
        cellLL.withUnsafeBufferPointer { ll in
            for r in rooms where r < out.count {
                let s = roomStart[r], e = roomEnd[r]
                if s == e { continue }
                var sum: Float = 0
                for c in s..<e {
                    let p = exp(ll[c] - peak)
                    sum += p
                    sx += p * cellXf[c]; sy += p * cellYf[c]; sz += p * cellZf[c]
                }
                total += sum
                // Averaged over the room's cells, not summed: every room starts equal, and a
                // big open plan next to a small room does not win a beacon on the wall between.
                out[r] = Double(peak) + log(Double(max(sum, .leastNormalMagnitude))) - log(Double(e - s))
            }
        }
        guard total > 0 else { return (cellX[bestCell], cellY[bestCell], cellZ[bestCell]) }
        return (Double(sx / total), Double(sy / total), Double(sz / total))
    }

    /// Rooms worth evaluating when `column` hears the beacon best.
    func rooms(near column: Int) -> [Int] { roomsNear[column] }

    /// Distance (metres, in plan) from (x, y) to the nearest cell of `room` on the floor at
    /// height `z`; infinity when the room has no cell there.
    func distance(fromX x: Double, y: Double, z: Double, toRoom room: Int) -> Double {
        guard room >= 0, room < roomStart.count else { return .infinity }
        var best = Double.infinity
        for c in roomStart[room]..<roomEnd[room] where abs(cellZ[c] - z) < 1.5 {
            let dx = cellX[c] - x, dy = cellY[c] - y
            best = min(best, dx * dx + dy * dy)
        }
        return best.squareRoot()
    }

    /// Expected RSSI minus 1 m power at `cell` for `column`.
    func expected(column: Int, cell: Int) -> Double { Double(pathLoss[column * cellCount + cell]) }
}
