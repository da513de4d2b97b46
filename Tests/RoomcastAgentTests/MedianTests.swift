import Testing
@testable import Shared
@testable import RoomcastAgent

/// The ranging filter takes its medians without allocating (`median(count:_:)`); they must be
/// the medians `median(_:)` (sort, middle, mean of the middle two) gives.
@Suite struct MedianTests {
    @Test(arguments: [1, 2, 3, 4, 5, 8, 16, 31, 32, 33, 64])
    func allocationFreeMedianMatchesSortedMedian(_ count: Int) {
        var rng = SeededRandom(seed: UInt64(count))
        for _ in 0..<200 {
            // Integer dBm with ties, as RSSI is, and arbitrary gaps.
            let values = (0..<count).map { _ in
                Bool.random(using: &rng) ? Double(Int.random(in: -100 ... -40, using: &rng))
                    : Double.random(in: 0...10, using: &rng)
            }
            #expect(RSSIFilter.median(count: count) { values[$0] } == RSSIFilter.median(values))
        }
    }

    @Test func emptyAndNaNBehaveAsBefore() {
        #expect(RSSIFilter.median(count: 0) { _ in 1 }.isNaN)
        let withNaN: [Double] = [3, .nan, 1]
        let a = RSSIFilter.median(count: 3) { withNaN[$0] }, b = RSSIFilter.median(withNaN)
        #expect(a == b || (a.isNaN && b.isNaN))
    }
}
