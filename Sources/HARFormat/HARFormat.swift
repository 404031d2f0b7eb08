// HARFormat: HAR 1.2 in and out. `HARImporter` reads each exporter's HAR (browsers, Charles,
// Proxyman, mitmproxy...) with its quirks into TrafficModel's exchanges, naming the entry
// and field of what it cannot read; `HARExporter` writes a recording back as HAR, secrets
// redacted by default; `HARJournal` writes one entry at a time.
