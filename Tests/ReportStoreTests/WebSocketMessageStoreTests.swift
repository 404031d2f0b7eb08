import Foundation
import GRDB
import Pipeline
import Testing
import TrafficModel
@testable import ReportStore

@Suite("SQLite store: WebSocket messages")
struct WebSocketMessageStoreTests {
    static let heartbeat = Data(#"{"type":"ping"}"#.utf8)
    static let messages = [
        WebSocketMessage(direction: .send, time: 1_700_000_001.5, opcode: 1, data: Data(#"{"hello":1}"#.utf8)),
        WebSocketMessage(direction: .receive, time: 1_700_000_001.75, opcode: 2, data: Data([0, 1, 0xFF])),
        WebSocketMessage(direction: .receive, time: 1_700_000_002, opcode: 1, data: heartbeat),
        WebSocketMessage(direction: .receive, time: 1_700_000_003, opcode: 1, data: heartbeat),
        WebSocketMessage(direction: .send, time: 1_700_000_003.5, opcode: 1, data: Data()),
    ]

    /// A page, its WebSocket handshake with `messages`, and a request after it.
    static func recording(name: String = "chat", sha256: String? = "aa") -> Recording {
        let page = Exchange(sequence: 0, startedAt: 1_700_000_000, request: RecordedRequest(method: "GET", url: "https://chat.example/"),
                            response: RecordedResponse(status: 200, headers: [HeaderField("Content-Type", "text/html")], body: Data("<p>".utf8)))
        let socket = Exchange(sequence: 1, startedAt: 1_700_000_001, request: RecordedRequest(method: "GET", url: "wss://chat.example/socket", headers: [HeaderField("Upgrade", "websocket")]),
                              response: RecordedResponse(status: 101, headers: [HeaderField("Upgrade", "websocket")]), webSocketMessages: messages)
        let after = Exchange(sequence: 2, startedAt: 1_700_000_004, request: RecordedRequest(method: "GET", url: "https://chat.example/bye"), response: RecordedResponse(status: 204))
        return Recording(name: name, sourceFormat: "har", sourcePath: "\(name).har", sourceSHA256: sha256, exchanges: [page, socket, after])
    }

    @Test("a handshake's messages are stored under it and load back in order, a repeated payload stored once")
    func roundTrip() throws {
        let store = try ReportStore.inMemory()
        let original = Self.recording()
        try store.save(original)
        let loaded = try #require(try store.recording(named: "chat"))
        #expect(loaded.exchanges[1].webSocketMessages == Self.messages)
        #expect(loaded.exchanges[0].webSocketMessages.isEmpty && loaded.exchanges[2].webSocketMessages.isEmpty)
        #expect(loaded.exchanges == original.exchanges)
        try store.writer.read { (db: Database) throws in
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM websocket_message") == 5)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM body WHERE sha256 = ?", arguments: [Self.heartbeat.sha256Hex]) == 1)
        }
        // Replaced by a recording without a socket, its messages go with it.
        var plain = Self.recording(sha256: "bb")
        plain.exchanges[1].webSocketMessages = []
        try store.save(plain, replace: true)
        #expect(try store.writer.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM websocket_message") } == 0)
    }

    @Test("a message read back with a direction this version does not know is an error naming the table, not a guess")
    func unknownDirection() throws {
        let store = try ReportStore.inMemory()
        try store.save(Self.recording())
        try store.writer.write { try $0.execute(sql: "UPDATE websocket_message SET direction = 'sideways' WHERE position = 0") }
        #expect {
            try store.recording(named: "chat")
        } throws: { error in
            "\(error)".contains("websocket_message") && "\(error)".contains("sideways")
        }
    }

    @Test("v21 adds the messages' table to a v20 database; a recording holding a handshake forgets its source's hash, so importing it again stores its messages")
    func migration() throws {
        let queue = try DatabaseQueue()
        try Schema.migrator.migrate(queue, upTo: "v20: every recording of a run, empty ones too")
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO body (sha256, length, content) VALUES ('e3b0', 0, x'');
                INSERT INTO recording (id, name, source_format, source_sha256, imported_at, exchange_count) VALUES (7, 'chat', 'har', 'aa', '', 1);
                INSERT INTO recording (id, name, source_format, source_sha256, imported_at, exchange_count) VALUES (8, 'page', 'har', 'cc', '', 1);
                INSERT INTO exchange (recording_id, sequence, started_at, duration, method, url, http_version, request_headers,
                    request_body_sha256, request_body_length, status, status_text, response_http_version, response_headers,
                    response_body_sha256, response_body_length, response_body_missing, initiator, frame, body_kind)
                  VALUES (7, 0, 1, 0, 'GET', 'wss://chat.example/socket', 'HTTP/1.1', '[]', 'e3b0', 0, 101, '', 'HTTP/1.1', '[]', 'e3b0', 0, 0, 'other', 'main', 'none'),
                         (8, 0, 1, 0, 'GET', 'https://chat.example/', 'HTTP/1.1', '[]', 'e3b0', 0, 200, '', 'HTTP/1.1', '[]', 'e3b0', 0, 0, 'document', 'main', 'none');
                """)
        }
        let store = try ReportStore(writer: queue)
        try queue.read { (db: Database) throws in
            #expect(try db.tableExists("websocket_message"))
            #expect(try db.primaryKey("websocket_message").columns == ["recording_id", "sequence", "position"])
            #expect(try Set(db.foreignKeys(on: "websocket_message").map(\.destinationTable)) == ["recording", "body"])
            #expect(try Row.fetchAll(db, sql: "SELECT name, source_sha256 FROM recording ORDER BY id") == [
                ["name": "chat", "source_sha256": nil], ["name": "page", "source_sha256": "cc"],
            ])
        }
        // The same file imported again replaces the handshake without messages.
        #expect(try store.save(Self.recording(sha256: "aa"), replace: true) == .imported(id: 9, replaced: true))
        #expect(try store.recording(named: "chat")?.exchanges[1].webSocketMessages == Self.messages)
    }
}
