import FuzzDriver
import FuzzHarness

/// libFuzzer's entry: `FuzzHarness.http` on one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzHarness.http(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

@_cdecl("FuzzHTTP_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv, fuzz)
}
