import Testing
@testable import ReportStore

@Suite("A row's text buffer")
struct RowTextTests {
    @Test("random appends of bytes, strings and literals, with growth and truncation, hold what an array would")
    func matchesAnArray() {
        var random = SystemRandomNumberGenerator()
        let text = RowText(capacity: 16)
        var reference: [UInt8] = []
        var firstDifference: Int?
        for step in 0..<5_000 {
            switch Int.random(in: 0..<5, using: &random) {
            case 0:
                let byte = UInt8.random(in: 0...255, using: &random)
                text.append(byte)
                reference.append(byte)
            case 1:
                let bytes = (0..<Int.random(in: 0..<300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                bytes.withUnsafeBufferPointer { text.append($0) }
                reference += bytes
            case 2:
                let string = String(repeating: ["a", "é", "王", "🍪", "\""].randomElement(using: &random)!, count: Int.random(in: 0..<40, using: &random))
                text.append(string)
                reference += Array(string.utf8)
            case 3:
                text.append(#"{"rule":"# as StaticString)
                reference += Array(#"{"rule":"#.utf8)
            default:
                let keep = Int.random(in: 0...reference.count, using: &random)
                text.truncate(to: keep)
                reference.removeSubrange(keep...)
            }
            if firstDifference == nil, Array(text.bytes) != reference { firstDifference = step }
        }
        #expect(firstDifference == nil)
        #expect(Array(text.bytes) == reference)
    }
}
