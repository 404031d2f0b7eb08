/// An iOS version as the model distinguishes them: 11.0, 11.3, 12 ... 18.
public struct IOSVersion: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public var major: Int
    public var minor: Int

    public init(_ major: Int, _ minor: Int = 0) {
        self.major = major
        self.minor = minor
    }

    /// Parses `17`, `17.0`, `11.3`.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let major = Int(parts[0]) else { return nil }
        let minor = parts.count > 1 ? Int(parts[1]) : 0
        guard let minor else { return nil }
        self.init(major, minor)
    }

    public static func < (a: IOSVersion, b: IOSVersion) -> Bool { (a.major, a.minor) < (b.major, b.minor) }
    public var description: String { minor == 0 && major != 11 ? "\(major)" : "\(major).\(minor)" }

    /// The versions whose behaviour the model knows (BEHAVIOUR.md section 6).
    public static let supported: [IOSVersion] = [IOSVersion(11, 0), IOSVersion(11, 3)] + (12...18).map { IOSVersion($0) }
    public static let newest = IOSVersion(18)
}

/// The platform facts a replay depends on (BEHAVIOUR.md section 6).
public struct Profile: Sendable, Hashable, Codable {
    public var ios: IOSVersion
    public var simulator: Bool
    /// J1: how long an added or changed cookie takes to reach the other jar, seconds.
    public var jarSyncDelay: Double
    /// J2: how long a deletion takes to reach the other jar, seconds.
    public var jarDeletionDelay: Double
    /// J3: how long a `document.cookie` write takes to reach NativeJar; nil: never.
    public var scriptWriteDelay: Double?
    /// C7: how long `WKHTTPCookieStore.setCookie` takes to complete, seconds.
    public var cookieStoreSyncDelay: Double
    /// C8: how long an asynchronous `document.cookie` setter hook takes to reach NativeJar.
    public var cookieSetterHookDelay: Double
    /// N4: Intelligent Tracking Prevention (from iOS 14).
    public var itp: Bool

    /// The profile for an iOS version on a device or the simulator, with the latencies
    /// the seeds report.
    public init(ios: IOSVersion = .newest, simulator: Bool = false) {
        self.ios = ios
        self.simulator = simulator
        self.jarSyncDelay = 1.0
        self.jarDeletionDelay = 10.0
        self.scriptWriteDelay = simulator ? nil : 1.0
        self.cookieStoreSyncDelay = 0.05
        self.cookieSetterHookDelay = 0.01
        self.itp = ios >= IOSVersion(14)
    }

    /// `iOS 18 device`, `iOS 11.0 simulator`.
    public var name: String { "iOS \(ios) \(simulator ? "simulator" : "device")" }
}
