import FuzzDriver
import FuzzHarness

/// libFuzzer's entry: `FuzzHarness.setCookie` on one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzHarness.setCookie(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

@_cdecl("FuzzSetCookie_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv, fuzz)
}
