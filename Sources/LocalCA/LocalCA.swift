// LocalCA: h5replay's own certificate authority and the HTTPS plumbing both servers share.
// The root CA (made once, its key readable by its owner alone), a leaf certificate minted
// per host, TLS server contexts chosen by SNI offering h2 and http/1.1, and the HTTP pieces
// `serve --tls` and the recording proxy both use (connection limit, the CONNECT switch,
// request collection, each HTTP/2 stream as an HTTP/1-style channel).

import Crypto
import Foundation
import NIOConcurrencyHelpers
import SwiftASN1
import TrafficModel
import X509

/// h5replay's own root certificate authority: made once, kept as two files (the
/// certificate, and its key readable by its owner alone), and used to mint a leaf
/// certificate per host on the fly for `serve --tls` and the recording proxy, as mitmproxy
/// does. Nothing here writes the key anywhere else or prints it.
public final class LocalCA: Sendable {
    /// The CA's files: `h5replay-ca.pem` (certificate) and `h5replay-ca-key.pem` (0600).
    public struct Files: Sendable {
        public var directory: String
        public var certificate: String { (directory as NSString).appendingPathComponent("h5replay-ca.pem") }
        public var key: String { (directory as NSString).appendingPathComponent("h5replay-ca-key.pem") }

        public init(directory: String) { self.directory = directory }

        /// Beside the database, unless `H5REPLAY_CA_DIR` or an explicit directory says
        /// otherwise.
        public static func beside(database: String, directory: String? = nil) -> Files {
            if let directory { return Files(directory: directory) }
            if let env = ProcessInfo.processInfo.environment["H5REPLAY_CA_DIR"], !env.isEmpty { return Files(directory: env) }
            let folder = (database as NSString).deletingLastPathComponent
            return Files(directory: folder.isEmpty ? "." : folder)
        }

        public var exist: Bool { FileManager.default.fileExists(atPath: certificate) && FileManager.default.fileExists(atPath: key) }
    }

    /// A leaf certificate for one host, with the key it certifies, as DER.
    public struct Leaf: Sendable {
        public var certificateDER: [UInt8]
        public var keyDER: [UInt8]
        /// The CA certificate, for a chain the client can build from.
        public var issuerDER: [UInt8]
    }

    public let certificate: Certificate
    public let files: Files
    let key: Certificate.PrivateKey
    /// One key for every leaf (mitmproxy does the same): minting is a signature, not a
    /// key generation.
    let leafKeyDER: [UInt8]
    let leafPublicKey: Certificate.PublicKey
    let leaves: NIOLockedValueBox<[String: Leaf]>

    /// How long a minted leaf is valid: short, since it is made again at each start.
    public static let leafValidity: TimeInterval = 30 * 24 * 3600
    /// How long the root is valid.
    public static let rootValidity: TimeInterval = 10 * 365 * 24 * 3600

    init(certificate: Certificate, key: P256.Signing.PrivateKey, files: Files) {
        self.certificate = certificate
        self.key = Certificate.PrivateKey(key)
        self.files = files
        let leafKey = P256.Signing.PrivateKey()
        self.leafKeyDER = Array(leafKey.derRepresentation)
        self.leafPublicKey = Certificate.PublicKey(leafKey.publicKey)
        self.leaves = NIOLockedValueBox([:])
    }

    // MARK: - Files

    /// Makes a new CA and writes its files; refuses to overwrite existing ones unless
    /// `replace`. The key file is created 0600 before a byte of the key is written.
    @discardableResult
    public static func create(_ files: Files, replace: Bool = false, now: Date = Date()) throws -> LocalCA {
        let fm = FileManager.default
        if files.exist, !replace {
            throw InputError(file: files.certificate, problem: "a CA already exists here", fix: "use it, or pass --replace to make a new one (devices that trust the old one must trust the new one)")
        }
        do {
            try fm.createDirectory(atPath: files.directory, withIntermediateDirectories: true)
        } catch {
            throw InputError(file: files.directory, problem: "cannot create the CA's directory: \(error.localizedDescription)")
        }
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let name = try DistinguishedName {
            CommonName("h5replay local CA (\(ProcessInfo.processInfo.hostName))")
            OrganizationName("h5replay")
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(rootValidity),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: publicKey)
            },
            issuerPrivateKey: Certificate.PrivateKey(key))
        try writePrivate(Data(key.pemRepresentation.utf8), to: files.key)
        do {
            try Data(certificate.serializeAsPEM().pemString.utf8).write(to: URL(fileURLWithPath: files.certificate), options: .atomic)
        } catch {
            throw InputError(file: files.certificate, problem: "cannot write the CA certificate: \(error.localizedDescription)")
        }
        return LocalCA(certificate: certificate, key: key, files: files)
    }

    /// Reads the CA's files.
    public static func load(_ files: Files) throws -> LocalCA {
        guard files.exist else {
            throw InputError(file: files.certificate, problem: "no h5replay CA here", fix: "run `h5replay ca init` (with the same --db or --ca-dir)")
        }
        let certificate: Certificate
        let key: P256.Signing.PrivateKey
        do {
            certificate = try Certificate(pemEncoded: String(contentsOfFile: files.certificate, encoding: .utf8))
        } catch {
            throw InputError(file: files.certificate, problem: "not a PEM certificate: \(error)", fix: "run `h5replay ca init --replace`")
        }
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: files.key, encoding: .utf8))
        } catch {
            throw InputError(file: files.key, problem: "not a P-256 private key in PEM", fix: "run `h5replay ca init --replace`")
        }
        guard Certificate.PublicKey(key.publicKey) == certificate.publicKey else {
            throw InputError(file: files.key, problem: "the key does not belong to \(files.certificate)", fix: "run `h5replay ca init --replace`")
        }
        return LocalCA(certificate: certificate, key: key, files: files)
    }

    /// Loads the CA, making it first when there is none.
    public static func loadOrCreate(_ files: Files) throws -> (LocalCA, created: Bool) {
        if files.exist { return (try load(files), false) }
        return (try create(files), true)
    }

    static func writePrivate(_ data: Data, to path: String) throws {
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else {
            throw InputError(file: path, problem: "cannot create the key file: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == data.count else {
            throw InputError(file: path, problem: "cannot write the key file: \(String(cString: strerror(errno)))")
        }
    }

    // MARK: - What `ca show` and `ca export` give

    public var derBytes: [UInt8] {
        var serializer = DER.Serializer()
        try! serializer.serialize(certificate)  // a certificate this process parsed or made always serializes
        return serializer.serializedBytes
    }

    public var pem: String { (try? certificate.serializeAsPEM().pemString) ?? "" }

    /// SHA-256 of the DER certificate, as colon-separated hex (what browsers and iOS show).
    public var fingerprint: String {
        SHA256.hash(data: derBytes).map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    public var subject: String { certificate.subject.description }
    public var notValidBefore: Date { certificate.notValidBefore }
    public var notValidAfter: Date { certificate.notValidAfter }

    // MARK: - Leaves

    /// The leaf certificate for `host` (a name or an IP address), minted on first use and
    /// kept in memory.
    public func leaf(for host: String, now: Date = Date()) throws -> Leaf {
        let host = host.lowercased()
        if let cached = leaves.withLockedValue({ $0[host] }) { return cached }
        let publicKey = leafPublicKey
        let name: GeneralName
        if let address = Self.ipAddressBytes(host) {
            name = .ipAddress(ASN1OctetString(contentBytes: ArraySlice(address)))
        } else {
            name = .dnsName(host)
        }
        let leaf = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(Self.leafValidity),
            issuer: certificate.subject,
            subject: try DistinguishedName {
                CommonName(String(host.prefix(64)))
                OrganizationName("h5replay")
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([name])
                SubjectKeyIdentifier(hash: publicKey)
                AuthorityKeyIdentifier(keyIdentifier: try certificate.extensions.subjectKeyIdentifier?.keyIdentifier)
            },
            issuerPrivateKey: key)
        var serializer = DER.Serializer()
        try serializer.serialize(leaf)
        let made = Leaf(certificateDER: serializer.serializedBytes, keyDER: leafKeyDER, issuerDER: derBytes)
        leaves.withLockedValue { $0[host] = made }
        return made
    }

    /// The 4 or 16 bytes of an IPv4 or IPv6 literal (brackets allowed), or nil for a name.
    public static func ipAddressBytes(_ host: String) -> [UInt8]? {
        var text = host
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
