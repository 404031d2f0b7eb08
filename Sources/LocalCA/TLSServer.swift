import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import NIOTLS

/// Server-side TLS for `serve --tls` and the recording proxy: one NIOSSLContext per host,
/// each presenting a leaf the local CA minted for that host, offering `protocols` by ALPN,
/// `h2` and `http/1.1` unless told (a client that offers neither, or no ALPN at all, speaks
/// HTTP/1.1).
public final class TLSContexts: Sendable {
    public let ca: LocalCA
    let protocols: [String]
    let contexts: NIOLockedValueBox<[String: NIOSSLContext]>

    public init(ca: LocalCA, protocols: [String] = ["h2", "http/1.1"]) {
        self.ca = ca
        self.protocols = protocols
        self.contexts = NIOLockedValueBox([:])
    }

    /// The context for `host`, made on first use.
    public func context(for host: String) throws -> NIOSSLContext {
        let host = host.lowercased()
        if let cached = contexts.withLockedValue({ $0[host] }) { return cached }
        let leaf = try ca.leaf(for: host)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [
                .certificate(try NIOSSLCertificate(bytes: leaf.certificateDER, format: .der)),
                .certificate(try NIOSSLCertificate(bytes: leaf.issuerDER, format: .der)),
            ],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: leaf.keyDER, format: .der)))
        configuration.applicationProtocols = protocols
        configuration.minimumTLSVersion = .tlsv12
        let context = try NIOSSLContext(configuration: configuration)
        contexts.withLockedValue { $0[host] = context }
        return context
    }

    /// Adds, after the handlers already in `channel`'s pipeline, a reader of the TLS
    /// ClientHello's server name, then the TLS server for that name (or `fallbackHost` when
    /// the client sent none), and once the handshake has agreed on a protocol, what goes
    /// above it: `then` adds the HTTP/1.1 handlers to the connection, or, where the client
    /// chose h2, `stream` is called for each HTTP/2 stream (HTTP2Serving.swift). Both are
    /// told the host the certificate names and whether the client asked for it.
    public func addServer(to channel: Channel, fallbackHost: String, onError: @escaping @Sendable (String) -> Void,
                          then: @escaping @Sendable (Channel, _ host: String, _ sentSNI: Bool) -> EventLoopFuture<Void>,
                          stream: @escaping @Sendable (Channel, _ host: String, _ sentSNI: Bool) -> EventLoopFuture<Void>) -> EventLoopFuture<Void> {
        let sni = ByteToMessageHandler(SNIHandler { [self] result in
            let (host, sent): (String, Bool)
            switch result {
            case .hostname(let name): (host, sent) = (name, true)
            case .fallback: (host, sent) = (fallbackHost, false)
            }
            let context: NIOSSLContext
            do {
                context = try self.context(for: host)
            } catch {
                onError("TLS: no certificate for \(host): \(error)")
                return channel.close()
            }
            let alpn = ApplicationProtocolNegotiationHandler { result, channel in
                guard case .negotiated("h2") = result else { return then(channel, host, sent) }
                return HTTP2Serving.add(to: channel, onError: onError) { stream($0, host, sent) }
            }
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandlers([NIOSSLServerHandler(context: context), TLSRecordPacker(), TLSErrorLogger(host: host, onError: onError), alpn])
            }
        })
        return channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(sni) }
    }
}

/// Says, once per connection, why a TLS handshake or connection failed: a client that
/// does not trust the CA, a client that speaks no TLS, a connection cut in the middle.
public final class TLSErrorLogger: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    public typealias InboundIn = NIOAny
    let host: String
    let onError: @Sendable (String) -> Void

    public init(host: String, onError: @escaping @Sendable (String) -> Void) {
        self.host = host
        self.onError = onError
    }

    public func errorCaught(context: ChannelHandlerContext, error: Error) {
        // Browsers close idle connections without a TLS close_notify: not a fault.
        if let tls = error as? NIOSSLError, case .uncleanShutdown = tls {
            context.close(promise: nil)
            return
        }
        onError("TLS with \(host) (\(context.channel.remoteAddress?.description ?? "client")): \(Self.explain(error))")
        context.close(promise: nil)
    }

    public static func explain(_ error: Error) -> String {
        let text = String(describing: error)
        // BoringSSL's reasons, e.g. "OPENSSL_internal:TLSV1_ALERT_UNKNOWN_CA at ...".
        let reasons = text.components(separatedBy: "OPENSSL_internal:").dropFirst().map { $0.prefix { $0 != " " && $0 != "," && $0 != "]" } }
        let reason = reasons.isEmpty ? text : reasons.joined(separator: ", ")
        if text.contains("UNKNOWN_CA") || text.contains("CERTIFICATE_UNKNOWN") || text.contains("BAD_CERTIFICATE") {
            return "the client refused the certificate: it does not trust the h5replay CA (`h5replay ca show` says how) [\(reason)]"
        }
        if text.contains("WRONG_VERSION_NUMBER") || text.contains("HTTP_REQUEST") { return "the client does not speak TLS here [\(reason)]" }
        if text.contains("NO_APPLICATION_PROTOCOL") { return "the client offers by ALPN neither h2 nor http/1.1, the protocols served [\(reason)]" }
        if text.contains("handshakeFailed") {
            return "the TLS handshake failed, most often because the client does not trust the h5replay CA (`h5replay ca show`) [\(reason)]"
        }
        return text
    }
}
