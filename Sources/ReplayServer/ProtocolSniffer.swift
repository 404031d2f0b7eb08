import NIOCore

/// The first bytes of a connection to `serve --tls` tell what it is: a TLS ClientHello
/// (0x16) is a client using this port as an HTTPS origin; anything else is HTTP, as an
/// origin or a proxy (absolute-form requests, CONNECT).
final class ProtocolSniffer: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    let tls: @Sendable (Channel) -> EventLoopFuture<Void>
    let plain: @Sendable (Channel) -> EventLoopFuture<Void>
    var buffered: [NIOAny] = []
    var deciding = false

    init(tls: @escaping @Sendable (Channel) -> EventLoopFuture<Void>, plain: @escaping @Sendable (Channel) -> EventLoopFuture<Void>) {
        self.tls = tls
        self.plain = plain
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        buffered.append(data)
        guard !deciding else { return }
        let buffer = unwrapInboundIn(data)
        guard let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return }
        deciding = true
        let channel = context.channel
        let configure = first == 0x16 ? tls(channel) : plain(channel)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        configure.whenComplete { result in
            let (sniffer, context) = loopBound.value
            switch result {
            case .success:
                // The handlers now follow this one: hand them what arrived, then step aside.
                for data in sniffer.buffered { context.fireChannelRead(data) }
                sniffer.buffered.removeAll()
                context.fireChannelReadComplete()
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            case .failure:
                context.close(promise: nil)
            }
        }
    }
}
