/// A stored cookie: the fields of RFC 6265bis section 5.7 ("Storage Model").
public struct Cookie: Sendable, Hashable, Codable {
    public enum SameSite: String, Sendable, Hashable, Codable { case `default`, none, lax, strict }

    public var name: String
    public var value: String
    /// Lowercased, without a leading dot.
    public var domain: String
    /// Sent only to exactly `domain`, not its subdomains.
    public var hostOnly: Bool
    public var path: String
    /// Seconds since 1970; nil for a session cookie.
    public var expiry: Double?
    public var secure: Bool
    public var httpOnly: Bool
    public var sameSite: SameSite
    public var creation: Double
    public var lastAccess: Double
    /// Breaks ties between cookies created at the same instant: the store's insertion
    /// order, kept on replacement like the creation time.
    public var creationOrder: UInt64 = 0
    /// A number the jar's owner gives the cookie and the jar carries with it, untouched
    /// (the emulator: which record says how the cookie reached the jar); 0 when none.
    /// Not part of the cookie's identity, not compared, not written out.
    public var tag: UInt32 = 0

    public static func == (a: Cookie, b: Cookie) -> Bool {
        a.name == b.name && a.value == b.value && a.domain == b.domain && a.hostOnly == b.hostOnly && a.path == b.path
            && a.expiry == b.expiry && a.secure == b.secure && a.httpOnly == b.httpOnly && a.sameSite == b.sameSite
            && a.creation == b.creation && a.lastAccess == b.lastAccess && a.creationOrder == b.creationOrder
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(value)
        hasher.combine(domain)
        hasher.combine(path)
        hasher.combine(creation)
    }

    enum CodingKeys: String, CodingKey {
        case name, value, domain, hostOnly, path, expiry, secure, httpOnly, sameSite, creation, lastAccess, creationOrder
    }

    public init(name: String, value: String, domain: String, hostOnly: Bool = true, path: String = "/", expiry: Double? = nil, secure: Bool = false, httpOnly: Bool = false, sameSite: SameSite = .default, creation: Double, lastAccess: Double? = nil) {
        self.name = name
        self.value = value
        self.domain = domain
        self.hostOnly = hostOnly
        self.path = path
        self.expiry = expiry
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
        self.creation = creation
        self.lastAccess = lastAccess ?? creation
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
