import NIOCore
import NIOPosix

/// A CONNECT tunnel passed through untouched: bytes each way, a close on one side closing
/// the other (a half-closed side is closed whole).
enum Tunnel {
    /// Connects to the upstream with one glue handler in its pipeline; returns its partner,
    /// for the client's pipeline.
    static func connect(to origin: ProxyHandler.Origin, from client: Channel, proxy: RecordingProxy) -> EventLoopFuture<GlueHandler> {
        let (clientSide, upstreamSide) = GlueHandler.pair()
        let bound = NIOLoopBound((upstreamSide, clientSide), eventLoop: client.eventLoop)
        return ClientBootstrap(group: client.eventLoop)
            .connectTimeout(proxy.configuration.connectTimeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(bound.value.0) }
            }
            .connect(host: origin.host, port: origin.port)
            .map { _ in bound.value.1 }
    }
}

final class GlueHandler: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    var partner: GlueHandler?
    var context: ChannelHandlerContext?

    static func pair() -> (GlueHandler, GlueHandler) {
        let a = GlueHandler()
        let b = GlueHandler()
        a.partner = b
        b.partner = a
        return (a, b)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner?.context?.writeAndFlush(data, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner?.context?.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, case .inputClosed = event {
            // One side finished sending: the tunnel is done.
            partner?.context?.close(promise: nil)
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
