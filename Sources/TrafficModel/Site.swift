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
        let bytes = host.utf8
        if bytes.contains(0x3A) || bytes.allSatisfy({ ($0 >= 48 && $0 <= 57) || $0 == 46 }) { return host }
        // The last three dots, from the end: labels are what they separate.
        var dots: [String.Index] = []
        dots.reserveCapacity(3)
        var i = bytes.endIndex
        while i > bytes.startIndex, dots.count < 3 {
            bytes.formIndex(before: &i)
            if bytes[i] == 0x2E { dots.append(i) }
        }
        guard dots.count >= 2 else { return host }
        let lastTwo = host[host.index(after: dots[1])...]
        guard multiLabelSuffixes.contains(String(lastTwo)) else { return String(lastTwo) }
        return dots.count >= 3 ? String(host[host.index(after: dots[2])...]) : host
    }

    /// Whether `host` is itself a public suffix by the common set above.
    public static func isPublicSuffix(_ host: String) -> Bool {
        !host.utf8.contains(0x2E) || multiLabelSuffixes.contains(host)
    }
}
