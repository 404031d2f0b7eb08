/// A stored cookie: the fields of RFC 6265bis section 5.7 ("Storage Model").
///
/// The fields sit behind one reference, copied only when a shared cookie is changed: a
/// replay copies each cookie many times (into the jar a synchronisation fills, into the
/// header a request carries, into the outcome that records it), and a copy of four
/// strings cost four retains and, later, four releases; now one of each.
public struct Cookie: Sendable, Hashable, Codable {
    public enum SameSite: String, Sendable, Hashable, Codable { case `default`, none, lax, strict }

    @usableFromInline struct Fields: Sendable, Codable {
        @usableFromInline var name: String
        @usableFromInline var value: String
        @usableFromInline var domain: String
        @usableFromInline var hostOnly: Bool
        @usableFromInline var path: String
        @usableFromInline var expiry: Double?
        @usableFromInline var secure: Bool
        @usableFromInline var httpOnly: Bool
        @usableFromInline var sameSite: SameSite
        @usableFromInline var creation: Double
        @usableFromInline var lastAccess: Double

        enum CodingKeys: String, CodingKey {
            case name, value, domain, hostOnly, path, expiry, secure, httpOnly, sameSite, creation, lastAccess
        }
    }

    /// A buffer whose header is reached through a pointer, not a class property's checked
    /// access; changed only while uniquely referenced.
    @usableFromInline final class Box: ManagedBuffer<Fields, Never> {}

    /// Safe to share across threads: a buffer is changed only once `unique()` has made it
    /// this value's alone.
    @usableFromInline nonisolated(unsafe) var box: Box

    /// A number the jar's owner gives the cookie and the jar carries with it, untouched
    /// (the emulator: which record says how the cookie reached the jar); 0 when none.
    /// Not part of the cookie's identity, not compared, not written out. Kept beside the
    /// shared fields, not among them: the emulator tags every cookie a synchronisation
    /// copies into the other jar, and a tag among the fields copied them each time.
    public var tag: UInt32 = 0

    /// Breaks ties between cookies created at the same instant: the store's insertion
    /// order, kept on replacement like the creation time; 0 until a jar stores the cookie.
    /// Beside the shared fields too: a jar numbers each cookie a synchronisation brings it,
    /// and a number among the fields copied them each time.
    public var creationOrder: UInt64 = 0

    @usableFromInline static func box(_ fields: Fields) -> Box { unsafeDowncast(Box.create(minimumCapacity: 0) { _ in fields }, to: Box.self) }

    @inlinable var fields: Fields { box.withUnsafeMutablePointerToHeader { $0.pointee } }

    /// The fields, for a change: the pointer is valid while `box` holds the buffer.
    @inlinable var header: UnsafeMutablePointer<Fields> { box.withUnsafeMutablePointerToHeader { $0 } }

    @inlinable mutating func unique() {
        if !isKnownUniquelyReferenced(&box) { box = Self.box(box.withUnsafeMutablePointerToHeader { $0.pointee }) }
    }

    @inlinable public var name: String {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.name } }
        _modify { unique(); yield &header.pointee.name }
    }
    @inlinable public var value: String {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.value } }
        _modify { unique(); yield &header.pointee.value }
    }
    /// Lowercased, without a leading dot.
    @inlinable public var domain: String {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.domain } }
        _modify { unique(); yield &header.pointee.domain }
    }
    /// Sent only to exactly `domain`, not its subdomains.
    @inlinable public var hostOnly: Bool {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.hostOnly } }
        _modify { unique(); yield &header.pointee.hostOnly }
    }
    @inlinable public var path: String {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.path } }
        _modify { unique(); yield &header.pointee.path }
    }
    /// Seconds since 1970; nil for a session cookie.
    @inlinable public var expiry: Double? {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.expiry } }
        _modify { unique(); yield &header.pointee.expiry }
    }
    @inlinable public var secure: Bool {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.secure } }
        _modify { unique(); yield &header.pointee.secure }
    }
    @inlinable public var httpOnly: Bool {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.httpOnly } }
        _modify { unique(); yield &header.pointee.httpOnly }
    }
    @inlinable public var sameSite: SameSite {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.sameSite } }
        _modify { unique(); yield &header.pointee.sameSite }
    }
    @inlinable public var creation: Double {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.creation } }
        _modify { unique(); yield &header.pointee.creation }
    }
    @inlinable public var lastAccess: Double {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.lastAccess } }
        _modify { unique(); yield &header.pointee.lastAccess }
    }
    public static func == (a: Cookie, b: Cookie) -> Bool {
        if a.box === b.box { return a.creationOrder == b.creationOrder }
        let x = a.fields, y = b.fields
        return x.name == y.name && x.value == y.value && x.domain == y.domain && x.hostOnly == y.hostOnly && x.path == y.path
            && x.expiry == y.expiry && x.secure == y.secure && x.httpOnly == y.httpOnly && x.sameSite == y.sameSite
            && x.creation == y.creation && x.lastAccess == y.lastAccess && a.creationOrder == b.creationOrder
    }

    public func hash(into hasher: inout Hasher) {
        let f = fields
        hasher.combine(f.name)
        hasher.combine(f.value)
        hasher.combine(f.domain)
        hasher.combine(f.path)
        hasher.combine(f.creation)
    }

    /// JSON as a plain struct of the fields wrote it: every key but `tag`, `expiry` left
    /// out when nil.
    public init(from decoder: any Decoder) throws {
        box = Self.box(try Fields(from: decoder))
        creationOrder = try decoder.container(keyedBy: OrderKey.self).decode(UInt64.self, forKey: .creationOrder)
    }

    public func encode(to encoder: any Encoder) throws {
        try fields.encode(to: encoder)
        var container = encoder.container(keyedBy: OrderKey.self)
        try container.encode(creationOrder, forKey: .creationOrder)
    }

    private enum OrderKey: String, CodingKey { case creationOrder }

    public init(name: String, value: String, domain: String, hostOnly: Bool = true, path: String = "/", expiry: Double? = nil, secure: Bool = false, httpOnly: Bool = false, sameSite: SameSite = .default, creation: Double, lastAccess: Double? = nil) {
        box = Self.box(
            Fields(
                name: name, value: value, domain: domain, hostOnly: hostOnly, path: path, expiry: expiry, secure: secure, httpOnly: httpOnly, sameSite: sameSite,
                creation: creation, lastAccess: lastAccess ?? creation))
    }

    public var persistent: Bool { expiry != nil }
    public var key: Key { Key(name: name, domain: domain, path: path) }

    public func isExpired(at time: Double) -> Bool {
        guard let expiry else { return false }
        return expiry <= time
    }

    /// A cookie's identity in a jar: a new cookie with the same key replaces the old one.
    public struct Key: Sendable, Hashable, Codable, Comparable {
        public var name: String
        public var domain: String
        public var path: String

        public init(name: String, domain: String, path: String) {
            self.name = name
            self.domain = domain
            self.path = path
        }

        /// Hashed by the name alone: a flow's cookies mostly differ by name, and hashing
        /// three strings was most of the cost of the emulator's per-cookie tables. Equality
        /// still compares all three.
        public func hash(into hasher: inout Hasher) { hasher.combine(name) }

        public static func < (a: Key, b: Key) -> Bool { (a.domain, a.path, a.name) < (b.domain, b.path, b.name) }
        public var description: String { "\(name) (\(domain)\(path))" }
    }
}

/// Printed and dumped field by field, as a plain struct of them would be.
extension Cookie: CustomReflectable {
    public var customMirror: Mirror {
        let f = fields
        return Mirror(
            self,
            children: [
                "name": f.name, "value": f.value, "domain": f.domain, "hostOnly": f.hostOnly, "path": f.path, "expiry": f.expiry as Any, "secure": f.secure,
                "httpOnly": f.httpOnly, "sameSite": f.sameSite, "creation": f.creation, "lastAccess": f.lastAccess, "creationOrder": creationOrder, "tag": tag,
            ], displayStyle: .struct)
    }
}
