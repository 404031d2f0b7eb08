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
        if host.utf8.contains(0x3A) || host.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || $0 == 46 }) { return host }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count > 2 else { return host }
        let lastTwo = labels.suffix(2).joined(separator: ".")
        let keep = multiLabelSuffixes.contains(lastTwo) ? 3 : 2
        return labels.suffix(keep).joined(separator: ".")
    }

    /// Whether `host` is itself a public suffix by the common set above.
    public static func isPublicSuffix(_ host: String) -> Bool {
        !host.utf8.contains(0x2E) || multiLabelSuffixes.contains(host)
    }
}
