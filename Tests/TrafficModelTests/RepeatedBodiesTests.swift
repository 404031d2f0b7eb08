import Foundation
import Testing
@testable import TrafficModel

@Suite("Bodies met before take their earlier fingerprint")
struct RepeatedBodiesTests {
    /// A pool of bodies with twins that share the length and every sampled byte and differ
    /// in one byte the key does not read: a key match alone must never pass for a repeat.
    static func pool(_ random: inout SystemRandomNumberGenerator) -> [Data] {
        var pool: [Data] = []
        for _ in 0..<40 {
            let count = Int.random(in: RepeatedBodies.smallest..<9_000, using: &random)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            pool.append(Data(bytes))
            // Past the first sample and before the middle one.
            let unsampled = RepeatedBodies.sample + (count / 2 - RepeatedBodies.sample * 3 / 2) / 2
            bytes[unsampled] ^= 0x5A
            pool.append(Data(bytes))
        }
        // Short bodies, hashed every time.
        pool.append(Data("{\"ok\":true}".utf8))
        pool.append(Data())
        return pool
    }

    @Test("every fingerprint is the body's own, and the kept bytes stay within the budget")
    func fingerprintsMatchAHash() {
        var random = SystemRandomNumberGenerator()
        let pool = Self.pool(&random)
        for budget in [0, 20_000, 16 << 20] {
            var repeated = RepeatedBodies(budget: budget)
            var repeats = 0
            for _ in 0..<2_000 {
                let body = pool.randomElement(using: &random)!
                // A slice of a larger buffer, as a capture's bodies can be.
                let sliced = (Data([1, 2, 3]) + body).dropFirst(3)
                let (fingerprint, metBefore) = repeated.fingerprint(of: Bool.random(using: &random) ? body : sliced)
                #expect(fingerprint == BodyFingerprint(body))
                #expect(repeated.heldBytes <= budget)
                if metBefore { repeats += 1 }
            }
            if budget == 0 { #expect(repeats == 0) } else { #expect(repeats > 100) }
        }
    }

    @Test("a body is a repeat of the last one kept under its key, and its twin is not")
    func twins() {
        var random = SystemRandomNumberGenerator()
        let pool = Self.pool(&random)
        let (a, twin) = (pool[0], pool[1])
        #expect(a != twin && a.count == twin.count && RepeatedBodies.key(a) == RepeatedBodies.key(twin))
        var repeated = RepeatedBodies()
        #expect(repeated.fingerprint(of: a) == (BodyFingerprint(a), false))
        #expect(repeated.fingerprint(of: a) == (BodyFingerprint(a), true))
        #expect(repeated.fingerprint(of: twin) == (BodyFingerprint(twin), false))
        #expect(repeated.fingerprint(of: twin) == (BodyFingerprint(twin), true))
        // The oldest go first when the budget is spent: every body of the pool is kept (each
        // under a quarter of it), and the pool holds several times the budget.
        var small = RepeatedBodies(budget: 80_000)
        _ = small.fingerprint(of: a)
        for body in pool[2...] where body.count >= RepeatedBodies.smallest { _ = small.fingerprint(of: body) }
        #expect(small.fingerprint(of: a).metBefore == false)
        #expect(small.heldBytes <= 80_000 && small.heldBytes > 40_000)
    }
}
