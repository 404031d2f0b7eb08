import NIOCore

/// The upstream connections an HTTP/2 client connection's streams share. Each stream is
/// forwarded on a connection of its own while its response lasts; once the response
/// ended with the connection kept alive, the connection waits here for the next stream
/// to the same origin instead of being closed, so that a warm h2 client does not pay a
/// new TCP and TLS handshake upstream per request. Touched only on the event loop the
/// client connection, its streams and their upstream connections share.
final class UpstreamPool: @unchecked Sendable {
    /// Idle connections kept at most; one more is closed.
    let capacity: Int
    var idle: [ProxyHandler.Upstream] = []
    var closed = false

    init(capacity: Int = 8) { self.capacity = capacity }

    /// An open idle connection to `origin`, taken out of the pool; nil when there is none.
    func take(_ origin: ProxyHandler.Origin) -> ProxyHandler.Upstream? {
        idle.removeAll { !$0.isOpen }
        guard let index = idle.firstIndex(where: { $0.origin == origin }) else { return nil }
        return idle.remove(at: index)
    }

    /// Keeps `upstream` for the next stream, or closes it when the pool is full or gone.
    func put(_ upstream: ProxyHandler.Upstream) {
        guard !closed, idle.count < capacity, upstream.isOpen else {
            upstream.close()
            return
        }
        idle.append(upstream)
    }

    /// The client connection closed: so do the idle connections.
    func closeAll() {
        closed = true
        for upstream in idle { upstream.close() }
        idle = []
    }
}
