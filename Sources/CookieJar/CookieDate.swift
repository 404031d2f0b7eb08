import TrafficModel

/// The cookie-date algorithm of RFC 6265bis section 5.1.1.
public enum CookieDate {
    /// Seconds since 1970 for a cookie-date, or nil when the algorithm fails.
    public static func parse(_ text: String) -> Double? {
        // 1. Using the grammar below, divide the cookie-date into date-tokens.
        //    delimiter = %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E
        var tokens: [[UInt8]] = []
        var current: [UInt8] = []
        for c in text.utf8 {
            let isDelimiter = c == 0x09 || (0x20...0x2F).contains(c) || (0x3B...0x40).contains(c) || (0x5B...0x60).contains(c) || (0x7B...0x7E).contains(c)
            if isDelimiter {
                if !current.isEmpty { tokens.append(current); current = [] }
            } else {
                current.append(c)
            }
        }
        if !current.isEmpty { tokens.append(current) }

        var time: (Int, Int, Int)?
        var dayOfMonth: Int?
        var month: Int?
        var year: Int?
        // 2. Process each date-token sequentially in the order the date-tokens appear.
        for token in tokens {
            // 2.1 If found-time is not set and the token matches the time production...
            if time == nil, let t = matchTime(token) { time = t; continue }
            // 2.2 day-of-month = 1*2DIGIT [ non-digit *OCTET ]
            if dayOfMonth == nil, let d = leadingDigits(token, min: 1, max: 2) { dayOfMonth = d; continue }
            // 2.3 month = ( "jan" / "feb" / ... ) *OCTET, case-insensitive
            if month == nil, let m = matchMonth(token) { month = m; continue }
            // 2.4 year = 2*4DIGIT [ non-digit *OCTET ]
            if year == nil, let y = leadingDigits(token, min: 2, max: 4) { year = y; continue }
        }
        guard var y = year, let d = dayOfMonth, let m = month, let (h, mi, s) = time else { return nil }
        // 3. If the year-value is in 70...99, add 1900. 4. If in 0...69, add 2000.
        if (70...99).contains(y) { y += 1900 } else if (0...69).contains(y) { y += 2000 }
        // 5. Abort on a missing part, a day outside 1...31, a year before 1601,
        //    an hour over 23, a minute over 59 or a second over 59.
        guard (1...31).contains(d), y >= 1601, h <= 23, mi <= 59, s <= 59 else { return nil }
        // 6. Let the parsed-cookie-date be the date whose day-of-month, month, year, hour,
        //    minute and second (in UTC) are the values above. If no such date exists, abort.
        let daysInMonth = [31, (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard d <= daysInMonth[m - 1] else { return nil }
        return Double(CivilDate.daysFromCivil(y, m, d)) * 86_400 + Double(h * 3600 + mi * 60 + s)
    }

    /// hms-time = time-field ":" time-field ":" time-field, time-field = 1*2DIGIT,
    /// optionally followed by a non-digit and anything.
    static func matchTime(_ token: [UInt8]) -> (Int, Int, Int)? {
        var i = 0
        var fields: [Int] = []
        for index in 0..<3 {
            var value = 0, count = 0
            while i < token.count, count < 3, token[i] >= 48, token[i] <= 57 {
                value = value * 10 + Int(token[i] - 48)
                count += 1
                i += 1
            }
            guard count >= 1, count <= 2 else { return nil }
            fields.append(value)
            if index < 2 {
                guard i < token.count, token[i] == 0x3A else { return nil }
                i += 1
            }
        }
        if i < token.count, token[i] >= 48, token[i] <= 57 { return nil }
        return (fields[0], fields[1], fields[2])
    }

    /// `min`...`max` digits followed by a non-digit or the end.
    static func leadingDigits(_ token: [UInt8], min: Int, max: Int) -> Int? {
        var value = 0, count = 0
        while count < token.count, token[count] >= 48, token[count] <= 57 {
            if count == max { return nil }
            value = value * 10 + Int(token[count] - 48)
            count += 1
        }
        return count >= min ? value : nil
    }

    static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    static func matchMonth(_ token: [UInt8]) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = String(decoding: token.prefix(3).map { ($0 >= 65 && $0 <= 90) ? $0 | 0x20 : $0 }, as: UTF8.self)
        return months.firstIndex(of: prefix).map { $0 + 1 }
    }
}
