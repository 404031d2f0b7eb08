// PacketCapture: captures to exchanges. pcap and pcapng files and live capture through
// libpcap (`PcapSource`), link layers, IPv4 and IPv6 (`PacketDecoder`), TCP reassembly
// (`TCPReassembler`), and the HTTP exchanges on each stream (`HTTPStreamCollector`,
// `CaptureImporter`), parsed with HTTPWire.
