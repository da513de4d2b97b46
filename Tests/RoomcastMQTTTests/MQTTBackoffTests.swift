import RoomcastMQTT
import Testing

@Suite struct MQTTBackoffTests {
    @Test(arguments: [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 8.0), (6, 8.0), (1000, 8.0)])
    func doublesUpToTheCap(failures: Int, expected: Double) {
        let b = MQTTBackoff(initial: 0.5, maximum: 8, multiplier: 2, jitter: 0)
        #expect(b.delay(afterFailures: failures, random: 0.7) == expected)
    }

    @Test func zeroFailuresCountsAsTheFirst() {
        let b = MQTTBackoff(initial: 1, maximum: 10, jitter: 0)
        #expect(b.delay(afterFailures: 0, random: 0) == 1)
    }

    @Test(arguments: [0.0, 0.25, 0.5, 0.999])
    func jitterTakesOffAtMostItsFraction(random: Double) {
        let b = MQTTBackoff(initial: 2, maximum: 2, jitter: 0.5)
        let d = b.delay(afterFailures: 1, random: random)
        #expect(d == 2 * (1 - 0.5 * random))
        #expect(d > 1 && d <= 2)
    }

    @Test func problemsNameEachField() {
        let b = MQTTBackoff(initial: 0, maximum: -1, multiplier: 0.5, jitter: 2)
        let p = b.problems(at: "mqtt.reconnectBackoff")
        #expect(p.count == 4)
        #expect(p.allSatisfy { $0.hasPrefix("mqtt.reconnectBackoff.") })
        #expect(MQTTBackoff().problems(at: "x").isEmpty)
    }
}
