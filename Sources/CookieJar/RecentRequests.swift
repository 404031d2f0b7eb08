/// The latest requests a provenance walker remembers, at most `capacity`, found by the
/// hosts a cookie can match.
///
/// A search for the requests that would have carried a cookie (a script write's window, a
/// guess about a cookie's scope) visits only those to hosts whose last two labels are the
/// cookie's: a host domain-matches a cookie's domain when it is that domain or ends with
/// "." and the domain, and a domain cookie's domain has a dot, so both end with the same
/// two labels. A recording of many sites then searches one site's requests, not all 4,096.
struct RecentRequests {
    let capacity: Int
    /// The requests, oldest first until the list is full, then a ring whose oldest is at `head`.
    private var slots: [CookieProvenance.PastRequest] = []
    private var head = 0
    /// Per `tail(of:)` of the requests' hosts, the slots of its requests, oldest first.
    private var byTail: [Substring: Bucket] = [:]

    struct Bucket {
        var slots: [Int] = []
        /// Entries before it have left the ring.
        var start = 0
    }

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// What a host is found by: its part after the second-last dot, or the whole host
    /// when it has fewer than two dots.
    static func tail(of host: String) -> Substring {
        var dots = 0
        var at = host.utf8.endIndex
        while at > host.utf8.startIndex {
            let before = host.utf8.index(before: at)
            if host.utf8[before] == UInt8(ascii: ".") {
                dots += 1
                if dots == 2 { return Substring(host.utf8[at...]) }
            }
            at = before
        }
        return Substring(host)
    }

    /// The tail every host `cookie` matches has; nil for a domain cookie on a domain of
    /// one label, which only a search of every request answers.
    static func tail(matching cookie: Cookie) -> Substring? {
        if cookie.hostOnly || cookie.domain.containsByte(UInt8(ascii: ".")) { return tail(of: cookie.domain) }
        return nil
    }

    /// Remembers `request`; returns the request it pushed out once `capacity` are held.
    /// The request is moved in, and the forgotten one out, not copied (a retain and a
    /// release of its target and cookie list each).
    mutating func append(_ request: consuming CookieProvenance.PastRequest) -> CookieProvenance.PastRequest? {
        let key = Self.tail(of: request.host)
        if slots.count < capacity {
            byTail[key, default: Bucket()].slots.append(slots.count)
            slots.append(request)
            return nil
        }
        let slot = head
        var forgotten = request
        swap(&forgotten, &slots[slot])
        let oldKey = Self.tail(of: forgotten.host)
        // The oldest request of all is the oldest of its tail. Its bucket is changed where
        // it is, found once: most requests go to the site the forgotten one went to, whose
        // bucket then takes the new slot without being looked up again (a removal and two
        // insertions, each hashing the tail, were a fifth of remembering a request).
        var kept: Dictionary<Substring, Bucket>.Index?
        if let index = byTail.index(forKey: oldKey) {
            if Self.forgetOldest(&byTail.values[index]) { byTail.remove(at: index) } else { kept = index }
        }
        if let kept, key == oldKey {
            byTail.values[kept].slots.append(slot)
        } else {
            byTail[key, default: Bucket()].slots.append(slot)
        }
        head = (head + 1) % capacity
        return forgotten
    }

    /// Drops a bucket's oldest slot; true when none is left.
    private static func forgetOldest(_ bucket: inout Bucket) -> Bool {
        bucket.start += 1
        guard bucket.start < bucket.slots.count else { return true }
        if bucket.start >= 64 && bucket.start * 2 >= bucket.slots.count {
            bucket.slots.removeFirst(bucket.start)
            bucket.start = 0
        }
        return false
    }

    /// The request in `slot` (`forEachSlotNewestFirst`).
    subscript(slot: Int) -> CookieProvenance.PastRequest { slots[slot] }

    /// Visits the slots of the remembered requests `cookie` could have gone with, newest
    /// first, until `visit` returns false.
    func forEachSlotNewestFirst(matching cookie: Cookie, _ visit: (Int) -> Bool) {
        guard let key = Self.tail(matching: cookie) else {
            var k = slots.count
            while k > 0 {
                k -= 1
                if !visit((head + k) % slots.count) { return }
            }
            return
        }
        guard let bucket = byTail[key] else { return }
        var k = bucket.slots.count
        while k > bucket.start {
            k -= 1
            if !visit(bucket.slots[k]) { return }
        }
    }

    /// The newest remembered request before `sequence` that would have carried `cookie`
    /// and did not. The requests are read in place: a copy of each would count references
    /// to its host, path and cookies.
    func latest(lacking cookie: Cookie, before sequence: Int = .max) -> (sequence: Int, startedAt: Double)? {
        slots.withUnsafeBufferPointer { slots in
            var found: (sequence: Int, startedAt: Double)?
            let base = slots.baseAddress
            forEachSlotNewestFirst(matching: cookie) { slot in
                let request = base! + slot
                if request.pointee.sequence < sequence, CookieProvenance.PastRequest.lacks(request, cookie) { found = (request.pointee.sequence, request.pointee.startedAt) }
                return found == nil
            }
            return found
        }
    }

    /// Whether a remembered request would have carried `cookie` and did not.
    func anyLacks(_ cookie: Cookie) -> Bool { latest(lacking: cookie) != nil }
}
