/// The text of rows waiting to be written, as bytes in one buffer that grows and is never
/// shared: values and the JSON written for them are appended, then bound in place.
///
/// A run of a large corpus appends millions of values and bytes. Through an `[UInt8]` each
/// append checked that the array was uniquely referenced and had room, through generic
/// code: about ninety instructions a value, a twelfth of storing a finding row. Here an
/// append is a bounds check and a copy.
final class RowText {
    /// The bytes, `count` of them written; the buffer belongs to this text alone.
    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inline(__always) func append(_ byte: UInt8) {
        if count == capacity { grow(toHold: count + 1) }
        base[count] = byte
        count += 1
    }

    @inline(__always) func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress, !bytes.isEmpty else { return }
        if count + bytes.count > capacity { grow(toHold: count + bytes.count) }
        (base + count).initialize(from: start, count: bytes.count)
        count += bytes.count
    }

    /// A string's UTF-8, read in place: `withUTF8` needs a string of its own to mutate, a
    /// retain and a release of every text a row holds.
    func append(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ append($0) }) != nil { return }
        var text = text  // bridged text without contiguous UTF-8
        text.withUTF8 { append($0) }
    }

    /// A literal's UTF-8 (`"{\"rule\":"`).
    func append(_ literal: StaticString) {
        literal.withUTF8Buffer { append($0) }
    }

    /// Drops what came after the first `count` bytes, keeping the room.
    func truncate(to count: Int) {
        precondition(count <= self.count)
        self.count = count
    }

    /// The bytes written so far, valid until the next append.
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    private func grow(toHold needed: Int) {
        var newCapacity = capacity
        while newCapacity < needed { newCapacity *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.initialize(from: base, count: count)
        base.deallocate()
        base = grown
        capacity = newCapacity
    }
}
