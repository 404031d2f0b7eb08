/// Registrable domains ("sites") for the third-party test of BEHAVIOUR.md section 2.
///
/// The suffix set is the common one: generic TLDs are single labels, and the multi-label
/// public suffixes below cover the regions hybrid apps ship to. The cookie jar carries the
/// public suffix list for its own guard.
public enum Site {
    static let multiLabelSuffixes: Set<String> = [
        "co.uk", "org.uk", "ac.uk", "gov.uk", "me.uk", "net.uk",
        "com.cn", "net.cn", "org.cn", "gov.cn", "edu.cn",
        "com.hk", "org.hk", "net.hk", "com.tw", "org.tw", "net.tw",
        "co.jp", "ne.jp", "or.jp", "ac.jp", "go.jp",
        "co.kr", "or.kr", "ne.kr", "com.sg", "com.au", "net.au", "org.au", "edu.au",
        "co.nz", "org.nz", "com.br", "com.mx", "co.in", "co.id", "com.my", "co.th",
        "github.io", "herokuapp.com", "appspot.com", "cloudfront.net", "azurewebsites.net",
    ]

    /// The registrable domain of `host`: one label above its public suffix; an IP address
    /// or a single-label host is its own site.
    public static func of(host: String) -> String {
        var utf8 = host
        return utf8.withUTF8 { bytes in
            // One pass from the end: the last three dots, and whether this is an IP address
            // (a colon, or nothing but digits and dots).
            var colon = false
            var numeric = true
            var dots = (-1, -1, -1)
            var i = bytes.count
            while i > 0 {
                i -= 1
                let c = bytes[i]
                if c == 0x2E {
                    if dots.0 < 0 { dots.0 = i } else if dots.1 < 0 { dots.1 = i } else if dots.2 < 0 { dots.2 = i }
                } else if c == 0x3A {
                    colon = true
                } else if c < 48 || c > 57 {
                    numeric = false
                }
            }
            if colon || numeric || dots.1 < 0 { return host }
            func above(_ dot: Int) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[(dot + 1)...]), as: UTF8.self) }
            let lastTwo = above(dots.1)
            guard multiLabelSuffixes.contains(lastTwo) else { return lastTwo }
            return dots.2 >= 0 ? above(dots.2) : host
        }
    }

    /// Whether `host` is itself a public suffix by the common set above.
    public static func isPublicSuffix(_ host: String) -> Bool {
        !host.utf8.contains(0x2E) || multiLabelSuffixes.contains(host)
    }
}
