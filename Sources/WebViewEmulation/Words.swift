import Foundation

/// An explanation's words, appended as UTF-8 bytes to one buffer and made a `String`
/// once, at the end.
///
/// The emulator explains every cookie difference and jar divergence of every preset in
/// a dozen pieces or so. `String`'s own append checks the string's form and capacity on
/// each piece, a few hundred instructions apiece, most of an explanation's cost; a byte
/// append is a bounds check and a copy.
struct Words: ~Copyable {
    private var start: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        start = .allocate(capacity: self.capacity)
    }

    deinit { start.deallocate() }

    var string: String { String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self) }

    private mutating func add(_ bytes: UnsafePointer<UInt8>, _ n: Int) {
        if count + n > capacity {
            let larger = max(capacity * 2, count + n)
            let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
            moved.initialize(from: start, count: count)
            start.deallocate()
            (start, capacity) = (moved, larger)
        }
        (start + count).initialize(from: bytes, count: n)
        count += n
    }

    private mutating func add(_ byte: UInt8) {
        withUnsafePointer(to: byte) { add($0, 1) }
    }

    static func += (words: inout Words, piece: StaticString) {
        piece.withUTF8Buffer { if let base = $0.baseAddress { words.add(base, $0.count) } }
    }

    static func += (words: inout Words, piece: String) {
        var piece = piece
        piece.withUTF8 { if let base = $0.baseAddress { words.add(base, $0.count) } }
    }

    /// A non-negative integer's decimal digits, as `String(n)` writes them.
    mutating func append(_ n: Int) {
        guard n >= 0 else {
            self += String(n)
            return
        }
        var divisor = 1
        while divisor <= n / 10 { divisor *= 10 }
        var rest = n
        while divisor > 0 {
            add(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// "12 s", "1.5 s", "972 ms": printf's `%.0f` and `%.1f`, its cost paid only near a
    /// tie, where the scaled value's own rounding could differ from printf's exact one,
    /// and outside the range an `Int` holds.
    mutating func append(seconds s: Double) {
        func nearTie(_ x: Double) -> Bool { abs(x - x.rounded(.down) - 0.5) < 1e-6 }
        let inRange = s.isFinite && s >= 0 && s < 1e12
        if s >= 10 {
            if inRange && !nearTie(s) { append(Int(s.rounded())) } else { self += String(format: "%.0f", s) }
            self += " s"
        } else if s >= 1 {
            if inRange && !nearTie(s * 10) {
                let tenths = Int((s * 10).rounded())
                append(tenths / 10)
                self += "."
                append(tenths % 10)
            } else {
                self += String(format: "%.1f", s)
            }
            self += " s"
        } else {
            if inRange && !nearTie(s * 1000) { append(Int((s * 1000).rounded())) } else { self += String(format: "%.0f", s * 1000) }
            self += " ms"
        }
    }
}
