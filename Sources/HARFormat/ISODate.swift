import TrafficModel

/// Parses the date-times HAR exporters write: `2023-03-29T23:20:54.250Z`,
/// `2023-03-29T23:20:54+02:00`, `...54.123456-0700`, a space instead of `T`, no zone (UTC).
enum ISODate {
    /// Seconds since 1970, or nil when the text is not an ISO 8601 date-time.
    static func parse(_ text: String) -> Double? {
        let b = Array(text.utf8)
        var i = 0
        func digits(_ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var v = 0
            for k in 0..<n {
                let c = b[i + k]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            i += n
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(45), let month = digits(2), expect(45), let day = digits(2) else { return nil }
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        var seconds = 0.0
        if i < b.count, b[i] == 84 || b[i] == 116 || b[i] == 32 {  // T, t or space
            i += 1
            guard let h = digits(2), expect(58), let m = digits(2), h < 24, m < 60 else { return nil }
            var s = 0
            if expect(58) {
                guard let sec = digits(2), sec <= 60 else { return nil }
                s = sec
            }
            seconds = Double(h * 3600 + m * 60 + s)
            if i < b.count, b[i] == 46 || b[i] == 44 {  // fraction
                i += 1
                var scale = 0.1
                var fraction = 0.0
                var any = false
                while i < b.count, b[i] >= 48, b[i] <= 57 {
                    fraction += Double(b[i] - 48) * scale
                    scale /= 10
                    i += 1
                    any = true
                }
                guard any else { return nil }
                seconds += fraction
            }
            if i < b.count {
                if b[i] == 90 || b[i] == 122 {
                    i += 1
                } else if b[i] == 43 || b[i] == 45 {
                    let sign = b[i] == 45 ? -1.0 : 1.0
                    i += 1
                    guard let oh = digits(2) else { return nil }
                    _ = expect(58)
                    let om = digits(2) ?? 0
                    seconds -= sign * Double(oh * 3600 + om * 60)
                }
            }
            guard i == b.count else { return nil }
        } else if i != b.count {
            return nil
        }
        return Double(CivilDate.daysFromCivil(year, month, day)) * 86_400 + seconds
    }

    /// `2023-03-29T23:20:54.250Z` for a time in seconds since 1970.
    static func format(_ time: Double) -> String {
        // Years 0 to 9999 only; a time outside them (or not finite) is written at the edge.
        let clamped = time.isFinite ? min(max(time, -62_167_219_200), 253_402_300_799.999) : 0
        let millisTotal = Int((clamped * 1000).rounded())
        var days = millisTotal >= 0 ? millisTotal / 86_400_000 : (millisTotal - 86_399_999) / 86_400_000
        let msOfDay = millisTotal - days * 86_400_000
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func pad(_ v: Int, _ w: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, w - s.count)) + s
        }
        let h = msOfDay / 3_600_000, mi = (msOfDay / 60_000) % 60, s = (msOfDay / 1000) % 60, ms = msOfDay % 1000
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2)).\(pad(ms, 3))Z"
    }
}
