import Foundation

/// The executables allocate through jemalloc, which keeps the pages a thread frees for ten
/// seconds before it gives them back, in case the thread allocates again. A proxy that
/// streams gigabytes frees read buffers and journal slices many times a second, and those
/// kept pages were its peak memory: 85 to 100 MB after nine 1 GB downloads in Tools/bench's
/// streaming stage. Kept for 200 ms instead, 75 and 80 MB. (Given back at once, 56 to
/// 59 MB, but a buffer freed and made again a moment later then faults its pages in
/// anew: the plain download ran at 1,481 to 1,658 MB/s through the proxy against 1,784
/// at 200 ms.) Where the process does not allocate through jemalloc (the tests), nothing
/// changes.
enum FreedMemory {
    typealias Control = @convention(c) (UnsafePointer<CChar>, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?, UnsafeMutableRawPointer?, Int) -> Int32

    /// How long a freed page is kept before it is given back.
    static let keptFor = 200

    /// Has every arena, and every one made later, keep freed pages `keptFor` milliseconds
    /// (jemalloc's dirty pages), then give them back to the system at once (its muzzy ones).
    static func keepBriefly() {
        guard let symbol = dlsym(nil, "mallctl") else { return }
        let control = unsafeBitCast(symbol, to: Control.self)
        var arenas: UInt32 = 0
        var size = MemoryLayout<UInt32>.size
        _ = control("arenas.narenas", &arenas, &size, nil, 0)
        for prefix in ["arenas"] + (0..<arenas).map({ "arena.\($0)" }) {
            for (name, milliseconds) in [("dirty_decay_ms", keptFor), ("muzzy_decay_ms", 0)] {
                var value = milliseconds
                // An arena not made yet refuses the setting; the default for new ones holds.
                _ = control("\(prefix).\(name)", nil, nil, &value, MemoryLayout<Int>.size)
            }
        }
    }
}
